// swift-tools-version:6.1
// Programs that use MediaMux as its users do, built and run by CI
// (.ci/examples.sh); the DocC recipes are taken from them. A package of its
// own, so that MediaMux does not depend on Hummingbird.
//   merge-server: a Hummingbird 2 server streaming a merge as its response,
//     `swift run merge-server --media DIR --port 8080`, then
//     GET /merge?video=clip.mp4&audio=song.m4a (paths within DIR).
//   preview-folder: a CI step's previews, a clip and a sheet of every video
//     in a folder, in process: `swift run preview-folder IN OUT`; it depends
//     on MediaMuxPreview alone, as a user who never downloads would.
//   error-properties: top-level code reading every property of an error,
//     built in release (a Swift 6.3.1 optimizer crash once lived there).
import PackageDescription

import struct Foundation.URL

// A path dependency is identified by its folder's name, which is whatever the
// repository was cloned as ("main", "MediaMux", ...), so derive it.
let mediaMuxIdentity = URL(fileURLWithPath: Context.packageDirectory)
    .deletingLastPathComponent().lastPathComponent.lowercased()

let package = Package(
    name: "MediaMuxExamples",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
    ],
    targets: [
        .executableTarget(
            name: "merge-server",
            dependencies: [
                .product(name: "MediaMux", package: mediaMuxIdentity),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        .executableTarget(
            name: "preview-folder",
            // The previews' product alone: no HTTP client, no TLS.
            dependencies: [.product(name: "MediaMuxPreview", package: mediaMuxIdentity)]
        ),
        .executableTarget(
            name: "error-properties",
            dependencies: [.product(name: "MediaMux", package: mediaMuxIdentity)]
        ),
    ]
)
