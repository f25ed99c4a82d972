import Foundation
import TestSupport
import Testing
@testable import MediaMux
@testable import MediaMuxCore

/// A movie whose sample tables are made from fragments (a copy read from
/// fragments, in flat memory) against the same plan's movie with the tables
/// FFmpeg's muxer makes: the same samples, bytes, decode and composition
/// times, sync samples, edit lists and durations (but mdhd's, see below), read by the tests' own MP4
/// reader; a plain movie (no mvex, no moof), with its header where the plan
/// puts it; and what GStreamer and ffprobe make of it.
struct MovieFromFragmentsTests {
    struct Job: Sendable, CustomTestStringConvertible {
        var video: String
        var audio: String
        var options = MergeOptions()
        var testDescription: String { "\(video) + \(audio)" }
    }

    static let jobs: [Job] = [
        Job(video: "fmp4_empty_moov.mp4", audio: "aac_7s.m4a"),
        Job(video: "fmp4_negative_cts.mp4", audio: "dash_audio.mp4"),
        Job(video: "fmp4_fragment_per_frame.mp4", audio: "fmp4_empty_moov.mp4"),
        Job(video: "fmp4_moov_and_fragments.mp4", audio: "fmp4_moov_and_fragments.mp4"),
        // The last frame held to a longer soundtrack, which starts late.
        Job(video: "dash_video_sidx.mp4", audio: "aac_7s.m4a", options: MergeOptions(end: .audio, audio: AudioOptions(offset: 0.5))),
        // The movie header left at the end.
        Job(video: "fmp4_wrong_mehd.mp4", audio: "aac_2s.m4a", options: MergeOptions(faststart: false)),
        // A soundtrack encoded (FLAC to AAC), and one copied from WebM.
        Job(video: "fmp4_empty_moov.mp4", audio: "flac_3s.flac"),
        Job(video: "fmp4_empty_moov.mp4", audio: "opus_5s.webm"),
    ]

    /// Both movies of one job: tables from fragments, and FFmpeg's.
    static func merge(_ job: Job, in folder: TemporaryFolder) async throws -> (fromFragments: String, muxer: String, report: MergeReport) {
        let engine = MuxEngine()
        let fromFragments = folder.path("fragments.mp4")
        let muxer = folder.path("muxer.mp4")
        var plan = try await engine.plan(video: Fixtures.path(job.video), audio: Fixtures.path(job.audio), output: fromFragments, options: job.options)
        #expect(plan.sampleTables == .fromFragments(longest: MergePlanner.longestFragment), "\(job)")
        let report = try await engine.execute(plan)
        plan.outputPath = muxer
        plan.sampleTables = .muxer
        _ = try await engine.execute(plan)
        return (fromFragments, muxer, report)
    }

