import MediaMuxBase
internal import CFFmpeg

/// The soundtrack encoded AAC as the plan's encoding says, from the track's
/// start to the end to the sample, with its level effects (a loudness target
/// measured first, in a pass of its own over the same span), handed out a
/// few frames at a time. The
/// encoder's priming comes first (negative times, hidden by the edit list
/// the movie header rewrite writes), and whatever it encodes past the end
/// is dropped.
final class EncodedAudioReader: PacketSource {
    let timeBase: AVRational
    private let encoder: AudioSpanEncoder
    private let path: String
    /// Where the track starts on the output's timeline, in samples.
    private let startTick: Int64
    private var queue = PacketQueue()
    private var encodedUpTo: Int64 = 0
    private var finished = false
    /// Where the source's samples should reach in the span: its end, or the
    /// span's when it loops (a mixed span goes on past the soundtrack's end).
    private let expectedReach: Int64
    /// The measured loudness and the gain applied, when the plan asks for a loudness.
    private(set) var loudness: LoudnessAdjustment?

    /// Frames encoded at each turn: enough to keep the muxer fed, few enough to keep memory flat.
    private static let framesPerTurn: Int64 = 16

    /// - Parameter mix: the video's own audio to mix under the soundtrack, read from a demuxer of its own.
    init(
        demuxer: DemuxerHandle, track: MergePlan.Track, encoding: AudioEncoding, mix: MergePlan.Mix? = nil, output: String,
        globalHeaders: Bool, cancellation: CancellationFlag
    ) throws {
        let tick = MediaTime(value: 1, timescale: Int64(encoding.sampleRate))
        timeBase = AVRational(tick: tick)
        path = track.path
        startTick = track.sourceStart.ticks(of: tick, rounding: .nearest)
        let samples = (track.end - track.sourceStart).ticks(of: tick, rounding: .nearest)
        let plays = try Self.plays(of: track)
        let rate = Int32(encoding.sampleRate)
        expectedReach = plays.count > 1 ? samples : (min(track.sourceEnd, track.end) - track.sourceStart).ticks(of: tick, rounding: .nearest)
        if encoding.effects.loudness != nil {
            // The span as it will play, read once more by a reader of its own for each measurement.
            func measure(after filters: String?) throws -> (integrated: Double, truePeak: Double) {
                let reader = try AudioSpanReader(
                    demuxer: DemuxerHandle(path: track.path, cancellation: cancellation), plays: plays, samples: samples, rate: rate,
                    channels: encoding.channels, cancellation: cancellation)
                return try LoudnessMeter.measure(reader, after: filters, path: track.path)
            }
            let measured = try measure(after: nil)
            loudness = try encoding.effects.adjustment(
                measured: measured.integrated, truePeak: measured.truePeak, rate: rate, path: track.path,
                measureLimited: { try measure(after: $0).integrated })
        }
        let mixing = try mix.map { mix in
            let demuxer = try DemuxerHandle(path: mix.original.path, cancellation: cancellation)
            let reader: AudioSpanReader
            if mix.original.spans.isEmpty {
                // The original's span over the same output samples: its source time at the output's zero on.
                reader = try AudioSpanReader(
                    demuxer: demuxer, streamIndex: mix.original.streamIndex, zero: mix.original.origin + track.sourceStart,
                    samples: samples, rate: rate, channels: encoding.channels, cancellation: cancellation)
            } else {
                // Spans of several sources (a composition's clips), each played where it is placed.
                reader = try AudioSpanReader(
                    demuxer: demuxer, plays: Self.plays(of: mix.original, from: track.sourceStart), samples: samples, rate: rate,
                    channels: encoding.channels, cancellation: cancellation)
            }
            return (reader: reader, level: mix.level)
        }
        encoder = try AudioSpanEncoder(
            demuxer: demuxer, plays: plays, samples: samples,
            filters: encoding.effects.filters(samples: samples, rate: rate, adjustment: loudness), mixing: mixing,
            settings: .init(sampleRate: encoding.sampleRate, channels: encoding.channels, bitRate: encoding.bitRate),
            output: output, globalHeaders: globalHeaders, cancellation: cancellation)
    }

    /// The track's spans as the stretches its samples play, each from its
    /// source (a loop: one for each play of the track's own stream), on the
    /// track's timeline from its start: a span's range starts at its place.
    private static func plays(of track: MergePlan.Track, from origin: MediaTime? = nil) throws -> [AudioSpanReader.Play] {
        let origin = origin ?? track.sourceStart
        let plays = track.spans.compactMap { span -> AudioSpanReader.Play? in
            guard let source = span.source, let range = span.sourceRange else { return nil }
            let start = span.place - origin
            return AudioSpanReader.Play(
                path: source.path, streamIndex: source.streamIndex, zero: range.lowerBound - start, start: start, end: span.end - origin)
        }
        guard !plays.isEmpty else {
            throw MediaMuxError.unexpected(path: track.path, detail: "internal error: an encoded audio track with no span to play; please report it")
        }
        return plays
    }

    /// The encoder, for the muxer's stream parameters.
    var encoderContext: UnsafeMutablePointer<AVCodecContext> { encoder.context }

    func next() throws -> PacketBuffer? {
        while queue.isEmpty {
            if finished { return nil }
            let frameSize = Int64(max(encoder.context.pointee.frame_size, 1))
            let target = encodedUpTo + Self.framesPerTurn * frameSize
            if target >= encoder.totalSamples {
                try encoder.finish(padding: true, write: collect)
                finished = true
            } else {
                try encoder.encode(until: target, write: collect)
                encodedUpTo = target
            }
        }
        return queue.pop()
    }

    func reuse(_ buffer: PacketBuffer) {
        queue.reuse(buffer)
    }

    func makeFinal(_ packet: UnsafeMutablePointer<AVPacket>) {
        packet.pointee.duration = (startTick + encoder.totalSamples).saturatingSubtracting(packet.pointee.dts)
    }

    /// The source must reach the end within a second (a declared duration a
    /// little longer than the samples is common, and is filled with silence);
    /// beyond that it is truncated or damaged.
    func checkComplete(declaredPackets: Int?) throws {
        let rate = Int64(timeBase.den)
        guard encoder.reached < expectedReach - rate else { return }
        let seconds = fixedPoint(Double(startTick + encoder.reached) / Double(rate), decimals: 3)
        throw MediaMuxError.damaged(path: path, detail: "the audio stops at \(seconds) s, before its declared end")
    }

    var damagedPackets: Int { encoder.damagedPackets }

    /// Damaged packets of the source, passed over with silence in their place.
    var warnings: [String] {
        guard encoder.damagedPackets > 0 else { return [] }
        let count = encoder.damagedPackets
        let silence = fixedPoint(Double(encoder.silenceSamples) * 1000 / Double(timeBase.den), decimals: 0)
        return ["\(path): \(count) damaged audio packet\(count == 1 ? "" : "s") could not be decoded and \(count == 1 ? "was" : "were") skipped; \(silence) ms of silence keeps the rest in sync"]
    }

    /// Takes one encoded packet: moved onto the output's timeline, or
    /// dropped when it only holds samples past the end.
    private func collect(_ packet: UnsafeMutablePointer<AVPacket>) throws {
        guard packet.pointee.pts < encoder.totalSamples else { return }
        let queued = try queue.push(moving: packet)
        queued.pointee.pts = queued.pointee.pts.saturatingAdding(startTick)
        queued.pointee.dts = queued.pointee.dts.saturatingAdding(startTick)
    }
}
