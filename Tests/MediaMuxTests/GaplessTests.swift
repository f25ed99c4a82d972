import Foundation
import Testing
import TestSupport
@testable import MediaMux
@testable import MediaMuxCore
@testable import MediaMuxPreview

/// MP3 and Opus soundtracks start and end where their decoded samples do:
/// the encoder delay (LAME header, Opus pre-skip) becomes the edit list's
/// media time, and the padding at the end (LAME, Opus end trimming) is cut
/// by the edit's duration. Decoded lengths are the sample counts of
/// `ffmpeg -i AUDIO -f s16le -ac 1 - | wc -c` / 2 (FFmpeg 5.1.9), recorded
/// in TestMedia/README.md for the fixtures and here for the real files.
struct GaplessTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var audio: MediaFile
        var decodedSamples: Int64
        var sampleRate: Int64
        /// Samples before the first one heard, as the output's edit list must skip them.
        var delay: Int64
        var testDescription: String { audio.description }
    }

    static let cases: [Case] = [
        // libmp3lame CBR: LAME tag delay 576 + the decoder's 529.
        Case(audio: "mp3_5s.mp3", decodedSamples: 220_500, sampleRate: 44_100, delay: 1105),
        // LAME 3.99 VBR with a Xing header: delay 576 + 529, padding 107 in the last frame.
        Case(audio: .sample("lame399_vbr_xing_lametag_mono.mp3"), decodedSamples: 172_740, sampleRate: 44_100, delay: 1105),
        // Ogg Opus: pre-skip 312, the last page's granule trims 648 samples.
        Case(audio: "opus_5s.ogg", decodedSamples: 240_000, sampleRate: 48_000, delay: 312),
        // WebM Opus: CodecDelay 312 with millisecond timestamps, DiscardPadding 648.
        Case(audio: "opus_5s.webm", decodedSamples: 240_000, sampleRate: 48_000, delay: 312),
        // Chrome's MediaRecorder: no CodecDelay, 60 ms packets, times rounded to ms.
        Case(audio: .sample("chrome_mediarecorder_opus_no_duration.webm"), decodedSamples: 1_224_000, sampleRate: 48_000, delay: 0),
        // LAME VBR from FFmpeg's libmp3lame, 48 kHz stereo, Xing header with a TOC:
        // its LAME tag says delay 576 (+ 529 the decoder's) and padding 576 (47 past the decoder's 529).
        Case(audio: .sample("lame_vbr_xing_toc_stereo.mp3"), decodedSamples: 133_632, sampleRate: 48_000, delay: 1105),
        // WebM Opus, mono: CodecDelay 6.5 ms (312 samples), pre-skip 312; ffprobe says 3.008 s.
        Case(audio: .sample("opus_webm_audio_only_preskip_3s.webm"), decodedSamples: 144_000, sampleRate: 48_000, delay: 312),
        // Ogg Opus, 6 channels (mapping family 1) from an 8 kHz input: pre-skip 312; ffprobe says 3.0065 s.
        Case(audio: .sample("opus_ogg_6ch_8khz.ogg"), decodedSamples: 144_000, sampleRate: 48_000, delay: 312),
        // Opus in fragmented MP4 (five moof/mdat pairs): pre-skip 0.
        Case(audio: .sample("fmp4_opus_audio.mp4"), decodedSamples: 120_000, sampleRate: 48_000, delay: 0),
    ]

    @Test(arguments: cases.filter { !$0.audio.isSample })
    func theSoundtrackEndsWithItsDecodedSamples(_ example: Case) async throws {
        try await expectEndAtTheDecodedSamples(example)
    }

    @Test(Samples.required, arguments: cases.filter(\.audio.isSample))
    func aRealSoundtrackEndsWithItsDecodedSamples(_ example: Case) async throws {
        try await expectEndAtTheDecodedSamples(example)
    }

    private func expectEndAtTheDecodedSamples(_ example: Case) async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        let report = try await MuxEngine().merge(video: Fixtures.path("h264_26s_2fps.mp4"), audio: example.audio.path, output: output)
        let expected = Double(example.decodedSamples) / Double(example.sampleRate)
        #expect(report.endReason == .audioEndsFirst)

        let file = try MP4File(path: output)
        let movieSeconds = Double(file.movieDuration) / Double(file.movieTimescale)
        #expect(abs(movieSeconds - expected) < 0.001, "mvhd says \(movieSeconds) s, decoded \(expected) s")
        let audio = try #require(file.audioTracks.first)
        #expect(audio.mediaTimescale == UInt32(example.sampleRate))
        let edits = try #require(audio.editList)
        #expect(edits.count == 1)
        #expect(edits.first?.mediaTime == example.delay, "the encoder delay is skipped by the edit list")
        let heard = Double(edits.first?.segmentDuration ?? 0) / Double(file.movieTimescale)
        #expect(abs(heard - expected) < 0.001, "the edit presents \(heard) s")
        // Every sample the edit presents is in the track.
        #expect(audio.mediaDuration >= example.delay + Int64((heard * Double(example.sampleRate)).rounded(.down)))
        for track in file.tracks {
            #expect(abs(track.presentedDuration(movieTimescale: file.movieTimescale) - expected) < 0.001)
        }
    }

    @Test(arguments: cases.filter { !$0.audio.isSample })
    func theProbeGivesTheDecodedLength(_ example: Case) async throws {
        try await expectProbedDecodedLength(example)
    }

    @Test(Samples.required, arguments: cases.filter(\.audio.isSample))
    func theProbeOfARealFileGivesTheDecodedLength(_ example: Case) async throws {
        try await expectProbedDecodedLength(example)
    }

    private func expectProbedDecodedLength(_ example: Case) async throws {
        let info = try await MuxEngine().probe(example.audio.path)
        let audio = try #require(info.audioStreams.first)
        #expect(audio.start == .zero())
        let seconds = try #require(audio.end).seconds
        #expect(abs(seconds - Double(example.decodedSamples) / Double(example.sampleRate)) < 1e-6)
    }

    @Test func opusPacketSampleCounts() {
        func samples(_ bytes: [UInt8]) -> Int64? { bytes.withUnsafeBufferPointer(opusPacketSamples) }
        #expect(samples([0x78]) == 960)  // CELT 20 ms, one frame (config 15, hybrid 20 ms)
        #expect(samples([0xFC]) == 960)  // CELT fullband 20 ms, one frame
        #expect(samples([0xFD]) == 1920)  // two frames
        #expect(samples([0xFF, 0x03]) == 2880)  // code 3: three frames
        #expect(samples([0x18]) == 2880)  // SILK 60 ms
        #expect(samples([0xE0]) == 120)  // CELT 2.5 ms
        #expect(samples([]) == nil)
        #expect(samples([0xFF]) == nil)
    }

    /// Timestamps a millisecond apart from their samples leave the span's end
    /// where the samples put it; a real gap leaves it where the timestamps do.
    @Test func spanEndsByTheSamplesUnlessTheTimestampsShowAGap() {
        var rounded = PacketSpan(timescale: 48_000)
        for index in 0..<10 { rounded.add(pts: Int64(index) * 1104, duration: 1104, samples: 1024) }
        #expect(rounded.presented?.end == MediaTime(value: 10 * 1024, timescale: 48_000))
        var gap = PacketSpan(timescale: 48_000)
        for index in 0..<10 { gap.add(pts: Int64(index) * 1024 + (index >= 5 ? 48_000 : 0), duration: 1024, samples: 1024) }
        #expect(gap.presented?.end == MediaTime(value: 10 * 1024 + 48_000, timescale: 48_000))
    }
}
