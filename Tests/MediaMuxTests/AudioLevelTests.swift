import Foundation
import Testing
@testable import MediaMux
@testable import MediaMuxCore

/// Volume, fades and loudness on real merges: the level heard, judged by the
/// tests' own AAC decoding (`AudioSamples`), and loudness by the ffmpeg CLI's
/// ebur128 (`LoudnessCheck`), not by the code under test.
struct AudioLevelTests {
    /// 26 s of video: every soundtrack here is shorter, so the output ends with it.
    static let video = Fixtures.path("h264_26s_2fps.mp4")
    /// FLAC 44.1 kHz stereo, a 1 kHz sine at -24.08 dBFS RMS, 3 s.
    static let sine = Fixtures.path("flac_3s.flac")
    static let sineLevel = -24.08

    static func played(_ path: String) throws -> AudioSamples {
        let file = try MP4File(path: path)
        return try AudioSamples.played(try #require(file.audioTracks.first), movieTimescale: file.movieTimescale)
    }

    static func merge(_ audio: String, _ options: AudioOptions, in folder: TemporaryFolder) async throws -> (MuxReport, String) {
        let output = folder.path("out-\(UUID().uuidString.prefix(8)).mp4")
        let report = try await MuxEngine().merge(video: video, audio: audio, output: output, options: MergeOptions(audio: options))
        return (report, output)
    }

    @Test func volumeMinusSixHalvesTheAmplitude() async throws {
        let folder = try TemporaryFolder()
        let (report, output) = try await Self.merge(Self.sine, AudioOptions(volume: -6), in: folder)
        #expect(report.audio!.encoding?.reason == "MP4 cannot carry FLAC")
        #expect(report.audio!.encoding?.summary == "flac -> aac 192 kb/s, set to -6.0 dB (MP4 cannot carry FLAC)")
        let played = try Self.played(output)
        #expect(played.count == 3 * 44100)
        let middle = played.channels[0].dropFirst(played.count / 4).prefix(played.count / 2)
        #expect(abs(AudioSamples.rmsDecibels(middle) - (Self.sineLevel - 6)) < 0.5)
        #expect(abs(AudioSamples.frequency(middle, sampleRate: played.sampleRate) - 1000) < 1)
        // The same from AAC, which alone would be copied: the volume is the reason to encode.
        let (aac, _) = try await Self.merge(Fixtures.path("aac_7s.m4a"), AudioOptions(volume: -6), in: folder)
        #expect(aac.audio!.encoding?.reason == "set to -6.0 dB")
    }

    @Test func fadesRampFromAndToSilence() async throws {
        let folder = try TemporaryFolder()
        let (report, output) = try await Self.merge(Self.sine, AudioOptions(fadeIn: 1, fadeOut: 0.5), in: folder)
        #expect(report.audio!.encoding?.summary == "flac -> aac 192 kb/s, faded in over 1.000 s, faded out over 0.500 s (MP4 cannot carry FLAC)")
        let samples = try Self.played(output).channels[0]
        #expect(samples.count == 3 * 44100)
        let window = 2205  // 50 ms
        let first = AudioSamples.rmsDecibels(samples.prefix(window))
        let last = AudioSamples.rmsDecibels(samples.suffix(window))
        let middle = AudioSamples.rmsDecibels(samples[(44100 + 22050)..<(44100 + 22050 + window)])
        #expect(abs(middle - Self.sineLevel) < 0.5, "middle \(middle) dB")
        #expect(first < middle - 20, "first 50 ms \(first) dB, middle \(middle) dB")
        #expect(last < middle - 20, "last 50 ms \(last) dB, middle \(middle) dB")
        // Halfway through the fade in, the level is halfway up (a linear ramp: -6 dB).
        let halfway = AudioSamples.rmsDecibels(samples[(22050 - 1100)..<(22050 + 1100)])
        #expect(abs(halfway - (middle - 6)) < 1, "halfway \(halfway) dB")
    }

    /// -16 LUFS as ffmpeg's ebur128 measures the output, from a real AAC file
    /// 5.9 LU quieter; the report says what was measured and the gain.
    @Test func loudnessReachesTheTarget() async throws {
        let folder = try TemporaryFolder()
        let source = Fixtures.path("aac_7s.m4a")
        let (report, output) = try await Self.merge(source, AudioOptions(loudness: -16), in: folder)
        let adjustment = try #require(report.audio!.loudness)
        let sourceLoudness = try LoudnessCheck.measure(source)
        #expect(abs(adjustment.measured - sourceLoudness.integrated) < 0.2, "MediaMux measured \(adjustment.measured), ffmpeg \(sourceLoudness.integrated)")
        #expect(abs(adjustment.gain - (-16 - adjustment.measured)) < 0.001 && !adjustment.limited)
        let result = try LoudnessCheck.measure(output)
        #expect(abs(result.integrated + 16) <= 0.5, "the output measures \(result.integrated) LUFS")
        #expect(result.truePeak <= -1, "true peak \(result.truePeak) dBTP")
    }

    /// A quiet tone with loud clicks: the gain to -14 LUFS would push the
    /// clicks far over -1 dBTP. The limiter holds them, and the gain is
    /// corrected for the loudness the limiter takes off.
    @Test func loudnessWithPeaksToLimit() async throws {
        let folder = try TemporaryFolder()
        let wave = folder.path("clicks.wav")
        let rate = 48000
        let samples = (0..<(6 * rate)).map { index -> Float in
            let t = Double(index) / Double(rate)
            let click = t.truncatingRemainder(dividingBy: 1) < 0.003 ? 0.8 * sin(2 * .pi * 3000 * t) : 0
            return Float(0.05 * sin(2 * .pi * 440 * t) + click)
        }
        try WaveFile.write(samples, rate: rate, to: wave)
        let (report, output) = try await Self.merge(wave, AudioOptions(loudness: -14), in: folder)
        let adjustment = try #require(report.audio!.loudness)
        #expect(adjustment.limited)
        let result = try LoudnessCheck.measure(output)
        #expect(abs(result.integrated + 14) <= 0.5, "the output measures \(result.integrated) LUFS")
        // The limiter holds -2 dBTP before encoding; AAC's own overshoot stays within the rest.
        #expect(result.truePeak <= -1, "true peak \(result.truePeak) dBTP")
    }

    @Test func aSilentSoundtrackHasNoLoudnessToRaise() async throws {
        let folder = try TemporaryFolder()
        let wave = folder.path("silence.wav")
        try WaveFile.write([Float](repeating: 0, count: 48000), rate: 48000, to: wave)
        let output = folder.path("out.mp4")
        await #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.audio.loudness", message: "\(wave): is silent (below -70 LUFS), so its loudness cannot be brought to -16.0 LUFS")) {
            try await MuxEngine().merge(video: Self.video, audio: wave, output: output, options: MergeOptions(audio: AudioOptions(loudness: -16)))
        }
        #expect(!FileManager.default.fileExists(atPath: output))
    }
}
