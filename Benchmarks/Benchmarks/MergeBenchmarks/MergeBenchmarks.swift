// The hot paths of MediaMux: merging a video file with an audio file by
// stream copy (probe both, plan, remux, faststart, rename), and previews
// (PreviewBenchmarks.swift).
//
// Inputs come from MEDIAMUX_BENCH_VIDEO and MEDIAMUX_BENCH_AUDIO, and default
// to the bundled fixtures in ../TestMedia (resolved from this file's path,
// so the benchmark works from any current directory).

import Benchmark
import Foundation
import MediaMux

/// The Benchmarks package directory (…/Benchmarks), from this file's path.
private let benchmarksPackageDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent() // MergeBenchmarks
    .deletingLastPathComponent() // Benchmarks (sources)
    .deletingLastPathComponent() // Benchmarks (package)

private func input(_ variable: String, default fixture: String) -> String {
    if let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty {
        return value
    }
    return benchmarksPackageDirectory
        .appendingPathComponent("../TestMedia/\(fixture)")
        .standardizedFileURL.path
}

let benchmarks: @Sendable () -> Void = {
    let video = input("MEDIAMUX_BENCH_VIDEO", default: "h264_bframes_aac.mp4")
    let audio = input("MEDIAMUX_BENCH_AUDIO", default: "aac_7s.m4a")
    let scratch = FileManager.default.temporaryDirectory
        .appendingPathComponent("mediamux-bench-\(getpid())", isDirectory: true)
    let output = scratch.appendingPathComponent("merged.mp4").path

    Benchmark.defaultConfiguration = .init(
        metrics: [
            .wallClock, .cpuTotal, .throughput,
            .peakMemoryResident, .peakMemoryResidentDelta,
            .mallocCountTotal, .mallocBytesCount,
            .syscalls, .readBytesLogical, .writeBytesLogical,
        ],
        warmupIterations: 2,
        maxDuration: .seconds(10),
        maxIterations: 100
    )

    for faststart in [true, false] {
        Benchmark(
            "merge video+audio (\(faststart ? "faststart" : "no faststart"))",
            configuration: .init(
                setup: { try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true) },
                teardown: { try? FileManager.default.removeItem(at: scratch) }
            )
        ) { benchmark in
            for _ in benchmark.scaledIterations {
                let report = try await MuxEngine().merge(
                    video: video, audio: audio, output: output,
                    options: MergeOptions(overwrite: true, faststart: faststart)
                )
                blackHole(report)
            }
        }
    }

    previewBenchmarks(video: video, scratch: scratch)
}
