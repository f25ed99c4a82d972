import MediaMuxContainers
import Foundation
import Testing
@testable import MediaMux
@testable import MediaMuxCore

/// The end policy, loops and offsets on real merges, judged by the tests' own
/// MP4 reader and AAC decoding (`AudioSamples`): what is heard, where, and
/// for how long. The chirp fixture has no two stretches alike, so a repeat or
/// a shift that is off by one sample shows.
struct AudioPlacementTests {
    /// 4.0 s of H.264 with B-frames.
    static let video = Fixtures.path("h264_bframes_aac.mp4")
    /// 1.5 s of AAC at 48 kHz: 72,000 samples.
    static let chirp = Fixtures.path("aac_chirp_1.5s.m4a")
    static let chirpSamples = 72_000

    static func played(_ path: String) throws -> AudioSamples {
        let file = try MP4File(path: path)
        return try AudioSamples.played(try #require(file.audioTracks.first), movieTimescale: file.movieTimescale)
    }

    /// How far `output` strays from `reference`, in dB below the reference's
    /// level: AAC re-encoding stays below -50; one sample's shift of the chirp
    /// is about -17.
    static func difference(_ output: ArraySlice<Float>, _ reference: ArraySlice<Float>) -> Double {
        let count = min(output.count, reference.count)
        let error = zip(output.prefix(count), reference.prefix(count)).map { $0 - $1 }
        return AudioSamples.rmsDecibels(error[...]) - AudioSamples.rmsDecibels(reference.prefix(count))
    }

    /// Samples at the start of an AAC encoding that are left out of comparisons:
    /// FFmpeg's encoder needs a few frames to settle.
    static let encoderSettling = 4096

    static func durations(_ path: String) throws -> (movie: Double, audio: Double, video: Double) {
        let file = try MP4File(path: path)
        let audio = try #require(file.audioTracks.first)
        let video = try #require(file.videoTracks.first)
        return (
            Double(file.movieDuration) / Double(file.movieTimescale), audio.presentedDuration(movieTimescale: file.movieTimescale),
            video.presentedDuration(movieTimescale: file.movieTimescale))
    }

    @Test func aShorterSoundtrackStopsWhereItEndsWithTheWholeVideo() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        let report = try await MuxEngine().merge(video: Self.video, audio: Self.chirp, output: output, options: MergeOptions(end: .video))
        #expect(report.endReason == .audioStopsEarly && report.audio!.encoding == nil)
        let (movie, audio, video) = try Self.durations(output)
        #expect(abs(movie - 4) < 0.001 && abs(video - 4) < 0.001 && abs(audio - 1.5) < 0.001)
        let played = try Self.played(output)
        let source = try Self.played(Self.chirp)
        #expect(played.count == Self.chirpSamples && played.channels[0] == source.channels[0])
    }

    /// AAC repeats by encoding: three plays of 1.5 s in 4 s, each the source's
    /// samples, seamless, and the last cut to the sample.
    @Test func aLoopedAACSoundtrackRepeatsTheSource() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        let report = try await MuxEngine().merge(
            video: Self.video, audio: Self.chirp, output: output, options: MergeOptions(end: .video, audio: AudioOptions(loops: true)))
        #expect(report.endReason == .audioRepeated && report.audio!.plays == 3)
        #expect(report.audio!.encoding?.reason == "looped, and AAC cannot repeat by copy")
        let (movie, audio, _) = try Self.durations(output)
        #expect(abs(movie - 4) < 0.001 && abs(audio - 4) < 0.001)

