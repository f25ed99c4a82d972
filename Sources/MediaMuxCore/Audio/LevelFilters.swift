import MediaMuxBase
internal import CFFmpeg

/// A soundtrack's loudness as measured (EBU R128, libavfilter's ebur128),
/// and the gain that brings it to the planned target.
public struct LoudnessAdjustment: Sendable, Equatable {
    /// The integrated loudness measured over the span as it plays, in LUFS.
    public var measured: Double
    /// Its highest true peak, in dBTP.
    public var truePeak: Double
    /// The gain applied, in dB: the target minus `measured`.
    public var gain: Double
    /// Whether a limiter holds the peaks the gain would push over the limit.
    public var limited: Bool
}

/// Measures a span's loudness: its samples (`AudioSpanReader`), through
/// `filters` if given, into libavfilter's ebur128, whose integrated loudness
/// and true peaks are read from the metadata of the last frame it hands out.
enum LoudnessMeter {
    static func measure(_ reader: AudioSpanReader, after filters: String? = nil, path: String) throws -> (integrated: Double, truePeak: Double) {
        let meter = "ebur128=peak=true:metadata=1"
        let graph = try reader.withLayout {
            try FilterGraph(filters: "[in0]" + (filters.map { $0 + "," + meter } ?? meter), rate: reader.rate, layout: $0, path: path)
        }
        let frame = try FrameBuffer()
        var integrated: Double?
        var truePeak = 0.0
        func collect() throws {
            while try graph.receive(into: frame) {
                let metadata = frame.pointer.pointee.metadata
                func number(_ key: String) -> Double? {
                    av_dict_get(metadata, key, nil, 0).flatMap { $0.pointee.value }.flatMap { Double(String(cString: $0)) }
                }
                if let value = number("lavfi.r128.I") { integrated = value }
                // Linear in FFmpeg 5.1's metadata, per channel.
                for channel in 0..<reader.channelCount {
                    if let peak = number("lavfi.r128.true_peaks_ch\(channel)") { truePeak = max(truePeak, peak) }
                }
            }
        }
        let chunk = 4096
        while !reader.isDone || reader.queue.count > 0 {
            try reader.fill(to: chunk)
            let count = Int32(min(reader.queue.count, chunk))
            guard count > 0 else { break }
            let samples = try reader.take(count)
            samples.pointer.pointee.pts = reader.queued - Int64(reader.queue.count) - Int64(count)
            try graph.send(samples)
            try collect()
        }
        try graph.send(FrameBuffer?.none)
        try collect()
        guard let integrated else {
            throw MediaMuxError.damaged(path: path, detail: "its loudness could not be measured")
        }
        return (integrated, truePeak > 0 ? 20 * log10(truePeak) : -.infinity)
    }
}

extension AudioEffects {
    /// How close to the target a limited loudness must come, and how many
    /// measurements of the limited span may be made to get there.
    static let loudnessTolerance = 0.1
    static let loudnessCorrections = 3
    /// Room below the true-peak limit for the AAC encoder's own overshoot.
    static let encoderHeadroom = 1.0

    /// The adjustment that brings a span measured at `measured` LUFS with a
    /// true peak of `truePeak` dBTP to the target loudness. Where the gain
    /// alone would push peaks over the limit a limiter holds them, which
    /// takes some loudness off: `measureLimited` measures the span through
    /// the gain and the limiter, and the gain is corrected until the result
    /// is within 0.1 LU of the target.
    func adjustment(
        measured: Double, truePeak: Double, rate: Int32, path: String,
        measureLimited: (_ filters: String) throws -> Double
    ) throws -> LoudnessAdjustment? {
        guard let loudness else { return nil }
        // EBU R128's absolute gate: nothing louder than -70 LUFS counts.
        guard measured > -70 else {
            throw MediaMuxError.invalidOption(option: "MergeOptions.audio.loudness", message:
                "\(path): is silent (below -70 LUFS), so its loudness cannot be brought to \(fixedPoint(loudness, decimals: 1)) LUFS")
        }
        var adjustment = LoudnessAdjustment(
            measured: measured, truePeak: truePeak, gain: loudness - measured, limited: truePeak + loudness - measured > truePeakLimit)
        guard adjustment.limited else { return adjustment }
        for _ in 0..<Self.loudnessCorrections {
            let reached = try measureLimited(levelFilters(rate: rate, adjustment: adjustment).joined(separator: ","))
            guard abs(loudness - reached) > Self.loudnessTolerance, reached > -70 else { break }
            adjustment.gain += loudness - reached
        }
        return adjustment
    }

    /// The gain, and the limiter where the gain needs one.
    func levelFilters(rate: Int32, adjustment: LoudnessAdjustment?) -> [String] {
        var chain: [String] = []
        let gain = adjustment?.gain ?? volume
        if gain != 0 { chain.append("volume=\(fixedPoint(gain, decimals: 4))dB") }
        if adjustment?.limited == true {
            // Peaks between samples: limited at four times the rate, where they are samples.
            let limit = fixedPoint(pow(10, (truePeakLimit - Self.encoderHeadroom) / 20), decimals: 6)
            chain.append("aresample=\(rate * 4),alimiter=limit=\(limit):level=false:latency=true:attack=1:release=100,aresample=\(rate)")
        }
        return chain
    }

    /// libavfilter's filters for these effects over a span of `samples`
    /// samples at `rate`; nil when there are none. Positions are in samples,
    /// from the frames' timestamps (the span's sample index).
    func filters(samples: Int64, rate: Int32, adjustment: LoudnessAdjustment?) -> String? {
        var chain = levelFilters(rate: rate, adjustment: adjustment)
        let tick = MediaTime(value: 1, timescale: Int64(rate))
        let fadeInSamples = fadeIn.ticks(of: tick, rounding: .nearest)
        if fadeInSamples > 0 { chain.append("afade=t=in:ss=0:ns=\(fadeInSamples)") }
        let fadeOutSamples = fadeOut.ticks(of: tick, rounding: .nearest)
        if fadeOutSamples > 0 { chain.append("afade=t=out:ss=\(max(samples - fadeOutSamples, 0)):ns=\(fadeOutSamples)") }
        return chain.isEmpty ? nil : chain.joined(separator: ",")
    }
}
