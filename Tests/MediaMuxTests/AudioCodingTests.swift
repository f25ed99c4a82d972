import Testing
import MediaMuxBase
@testable import MediaMuxCore

/// The planner's copy-or-encode decision for the soundtrack, every
/// combination, with FFmpeg's own muxer facts (`muxerAccepts`) and no media.
struct AudioCodingTests {
    static func audio(_ codec: String, rate: Int = 48000, channels: Int = 2) -> StreamInfo {
        StreamInfo(
            index: 0, kind: .audio, codec: codec, timeBase: MediaTime(value: 1, timescale: Int64(rate)),
            start: .zero(), end: MediaTime(value: 3, timescale: 1), sampleRate: rate, channels: channels)
    }

    let planner = MergePlanner(canStore: muxerAccepts, hasEncoder: encoderAvailable)

    func decide(_ codec: String, _ container: MergePlan.Container, _ options: AudioOptions = AudioOptions(), rate: Int = 48000, channels: Int = 2) throws -> AudioEncoding? {
        try planner.audioEncoding(for: Self.audio(codec, rate: rate, channels: channels), in: container, options: options, output: "o.\(container.rawValue)")
    }

    struct Automatic: Sendable, CustomTestStringConvertible {
        var codec: String
        var container: MergePlan.Container
        /// nil: copied.
        var reason: String?
        var testDescription: String { "\(codec) in \(container.rawValue)" }
    }

    @Test(arguments: [
        Automatic(codec: "aac", container: .mp4, reason: nil),
        Automatic(codec: "aac", container: .mov, reason: nil),
        Automatic(codec: "mp3", container: .mp4, reason: nil),
        Automatic(codec: "alac", container: .mp4, reason: nil),
        Automatic(codec: "ac3", container: .mp4, reason: nil),
        Automatic(codec: "opus", container: .mp4, reason: nil),
        Automatic(codec: "opus", container: .mov, reason: "MOV cannot carry Opus"),
        Automatic(codec: "pcm_s16le", container: .mp4, reason: "few players read PCM in MP4"),
        Automatic(codec: "pcm_s24le", container: .mp4, reason: "few players read PCM in MP4"),
        Automatic(codec: "pcm_s16le", container: .mov, reason: nil),
        Automatic(codec: "pcm_s24be", container: .mov, reason: nil),
        Automatic(codec: "flac", container: .mp4, reason: "MP4 cannot carry FLAC"),
        Automatic(codec: "flac", container: .mov, reason: "MOV cannot carry FLAC"),
        Automatic(codec: "truehd", container: .mp4, reason: "MP4 cannot carry TrueHD"),
        Automatic(codec: "vorbis", container: .mp4, reason: "players do not read Vorbis in MP4"),
        Automatic(codec: "vorbis", container: .mov, reason: "players do not read Vorbis in MOV"),
        Automatic(codec: "wmav2", container: .mp4, reason: "MP4 cannot carry WMA"),
    ])
    func copiedWhenTheContainerCarriesIt(_ example: Automatic) throws {
        let encoding = try decide(example.codec, example.container)
        #expect(encoding?.reason == example.reason)
        if let encoding {
            #expect(encoding.codec == "aac" && encoding.sourceCodec == example.codec)
            #expect(encoding.sampleRate == 48000 && encoding.channels == 2 && encoding.bitRate == 192_000)
        }
    }

    /// MPEG-2.5 MP3 (8, 11.025, 12 kHz): FFmpeg's mp4 muxer refuses it at the
    /// header, the mov one takes it; from 16 kHz up both take MP3. Found by
    /// the fuzzer's first seeds (TestMedia/fuzz/seeds/mp3.mp3, 8 kHz).
    @Test func mp3BelowSixteenKilohertzIsEncodedForMP4() throws {
        for rate in [8000, 11025, 12000] {
            let encoding = try decide("mp3", .mp4, rate: rate)
            #expect(encoding?.reason == "MP4 cannot carry MP3 at \(rate) Hz")
            #expect(encoding?.sampleRate == rate)
            #expect(try decide("mp3", .mov, rate: rate) == nil)
        }
        #expect(try decide("mp3", .mp4, rate: 16000) == nil)
        #expect(try decide("mp3", .mp4, rate: 22050) == nil)
    }

    /// MP4's dOps is made from the Ogg Opus header; an Opus stream without
    /// one (a damaged Matroska CodecPrivate, found by the fuzzer) is encoded,
    /// not written as a file whose header cannot be finished.
    @Test func opusWithoutItsHeaderIsEncodedForMP4() throws {
        var stream = Self.audio("opus")
        for bytes in [0, 7, 18] {
            stream.configuration = [UInt8](repeating: 0, count: bytes)
            let encoding = try planner.audioEncoding(for: stream, in: .mp4, options: AudioOptions(), output: "o.mp4")
            #expect(encoding?.reason == "MP4 needs the Opus header (OpusHead), which the stream lacks")
        }
        stream.configuration = [UInt8](repeating: 0, count: 19)
        #expect(try planner.audioEncoding(for: stream, in: .mp4, options: AudioOptions(), output: "o.mp4") == nil)
    }

