// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "MediaMux",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "MediaMux", targets: ["MediaMux"]),
        .executable(name: "muxctl", targets: ["muxctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.100.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat",
            providers: [
                .apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswresample-dev", "libswscale-dev", "pkg-config"]),
                .brew(["ffmpeg"]),
            ]
        ),
        .target(
            name: "MediaMux",
            dependencies: [
                "CFFmpeg",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "muxctl",
            dependencies: [
                "MediaMux",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "MediaMuxTests",
            dependencies: [
                "MediaMux",
                // The tests decode what they read themselves (TrackDecoder).
                "CFFmpeg",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "muxctlTests",
            dependencies: ["muxctl"]
        ),
    ]
)
