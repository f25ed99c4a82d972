import MediaMuxBase

/// How a merge treats the soundtrack's audio.
public struct AudioOptions: Sendable, Equatable {
    /// Copy or encode the soundtrack.
    public enum Codec: String, Sendable, CaseIterable {
        /// Copy it when the output container carries its codec as it is and
        /// nothing asked for changes it; encode AAC otherwise.
        case automatic
        /// Copy it; a soundtrack that cannot be copied is an error.
        case copy
        /// Encode AAC-LC, even from AAC.
        case aac
    }

    /// Copy or encode the soundtrack; `.automatic` unless told otherwise.
    public var codec: Codec
    /// The encoder's bit rate in bits per second; nil for the default (96 kb/s
    /// a channel for mono and stereo, 64 kb/s a channel beyond). Setting it
    /// means encoding.
    public var bitRate: Int?
    /// The encoded sample rate in Hz; nil keeps the soundtrack's where AAC has
    /// it, up to 48 kHz.
    public var sampleRate: Int?
    /// The encoded channel count (1-6 or 8); nil keeps the soundtrack's, up to 8.
    /// Downmixing and upmixing use libswresample's standard matrices.
    public var channels: Int?
    /// Moves the soundtrack on the output's timeline: a positive offset starts
    /// it that much later (the edit list waits), a negative one skips that
    /// much of its beginning. Copying stays possible either way.
    public var offset: MediaTime
    /// Repeats the soundtrack until the video ends, when it is shorter (with
    /// `EndPolicy.shortest` or `.video`). Each repeat starts where the one
    /// before ends, and the last is cut to the sample. Copied where every
    /// sample stands alone (PCM in MOV, ALAC); AAC, MP3 and Opus are encoded,
    /// since a repeat by copy would start each time with the encoder's priming.
    public var loops: Bool
    /// A gain in dB (-6 halves the amplitude); 0 leaves the level alone.
    public var volume: Double
    /// Fade in from silence over this long at the start of the soundtrack.
    public var fadeIn: MediaTime
    /// Fade out to silence over this long before the soundtrack ends.
    public var fadeOut: MediaTime
    /// The integrated loudness to bring the soundtrack to, in LUFS (EBU R128):
    /// measured first, then one gain for the whole of it. Where the gain would
    /// push true peaks over -1 dBTP, a limiter holds them at -2 dBTP before
    /// the encoder (whose own overshoot stays within the difference) and the
    /// gain is corrected, by measuring again, for the loudness the limiter
    /// takes off. nil leaves the level alone.
    public var loudness: Double?

    /// The soundtrack's options; every one has a default, which copies the
    /// soundtrack as it is where the output can carry it.
    ///
    /// The planner checks them against the soundtrack and fails the merge
    /// with `.invalidOption` when they are out of range or contradict each
    /// other: a sample rate AAC does not have, a channel count other than 1-6
    /// or 8, a bit rate outside what AAC can spend, a volume outside -60 to
    /// 40 dB, a loudness outside -70 to -5 LUFS or together with a volume, a
    /// negative fade or one longer than the soundtrack plays, a loop with
    /// `EndPolicy.audio`, an offset that skips all of the soundtrack or
    /// starts it after the output ends, or `.copy` together with a change or
    /// with a loop of a codec that cannot repeat by copy. `.copy` of a codec
    /// the container cannot carry fails with `.codecNotSupportedInContainer`.
    ///
    /// - Parameters:
    ///   - codec: Copy or encode the soundtrack.
    ///   - bitRate: The encoder's bit rate in bits per second; nil for the default.
    ///   - sampleRate: The encoded sample rate in Hz; nil keeps the soundtrack's, up to 48 kHz.
    ///   - channels: The encoded channel count; nil keeps the soundtrack's, up to 8.
    ///   - offset: How far to move the soundtrack on the output's timeline: later when positive.
    ///   - loops: Repeat a shorter soundtrack until the video ends.
    ///   - volume: A gain in dB; 0 leaves the level alone.
    ///   - fadeIn: How long the soundtrack fades in from silence.
    ///   - fadeOut: How long the soundtrack fades out to silence before it ends.
    ///   - loudness: The integrated loudness to reach, in LUFS; nil leaves the level alone.
    public init(
        codec: Codec = .automatic, bitRate: Int? = nil, sampleRate: Int? = nil, channels: Int? = nil,
        offset: MediaTime = .zero(), loops: Bool = false, volume: Double = 0, fadeIn: MediaTime = .zero(),
        fadeOut: MediaTime = .zero(), loudness: Double? = nil
    ) {
        self.codec = codec
        self.bitRate = bitRate
        self.sampleRate = sampleRate
        self.channels = channels
        self.offset = offset
        self.loops = loops
        self.volume = volume
        self.fadeIn = fadeIn
        self.fadeOut = fadeOut
        self.loudness = loudness
    }

