import Foundation
import MediaMux
import NIOPosix
import Testing
import TestSupport

/// Leaving an events loop early (`break`) cancels the job: a merge and a
/// batch stop mid-encode and leave neither their output nor a partial file
/// behind (a preview clip: `PreviewProgressTests.breakingOutOfClipEventsLeavesNothing`).
/// As there, the loop runs on a thread of its own, so that it leaves as soon
/// as the first progress comes, however busy Swift's threads are with other
/// tests, long before the job could be done; and the engine's pool is the
/// test's own, whose shutdown waits for the cancelled work to clean up
/// (nothing is timed).
@Suite(.tags(.heavy), .skippedByTag)
struct EarlyExitTests {
    static let song = Fixtures.path("aac_7s.m4a")

    /// A minute of portrait video (coded 360x640, 30 fps), made by copy
    /// from two seconds encoded: a merge re-frames it into a landscape
    /// frame, seconds of work.
    private func longPortrait(in folder: TemporaryFolder) throws -> String {
        let ffmpeg = try #require(["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first { FileManager.default.isExecutableFile(atPath: $0) })
        let short = folder.path("short.mp4")
        let long = folder.path("long.mp4")
        for arguments in [
            ["-f", "lavfi", "-i", "testsrc2=size=360x640:rate=30:duration=2", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", short],
            ["-stream_loop", "29", "-i", short, "-c", "copy", long],
        ] {
            let made = try ExternalTool.run(ffmpeg, ["-nostdin", "-v", "error", "-y"] + arguments, keeping: .errors, seconds: 120)
            #expect(made.status == 0, "\(String(decoding: made.text, as: UTF8.self))")
        }
        try FileManager.default.removeItem(atPath: short)
        return long
    }

    /// Iterates `events` on a thread of its own until `leaves` says so, and
    /// leaves the loop there (the iterator ends with the task); false when
    /// the job finished first.
    private func leave<Progress, Result>(
        _ events: ProgressEvents<Progress, Result>, when leaves: @escaping @Sendable (Progress) -> Bool
    ) async throws -> Bool {
        let executor = OwnThreadExecutor()
        defer { executor.stop() }
        return try await Task(executorPreference: executor) {
            for try await event in events {
                if case .progress(let progress) = event, leaves(progress) { return true }
            }
            return false
        }.value
    }

    @Test func leavingAMergeLoopCancelsTheMerge() async throws {
        let folder = try TemporaryFolder()
        let video = try longPortrait(in: folder)
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        let engine = MuxEngine(runtime: MediaRuntime(threadPool: pool))
        let job = MergeJob(video: video, audio: Self.song, output: folder.path("o.mp4"), options: MergeOptions(orientation: .landscape, end: .video))
        let left = try await leave(engine.events(for: job)) { progress in
            if case .merging(let step) = progress { return (step.framesEncoded ?? 0) > 0 }
            return false
        }
        try await pool.shutdownGracefully()
        #expect(left, "the merge ended before it encoded a frame")
        #expect(folder.contents == ["long.mp4"], "left behind: \(folder.contents)")
    }

    @Test func leavingABatchLoopCancelsItsRunningJob() async throws {
        let folder = try TemporaryFolder()
        let video = try longPortrait(in: folder)
        // Two re-framing merges, one at a time: the loop is left when the first starts.
        let jobs = (0..<2).map {
            "{\"video\": \"\(video)\", \"audio\": \"\(Self.song)\", \"output\": \"out/\($0).mp4\", \"orientation\": \"landscape\", \"end\": \"video\"}"
        }
        let manifestPath = folder.path("jobs.json")
        try Data("{\"jobs\": [\(jobs.joined(separator: ","))]}".utf8).write(to: URL(fileURLWithPath: manifestPath))
        let manifest = try BatchManifest.load(manifestPath)
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        let engine = MuxEngine(runtime: MediaRuntime(threadPool: pool))
        let left = try await leave(engine.events(for: manifest, options: BatchOptions(jobs: 1))) { $0.running > 0 }
        // The loop is left as the first job starts, perhaps before its work
        // is on the pool (whose shutdown would then stop it with the batch
        // cancelled or not): until that work has written its partial file, or
        // 5 s, the pool is left to run. A job the leaving did not cancel is
        // then mid-encode, and the shutdown waits for it to finish it.
        // (The output has no name until complete: the test sees it among the process's open files.)
        let out = folder.path("out")
        let partial = {
            ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).contains { entry in
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + entry))?.hasPrefix(out + "/") == true
            }
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while !partial(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        try await pool.shutdownGracefully()
        #expect(left, "the batch ended before it started a job")
        // The manifest and the video stay; the output folder may stay, empty.
        let outputs = (try? FileManager.default.contentsOfDirectory(atPath: folder.path("out"))) ?? []
        #expect(outputs.isEmpty, "left behind in out/: \(outputs)")
    }
}
