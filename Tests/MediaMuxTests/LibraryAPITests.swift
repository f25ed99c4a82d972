import Foundation
import NIOCore
import MediaMuxBase
import SystemPackage
import Testing
import TestSupport
@testable import MediaMux
@testable import MediaMuxCore

/// The library as a Swift developer meets it: facts at the top of a probe,
/// paths and URLs, merge from a URL in one call, progress as a sequence,
/// errors typed. Outputs are checked with the tests' own MP4 reader.
struct LibraryAPITests {
    static let video = Fixtures.path("h264_bframes_aac.mp4")
    static let audio = Fixtures.path("aac_7s.m4a")

    /// The audio samples an output holds, byte for byte.
    static func audioSamples(_ path: String) throws -> [Data] {
        let file = try MP4File(path: path)
        let track = try #require(file.audioTracks.first)
        return try (0..<track.sampleCount).map { try track.sampleData($0) }
    }

    @Test(Samples.required) func probeOfAPhoneClipSaysDurationSizeAndRotationAtTheTop() async throws {
        let phone = try await MuxEngine().probe(FilePath(Samples.path("iphone_hevc_rot90_bframes_editlist_nonsync_start.mp4")))
        #expect(phone.rotation == 90)
        #expect(phone.displaySize == VideoSize(width: 1080, height: 1920))
        #expect(phone.duration == MediaTime(value: 27722, timescale: 10000))
        #expect(phone.video?.codec == "hevc" && phone.audio?.codec == "aac")
    }

    @Test func probeSaysDurationSizeAndRotationAtTheTop() async throws {
        // Coded 320x240, shown turned 90° clockwise.
        let turned = try await MuxEngine().probe(FilePath(Fixtures.path("h264_rot90.mp4")))
        #expect(turned.rotation == 90)
        #expect(turned.displaySize == VideoSize(width: 240, height: 320))
        #expect(turned.duration == MediaTime(3))
        #expect(turned.video?.codec == "h264" && turned.audio == nil)
        // Non-square pixels (4:3) widen the 120x90 picture as players show it.
        let wide = try await MuxEngine().probe(Fixtures.path("h264_frame_index.mp4"))
        #expect(wide.displaySize == VideoSize(width: 160, height: 90))
        #expect(wide.rotation == 0 && wide.audio == nil)
        #expect(wide.duration == MediaTime(4))
        // An audio file has a duration and no picture.
        let song = try await MuxEngine().probe(Self.audio)
        #expect(song.displaySize == nil && song.rotation == nil)
        #expect(try #require(song.duration).seconds > 6.9)
    }

