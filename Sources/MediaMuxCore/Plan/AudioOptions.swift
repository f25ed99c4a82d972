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

    public init(
        codec: Codec = .automatic, bitRate: Int? = nil, sampleRate: Int? = nil, channels: Int? = nil,
        offset: MediaTime = .zero(), loops: Bool = false
    ) {
        self.codec = codec
        self.bitRate = bitRate
        self.sampleRate = sampleRate
        self.channels = channels
        self.offset = offset
        self.loops = loops
    }
}

/// How the output's soundtrack is made from the chosen audio stream: nil in
/// `MergePlan.Track.encoding` means copied packet for packet.
public struct AudioEncoding: Sendable, Equatable {
    /// The codec encoded: "aac".
    public var codec: String
    /// The soundtrack's own codec, decoded.
    public var sourceCodec: String
    public var bitRate: Int
    public var sampleRate: Int
    public var channels: Int
    /// The soundtrack's own rate and channel count, where known.
    public var sourceSampleRate: Int?
    public var sourceChannels: Int?
    /// Why the soundtrack is encoded rather than copied ("MP4 cannot carry FLAC").
    public var reason: String

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
        return text + " (\(reason))"
    }
}
