/// The head of an MPEG-4 AudioSpecificConfig (ISO 14496-3, 1.6.2.1): the
/// object type, the sampling frequency index and the channel configuration,
/// which come first in every one. Enough to tell whether an MP4 reader will
/// take the configuration as it is.
struct AACConfiguration: Equatable {
    /// The audio object type (2 is AAC LC, 5 SBR, 29 PS).
    var objectType: Int
    /// The sampling frequency index; 15 means the rate follows in 24 bits.
    var samplingIndex: Int
    /// The channel configuration (0: given by the object type's own config).
    var channelConfiguration: Int

    /// Channel configurations FFmpeg's MPEG-4 audio reader (the one its MP4
    /// demuxer runs over every esds) takes: 0 to 13. Past that, the merged
    /// file would not open.
    static let readableChannelConfigurations = 0...13

    /// Why an MP4 reader would not take this configuration, or nil when it would.
    var unreadableReason: String? {
        Self.readableChannelConfigurations.contains(channelConfiguration)
            ? nil : "channel configuration \(channelConfiguration), which MP4 readers do not take"
    }
}

extension AACConfiguration {
    /// Parses the head of `bytes`; nil when they end before the channel configuration.
    init?(_ bytes: [UInt8]) {
        var reader = BitReader(bytes)
        guard var objectType = reader.read(5) else { return nil }
        if objectType == 31 {
            guard let escaped = reader.read(6) else { return nil }
            objectType = 32 + escaped
        }
        guard let index = reader.read(4) else { return nil }
        if index == 15, reader.read(24) == nil { return nil }
        guard let channels = reader.read(4) else { return nil }
        self.objectType = objectType
        samplingIndex = index
        channelConfiguration = channels
    }
}
