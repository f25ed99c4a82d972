import MediaMuxBase

/// Pure: whether the soundtrack is copied or encoded, and how.
extension MergePlanner {
    /// The sample rates AAC signals by index (ISO 14496-3, 1.6.3.4) that
    /// FFmpeg's encoder takes.
    package static let aacSampleRates = [96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050, 16_000, 12_000, 11_025, 8_000]
    /// Channel counts with a standard AAC channel configuration that FFmpeg's
    /// encoder writes (mono, stereo, 3.0, 4.0, 5.0, 5.1, 7.1).
    package static let aacChannelCounts = [1, 2, 3, 4, 5, 6, 8]
    /// Whether FFmpeg's muxer may write the codec into the container but
    /// players do not read it there: Vorbis gets a private object type in MP4
    /// (0xDD) and none in MOV. PCM in MP4 (ISO 23003-5 `ipcm`) FFmpeg 5.1
    /// refuses and 7.1 writes (but not at 24 bits, where its header fails);
    /// few players read it, while MOV's PCM is read everywhere. One rule for
    /// every FFmpeg: such a soundtrack is encoded.
    package static func isUnplayable(_ codec: String, in container: MergePlan.Container) -> Bool {
        codec == "vorbis" || (container == .mp4 && codec.hasPrefix("pcm_"))
    }

    /// nil: copy the stream as it is. Otherwise the encoding, with the reason.
    /// `repeating`: the soundtrack loops, which a copy can do only for codecs
    /// whose packets stand alone.
    package func audioEncoding(
        for stream: StreamInfo, in container: MergePlan.Container, options: AudioOptions, repeating: Bool = false,
        joining clips: Int = 1, mixingLevel: Double? = nil, output: String
    ) throws -> AudioEncoding? {
        let refusal = copyRefusal(stream, container)
        let repeatRefusal = repeating && !Self.repeatsByCopy(stream.codec)
            ? "looped, and \(Self.displayName(stream.codec)) cannot repeat by copy"
            : clips > 1 ? "the sound of \(clips) clips, joined into one track without a gap or a click at a join" : nil
        if let rate = options.sampleRate, !Self.aacSampleRates.contains(rate) {
            throw MediaMuxError.invalidOption(option: "MergeOptions.audio.sampleRate", message:
                "\(output): AAC cannot be encoded at \(rate) Hz; choose one of \(Self.aacSampleRates.reversed().map(String.init).joined(separator: ", "))")
        }
        if let channels = options.channels, !Self.aacChannelCounts.contains(channels) {
            throw MediaMuxError.invalidOption(option: "MergeOptions.audio.channels", message:
                "\(output): AAC cannot be encoded with \(channels) channels; choose 1-6 or 8")
        }
        try Self.check(options.effects, output: output)
        let changes = [
            options.sampleRate.flatMap { $0 != stream.sampleRate ? "resampled to \($0) Hz" : nil },
            options.channels.flatMap { $0 != stream.channels ? "mixed to " + Self.channelWord($0) : nil },
            options.bitRate.map { "\($0 / 1000) kb/s asked for" },
        ].compactMap { $0 } + options.effects.changes
            + (mixingLevel.map { ["mixed with the video's own audio at \(fixedPoint($0, decimals: 1)) dB"] } ?? [])

        let reason: String
        switch options.codec {
        case .copy:
            if let refusal {
                guard carries(stream.codec, container) else {
                    throw MediaMuxError.codecNotSupportedInContainer(codec: stream.codec, container: container.rawValue, path: output)
                }
                // The container takes the codec, but not this stream as it is.
                throw MediaMuxError.invalidOption(option: "MergeOptions.audio.codec", message: "\(output): the audio cannot be copied: \(refusal)")
            }
            if let change = changes.first {
                throw MediaMuxError.invalidOption(option: "MergeOptions.audio.codec", message: "\(output): the audio cannot be copied and \(change) at once")
            }
            if clips > 1 {
                throw MediaMuxError.invalidOption(option: "MergeOptions.audio.codec", message:
                    "\(output): the sound of \(clips) clips cannot be joined by copy, since each clip's would begin with its encoder's priming; let it be encoded")
            }
            if repeatRefusal != nil {
                throw MediaMuxError.invalidOption(option: "MergeOptions.audio.codec", message:
                    "\(output): \(Self.displayName(stream.codec)) cannot repeat by copy, since each repeat would begin with the encoder's priming; let it be encoded")
            }
            return nil
        case .aac:
            reason = "AAC asked for"
        case .automatic:
            if let refusal {
                reason = refusal
            } else if let repeatRefusal {
                reason = repeatRefusal
            } else if !changes.isEmpty {
                reason = changes.joined(separator: ", ")
            } else {
                return nil
            }
        }

        let rate = options.sampleRate ?? Self.encodedSampleRate(for: stream.sampleRate)
        let channels = options.channels ?? Self.encodedChannels(for: stream.channels)
        // FFmpeg's encoder spends at most 6144 bits a channel on one frame of 1024 samples.
        let ceiling = channels * rate * 6
        let bitRate = options.bitRate ?? min(Self.defaultBitRate(channels: channels), ceiling)
        guard bitRate >= 8_000 && bitRate <= ceiling else {
            throw MediaMuxError.invalidOption(option: "MergeOptions.audio.bitRate", message:
                "\(output): an AAC bit rate of \(bitRate / 1000) kb/s is out of range for \(channels) channels at \(rate) Hz (8-\(ceiling / 1000) kb/s)")
        }
        var encoding = AudioEncoding(
            codec: "aac", sourceCodec: stream.codec, bitRate: bitRate, sampleRate: rate, channels: channels,
            sourceSampleRate: stream.sampleRate, sourceChannels: stream.channels, reason: reason)
        encoding.effects = options.effects
        return encoding
    }

