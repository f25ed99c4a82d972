import Foundation
import Testing
import TestSupport
@testable import MediaMux
@testable import MediaMuxCore

/// Real fragmented MP4 (a moov without samples, then moof/mdat pairs), as
/// video and as soundtrack: probed and merged with every sample its
/// fragments hold, byte for byte, at the moments they declare. The tests'
/// MP4 reader reads the fragments itself (Support/MP4Fragments.swift); the
/// counts it must find are SOURCES.md's.
@Suite(Samples.required)
struct FragmentedInputTests {
    /// androidx/media's sample_fragmented_seekable.mp4: sidx, then one moof
    /// holding 30 H.264 frames (composition offsets from 2002/30000, no edit
    /// list) and 46 AAC packets.
    static let videoAndAudio = Samples.path("fmp4_h264_aac_sidx_seekable.mp4")
    /// Opus in five fragments of 50 packets.
    static let opus = Samples.path("fmp4_opus_audio.mp4")

    @Test func theReaderFindsTheFragmentsSamples() throws {
        let file = try MP4File(path: Self.videoAndAudio)
        #expect(file.fragmentCount == 1)
        #expect(file.videoTracks.first?.sampleCount == 30)
        #expect(file.audioTracks.first?.sampleCount == 46)
        let opus = try MP4File(path: Self.opus)
        #expect(opus.fragmentCount == 5)
        #expect(opus.audioTracks.first?.sampleCount == 250)
        for track in file.tracks + opus.tracks {
            #expect(track.issues.isEmpty, "\(track.issues)")
        }
    }

    @Test func theProbeSeesEveryPacket() async throws {
        let info = try await MuxEngine().probe(Self.videoAndAudio)
        let source = try MP4File(path: Self.videoAndAudio)
        let video = try #require(info.video)
        let audio = try #require(info.audio)
        #expect(video.packetCount == 30 && audio.packetCount == 46)
        let videoTrack = try #require(source.videoTracks.first)
        let span = try #require(video.end).seconds - (try #require(video.start).seconds)
        #expect(abs(span - videoTrack.presentedEnd) < 0.001, "probed \(span) s")
        #expect(abs(try #require(audio.end).seconds - 46 * 1024.0 / 44100) < 0.001)
    }

