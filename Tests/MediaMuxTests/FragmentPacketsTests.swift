import CFFmpeg
import Foundation
import MediaMuxBase
import MediaMuxContainers
import Testing
import TestSupport
@testable import MediaMux
@testable import MediaMuxCore

/// MediaMux's own reader of fragment samples, which copies use so that
/// memory does not grow with the recording, against two others, packet for
/// packet: FFmpeg's reader for the bytes, their place in the file and the
/// keyframes, and the tests' MP4 reader for the times and durations. Where
/// no composition offset is negative the times are FFmpeg's as well; where
/// one is, FFmpeg presents every sample that many ticks late, and MediaMux
/// lowers the decode times instead, as a sample table does.
@Suite struct FragmentPacketsTests {
    static let fixtures = [
        "fmp4_empty_moov.mp4", "fmp4_moov_and_fragments.mp4", "fmp4_fragment_per_frame.mp4", "fmp4_wrong_mehd.mp4", "fmp4_cut_last_fragment.mp4",
        "fmp4_negative_cts.mp4", "dash_video.mp4", "dash_video_sidx.mp4", "dash_audio.mp4", "dash_audio_sidx.mp4",
    ]
    /// The tests' reader does not read a file cut inside its mdat, so the
    /// cut fixture's samples are read in the file it is a prefix of. The
    /// real file cut short (truncated_coremedia_fmp4_aac.mp4) has no whole
    /// original: its merge is judged in MergeTests.
    static let samples = ["fmp4_h264_aac_sidx_seekable.mp4", "fmp4_opus_audio.mp4"]

    @Test(arguments: fixtures)
    func thePacketsAreTheFragmentsSamples(_ name: String) async throws {
        let whole = name == "fmp4_cut_last_fragment.mp4" ? "fmp4_empty_moov.mp4" : name
        try await Self.expectSamePackets(Fixtures.path(name), described: Fixtures.path(whole))
    }

    @Test(Samples.required, arguments: samples)
    func theRealFilesPacketsAreTheirFragmentsSamples(_ name: String) async throws {
        try await Self.expectSamePackets(Samples.path(name), described: Samples.path(name))
    }

    /// Samples in the moov's tables as well are read by MediaMux where no
    /// edit list moves them, and left to FFmpeg's reader where one does.
    @Test func samplesInTheMoovWithAnEditListAreReadByFFmpeg() async throws {
        let plain = try await MuxEngine().probe(Fixtures.path("fmp4_moov_and_fragments.mp4"))
        #expect(plain.streams.allSatisfy { $0.isFragmented && $0.fragmentSamples != nil })
        // The first 10 frames and 14 AAC packets (TestMedia/README.md).
        #expect(plain.streams.map { $0.fragmentSamples?.tableSamples } == [10, 14])
        let folder = try TemporaryFolder()
        let edited = folder.path("edited.mp4")
        // The source's edit lists (the video's B-frame delay, the AAC priming) kept, in this layout.
        let ffmpeg = try #require(["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first { FileManager.default.isExecutableFile(atPath: $0) })
        let made = try ExternalTool.run(
            ffmpeg, ["-nostdin", "-v", "error", "-i", Fixtures.path("fmp4_source.mp4"), "-c", "copy", "-movflags", "frag_keyframe", "-use_editlist", "1", edited],
            keeping: .errors, seconds: 60)
        try #require(made.status == 0, "\(String(decoding: made.text, as: UTF8.self))")
        let info = try await MuxEngine().probe(edited)
        #expect(try MP4File(path: edited).tracks.allSatisfy { $0.editList != nil && $0.sampleCount > 0 })
        #expect(info.streams.allSatisfy { $0.isFragmented && $0.fragmentSamples == nil })
    }

    /// A merge reads the fragments itself, and with a negative composition
    /// offset keeps every frame at its moment (FFmpeg's late times cut the last two).
    @Test func negativeCompositionOffsetsKeepEveryFrame() async throws {
        let path = Fixtures.path("fmp4_negative_cts.mp4")
        let info = try await MuxEngine().probe(path)
        let video = try #require(info.video)
        #expect(video.fragmentSamples?.presentationLead == 1024)
        let planner = MergePlanner(canStore: { _, _ in true }, hasEncoder: { _ in false })
        let plan = try planner.plan(
            video: info, audio: try await MuxEngine().probe(Fixtures.path("aac_7s.m4a")), output: "out.mp4",
            outputFacts: PlannerTests.freshOutput, options: MergeOptions())
        #expect(plan.video.readsOwnFragments == video.fragmentSamples)
        let folder = try TemporaryFolder()
        let report = try await MuxEngine().merge(video: path, audio: Fixtures.path("aac_7s.m4a"), output: folder.path("out.mp4"))
        #expect(report.video.packets == FragmentedFixtureTests.sourceVideoFrames)
    }