    @Test(arguments: jobs)
    func theMovieHoldsWhatTheMuxersMovieHolds(_ job: Job) async throws {
        let folder = try TemporaryFolder()
        let outputs = try await Self.merge(job, in: folder)
        let movie = try MP4File(path: outputs.fromFragments)
        let reference = try MP4File(path: outputs.muxer)
        #expect(movie.fragmentCount == 0 && movie.moov.find("mvex").isEmpty, "\(job): a fragmented movie")
        let layout = movie.topLevelBoxes.map(\.type)
        #expect(Set(layout.dropFirst(2)) == ["free", "mdat"] || Set(layout.dropFirst(1).dropLast()) == ["free", "mdat"], "\(job): \(layout)")
        let headerFirst = layout.firstIndex(of: "moov")! < layout.firstIndex(of: "mdat")!
        #expect(headerFirst == job.options.faststart, "\(job): \(layout)")
        #expect(outputs.report.warnings.isEmpty, "\(job): \(outputs.report.warnings)")
        #expect(movie.movieTimescale == reference.movieTimescale && movie.movieDuration == reference.movieDuration)
        try #require(movie.tracks.count == reference.tracks.count)
        for (copy, original) in zip(movie.tracks, reference.tracks) {
            let what = "\(job) track \(original.trackID)"
            FragmentedOutputTests.expectSameDescription(copy, original, what)
            #expect(copy.tkhdDuration == original.tkhdDuration, "\(what): track duration")
            try #require(copy.sampleCount == original.sampleCount, "\(what): \(copy.sampleCount) samples, FFmpeg's movie has \(original.sampleCount)")
            #expect(copy.decodeTimes == original.decodeTimes, "\(what): decode times")
            #expect(copy.compositionOffsets == original.compositionOffsets, "\(what): composition offsets")
            // mdhd gives the media's length, the sum of its sample durations (FFmpeg's muxer
            // writes the span its samples are presented for, a frame shorter when the first
            // is presented after it is decoded).
            #expect(copy.mediaDuration == original.mediaDuration && UInt64(copy.mediaDuration) == copy.mdhdDuration,
                    "\(what): media duration \(copy.mediaDuration) and \(copy.mdhdDuration), FFmpeg's \(original.mediaDuration)")
            for index in 0..<original.sampleCount {
                #expect(copy.isSyncSample(index) == original.isSyncSample(index), "\(what) sample \(index): sync")
                #expect(try copy.sampleData(index) == original.sampleData(index), "\(what) sample \(index): bytes")
            }
        }
    }

    /// A moov planned for the front but given no room keeps its place by
    /// moving the media data, as FFmpeg's movie does.
    @Test func aMovieHeaderMovedToTheFrontComesFirst() async throws {
        let folder = try TemporaryFolder()
        let engine = MuxEngine()
        let output = folder.path("moved.mp4")
        var plan = try await engine.plan(video: Fixtures.path("fmp4_empty_moov.mp4"), audio: Fixtures.path("aac_7s.m4a"), output: output)
        plan.movieHeader = .movedToFront
        let report = try await engine.execute(plan)
        #expect(report.warnings.isEmpty)
        let movie = try MP4File(path: output)
        #expect(movie.topLevelBoxes.prefix(2).map(\.type) == ["ftyp", "moov"])
        let track = try #require(movie.videoTracks.first)
        let source = try #require(try MP4File(path: Fixtures.path("fmp4_empty_moov.mp4")).videoTracks.first)
        #expect(try (0..<track.sampleCount).map { try track.sampleData($0) } == (0..<source.sampleCount).map { try source.sampleData($0) })
    }

    /// Chromium gives both movies the merge's length, and shows the same
    /// pictures at the same moments in them (the sources' pictures have a
    /// running counter): the first, one mid-way, and the last.
    @Test(.tags(.browser), .skippedByTag) func chromiumPlaysItAsTheMuxersMovie() async throws {
        let folder = try TemporaryFolder()
        var expected: [String: Double] = [:]
        var files: [(name: String, seeks: [Double])] = []
        for (index, job) in Self.jobs.prefix(3).enumerated() {
            let jobFolder = try TemporaryFolder()
            let outputs = try await Self.merge(job, in: jobFolder)
            let seconds = outputs.report.duration.seconds
            let seeks = [0.0, (seconds / 2 * 100).rounded() / 100, ((seconds - 0.02) * 100).rounded(.down) / 100]
            for (kind, path) in [("fragments", outputs.fromFragments), ("muxer", outputs.muxer)] {
                let name = "\(index)-\(kind).mp4"
                try FileManager.default.copyItem(atPath: path, toPath: folder.path(name))
                withExtendedLifetime(jobFolder) {}
                expected[name] = seconds
                files.append((name, seeks))
            }
        }
        let (durations, pictures) = try BrowserTimelineTests.play(files, in: folder)
        for (name, seconds) in expected {
            let duration = try #require(durations[name], "Chromium gave no duration for \(name): \(durations)")
            #expect(abs(duration - seconds) < 0.001, "\(name): Chromium says \(duration) s, the merge \(seconds) s")
        }
        for index in 0..<3 {
            let made = pictures["\(index)-fragments.mp4"] ?? [:]
            #expect(made.count == 3 && made == pictures["\(index)-muxer.mp4"], "job \(index): \(made) and \(pictures["\(index)-muxer.mp4"] ?? [:])")
        }
    }

    /// GStreamer's qtdemux gives the movie's length, and ffprobe reads the
    /// same packets from both movies.
    @Test(.tags(.gstreamer), .skippedByTag) func gstreamerAndFFprobeAgree() async throws {
        for job in Self.jobs.prefix(2) {
            let folder = try TemporaryFolder()
            let outputs = try await Self.merge(job, in: folder)
            let said = try GStreamer.discoveredDuration(of: outputs.fromFragments)
            #expect(abs(said - outputs.report.duration.seconds) < 0.001, "\(job): GStreamer says \(said) s, the merge \(outputs.report.duration.seconds) s")
            for kind in ["v", "a"] {
                let made = try FFprobe.packetDigest(outputs.fromFragments, stream: kind)
                let muxers = try FFprobe.packetDigest(outputs.muxer, stream: kind)
                #expect(made == muxers, "\(job) \(kind): \(made.count) and \(muxers.count) packets")
            }
        }
    }
}
