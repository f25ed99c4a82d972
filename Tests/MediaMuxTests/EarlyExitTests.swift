import Foundation
import MediaMux
import Testing
import TestSupport

/// Leaving an events loop early (`break`) cancels the job: a merge, a
/// preview clip and a batch each stop, and leave neither their output nor a
/// partial file behind, however long the caller waits afterwards. Each job
/// would encode two minutes of video with x264's slowest preset, minutes of
/// work: far longer than a machine busy with the rest of the suite takes to
/// hand the loop an event (tens of seconds at worst, seen), so that the job
/// cannot have finished by the time the loop is left.
@Suite(.tags(.heavy), .skippedByTag)
struct EarlyExitTests {
    static let song = Fixtures.path("aac_7s.m4a")

    /// Two minutes of portrait video (coded 360x640, 30 fps), made by copy
    /// from two seconds encoded: a merge re-frames it into a landscape frame.
    private func longPortrait(in folder: TemporaryFolder) throws -> String {
        let ffmpeg = try #require(["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first { FileManager.default.isExecutableFile(atPath: $0) })
        let short = folder.path("short.mp4")
        let long = folder.path("long.mp4")
        for arguments in [
            ["-f", "lavfi", "-i", "testsrc2=size=360x640:rate=30:duration=2", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", short],
            ["-stream_loop", "59", "-i", short, "-c", "copy", long],
        ] {
            let made = try ExternalTool.run(ffmpeg, ["-nostdin", "-v", "error", "-y"] + arguments, keeping: .errors, seconds: 120)
            #expect(made.status == 0, "\(String(decoding: made.text, as: UTF8.self))")
        }
        try FileManager.default.removeItem(atPath: short)
        return long
    }

    /// Waits up to `seconds` for `done`, polling.
    private func eventually(seconds: Double = 30, _ done: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if done() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return done()
    }

    /// After the loop was left: the folder empties, and stays empty once the
    /// job would long have finished had it gone on (the merge takes seconds).
    private func expectNothingLeft(in folder: TemporaryFolder, besides kept: Set<String>) async throws {
        let leftovers = { Set(folder.contents).subtracting(kept) }
        #expect(try await eventually { leftovers().isEmpty }, "left behind: \(leftovers())")
        try await Task.sleep(for: .milliseconds(500))
        #expect(leftovers().isEmpty, "appeared later: \(leftovers())")
    }

    @Test func leavingAMergeLoopCancelsTheMerge() async throws {
        let folder = try TemporaryFolder()
        let video = try longPortrait(in: folder)
        let job = MergeJob(video: video, audio: Self.song, output: folder.path("o.mp4"), options: MergeOptions(orientation: .landscape, video: VideoOptions(preset: "veryslow"), end: .video))
        var left = false
        for try await event in MuxEngine().events(for: job) {
            if case .progress(.merging(let step)) = event, (step.framesEncoded ?? 0) > 0 {
                left = true
                break
            }
        }
        #expect(left, "the merge ended before it encoded a frame")
        try await expectNothingLeft(in: folder, besides: ["long.mp4"])
    }

    @Test func leavingAPreviewClipLoopCancelsTheClip() async throws {
        let folder = try TemporaryFolder()
        let video = try longPortrait(in: folder)
        let job = PreviewClipJob(input: video, output: folder.path("clip.mp4"), options: PreviewClipOptions(duration: 120, height: 640, preset: "veryslow"))
        var left = false
        for try await event in PreviewEngine().events(for: job) {
            if case .progress(let progress) = event, progress.done > 0 {
                left = true
                break
            }
        }
        #expect(left, "the clip ended before it reported a frame")
        try await expectNothingLeft(in: folder, besides: ["long.mp4"])
    }

    @Test func leavingABatchLoopCancelsItsRunningJob() async throws {
        let folder = try TemporaryFolder()
        let video = try longPortrait(in: folder)
        // Two re-framing merges, one at a time: the loop is left when the first starts.
        let jobs = (0..<2).map {
            "{\"video\": \"\(video)\", \"audio\": \"\(Self.song)\", \"output\": \"out/\($0).mp4\", \"orientation\": \"landscape\", \"videoPreset\": \"veryslow\", \"end\": \"video\"}"
        }
        let manifestPath = folder.path("jobs.json")
        try Data("{\"jobs\": [\(jobs.joined(separator: ","))]}".utf8).write(to: URL(fileURLWithPath: manifestPath))
        let manifest = try BatchManifest.load(manifestPath)
        var left = false
        for try await event in MuxEngine().events(for: manifest, options: BatchOptions(jobs: 1)) {
            if case .progress = event {
                left = true
                break
            }
        }
        #expect(left, "the batch ended before it started a job")
        // The manifest stays; the output folder may stay, empty.
        let outputs = { (try? FileManager.default.contentsOfDirectory(atPath: folder.path("out"))) ?? [] }
        #expect(try await eventually { outputs().isEmpty }, "left behind in out/: \(outputs())")
        try await Task.sleep(for: .milliseconds(500))
        #expect(outputs().isEmpty, "appeared later in out/: \(outputs())")
    }
}