    /// Level effects within what makes sense; their lengths against the track's are checked once it is placed.
    static func check(_ effects: AudioEffects, output: String) throws {
        guard effects.volume.isFinite, (-60...40).contains(effects.volume) else {
            throw MediaMuxError.invalidOption(option: "MergeOptions.audio.volume", message: "\(output): a volume of \(effects.volume) dB is out of range (-60 to 40 dB)")
        }
        if let loudness = effects.loudness {
            guard loudness.isFinite, (-70 ... -5).contains(loudness) else {
                throw MediaMuxError.invalidOption(option: "MergeOptions.audio.loudness", message: "\(output): a loudness of \(loudness) LUFS is out of range (-70 to -5 LUFS)")
            }
            if effects.volume != 0 {
                throw MediaMuxError.invalidOption(option: "MergeOptions.audio.loudness", message: "\(output): a volume and a loudness both set the level; choose one")
            }
        }
        for (option, fade) in [("fadeIn", effects.fadeIn), ("fadeOut", effects.fadeOut)] where fade < .zero() {
            throw MediaMuxError.invalidOption(option: "MergeOptions.audio." + option, message: "\(output): a fade cannot last less than nothing")
        }
    }

    /// Fades that fit the soundtrack as it plays in the output.
    static func check(fadesOf effects: AudioEffects, playing length: MediaTime, path: String) throws {
        for (name, option, fade) in [("fade in", "fadeIn", effects.fadeIn), ("fade out", "fadeOut", effects.fadeOut)] where fade > length {
            throw MediaMuxError.invalidOption(option: "MergeOptions.audio." + option, message:
                "\(path): a \(name) of \(fade.secondsText()) s is longer than the \(length.secondsText()) s it plays for")
        }
    }

    /// Why the container cannot take the codec as it is, or nil when it can.
    private func copyRefusal(_ stream: StreamInfo, _ container: MergePlan.Container) -> String? {
        // Copied unread, its sample entry whole.
        if Self.standIn(for: stream) != nil { return nil }
        let name = container.rawValue.uppercased()
        let codec = stream.codec
        guard carries(codec, container) else {
            if codec.hasPrefix("pcm_") { return "few players read PCM in \(name)" }
            return Self.isUnplayable(codec, in: container)
                ? "players do not read \(Self.displayName(codec)) in \(name)" : "\(name) cannot carry \(Self.displayName(codec))"
        }
        // MPEG-2.5's rates (8, 11.025 and 12 kHz) are not MP3 as MP4 defines
        // it: FFmpeg's mp4 muxer refuses them at the header (not the mov one).
        if codec == "mp3", container == .mp4, let rate = stream.sampleRate, rate < 16_000 {
            return "MP4 cannot carry MP3 at \(rate) Hz"
        }
        // The muxer builds dOps from the Ogg Opus header (OpusHead, 19 bytes
        // at least), which a damaged or bare stream lacks.
        if codec == "opus", let configuration = stream.configuration, configuration.count < 19 {
            return "\(name) needs the Opus header (OpusHead), which the stream lacks"
        }
        // Matroska passes an AudioSpecificConfig on unread; the MP4 reader
        // refuses one it cannot place channels by, and the file with it.
        if codec == "aac", let configuration = stream.configuration,
            let reason = AACConfiguration(configuration)?.unreadableReason {
            return "its AAC configuration gives \(reason)"
        }
        return nil
    }

    /// Whether the container carries the codec where players read it, for
    /// streams whose configuration it takes.
    private func carries(_ codec: String, _ container: MergePlan.Container) -> Bool {
        !Self.isUnplayable(codec, in: container) && canStore(codec, container)
    }

    /// The source's rate where AAC has it, up to 48 kHz; otherwise the
    /// lowest AAC rate above it, and 48 kHz above that.
    package static func encodedSampleRate(for source: Int?) -> Int {
        guard let source, source > 0 else { return 48_000 }
        if source >= 48_000 { return 48_000 }
        return aacSampleRates.filter { $0 >= source }.min() ?? 48_000
    }

    /// The source's count where AAC has a configuration for it: 7 becomes 5.1,
    /// more than 8 become 7.1.
    package static func encodedChannels(for source: Int?) -> Int {
        guard let source, source > 0 else { return 2 }
        if aacChannelCounts.contains(source) { return source }
        return source == 7 ? 6 : 8
    }

    /// 96 kb/s a channel for mono and stereo, 64 kb/s a channel beyond (at
    /// low sample rates no more than the encoder can spend).
    package static func defaultBitRate(channels: Int) -> Int {
        channels <= 2 ? 96_000 * channels : 64_000 * channels
    }

    static func channelWord(_ count: Int) -> String {
        count == 1 ? "mono" : count == 2 ? "stereo" : "\(count) channels"
    }

    /// How users know a codec: "FLAC", "PCM", "Vorbis".
    static func displayName(_ codec: String) -> String {
        if codec.hasPrefix("pcm_") { return "PCM" }
        if codec == "none" { return "a codec this FFmpeg cannot read" }
        let names = [
            "vorbis": "Vorbis", "opus": "Opus", "truehd": "TrueHD", "flac": "FLAC", "alac": "ALAC", "wmav2": "WMA",
            "h264": "H.264", "hevc": "HEVC", "av1": "AV1", "vp9": "VP9", "vp8": "VP8", "mpeg4": "MPEG-4", "prores": "ProRes",
        ]
        return names[codec] ?? codec.uppercased()
    }
}