    /// Matroska hands an AudioSpecificConfig on unread; one whose channel
    /// configuration FFmpeg's MP4 reader refuses (14, found by the fuzzer)
    /// would make a merged file that does not open, so it is encoded, and
    /// copying it is refused with the reason.
    @Test func aacWhoseConfigurationMP4ReadersRefuseIsNotCopied() throws {
        var stream = Self.audio("aac", rate: 44100)
        // AAC LC (2), 44.1 kHz (index 4), then the channel configuration.
        stream.configuration = Self.bits([(2, 5), (4, 4), (14, 4)])
        let encoding = try planner.audioEncoding(for: stream, in: .mp4, options: AudioOptions(), output: "o.mp4")
        #expect(encoding?.reason == "its AAC configuration gives channel configuration 14, which MP4 readers do not take")
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.audio.codec", message:
            "o.mov: the audio cannot be copied: its AAC configuration gives channel configuration 14, which MP4 readers do not take")) {
            try planner.audioEncoding(for: stream, in: .mov, options: AudioOptions(codec: .copy), output: "o.mov")
        }
        for readable in [0, 2, 13] {
            stream.configuration = Self.bits([(2, 5), (4, 4), (readable, 4)])
            #expect(try planner.audioEncoding(for: stream, in: .mp4, options: AudioOptions(), output: "o.mp4") == nil)
        }
        // An ADTS stream has no configuration yet (the muxer makes one), and
        // one too short to say is left to FFmpeg, which reads zeros past its end.
        for unknown in [[], [0x12]] as [[UInt8]] {
            stream.configuration = unknown
            #expect(try planner.audioEncoding(for: stream, in: .mp4, options: AudioOptions(), output: "o.mp4") == nil)
        }
    }

    /// The channel configuration is found past an escaped object type and an explicit rate.
    @Test func aacConfigurationHead() throws {
        let plain = try #require(AACConfiguration(Self.bits([(2, 5), (4, 4), (2, 4), (0, 3)])))
        #expect(plain == AACConfiguration(objectType: 2, samplingIndex: 4, channelConfiguration: 2))
        // USAC (42: 31, then 42 - 32 in six bits) at an explicit 50 kHz, 5.1.
        let escaped = try #require(AACConfiguration(Self.bits([(31, 5), (10, 6), (15, 4), (50_000, 24), (6, 4)])))
        #expect(escaped == AACConfiguration(objectType: 42, samplingIndex: 15, channelConfiguration: 6))
        #expect(escaped.unreadableReason == nil)
        #expect(AACConfiguration(Self.bits([(31, 5), (10, 6), (15, 4), (50_000, 24)])) == nil)
        #expect(AACConfiguration([]) == nil)
        #expect(AACConfiguration(Self.bits([(2, 5), (4, 4), (15, 4)]))?.unreadableReason
            == "channel configuration 15, which MP4 readers do not take")
    }

    /// Fields written most significant bit first, padded with zeros to a byte.
    static func bits(_ fields: [(value: Int, width: Int)]) -> [UInt8] {
        var bits: [Bool] = []
        for field in fields {
            for shift in stride(from: field.width - 1, through: 0, by: -1) { bits.append(field.value >> shift & 1 == 1) }
        }
        while bits.count % 8 != 0 { bits.append(false) }
        return stride(from: 0, to: bits.count, by: 8).map { start in
            bits[start..<start + 8].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
        }
    }

    @Test func askingForChangesEncodes() throws {
        #expect(try decide("aac", .mp4, AudioOptions(codec: .aac))?.reason == "AAC asked for")
        #expect(try decide("aac", .mp4, AudioOptions(bitRate: 128_000))?.reason == "128 kb/s asked for")
        #expect(try decide("aac", .mp4, AudioOptions(sampleRate: 44100))?.reason == "resampled to 44100 Hz")
        #expect(try decide("aac", .mp4, AudioOptions(channels: 1))?.reason == "mixed to mono")
        #expect(try decide("aac", .mp4, AudioOptions(sampleRate: 44100, channels: 1))?.reason == "resampled to 44100 Hz, mixed to mono")
        // What the stream already is changes nothing.
        #expect(try decide("aac", .mp4, AudioOptions(sampleRate: 48000, channels: 2)) == nil)
        #expect(try decide("aac", .mp4, AudioOptions(codec: .copy, sampleRate: 48000, channels: 2)) == nil)
        // The container's refusal is the reason even when changes are asked for too.
        #expect(try decide("flac", .mp4, AudioOptions(bitRate: 256_000))?.reason == "MP4 cannot carry FLAC")
        let asked = try #require(try decide("flac", .mp4, AudioOptions(bitRate: 128_000, sampleRate: 32000, channels: 1)))
        #expect(asked.bitRate == 128_000 && asked.sampleRate == 32000 && asked.channels == 1)
    }

    @Test func copyingWhatCannotBeCopiedIsAnError() {
        #expect(throws: MediaMuxError.codecNotSupportedInContainer(codec: "flac", container: "mp4", path: "o.mp4")) {
            try decide("flac", .mp4, AudioOptions(codec: .copy))
        }
        #expect(throws: MediaMuxError.codecNotSupportedInContainer(codec: "vorbis", container: "mp4", path: "o.mp4")) {
            try decide("vorbis", .mp4, AudioOptions(codec: .copy))
        }
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.audio.codec", message: "o.mp4: the audio cannot be copied and resampled to 44100 Hz at once")) {
            try decide("aac", .mp4, AudioOptions(codec: .copy, sampleRate: 44100))
        }
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.audio.codec", message: "o.mp4: the audio cannot be copied and 96 kb/s asked for at once")) {
            try decide("aac", .mp4, AudioOptions(codec: .copy, bitRate: 96_000))
        }
    }

    @Test func settingsOutOfRange() throws {
        #expect(throws: MediaMuxError.self) { try decide("flac", .mp4, AudioOptions(sampleRate: 44000)) }
        #expect(throws: MediaMuxError.self) { try decide("flac", .mp4, AudioOptions(channels: 7)) }
        #expect(throws: MediaMuxError.self) { try decide("flac", .mp4, AudioOptions(channels: 0)) }
        #expect(throws: MediaMuxError.self) { try decide("flac", .mp4, AudioOptions(bitRate: 4_000)) }
        // 6 bits a sample a channel is the encoder's ceiling: 288 kb/s for mono at 48 kHz.
        #expect(throws: MediaMuxError.self) { try decide("flac", .mp4, AudioOptions(bitRate: 300_000, channels: 1)) }
        #expect(try decide("flac", .mp4, AudioOptions(bitRate: 288_000, channels: 1))?.bitRate == 288_000)
    }

    @Test(arguments: [
        (96000, 48000), (192_000, 48000), (48000, 48000), (44100, 44100), (22050, 22050), (8000, 8000),
        (37800, 44100), (47250, 48000), (6000, 8000), (11025, 11025),
    ])
    func defaultSampleRate(source: Int, encoded: Int) throws {
        #expect(MergePlanner.encodedSampleRate(for: source) == encoded)
        let encoding = try #require(try decide("flac", .mp4, rate: source))
        #expect(encoding.sampleRate == encoded)
        // The default bit rate, within what the encoder can spend at that rate (6 bits a sample a channel).
        #expect(encoding.bitRate == min(192_000, encoded * 2 * 6))
    }

    @Test(arguments: [(1, 1, 96_000), (2, 2, 192_000), (3, 3, 192_000), (6, 6, 384_000), (7, 6, 384_000), (8, 8, 512_000), (16, 8, 512_000)])
    func defaultChannelsAndBitRate(source: Int, channels: Int, bitRate: Int) throws {
        let encoding = try #require(try decide("flac", .mp4, channels: source))
        #expect(encoding.channels == channels && encoding.bitRate == bitRate)
    }

    @Test func summarySaysWhatChanged() {
        let same = AudioEncoding(codec: "aac", sourceCodec: "flac", bitRate: 192_000, sampleRate: 44100, channels: 2, sourceSampleRate: 44100, sourceChannels: 2, reason: "MP4 cannot carry FLAC")
        #expect(same.summary == "flac -> aac 192 kb/s (MP4 cannot carry FLAC)")
        let changed = AudioEncoding(codec: "aac", sourceCodec: "pcm_s24le", bitRate: 384_000, sampleRate: 48000, channels: 6, sourceSampleRate: 96000, sourceChannels: 7, reason: "few players read PCM in MP4")
        #expect(changed.summary == "pcm_s24le -> aac 384 kb/s, 96000 -> 48000 Hz, 7 -> 6 channels (few players read PCM in MP4)")
    }

    /// The planned track of an encoded soundtrack: the encoder's time base,
    /// none of the source's sample-entry boxes.
    @Test func plannedTrack() throws {
        let video = PlannerTests.phoneVideo
        let take = PlannerTests.info("take.wav", [Self.audio("pcm_s24le", rate: 96000)])
        let plan = try planner.plan(video: video, audio: take, output: "o.mp4", outputFacts: PlannerTests.freshOutput, options: MergeOptions())
        let encoding = try #require(plan.audio!.encoding)
        #expect(encoding.summary == "pcm_s24le -> aac 192 kb/s, 96000 -> 48000 Hz (few players read PCM in MP4)")
        #expect(plan.audio!.codec == "aac" && plan.audio!.codecTag == nil && plan.audio!.sampleEntry == nil && plan.audio!.trackBoxes == nil)
        #expect(plan.audio!.timeBase == MediaTime(value: 1, timescale: 48000))
        // 3 s: 144,000 samples, 140 whole frames of 1024 and room for the rest, the priming and the flush.
        #expect(plan.audio!.sampleCount == 143)
        let copied = try planner.plan(video: video, audio: take, output: "o.mov", outputFacts: PlannerTests.freshOutput, options: MergeOptions())
        #expect(copied.audio!.encoding == nil && copied.audio!.codec == "pcm_s24le")
    }
}
