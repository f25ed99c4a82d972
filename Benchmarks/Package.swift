// swift-tools-version:6.1
// Benchmarks for MediaMux, kept in a package of their own so that the main
// package does not depend on ordo-one/benchmark. Run with:
//   cd Benchmarks && swift package benchmark
import PackageDescription

import struct Foundation.URL

// A path dependency is identified by its folder's name, which is whatever the
// repository was cloned as ("main", "MediaMux", ...), so derive it.
let mediaMuxIdentity = URL(fileURLWithPath: Context.packageDirectory)
    .deletingLastPathComponent().lastPathComponent.lowercased()

let package = Package(
    name: "MediaMuxBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
    ],
    targets: [
        // Downloads through the MediaMuxDownload product only: what a
        // program that needs no FFmpeg links (download.sh measures its memory).
        .executableTarget(
            name: "download-only",
            dependencies: [.product(name: "MediaMuxDownload", package: mediaMuxIdentity)],
            path: "Benchmarks/DownloadOnly"
        ),
        .executableTarget(
            name: "MergeBenchmarks",
            dependencies: [
                .product(name: "MediaMux", package: mediaMuxIdentity),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/MergeBenchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark"),
            ]
        ),
    ]
)
