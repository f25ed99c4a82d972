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
            dependencies: ["CFFmpeg"]
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
            dependencies: ["MediaMux"]
        ),
        .testTarget(
            name: "muxctlTests",
            dependencies: ["muxctl"]
        ),
    ]
)