    /// The level effects asked for, which need the audio decoded and encoded.
    var effects: AudioEffects {
        AudioEffects(volume: volume, fadeIn: fadeIn, fadeOut: fadeOut, loudness: loudness)
    }
}

/// What is done to the soundtrack's level on the way to the encoder.
public struct AudioEffects: Sendable, Equatable {
    /// Gain in dB.
    public var volume: Double
    /// How long the fade in from silence lasts; zero for none.
    public var fadeIn: MediaTime
    /// How long the fade out to silence lasts; zero for none.
    public var fadeOut: MediaTime
    /// The integrated loudness to reach, in LUFS.
    public var loudness: Double?
    /// The highest true peak a loudness gain may leave, in dBTP.
    public var truePeakLimit: Double = -1

    /// Effects as the planner derives them from `AudioOptions`.
    ///
    /// - Parameters:
    ///   - volume: Gain in dB.
    ///   - fadeIn: Length of the fade in.
    ///   - fadeOut: Length of the fade out.
    ///   - loudness: The integrated loudness to reach, in LUFS; nil for none.
    public init(volume: Double = 0, fadeIn: MediaTime = .zero(), fadeOut: MediaTime = .zero(), loudness: Double? = nil) {
        self.volume = volume
        self.fadeIn = fadeIn
        self.fadeOut = fadeOut
        self.loudness = loudness
    }

    /// True when nothing changes the level, so the soundtrack needs no filters.
    public var isEmpty: Bool { volume == 0 && fadeIn.value == 0 && fadeOut.value == 0 && loudness == nil }

    /// Each effect as a user would say it: "set to -6 dB", "faded in over 2 s".
    public var changes: [String] {
        [
            volume != 0 ? "set to \(fixedPoint(volume, decimals: 1)) dB" : nil,
            fadeIn.value > 0 ? "faded in over \(fadeIn.secondsText()) s" : nil,
            fadeOut.value > 0 ? "faded out over \(fadeOut.secondsText()) s" : nil,
            loudness.map { "brought to \(fixedPoint($0, decimals: 1)) LUFS" },
        ].compactMap { $0 }
    }
}

/// How the output's soundtrack is made from the chosen audio stream: nil in
/// `MergePlan.Track.encoding` means copied packet for packet.
public struct AudioEncoding: Sendable, Equatable {
    /// The codec encoded: "aac".
    public var codec: String
    /// The soundtrack's own codec, decoded.
    public var sourceCodec: String
    /// The encoder's bit rate, in bits per second.
    public var bitRate: Int
    /// The encoded sample rate, in Hz.
    public var sampleRate: Int
    /// The encoded channel count.
    public var channels: Int
    /// The soundtrack's own rate and channel count, where known.
    public var sourceSampleRate: Int?
    /// The soundtrack's own channel count, where known.
    public var sourceChannels: Int?
    /// Why the soundtrack is encoded rather than copied ("MP4 cannot carry FLAC").
    public var reason: String
    /// What is done to its level on the way.
    public var effects = AudioEffects()

    /// An encoding as the planner states it; for tests and callers that build plans.
    ///
    /// - Parameters:
    ///   - codec: The codec encoded, FFmpeg's name ("aac").
    ///   - sourceCodec: The soundtrack's own codec, FFmpeg's name.
    ///   - bitRate: The encoder's bit rate in bits per second.
    ///   - sampleRate: The encoded sample rate in Hz.
    ///   - channels: The encoded channel count.
    ///   - sourceSampleRate: The soundtrack's own sample rate, where known.
    ///   - sourceChannels: The soundtrack's own channel count, where known.
    ///   - reason: Why the soundtrack is encoded, as the report shows it.
    public init(
        codec: String, sourceCodec: String, bitRate: Int, sampleRate: Int, channels: Int,
        sourceSampleRate: Int? = nil, sourceChannels: Int? = nil, reason: String
    ) {
        self.codec = codec
        self.sourceCodec = sourceCodec
        self.bitRate = bitRate
        self.sampleRate = sampleRate
        self.channels = channels
        self.sourceSampleRate = sourceSampleRate
        self.sourceChannels = sourceChannels
        self.reason = reason
    }

    /// "flac -> aac 192 kb/s (MP4 cannot carry FLAC)", with the rate and the
    /// channels where they change: "pcm_s24le -> aac 192 kb/s, 96000 -> 48000 Hz (...)".
    public var summary: String {
        var text = "\(sourceCodec) -> \(codec) \(bitRate / 1000) kb/s"
        if let sourceSampleRate, sourceSampleRate != sampleRate { text += ", \(sourceSampleRate) -> \(sampleRate) Hz" }
        if let sourceChannels, sourceChannels != channels { text += ", \(sourceChannels) -> \(channels) channels" }
        for change in effects.changes where !reason.contains(change) { text += ", " + change }
        return text + " (\(reason))"
    }
}
