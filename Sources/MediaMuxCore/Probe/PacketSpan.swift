import MediaMuxBase
/// Where one stream's presentation starts and ends, gathered packet by
/// packet from containers without an exact index (Matroska, WebM, MP3, Ogg,
/// WAV). For audio, the samples the decoder drops do not count: the encoder
/// delay at the start (MP3's LAME header, Opus pre-skip) and the padding at
/// the end (LAME, Opus end trimming), which FFmpeg hands out as each
/// packet's skip-samples side data or as the stream's initial padding.
/// The span then holds exactly the samples a decoder outputs.
package struct PacketSpan: Equatable {
    /// Ticks per second of every value here: fine enough for both the
    /// packets' time base and the sample rate, so that a millisecond time
    /// base does not round away the half milliseconds of Opus's pre-skip.
    package let timescale: Int64
    private(set) var first: Int64?
    private(set) var last: Int64?
    private(set) var count = 0
    /// Every packet's samples as its codec frames them, summed, when each
    /// packet's count is known: exact where the container rounds its times
    /// (WebM's milliseconds make an AAC frame 23 ms, not 23.22).
    private var samples: Int64 = 0
    private var everyPacketCounted = true
    private var longest: Int64 = 0
    /// Decoded samples dropped at the start and end.
    private var leading: Int64 = 0
    private var trailing: Int64 = 0

    package init(timescale: Int64) {
        self.timescale = timescale
    }

    /// - Parameters:
    ///   - samples: the samples the packet decodes to (before any are
    ///     dropped), in ticks; nil when unknown (video, PCM).
    ///   - skip: samples to drop from this packet's start, in ticks.
    ///   - discard: samples to drop from its end, in ticks.
    package mutating func add(pts: Int64, duration: Int64, samples packetSamples: Int64? = nil, skip: Int64 = 0, discard: Int64 = 0) {
        if first == nil || pts < first! {
            first = pts
            leading = skip
        }
        let end = pts + max(duration, 0)
        if last == nil || end >= last! {
            last = end
            trailing = discard
        }
        count += 1
        longest = max(longest, duration, packetSamples ?? 0)
        if let packetSamples { samples &+= packetSamples } else { everyPacketCounted = false }
    }

    /// A start dropped by the decoder that no packet's side data declares (Opus's initial padding in WebM).
    package mutating func dropAtStartIfUndeclared(_ ticks: Int64) {
        if leading == 0 { leading = ticks }
    }

    /// The first and last moment a decoder outputs samples for. Audio whose
    /// packets' samples are all known ends that many samples after its first
    /// packet, unless the timestamps disagree by more than a packet (a gap
    /// in the recording); everything else ends where its last packet does.
    package var presented: (start: MediaTime, end: MediaTime)? {
        guard let first, let last, last > first else { return nil }
        let (spanned, wide) = last.subtractingReportingOverflow(first)
        guard !wide else { return nil }
        let start = first &+ leading
        var end = last &- trailing
        if everyPacketCounted, count > 0, samples >= 0, (samples &- spanned).magnitude <= longest.magnitude {
            end = first &+ samples &- trailing
        }
        guard end > start else { return nil }
        return (MediaTime(value: start, timescale: timescale), MediaTime(value: end, timescale: timescale))
    }
}

/// The samples in one Opus packet at 48 kHz, from its TOC byte and frame
/// count (RFC 6716, section 3.1); nil for a packet too short to say.
package func opusPacketSamples(_ packet: UnsafeBufferPointer<UInt8>) -> Int64? {
    guard let toc = packet.first else { return nil }
    let config = Int(toc >> 3)
    let frame: Int64
    switch config {
    case 0..<12: frame = [480, 960, 1920, 2880][config % 4]  // SILK: 10, 20, 40, 60 ms
    case 12..<16: frame = [480, 960][config % 2]  // hybrid: 10, 20 ms
    default: frame = [120, 240, 480, 960][config % 4]  // CELT: 2.5, 5, 10, 20 ms
    }
    switch toc & 0x3 {
    case 0: return frame
    case 1, 2: return frame * 2
    default:
        guard packet.count >= 2 else { return nil }
        return frame * Int64(packet[1] & 0x3F)
    }
}
