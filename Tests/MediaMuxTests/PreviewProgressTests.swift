import Foundation
import NIOPosix
@testable import MediaMux
@testable import MediaMuxPreview
import Testing
import TestSupport

/// Progress of previews: whatever the throttle lets through never goes
/// backwards, stays within 0...1, and the last report says the job is
/// complete, counting what the output really holds (read back by the tests'
/// own MP4 reader and from the folder). The same as events: progress, then
/// the result; a loop left early cancels the job.
struct PreviewProgressTests {
    static let frameIndex = Fixtures.path("h264_frame_index.mp4")
    static let iphone = Samples.path("iphone_hevc_rot90_bframes_editlist_nonsync_start.mp4")

    /// Checks what every call's reports share, and returns the last one.
    static func checkedLast(_ reports: [PreviewProgress], _ what: String) throws -> PreviewProgress {
        let last = try #require(reports.last, "\(what): no progress at all")
        let fractions = reports.map(\.fraction)
        #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 <= $1 }, "\(what): fractions went back: \(fractions)")
        #expect(fractions.allSatisfy { (0...1).contains($0) }, "\(what): \(fractions)")
        let done = reports.map(\.done)
        #expect(zip(done, done.dropFirst()).allSatisfy { $0 <= $1 }, "\(what): frame counts went back: \(done)")
        #expect(last.fraction == 1 && last.total == last.done, "\(what): ends at \(last)")
        return last
    }

    /// The iPhone video is variable frame rate: an estimate from its frame
    /// rate said 0.78 when the clip was done.
    @Test(Samples.required) func aClipEndsComplete() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("clip.mp4")
        let reports = Reports()
        let report = try await MuxEngine().previews.previewClip(
            of: Self.iphone, output: output, options: PreviewClipOptions(start: 0.5, duration: 1.0, height: 180),
            progress: { reports.add($0) })
        let last = try Self.checkedLast(reports.all, "clip")
        let video = try #require(try MP4File(path: output).videoTracks.first)
        #expect(last.done == video.sampleCount && last.done == report.videoFrames, "\(last), \(video.sampleCount) samples")
        // Until the end the number of frames is an estimate from the average
        // rate, said to be one and never below the frames done; the fraction is the time's.
        let running = reports.all.dropLast()
        #expect(!running.isEmpty)
        #expect(running.allSatisfy { $0.totalIsEstimate && ($0.total ?? 0) >= $0.done && $0.description.contains("of about") }, "\(running)")
        #expect(!last.totalIsEstimate && last.description == "\(last.done) of \(last.done) frames")
    }

    /// Every frame of a range: how many there are is known at the end only.
    @Test func everyFrameOfARangeEndsComplete() async throws {
        let folder = try TemporaryFolder()
        let reports = Reports()
        let written = try await MuxEngine().previews.writeFrames(
            of: Self.frameIndex, into: folder.url.path, options: FrameOptions(selection: .all(from: 1.5, to: 2.0), size: 32),
            progress: { reports.add($0) })
        let last = try Self.checkedLast(reports.all, "frames")
        #expect(written.count == 15)
        #expect(last.done == written.count && folder.contents.count == written.count, "\(last), \(folder.contents)")
    }

    @Test func aContactSheetEndsComplete() async throws {
        let folder = try TemporaryFolder()
        let reports = Reports()
        _ = try await MuxEngine().previews.contactSheet(
            of: Self.frameIndex, output: folder.path("sheet.png"), options: ContactSheetOptions(frames: 6, tileSize: 64),
            progress: { reports.add($0) })
        let last = try Self.checkedLast(reports.all, "sheet")
        #expect(last.done == 6)
        #expect(reports.all.allSatisfy { $0.total == 6 })
        #expect(folder.contents == ["sheet.png"])
    }

    @Test func clipEventsEndWithTheReport() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("clip.mp4")
        var fractions: [Double] = []
        var report: PreviewClipReport?
        let events = MuxEngine().previews.events(
            for: PreviewClipJob(input: Self.frameIndex, output: output, options: PreviewClipOptions(start: 1, duration: 1, height: 90)))
        for try await event in events {
            #expect(report == nil, "an event after the report")
            switch event {
            case .progress(let progress): fractions.append(progress.fraction)
            case .finished(let made): report = made
            }
        }
        let made = try #require(report, "the events ended without the report")
        #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 <= $1 }, "\(fractions)")
        let video = try #require(try MP4File(path: output).videoTracks.first)
        #expect(made.videoFrames == 30 && video.sampleCount == 30, "\(made.videoFrames) frames, \(video.sampleCount) samples")
        #expect(folder.contents == ["clip.mp4"])
    }

    @Test func frameEventsEndWithTheImages() async throws {
        let folder = try TemporaryFolder()
        var images: [WrittenImage]?
        for try await event in MuxEngine().previews.writeFramesEvents(
            of: Self.frameIndex, into: folder.url.path, options: FrameOptions(selection: .times([0.5, 1, 2]), size: 32))
        {
            if case .finished(let written) = event { images = written }
        }
        let written = try #require(images)
        #expect(written.map(\.time) == [15, 30, 60].map(PreviewTests.time(ofFrame:)))
        #expect(folder.contents.sorted() == written.map { ($0.path as NSString).lastPathComponent })
    }

    /// Leaving the loop at the first progress cancels the clip. The loop
    /// runs on a thread of its own, so it leaves as soon as that progress
    /// comes, seconds before the clip could be done, however busy Swift's
    /// threads are. The pool is the test's own: its shutdown waits for the
    /// work on its thread, so the cancelled clip has cleaned up when it
    /// returns (nothing is timed).
    @Test(Samples.required) func breakingOutOfClipEventsLeavesNothing() async throws {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        let executor = OwnThreadExecutor()
        defer { executor.stop() }
        let engine = MuxEngine(runtime: MediaRuntime(threadPool: pool))
        let folder = try TemporaryFolder()
        // The whole iPhone video at 360 lines: seconds of work.
        let events = engine.previews.events(for: PreviewClipJob(input: Self.iphone, output: folder.path("clip.mp4"), options: PreviewClipOptions(duration: 10)))
        let brokeOut = try await Task(executorPreference: executor) { try await Self.breakAtFirstProgress(events) }.value
        try await pool.shutdownGracefully()
        #expect(brokeOut, "the clip finished before its first progress was seen")
        #expect(folder.contents.isEmpty, "left behind: \(folder.contents)")
    }

    /// Iterates until a progress report made while the job runs (the last
    /// one, done of done, comes once the output is in place) and leaves the
    /// loop; the iterator ends with this function.
    static func breakAtFirstProgress<Result>(_ events: ProgressEvents<PreviewProgress, Result>) async throws -> Bool {
        for try await event in events {
            if case .progress(let progress) = event, progress.total == nil || progress.totalIsEstimate { return true }
        }
        return false
    }

    /// The reporter alone: a report below one already sent, or above 1, is
    /// held to the range; the first report and the last always arrive.
    @Test func reportsNeverGoBack() throws {
        let reports = Reports()
        var reporter = ProgressReporter { reports.add($0) }
        reporter.report(done: 1, total: nil, fraction: 0.5)
        for (done, fraction) in [(2, 0.25), (3, 1.5), (4, -1.0)] { reporter.report(done: done, total: nil, fraction: fraction) }
        reporter.finish(done: 4)
        let all = reports.all
        #expect(all.first == PreviewProgress(done: 1, total: nil, fraction: 0.5))
        #expect(try Self.checkedLast(all, "reporter") == PreviewProgress(done: 4, total: 4, fraction: 1))
    }
}