    @Test func aFragmentedVideoMergesWithEverySample() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        let report = try await MuxEngine().merge(video: Self.videoAndAudio, audio: Fixtures.path("aac_7s.m4a"), output: output)
        let source = try #require(try MP4File(path: Self.videoAndAudio).videoTracks.first)
        let file = try MP4File(path: output)
        let copy = try #require(file.videoTracks.first)
        #expect(report.video.packets == 30 && copy.sampleCount == source.sampleCount)
        #expect(copy.issues.isEmpty)
        // No edit list, and B-frames: the first picture is shown two frames
        // late (ffprobe: start 0.0667 s), and the merge shows it at zero.
        #expect(source.editList == nil)
        let sourceStart = source.presentedStart
        #expect(sourceStart == source.compositionTimes.min() && sourceStart > 0)
        let copyStart = copy.editList?.first { !$0.isEmpty }?.mediaTime ?? 0
        let scale = Int64(copy.mediaTimescale) / Int64(source.mediaTimescale)
        try #require(scale >= 1 && Int64(copy.mediaTimescale) % Int64(source.mediaTimescale) == 0)
        for index in 0..<min(source.sampleCount, copy.sampleCount) {
            #expect(try copy.sampleData(index) == source.sampleData(index), "sample \(index + 1)")
            #expect(copy.isSyncSample(index) == source.isSyncSample(index), "sync flag of sample \(index + 1)")
            #expect(copy.compositionTimes[index] - copyStart == (source.compositionTimes[index] - sourceStart) * scale,
                    "sample \(index + 1) is presented at another moment")
        }
        // The video is the shorter: the output ends where its samples do.
        #expect(report.endReason == .videoEndsFirst)
        let seconds = Double(file.movieDuration) / Double(file.movieTimescale)
        #expect(abs(seconds - source.presentedEnd) < 0.001, "mvhd says \(seconds) s")
    }

    @Test(arguments: [(videoAndAudio, 46, 44100), (opus, 250, 48000)])
    func aFragmentedSoundtrackMergesWithEverySample(_ path: String, _ packets: Int, _ sampleRate: Int) async throws {
        let copy = try await FragmentedFixtureTests.expectEveryAudioPacketKept(path, packets: packets)
        #expect(copy.mediaTimescale == UInt32(sampleRate))
    }

    /// AAC whose priming only iTunSMPB declares (Nero, no edit list), copied
    /// into fragments by the ffmpeg CLI with its tags: the fragmented copy
    /// starts and ends where the moov-first original does, its priming
    /// skipped by the output's edit list.
    @Test func iTunSMPBPrimingHoldsInFragments() async throws {
        let original = Samples.path("nero_aac_lc_22khz_mono_itunsmpb.m4a")
        let folder = try TemporaryFolder()
        let fragmented = folder.path("nero_fragmented.mp4")
        let ffmpeg = try #require(["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first { FileManager.default.isExecutableFile(atPath: $0) })
        let made = try ExternalTool.run(
            ffmpeg, ["-nostdin", "-v", "error", "-y", "-i", original, "-c", "copy", "-map_metadata", "0",
                     "-movflags", "frag_keyframe+empty_moov+default_base_moof+use_metadata_tags", "-frag_duration", "100000", fragmented],
            keeping: .errors, seconds: 60)
        try #require(made.status == 0, "\(String(decoding: made.text, as: UTF8.self))")
        try #require(try MP4File(path: fragmented).fragmentCount > 1)

        let audio = try #require(try await MuxEngine().probe(fragmented).audio)
        // iTunSMPB " 00000000 00000A40 000001F1 0000000000001BCF": 2624 priming, 7119 valid samples at 22050 Hz.
        #expect(audio.priming == 2624)
        #expect(audio.end == MediaTime(value: 7119, timescale: 22050))
        var outputs: [MP4File] = []
        for (name, source) in [("from_original.mp4", original), ("from_fragments.mp4", fragmented)] {
            let output = folder.path(name)
            _ = try await MuxEngine().merge(video: Fixtures.path("h264_26s_2fps.mp4"), audio: source, output: output)
            outputs.append(try MP4File(path: output))
        }
        let (fromOriginal, fromFragments) = (try #require(outputs[0].audioTracks.first), try #require(outputs[1].audioTracks.first))
        #expect(fromFragments.editList == fromOriginal.editList)
        #expect(fromFragments.editList?.first?.mediaTime == 2624)
        #expect(outputs[1].movieDuration == outputs[0].movieDuration && outputs[1].movieTimescale == outputs[0].movieTimescale)
        #expect(try FragmentedFixtureTests.packets(fromFragments) == FragmentedFixtureTests.packets(fromOriginal))
    }

    /// As the source of previews: every one of its 30 frames, at the times
    /// its fragment gives them, on the video's own timeline, whose zero is
    /// its first picture (two frames in: no edit list, B-frames).
    @Test func everyFrameIsPreviewed() async throws {
        var times: [Double] = []
        for try await frame in MuxEngine().previews.frames(of: Self.videoAndAudio, options: FrameOptions(selection: .all(), size: 64)) {
            times.append(frame.time.seconds)
        }
        let track = try #require(try MP4File(path: Self.videoAndAudio).videoTracks.first)
        let expected = track.compositionTimes.sorted().map { Double($0 - track.presentedStart) / Double(track.mediaTimescale) }
        #expect(times.count == 30)
        #expect(zip(times, expected).allSatisfy { abs($0 - $1) < 0.001 }, "\(times) against \(expected)")
    }
}