        let played = try Self.played(output).channels[0]
        let source = try Self.played(Self.chirp).channels[0]
        let period = Self.chirpSamples
        #expect(played.count == 4 * 48000)
        for play in 0..<3 {
            // FFmpeg's AAC encoder takes its first few frames to settle (its CLI's output starts the same).
            let skip = play == 0 ? Self.encoderSettling : 0
            let start = play * period + skip
            let length = min(period - skip, played.count - start)
            let heard = played[start..<(start + length)]
            let match = Self.difference(heard, source[skip..<(skip + length)])
            #expect(match < -50, "play \(play + 1) differs from the source by \(match) dB")
            // One sample later is far worse: the repeat is placed to the sample.
            let shifted = Self.difference(played[(start + 1)..<(start + length)], source[skip..<(skip + length - 1)])
            #expect(shifted > match + 20, "play \(play + 1): \(match) dB in place, \(shifted) dB a sample later")
        }
        // No gap at the seams: the level across each stays the chirp's.
        for seam in [period, 2 * period] {
            let across = AudioSamples.rmsDecibels(played[(seam - 480)..<(seam + 480)])
            #expect(abs(across - AudioSamples.rmsDecibels(source[...])) < 1.5, "level across the seam at \(seam): \(across) dB")
        }
    }

    /// ALAC's packets stand alone: they repeat by copy, byte for byte, and the
    /// last is cut by its duration.
    @Test func aLoopedALACSoundtrackRepeatsItsPackets() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        // 2.5 s of video, 2 s of ALAC.
        let report = try await MuxEngine().merge(
            video: Fixtures.path("h264_vfr.mp4"), audio: Fixtures.path("alac_2s.m4a"), output: output,
            options: MergeOptions(audio: AudioOptions(loops: true)))
        #expect(report.audio!.encoding == nil && report.audio!.plays == 2 && report.endReason == .audioRepeated)
        let source = try #require(try MP4File(path: Fixtures.path("alac_2s.m4a")).audioTracks.first)
        let file = try MP4File(path: output)
        let track = try #require(file.audioTracks.first)
        #expect(track.sampleFormat == "alac")
        #expect(abs(track.presentedDuration(movieTimescale: file.movieTimescale) - 2.5) < 0.001)
        // 2.5 s at 44.1 kHz, the media itself cut to the end.
        #expect(track.mediaDuration == 110_250)
        #expect(track.sampleCount > source.sampleCount)
        for index in 0..<track.sampleCount {
            #expect(try track.sampleData(index) == source.sampleData(index % source.sampleCount), "sample \(index)")
        }
    }

    /// PCM in MOV repeats by copy too; the last play's packet loses the
    /// samples past the end, so its bytes and the sample tables agree.
    @Test func aLoopedPCMSoundtrackRepeatsItsSamples() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mov")
        let report = try await MuxEngine().merge(
            video: Fixtures.path("h264_vfr.mp4"), audio: Fixtures.path("pcm_2s.wav"), output: output,
            options: MergeOptions(end: .video, audio: AudioOptions(loops: true)))
        #expect(report.audio!.encoding == nil && report.audio!.plays == 2)
        let file = try MP4File(path: output)
        let track = try #require(file.audioTracks.first)
        #expect(track.sampleFormat == "sowt" && track.issues.isEmpty)
        // 2.5 s at 8 kHz: 20,000 samples of 2 bytes.
        #expect(track.mediaDuration == 20_000 && track.sampleCount == 20_000)
        var written = Data()
        for index in 0..<track.sampleCount { written += try track.sampleData(index) }
        let source = try Self.waveSamples(Fixtures.path("pcm_2s.wav"))
        #expect(source.count == 32_000)
        #expect(written == source + source.prefix(8_000))
    }

    /// The bytes of a WAV file's `data` chunk.
    static func waveSamples(_ path: String) throws -> Data {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        var offset = 12
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self)
            let size = bytes[(offset + 4)..<(offset + 8)].reversed().reduce(0) { $0 << 8 | Int($1) }
            if id == "data" { return bytes[(offset + 8)..<min(offset + 8 + size, bytes.count)] }
            offset += 8 + size + (size & 1)
        }
        throw AudioSamples.Failure(description: "\(path) has no data chunk")
    }

    @Test func aLaterStartWaitsInTheEditList() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        let report = try await MuxEngine().merge(
            video: Self.video, audio: Self.chirp, output: output, options: MergeOptions(end: .video, audio: AudioOptions(offset: 0.75)))
        #expect(report.audio!.encoding == nil && report.audio!.start == 0.75)
        let played = try Self.played(output)
        #expect(played.delay == 36_000)
        #expect(played.channels[0] == (try Self.played(Self.chirp).channels[0]))
        let (movie, audio, _) = try Self.durations(output)
        #expect(abs(movie - 4) < 0.001 && abs(audio - 2.25) < 0.001)
    }

    /// A negative offset skips the beginning: copied, the packets before the
    /// new start only prime the decoder, and what is heard is the source's
    /// from 0.5 s on, sample for sample.
    @Test func anEarlierStartSkipsTheBeginning() async throws {
        let folder = try TemporaryFolder()
        let copied = folder.path("copied.mp4")
        let report = try await MuxEngine().merge(
            video: Self.video, audio: Self.chirp, output: copied, options: MergeOptions(audio: AudioOptions(offset: -0.5)))
        #expect(report.audio!.encoding == nil && report.duration == 1)
        // The source's own packets from the one before the new start on...
        let track = try #require(try MP4File(path: copied).audioTracks.first)
        let sourceTrack = try #require(try MP4File(path: Self.chirp).audioTracks.first)
        let mediaTime = try #require(track.editList?.first?.mediaTime)
        // ...at most 0.1 s of them before it, and one packet more, priming the decoder.
        #expect(mediaTime >= 1024 && mediaTime <= 4800 + 1024, "media time \(mediaTime)")
        // The source's packet at 0.5 s (1024 in, after its priming) minus those.
        let skipped = (24_000 + 1024 - Int(mediaTime)) / 1024
        #expect(track.sampleCount == sourceTrack.sampleCount - skipped)
        for index in 0..<track.sampleCount {
            #expect(try track.sampleData(index) == sourceTrack.sampleData(index + skipped), "packet \(index)")
        }
        // Heard as the source from 0.5 s on: the decoder primed, its noise
        // substitution's random state aside.
        let source = try Self.played(Self.chirp).channels[0]
        let heard = try Self.played(copied).channels[0]
        #expect(heard.count == 48_000)
        let match = Self.difference(heard[...], source.dropFirst(24_000))
        #expect(match < -50, "differs from the source by \(match) dB")

        // Encoded, the same part is heard.
        let encoded = folder.path("encoded.mp4")
        let again = try await MuxEngine().merge(
            video: Self.video, audio: Self.chirp, output: encoded, options: MergeOptions(audio: AudioOptions(codec: .aac, offset: -0.5)))
        #expect(again.audio!.encoding != nil)
        let encodedHeard = try Self.played(encoded).channels[0]
        #expect(encodedHeard.count == 48_000)
        let encodedMatch = Self.difference(encodedHeard.dropFirst(Self.encoderSettling), source.dropFirst(24_000 + Self.encoderSettling))
        #expect(encodedMatch < -50, "differs from the source by \(encodedMatch) dB")
    }

    /// `--end audio`: the video's last frame stays until the soundtrack ends,
    /// through its last sample's duration and the edit list; the video's
    /// samples are the source's.
    @Test func theWholeSoundtrackHoldsTheLastFrame() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        let report = try await MuxEngine().merge(
            video: Self.video, audio: Fixtures.path("aac_7s.m4a"), output: output, options: MergeOptions(end: .audio))
        #expect(report.endReason == .lastFrameHeld && report.duration == 7.3)
        #expect(report.video.heldLastFrame == 3.3)
        let (movie, audio, video) = try Self.durations(output)
        #expect(abs(movie - 7.3) < 0.001 && abs(audio - 7.3) < 0.001 && abs(video - 7.3) < 0.001)
        let file = try MP4File(path: output)
        let track = try #require(file.videoTracks.first)
        let source = try #require(try MP4File(path: Self.video).videoTracks.first)
        #expect(track.sampleCount == source.sampleCount)
        // The media reaches the edit's end, so that no player sees a track shorter than its edit.
        let edit = try #require(track.editList?.first)
        let editEnd = edit.mediaTime + Int64(edit.segmentDuration) * Int64(track.mediaTimescale) / Int64(file.movieTimescale)
        #expect(track.mediaDuration >= editEnd)
        #expect(track.issues.isEmpty)
    }

    /// The video's own audio stays as a second track: disabled, in the
    /// soundtrack's alternate group, its packets the source's, and heard as
    /// the source's own 880 Hz beside the soundtrack's 440 Hz.
    @Test func theVideosOwnAudioIsKeptAsASecondTrack() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        let report = try await MuxEngine().merge(
            video: Self.video, audio: Fixtures.path("aac_7s.m4a"), output: output, options: MergeOptions(originalAudio: .kept))
        let original = try #require(report.originalAudio)
        #expect(original.encoding == nil && original.codec == "aac" && original.source == Self.video)
        #expect(!report.leftOut.contains { $0.path == Self.video && $0.streamIndex == original.streamIndex })
        let file = try MP4File(path: output)
        #expect(file.audioTracks.count == 2)
        let soundtrack = file.audioTracks[0]
        let kept = file.audioTracks[1]
        #expect(soundtrack.isEnabled && !kept.isEnabled && file.videoTracks.first?.isEnabled == true)
        #expect(soundtrack.alternateGroup != 0 && soundtrack.alternateGroup == kept.alternateGroup)
        // The video's own 3 s of audio, packet for packet.
        let source = try #require(try MP4File(path: Self.video).audioTracks.first)
        #expect(abs(kept.presentedDuration(movieTimescale: file.movieTimescale) - 3) < 0.001)
        #expect(kept.sampleCount == source.sampleCount)
        for index in 0..<min(kept.sampleCount, source.sampleCount) {
            #expect(try kept.sampleData(index) == source.sampleData(index), "packet \(index)")
        }
        let heard = try AudioSamples.played(kept, movieTimescale: file.movieTimescale).channels[0]
        #expect(abs(AudioSamples.frequency(heard.dropFirst(20_000).prefix(40_000), sampleRate: 44100) - 880) < 2)
        let soundtrackHeard = try AudioSamples.played(soundtrack, movieTimescale: file.movieTimescale).channels[0]
        #expect(abs(AudioSamples.frequency(soundtrackHeard.dropFirst(20_000).prefix(40_000), sampleRate: 44100) - 440) < 2)
    }

    /// `--mix-original -6`: one track holding both tones, the video's own
    /// 880 Hz at 6 dB under its own level (and -3 dB more for the mono
    /// source spread over two channels), and after it ends at 3 s only the
    /// soundtrack's 440 Hz.
    @Test func theVideosOwnAudioIsMixedUnderTheSoundtrack() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        let report = try await MuxEngine().merge(
            video: Self.video, audio: Fixtures.path("aac_7s.m4a"), output: output,
            options: MergeOptions(originalAudio: .mixed(level: -6)))
        #expect(report.audio!.encoding?.reason == "mixed with the video's own audio at -6.0 dB")
        #expect(report.originalAudio == nil && !report.leftOut.contains { $0.path == Self.video && $0.what.hasPrefix("audio") })
        let file = try MP4File(path: output)
        #expect(file.audioTracks.count == 1)
        let mixed = try Self.played(output)
        #expect(mixed.channels.count == 2)
        let left = mixed.channels[0]
        let soundtrack = try Self.played(Fixtures.path("aac_7s.m4a"))
        let own = try Self.played(Self.video)
        try #require(own.count >= 3 * 44100 && soundtrack.count >= 4 * 44100 && mixed.count == 4 * 44100)
        let window = 22_050  // 0.5 s, whole periods of both tones
        let during = left[44_100..<(44_100 + window)]
        let expectedOwn = AudioSamples.amplitude(at: 880, in: own.channels[0][44_100..<(44_100 + window)], sampleRate: 44100) * pow(10, -6.0 / 20) * 0.5.squareRoot()
        let heardOwn = AudioSamples.amplitude(at: 880, in: during, sampleRate: 44100)
        #expect(abs(20 * log10(heardOwn / expectedOwn)) < 0.5, "880 Hz at \(heardOwn), expected \(expectedOwn)")
        let expectedSoundtrack = AudioSamples.amplitude(at: 440, in: soundtrack.channels[0][44_100..<(44_100 + window)], sampleRate: 44100)
        let heardSoundtrack = AudioSamples.amplitude(at: 440, in: during, sampleRate: 44100)
        #expect(abs(20 * log10(heardSoundtrack / expectedSoundtrack)) < 0.5, "440 Hz at \(heardSoundtrack), expected \(expectedSoundtrack)")
        // After the video's own audio ends at 3 s.
        let after = left[(3 * 44100 + 4410)..<(3 * 44100 + 4410 + window / 2)]
        #expect(AudioSamples.amplitude(at: 880, in: after, sampleRate: 44100) < heardOwn / 30)
        #expect(abs(20 * log10(AudioSamples.amplitude(at: 440, in: after, sampleRate: 44100) / expectedSoundtrack)) < 0.5)
    }

    /// Mixed with the whole video kept, a shorter soundtrack ends and the
    /// video's own audio goes on to its end: the track spans the output.
    @Test func aMixOutlastsAShorterSoundtrack() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        let report = try await MuxEngine().merge(
            video: Self.video, audio: Self.chirp, output: output, options: MergeOptions(end: .video, originalAudio: .mixed(level: 0)))
        #expect(report.duration == 4 && report.audio!.duration == 4 && report.audio!.start == .zero())
        let heard = try Self.played(output)
        try #require(heard.count == 4 * 48000)
        // The video's own 880 Hz (at 44.1 kHz, resampled to the chirp's 48 kHz) after the chirp's end...
        let after = heard.channels[0][(2 * 48000)..<(2 * 48000 + 24_000)]
        #expect(abs(AudioSamples.frequency(after, sampleRate: 48000) - 880) < 2)
        // ...and silence once it ends too, at 3 s.
        #expect(AudioSamples.rmsDecibels(heard.channels[0][(3 * 48000 + 4800)...]) < -60)
    }

    @Test func aVideoWithoutItsOwnAudioHasNoneToKeep() async throws {
        let folder = try TemporaryFolder()
        let video = Fixtures.path("h264_vfr.mp4")
        await #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.originalAudio", message: "\(video): has no audio of its own to keep")) {
            try await MuxEngine().merge(
                video: video, audio: Self.chirp, output: folder.path("out.mp4"), options: MergeOptions(originalAudio: .kept))
        }
    }

    /// A packet the decoder rejects is skipped with a warning and a count,
    /// and silence of its length keeps the rest where it was.
    @Test func aDamagedPacketIsSkippedInSync() async throws {
        let folder = try TemporaryFolder()
        let damaged = folder.path("damaged.m4a")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: Self.chirp))
        let track = try #require(try MP4File(path: Self.chirp).audioTracks.first)
        // Packet 36 of 72, at 0.75 s: its bits flipped past the first two bytes.
        let offset = Int(track.sampleOffsets[36])
        for index in (offset + 2)..<(offset + Int(track.sampleSizes[36])) { bytes[index] ^= 0xFF }
        try bytes.write(to: URL(fileURLWithPath: damaged))

        let options = MergeOptions(audio: AudioOptions(codec: .aac))
        let report = try await MuxEngine().merge(video: Self.video, audio: damaged, output: folder.path("out.mp4"), options: options)
        #expect(report.audio!.damagedPackets == 1)
        #expect(report.warnings.contains { $0.contains("damaged.m4a: 1 damaged audio packet could not be decoded") })
        let clean = try await MuxEngine().merge(video: Self.video, audio: Self.chirp, output: folder.path("clean.mp4"), options: options)
        #expect(clean.audio!.damagedPackets == 0 && clean.warnings.isEmpty)

        let heard = try Self.played(folder.path("out.mp4")).channels[0]
        let reference = try Self.played(folder.path("clean.mp4")).channels[0]
        #expect(heard.count == Self.chirpSamples)
        // After the damage (and the encoder's settling), what is heard is where it was.
        let after = Self.difference(heard[40_000...], reference[40_000...])
        #expect(after < -40, "after the damaged packet: \(after) dB")
        let before = Self.difference(heard[..<34_000], reference[..<34_000])
        #expect(before < -40, "before the damaged packet: \(before) dB")
    }
}
