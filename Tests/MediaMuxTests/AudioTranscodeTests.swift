import Foundation
import Testing
import TestSupport
@testable import MediaMux
@testable import MediaMuxCore

/// Soundtracks MP4 cannot carry as they are, merged: encoded AAC in the same
/// pass, exact in length, and sounding as the source does. Judged by the
/// tests' own MP4 reader and AAC decoding (`AudioSamples`), not by the code
/// under test.
struct AudioTranscodeTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var audio: MediaFile
        var reason: String
        var seconds: Double
        var sampleRate: Int
        var channels: Int
        /// The level of the source's 1 kHz sine, in dBFS RMS: amplitude 1/8
        /// is -21.07; FFmpeg's mono-to-stereo upmix lowers each side by 3 dB.
        /// nil for real audio.
        var sineLevel: Double? = -21.07
        var testDescription: String { audio.description }
    }

    static let cases: [Case] = [
        Case(audio: "flac_3s.flac", reason: "MP4 cannot carry FLAC", seconds: 3, sampleRate: 44100, channels: 2, sineLevel: -24.08),
        Case(audio: "vorbis_2s.ogg", reason: "players do not read Vorbis in MP4", seconds: 2, sampleRate: 48000, channels: 1),
        Case(audio: "pcm_2s.wav", reason: "few players read PCM in MP4", seconds: 2, sampleRate: 8000, channels: 1, sineLevel: nil),
        // A DAW's 24-bit WAV with chunks after its samples: 13,171 samples at 48 kHz (ffprobe's duration_ts).
        Case(audio: .sample("adobe_audition_pcm24_48k_trailing_chunks.wav"), reason: "few players read PCM in MP4", seconds: 13171.0 / 48000, sampleRate: 48000, channels: 2, sineLevel: nil),
        // 96 kHz 5.1: encoded at 48 kHz, still 5.1.
        Case(audio: "flac_96k_51_1s.flac", reason: "MP4 cannot carry FLAC", seconds: 1, sampleRate: 48000, channels: 6),
    ]

    /// The 26-second video outlasts every soundtrack here: the output ends with the audio.
    static let video = Fixtures.path("h264_26s_2fps.mp4")

    @Test(arguments: cases.filter { !$0.audio.isSample })
    func encodedExactlyAndSoundsTheSame(_ example: Case) async throws {
        try await expectEncodedExactly(example)
    }

    @Test(Samples.required, arguments: cases.filter(\.audio.isSample))
    func realFilesEncodedExactlyAndSoundTheSame(_ example: Case) async throws {
        try await expectEncodedExactly(example)
    }

    private func expectEncodedExactly(_ example: Case) async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        let report = try await MuxEngine().merge(video: Self.video, audio: example.audio.path, output: output)
        let encoding = try #require(report.audio!.encoding)
        #expect(encoding.reason == example.reason)
        #expect(encoding.codec == "aac" && report.audio!.codec == "aac")
        #expect(encoding.sampleRate == example.sampleRate && encoding.channels == example.channels)
        #expect(report.audio!.codecTag == "mp4a")

        let file = try MP4File(path: output)
        let track = try #require(file.audioTracks.first)
        #expect(track.sampleFormat == "mp4a")
        #expect(track.mediaTimescale == UInt32(example.sampleRate))
        // The priming is hidden by the edit: it starts 1024 samples into the media.
        #expect(track.editList?.count == 1 && track.editList?.first?.mediaTime == 1024)
        #expect(abs(track.presentedDuration(movieTimescale: file.movieTimescale) - example.seconds) < 0.001)
        #expect(abs(Double(file.movieDuration) / Double(file.movieTimescale) - example.seconds) < 0.001)

        let played = try AudioSamples.played(track, movieTimescale: file.movieTimescale)
        #expect(played.delay == 0)
        #expect(played.channels.count == example.channels)
        #expect(played.count == Int((example.seconds * Double(example.sampleRate)).rounded()))
        if let level = example.sineLevel {
            // Away from the edges, where the encoder's transition is.
            let middle = played.channels[0].dropFirst(played.count / 4).prefix(played.count / 2)
            #expect(abs(AudioSamples.frequency(middle, sampleRate: played.sampleRate) - 1000) < 1)
            #expect(abs(AudioSamples.rmsDecibels(middle) - level) < 0.5)
        } else {
            #expect(played.channels.allSatisfy { AudioSamples.rmsDecibels($0[...]) > -60 })
        }
    }

    /// The end is the video's when the video is shorter, to the sample.
    @Test func endsWithAShorterVideo() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        // 2.5 s of video, 3 s of FLAC.
        let report = try await MuxEngine().merge(video: Fixtures.path("h264_vfr.mp4"), audio: Fixtures.path("flac_3s.flac"), output: output)
        #expect(report.endReason == .videoEndsFirst)
        #expect(report.duration == MediaTime(value: 5, timescale: 2))
        let file = try MP4File(path: output)
        let played = try AudioSamples.played(try #require(file.audioTracks.first), movieTimescale: file.movieTimescale)
        #expect(played.count == 110_250)
    }

    @Test func copiesWhatTheContainerCarries() async throws {
        let folder = try TemporaryFolder()
        let alac = try await MuxEngine().merge(video: Self.video, audio: Fixtures.path("alac_2s.m4a"), output: folder.path("alac.mp4"))
        #expect(alac.audio!.encoding == nil && alac.audio!.codec == "alac")
        #expect(try MP4File(path: folder.path("alac.mp4")).audioTracks.first?.sampleFormat == "alac")
        // MOV carries PCM.
        let pcm = try await MuxEngine().merge(video: Self.video, audio: Fixtures.path("pcm_2s.wav"), output: folder.path("pcm.mov"))
        #expect(pcm.audio!.encoding == nil && pcm.audio!.codec == "pcm_s16le")
    }

    @Test func encodingAsked() async throws {
        let folder = try TemporaryFolder()
        // AAC to AAC, mixed to mono and resampled.
        var options = MergeOptions()
        options.audio = AudioOptions(codec: .aac, bitRate: 64_000, sampleRate: 32_000, channels: 1)
        let output = folder.path("aac.mp4")
        let report = try await MuxEngine().merge(video: Self.video, audio: Fixtures.path("aac_7s.m4a"), output: output, options: options)
        let encoding = try #require(report.audio!.encoding)
        #expect(encoding.summary == "aac -> aac 64 kb/s, 44100 -> 32000 Hz, 2 -> 1 channels (AAC asked for)")
        let file = try MP4File(path: output)
        let played = try AudioSamples.played(try #require(file.audioTracks.first), movieTimescale: file.movieTimescale)
        #expect(played.sampleRate == 32_000 && played.channels.count == 1)
        #expect(played.count == Int(7.3 * 32_000))
        let middle = played.channels[0].dropFirst(played.count / 4).prefix(played.count / 2)
        #expect(abs(AudioSamples.frequency(middle, sampleRate: 32_000) - 440) < 1)

        // 5.1 down to stereo.
        options.audio = AudioOptions(channels: 2)
        let stereo = try await MuxEngine().merge(video: Self.video, audio: Fixtures.path("flac_96k_51_1s.flac"), output: folder.path("stereo.mp4"), options: options)
        #expect(stereo.audio!.encoding?.summary == "flac -> aac 192 kb/s, 96000 -> 48000 Hz, 6 -> 2 channels (MP4 cannot carry FLAC)")
        let stereoFile = try MP4File(path: folder.path("stereo.mp4"))
        let mixed = try AudioSamples.played(try #require(stereoFile.audioTracks.first), movieTimescale: stereoFile.movieTimescale)
        #expect(mixed.channels.count == 2 && mixed.count == 48_000)
    }

    @Test func copyingWhatCannotBeCopiedIsAnError() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        var options = MergeOptions()
        options.audio.codec = .copy
        await #expect(throws: MediaMuxError.codecNotSupportedInContainer(codec: "flac", container: "mp4", path: output)) {
            try await MuxEngine().merge(video: Self.video, audio: Fixtures.path("flac_3s.flac"), output: output, options: options)
        }
        #expect(folder.contents.isEmpty)
    }
}