    /// Reads `path` with both readers; `described` is the file the tests'
    /// reader reads for the times (`path`, or the whole file it was cut from).
    static func expectSamePackets(_ path: String, described: String) async throws {
        let info = try await MuxEngine().probe(path)
        let file = try MP4File(path: described)
        let fileSize = try #require((try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value)
        for stream in info.streams where stream.kind == .video || stream.kind == .audio {
            let samples = try #require(stream.fragmentSamples, "\(path): stream \(stream.index) is not read from its fragments")
            let track = try #require(file.tracks.first { $0.trackID == UInt32(samples.trackID) })
            let lead = max(0, -Int64(track.compositionOffsets.min() ?? 0))
            #expect(samples.presentationLead == lead)
            // A file cut short: the samples whose data is all there.
            let whole = (0..<track.sampleCount).prefix { track.sampleOffsets[$0] + Int64(track.sampleSizes[$0]) <= fileSize }.count
            // The tests' reader puts the moov's samples first.
            let moovSamples = track.sampleCount - track.fragmentDurations.count
            #expect(whole > 0 && moovSamples >= 0 && (moovSamples > 0) == path.hasSuffix("moov_and_fragments.mp4"))
            let durations = (0..<moovSamples).map { track.decodeTimes[$0 + 1] - track.decodeTimes[$0] } + track.fragmentDurations
            for ignoringEditList in [false, true] {
                let shift = ignoringEditList ? 0 : editShift(track, movieTimescale: Int64(file.movieTimescale))
                let ours = try FragmentPackets(
                    path: path, samples: samples, isAudio: stream.kind == .audio, ignoringEditList: ignoringEditList,
                    cancellation: CancellationFlag())
                let ffmpeg = try DemuxerHandle(path: path, ignoringEditLists: ignoringEditList)
                let mine = try PacketBuffer()
                let theirs = try PacketBuffer()
                var index = 0
                let what = "\(path), stream \(stream.index)\(ignoringEditList ? " without its edit list" : "")"
                while try ours.read(into: mine, streamIndex: Int32(stream.index)) {
                    try #require(index < whole, "\(what): more packets than whole samples")
                    try #require(try ffmpeg.read(into: theirs, of: stream.index), "\(what): FFmpeg's reader ends before sample \(index + 1)")
                    let a = mine.pointer.pointee
                    let b = theirs.pointer.pointee
                    #expect(a.stream_index == Int32(stream.index))
                    #expect(bytes(a) == bytes(b), "\(what): the bytes of sample \(index + 1)")
                    #expect(a.pos == b.pos && a.flags & AV_PKT_FLAG_KEY == b.flags & AV_PKT_FLAG_KEY, "\(what): sample \(index + 1)")
                    #expect(a.pts == track.compositionTimes[index] - shift, "\(what): presentation time of sample \(index + 1)")
                    #expect(a.dts == track.decodeTimes[index] - shift - lead, "\(what): decode time of sample \(index + 1)")
                    #expect(a.duration == durations[index], "\(what): duration of sample \(index + 1)")
                    // The moov's samples FFmpeg times as a sample table says; the fragments' late.
                    let late = index < moovSamples ? 0 : lead
                    #expect(b.pts - a.pts == late && b.dts - a.dts == late, "\(what): FFmpeg's times of sample \(index + 1)")
                    index += 1
                }
                #expect(index == whole, "\(what): \(index) packets, \(whole) whole samples")
            }
        }
    }

    /// FFmpeg's shift of a fragmented track by its edit list: the first
    /// segment's media time less a leading empty edit, in media ticks.
    static func editShift(_ track: MP4File.Track, movieTimescale: Int64) -> Int64 {
        guard let edits = track.editList, let first = edits.first else { return 0 }
        let empty = first.isEmpty ? first.segmentDuration * Int64(track.mediaTimescale) / movieTimescale : 0
        return max(edits.first { !$0.isEmpty }?.mediaTime ?? 0, 0) - empty
    }

    static func bytes(_ packet: AVPacket) -> Data {
        guard let data = packet.data, packet.size > 0 else { return Data() }
        return Data(bytes: data, count: Int(packet.size))
    }
}