    @Test(.tags(.network), .skippedByTag) func mergeFromAURLInOneCall() async throws {
        try await DownloadTests.withServer { server, folder in
            server.serve("/song.m4a", body: DownloadTests.small)
            let fromFile = folder.path("from-file.mp4")
            let local = try await MuxEngine().merge(video: Self.video, audio: Self.audio, output: fromFile)
            #expect(local.audioDownload == nil)

            // Cached, as a job with its download options.
            let cached = folder.path("cached.mp4")
            let report = try await MuxEngine().merge(
                MergeJob(video: Self.video, audio: server.url("/song.m4a"), output: cached, download: DownloadTests.options(folder)))
            #expect(report.audioDownload?.url == server.url("/song.m4a"))
            // The report names the soundtrack as the caller did; the download says where its bytes are.
            #expect(report.audio!.source == server.url("/song.m4a") && report.video.source == Self.video)
            #expect(report.audioDownload.map { FileManager.default.fileExists(atPath: $0.path) } == true)
            #expect(report.duration == local.duration)
            #expect(try Self.audioSamples(cached) == Self.audioSamples(fromFile))

            // Not cached: the URL as the String a user types; nothing but the output stays.
            let once = folder.path("out/once.mp4")
            try FileManager.default.createDirectory(atPath: folder.path("out"), withIntermediateDirectories: true)
            let downloaded = Locked<Int64>(0)
            let onceReport = try await MuxEngine().merge(
                MergeJob(video: Self.video, audio: server.url("/song.m4a"), output: once, download: DownloadTests.options(folder, useCache: false)),
                progress: { progress in
                    if case .downloading(let step) = progress { downloaded.withLock { $0 = max($0, step.bytesReceived) } }
                })
            #expect(onceReport.audioDownload?.bytes == Int64(DownloadTests.small.count))
            #expect(onceReport.audio!.source == server.url("/song.m4a"))
            #expect(downloaded.withLock { $0 } == Int64(DownloadTests.small.count))
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("out")) == ["once.mp4"])
            #expect(try Self.audioSamples(once) == Self.audioSamples(fromFile))
        }
    }

    @Test func downloadAURLToAFilePath() async throws {
        try await DownloadTests.withServer { server, folder in
            server.serve("/song.m4a", body: DownloadTests.small)
            let url = try #require(URL(string: server.url("/song.m4a")))
            let alone = try await DownloadEngine().download(url, to: FilePath(folder.path("alone.m4a")), options: DownloadTests.options(folder))
            let facade = try await MuxEngine().download(url, to: FilePath(folder.path("facade.m4a")), options: DownloadTests.options(folder))
            #expect(alone.path == folder.path("alone.m4a") && facade.path == folder.path("facade.m4a"))
            for path in [alone.path, facade.path] {
                #expect(try DownloadTests.sha256(file: path) == DownloadTests.smallHash)
            }
        }
    }

    @Test func aURLThatCannotBeDownloadedIsAnOptionError() async throws {
        let folder = try TemporaryFolder()
        do {
            _ = try await MuxEngine().merge(
                video: Self.video, audio: URL(fileURLWithPath: Self.audio).absoluteString, output: folder.path("o.mp4"))
            Issue.record("a file: URL was merged")
        } catch {
            // Typed: `error` is a MediaMuxError without a cast.
            #expect(error.kind == .option)
            #expect(error.subject?.hasPrefix("file://") == true)
        }
        // Typed as text, another scheme is a URL that cannot be fetched, not a missing file.
        await #expect(throws: MediaMuxError.unsupportedURL(url: "ftp://example.com/a.m4a", reason: "only http and https URLs can be downloaded (not ftp)")) {
            try await MuxEngine().merge(video: Self.video, audio: "ftp://example.com/a.m4a", output: folder.path("o.mp4"))
        }
        #expect(folder.contents.isEmpty)
    }

    @Test func mergeProgressEndsAtTheWholeOutput() async throws {
        let folder = try TemporaryFolder()
        let seen = Locked<[MergeProgress]>([])
        let report = try await MergeEngine().merge(
            video: Self.video, audio: Self.audio, output: folder.path("o.mp4"),
            progress: { progress in seen.withLock { $0.append(progress) } })
        let all = seen.withLock { $0 }
        let last = try #require(all.last)
        #expect(last.fraction == 1 && last.written == report.duration && last.total == report.duration)
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.fraction <= $1.fraction })
    }

    /// The tracks are written half a second at a time, the video's packets
    /// of a window before the sound's, so the packet written last can be
    /// earlier than one before it. A handler slow enough to be called for
    /// every packet of the first window (each call takes the throttle's
    /// interval) sees the video reach 0.47 s before the sound starts at 0:
    /// the progress must stay at the furthest time written.
    @Test func progressNeverGoesBackWhileTheTracksTakeTurns() async throws {
        let folder = try TemporaryFolder()
        let seen = Locked<[MergeProgress]>([])
        _ = try await MergeEngine().merge(
            video: Self.video, audio: Self.audio, output: folder.path("o.mp4"),
            progress: { progress in
                seen.withLock { $0.append(progress) }
                if progress.written < MergePlanner.interleaveWindow { Thread.sleep(forTimeInterval: ProgressThrottle.interval.seconds) }
            })
        let written = seen.withLock { $0 }.map(\.written)
        #expect(written.filter { $0 < MergePlanner.interleaveWindow }.count >= 30, "a call for nearly every packet of the first window")
        #expect(zip(written, written.dropFirst()).allSatisfy { $0 <= $1 }, "\(written)")
    }

    @Test func mergeAsASequenceOfEvents() async throws {
        let folder = try TemporaryFolder()
        var progress: [MergeProgress] = []
        var finished: MuxReport?
        let job = MergeJob(video: Self.video, audio: Self.audio, output: folder.path("o.mp4"))
        for try await event in MuxEngine().events(for: job) {
            #expect(finished == nil, "an event after the result")
            switch event {
            case .progress(.merging(let step)): progress.append(step)
            case .progress(.downloading): Issue.record("a download for a file")
            case .finished(let report): finished = report
            }
        }
        let report = try #require(finished)
        #expect(report.duration == MediaTime(4))
        #expect(progress.allSatisfy { (0...1).contains($0.fraction) })
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.fraction <= $1.fraction })
        #expect(try MP4File(path: folder.path("o.mp4")).audioTracks.count == 1)

        // A second iteration runs the call again: the output now exists.
        do {
            for try await _ in MuxEngine().events(for: job) {}
            Issue.record("merged over an existing output")
        } catch {
            #expect(error == .outputExists(path: folder.path("o.mp4")))
        }
    }

    /// A job is one value: made once, changed in place, run by one call or
    /// iterated as one stream of events, and captured by a task group's tasks.
    @Test func aJobIsOneValueAndOneCall() async throws {
        let folder = try TemporaryFolder()
        var job = MergeJob(video: Self.video, audio: Self.audio, output: folder.path("a.mp4"))
        job.options.keepsMetadata = false
        job.thumbnails = ThumbnailOptions(size: 64, every: 1)
        let steps = Locked<[MuxProgress]>([])
        let thumbnails = Locked<[MediaTime]>([])
        let report = try await MuxEngine().merge(
            job, progress: { step in steps.withLock { $0.append(step) } },
            thumbnail: { frame in thumbnails.withLock { $0.append(frame.time) } })
        #expect(report.duration == MediaTime(4) && report.audioDownload == nil)
        // Local files: merge progress alone, ending at the whole output.
        let seen = steps.withLock { $0 }
        #expect(!seen.isEmpty && seen.allSatisfy { if case .merging = $0 { true } else { false } })
        #expect(seen.last?.completed == 1)
        #expect(thumbnails.withLock { $0.count } >= 3)

        // The same job as events, over an existing output once it may overwrite.
        job.options.overwrite = true
        var events: [MuxProgress] = []
        var finished: MuxReport?
        for try await event in MuxEngine().events(for: job) {
            switch event {
            case .progress(let step): events.append(step)
            case .finished(let done): finished = done
            }
        }
        #expect(finished?.duration == report.duration)
        #expect(events.allSatisfy { ($0.completed ?? -1) >= 0 && ($0.completed ?? 2) <= 1 })

        // Two jobs from one value, in a task group.
        let base = job
        let outputs = try await withThrowingTaskGroup(of: String.self) { group in
            for name in ["b.mp4", "c.mp4"] {
                var each = base
                each.output = .file(folder.path(name))
                group.addTask { try await MuxEngine().merge(each).output }
            }
            var written: [String] = []
            for try await output in group { written.append(output) }
            return written.sorted()
        }
        #expect(outputs == [folder.path("b.mp4"), folder.path("c.mp4")])
        #expect(try MP4File(path: folder.path("c.mp4")).audioTracks.count == 1)

        // The same job into a stream: fragmented MP4, as many bytes as the report says, as long as the file.
        let pieces = Locked<[UInt8]>([])
        var streamed = base
        streamed.output = .stream(MergeStream(name: "response") { chunk in pieces.withLock { $0 += chunk.readableBytesView } })
        let sent = try await MuxEngine().merge(streamed)
        let bytes = pieces.withLock { $0 }
        try Data(bytes).write(to: URL(fileURLWithPath: folder.path("sent.mp4")))
        let sentFile = try MP4File(path: folder.path("sent.mp4"))
        #expect(sent.output == "response" && sent.layout == .fragmented && sent.fileBytes == bytes.count)
        #expect(sentFile.fragmentCount > 0 && sent.duration == report.duration)
    }

    /// Cancelling the task that iterates a merge from a URL cancels the
    /// download: the loop throws `cancelled` after the call has cleaned up.
    @Test(.timeLimit(.minutes(3))) func cancellingTheIterationCancelsTheCall() async throws {
        try await DownloadTests.withServer { server, folder in
            server.serve("/song.m4a", body: DownloadTests.small)
            server.inject("/song.m4a", [.stallAfter(bytes: 4096, seconds: 600)])
            try FileManager.default.createDirectory(atPath: folder.path("out"), withIntermediateDirectories: true)
            let output = folder.path("out/o.mp4")
            let events = MuxEngine().events(for: MergeJob(
                video: Self.video, audio: server.url("/song.m4a"), output: output,
                download: DownloadTests.options(folder, useCache: false)))
            let (started, signal) = AsyncStream<Void>.makeStream()
            let iteration = Task {
                for try await event in events {
                    if case .progress(.downloading(let progress)) = event, progress.bytesReceived > 0 { signal.yield() }
                }
            }
            for await _ in started { break }
            iteration.cancel()
            let result = await iteration.result
            #expect(throws: MediaMuxError.cancelled(path: output)) { try result.get() }
            #expect(!FileManager.default.fileExists(atPath: output))
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("out")).isEmpty)
        }
    }

    /// Result and progress values can be made by callers' own tests.
    @Test func resultsCanBeMadeByCallers() {
        let track = MergeReport.Track(
            source: "v.mp4", streamIndex: 0, codec: "h264", codecTag: "avc1", start: 0, duration: 2, packets: 60, bytes: 1000)
        let report = MergeReport(
            output: "o.mp4", duration: 2, endReason: .videoEndsFirst, rotation: RotationDecision(degrees: 0, reason: "the source says so"),
            video: track, audio: track, fileBytes: 2000, elapsed: .milliseconds(30), movieHeader: .atEnd)
        #expect(MuxReport(merge: report).duration == MediaTime(2))
        #expect(MergeProgress(written: 1, total: 4).fraction == 0.25)
        #expect(MergeProgress(written: -1, total: 4).fraction == 0)
        let info = MediaInfo(
            path: "v.mp4", format: "mov,mp4",
            streams: [StreamInfo(index: 0, kind: .video, codec: "h264", timeBase: MediaTime(value: 1, timescale: 90000), start: 0, end: 3, width: 1920, height: 1080, rotation: 270)])
        #expect(info.displaySize == VideoSize(width: 1080, height: 1920) && info.duration == MediaTime(3))
    }

    /// Every call's progress has one shape (`WorkProgress`): how much is done, and a line that says so.
    @Test func progressReportsShareOneShape() {
        func line(_ progress: some WorkProgress) -> String {
            "\(progress.completed.map { fixedPoint($0, decimals: 2) } ?? "?") \(progress)"
        }
        #expect(line(MergeProgress(written: 1, total: 4)) == "0.25 1.000 of 4.000 s")
        #expect(line(MergeProgress(written: 3, total: 10, framesEncoded: 90, framesPlanned: 300)) == "0.30 3.000 of 10.000 s (90 of 300 frames encoded)")
        #expect(line(PreviewProgress(done: 3, total: 12, fraction: 0.25)) == "0.25 3 of 12 frames")
        #expect(line(PreviewProgress(done: 3, total: nil, fraction: 0.4)) == "0.40 3 frames")
        #expect(line(DownloadProgress(bytesReceived: 3 << 20, totalBytes: 12 << 20, bytesPerSecond: 1_048_576)) == "0.25 3.0 MiB of 12.0 MiB, 1.0 MiB/s")
        #expect(line(DownloadProgress(bytesReceived: 512)) == "? 512 bytes so far")
        #expect(line(BatchProgress(total: 4, finished: 2, failed: 1, skipped: 0, running: 1)) == "0.50 2 of 4 jobs ended (1 failed), 1 running")
        #expect(line(MuxProgress.downloading(DownloadProgress(bytesReceived: 512))) == "? download: 512 bytes so far")
        #expect(line(MuxProgress.merging(MergeProgress(written: 2, total: 4))) == "0.50 merge: 2.000 of 4.000 s")
        #expect("\(MergePlan.MovieHeaderPlacement.reservedAtFront(bytes: 4096))" == "at the front, in 4096 bytes reserved for it")
        #expect("\(MergePlan.MovieHeaderPlacement.fragmented(longest: 2))" == "fragmented, 2.000 s at the most a fragment")
    }
}
