// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "MediaMux",
    platforms: [.macOS(.v15)],
    products: [
        // Everything, composed: merge with thumbnails, merge from a URL, downloads FFmpeg checks.
        .library(name: "MediaMux", targets: ["MediaMux"]),
        // Probe, plan and merge: libavformat, libavcodec, libswresample and libswscale (encoding
        // what must change), libavfilter opened only when a graph needs it; no network.
        .library(name: "MediaMuxCore", targets: ["MediaMuxCore"]),
        // Frames, images, contact sheets, preview clips.
        .library(name: "MediaMuxPreview", targets: ["MediaMuxPreview"]),
        // Downloads alone: HTTP, resuming, the cache; no FFmpeg.
        .library(name: "MediaMuxDownload", targets: ["MediaMuxDownload"]),
        .executable(name: "muxctl", targets: ["muxctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.100.0"),
        // AsyncHTTPClient's TLS; named so that TLS failures are matched by their types.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.30.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        // Only for `swift package generate-documentation` (make docs); no target depends on it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
    ],
    targets: [
        // FFmpeg's demuxing, decoding and encoding libraries, with stateless shims.
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat",
            providers: [
                .apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "pkg-config"]),
                .brew(["ffmpeg"]),
            ]
        ),
        // libswscale: pictures scaled for encoding (the core) and for previews.
        .systemLibrary(
            name: "CFFmpegScale",
            pkgConfig: "libswscale",
            providers: [.apt(["libswscale-dev", "pkg-config"]), .brew(["ffmpeg"])]
        ),
        // libswresample, for the core's audio encoding (rates, formats, channel layouts).
        .systemLibrary(
            name: "CFFmpegResample",
            pkgConfig: "libswresample",
            providers: [.apt(["libswresample-dev", "pkg-config"]), .brew(["ffmpeg"])]
        ),
        // FFmpeg's log callback, which keeps state, in C.
        .target(name: "CFFmpegLog", dependencies: ["CFFmpeg"]),
        // libavfilter's audio graphs (volume, fades, loudness), opened with dlopen on first use:
        // linked outright it would map 11.5 MiB of libraries into every process. Its headers
        // come from libavfilter-dev; nothing links -lavfilter.
        .target(
            name: "CFFmpegFilter", dependencies: ["CFFmpeg"],
            linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        // Times, errors, files and temporary outputs, the runtime (thread pool, logger): no C of its own, no FFmpeg.
        .target(
            name: "MediaMuxBase",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Container structure, with no FFmpeg: the MP4/QuickTime box tree, its readers (movie
        // header facts, fragments, sample tables, QuickTime metadata; Matroska's codec ids) and
        // writers (edit lists, sample tables, mehd, free; a moov replaced in its file).
        .target(
            name: "MediaMuxContainers",
            dependencies: ["MediaMuxBase", .product(name: "SystemPackage", package: "swift-system")]
        ),
        // Downloads: HTTP, resuming, the cache. No FFmpeg; a soundtrack is checked through the containers module.
        .target(
            name: "MediaMuxDownload",
            dependencies: [
                "MediaMuxBase", "MediaMuxContainers",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Probe, pure planning, remux, and the soundtrack's decoding and AAC encoding when it cannot be
        // copied; a packet-observer hook for what others make in the same pass.
        .target(
            name: "MediaMuxCore",
            dependencies: [
                "MediaMuxBase", "MediaMuxContainers", "CFFmpeg", "CFFmpegLog", "CFFmpegResample", "CFFmpegScale", "CFFmpegFilter",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                // ByteBuffer: the chunks of a streamed merge's body.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Decoding, scaling, images, contact sheets, preview clips, merge thumbnails (through the observer).
        .target(name: "MediaMuxPreview", dependencies: ["MediaMuxBase", "MediaMuxCore", "CFFmpeg"]),
        // The facade that composes the others.
        .target(
            name: "MediaMux",
            dependencies: [
                "MediaMuxBase", "MediaMuxCore", "MediaMuxPreview", "MediaMuxDownload",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .executableTarget(
            name: "muxctl",
            dependencies: [
                "MediaMux",
                "MediaMuxBase",
                "MediaMuxCore",
                "MediaMuxPreview",
                "MediaMuxDownload",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                // Its own thread pool for `batch --jobs N`.
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Every entry point over one input, with the contract checked (errors name a file, no
        // leftovers): what the fuzzer and the test suite's corpus run.
        .target(name: "MediaMuxFuzzing", dependencies: ["MediaMux", "MediaMuxBase", "MediaMuxContainers", "MediaMuxCore", "MediaMuxPreview"]),
        // Replays files through the exercise; built with -sanitize=fuzzer (Fuzz/run.sh), libFuzzer's target.
        .executableTarget(name: "mediamux-fuzz", dependencies: ["MediaMuxFuzzing", "MediaMuxBase"]),
        // Where the tests' media is (TestMedia's fixtures, the real files in the samples folder), for both test targets.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(
            name: "MediaMuxTests",
            dependencies: [
                "TestSupport",
                "MediaMux",
                "MediaMuxBase",
                "MediaMuxContainers",
                "MediaMuxCore",
                "MediaMuxPreview",
                "MediaMuxDownload",
                "MediaMuxFuzzing",
                // The tests decode what they read themselves (TrackDecoder), and scale pictures to compare them.
                "CFFmpeg", "CFFmpegScale",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // The test server speaks HTTPS with the tests' own certificates.
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        .testTarget(
            name: "muxctlTests",
            dependencies: ["muxctl", "TestSupport"]
        ),
    ]
)
