// Preview: 12 evenly spaced thumbnails (seek + decode + scale + PNG), a
// contact sheet, and a 2-second preview clip (decode + libx264 + AAC), on
// the same video as the merge benchmarks.

import Benchmark
import Foundation
import MediaMux

func previewBenchmarks(video: String, scratch: URL) {
    let setup: Benchmark.BenchmarkSetupHook = { try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true) }
    let teardown: Benchmark.BenchmarkTeardownHook = { try? FileManager.default.removeItem(at: scratch) }

    Benchmark("preview: 12 thumbnails, 320 px PNG", configuration: .init(setup: setup, teardown: teardown)) { benchmark in
        for _ in benchmark.scaledIterations {
            let images = try await MuxEngine().previews.writeFrames(
                of: video, into: scratch.appendingPathComponent("frames").path,
                options: FrameOptions(selection: .evenlySpaced(count: 12), size: 320), overwrite: true)
            blackHole(images)
        }
    }

    Benchmark("preview: contact sheet, 12 frames", configuration: .init(setup: setup, teardown: teardown)) { benchmark in
        for _ in benchmark.scaledIterations {
            let sheet = try await MuxEngine().previews.contactSheet(
                of: video, output: scratch.appendingPathComponent("sheet.png").path, overwrite: true)
            blackHole(sheet)
        }
    }

    Benchmark("preview: 2 s clip, 360p H.264 + AAC", configuration: .init(setup: setup, teardown: teardown)) { benchmark in
        for _ in benchmark.scaledIterations {
            let clip = try await MuxEngine().previews.previewClip(
                of: video, output: scratch.appendingPathComponent("clip.mp4").path,
                options: PreviewClipOptions(duration: 2), overwrite: true)
            blackHole(clip)
        }
    }
}
