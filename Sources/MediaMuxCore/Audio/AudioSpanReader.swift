import MediaMuxBase
package import CFFmpeg

/// One span of an audio stream as planar float samples at one rate and
/// channel layout: decoded from a reader of the input given to it alone,
/// resampled (libswresample's standard matrices for down- and upmixing),
/// placed by timestamps and cut to the span, queued. Output sample 0 is the
/// source's sample at `zero` on the source's own timeline; a source that
/// starts after it gets silence first. Samples are placed by their
/// timestamps, so a packet the decoder rejects leaves silence in its place
/// rather than pulling the rest early. Looping, the source plays again from
/// its start every period until the span is full, each play cut where the
/// source ends. What encodes the span (`AudioSpanEncoder`) or measures it
/// (`LoudnessMeter`) takes the samples from `queue`.
package final class AudioSpanReader {
    /// A source played again and again.
    package struct Loop: Sendable, Equatable {
        /// Where its first sample lies on its own timeline.
        package var start: MediaTime
        /// One play's length.
        package var period: MediaTime

        package init(start: MediaTime, period: MediaTime) {
            self.start = start
            self.period = period
        }
    }

    private let input: String
    private let demuxer: DemuxerHandle
    private let decoder: DecoderHandle
    private let resampler: Resampler
    /// The span's samples read and not yet taken.
    package let queue: SampleQueue
    private let packet: PacketBuffer
    private let decoded: FrameBuffer
    private let cancellation: CancellationFlag
    private let streamIndex: Int
    private let timeBase: AVRational
    private let zero: MediaTime
    package let rate: Int32
    private var layout: AVChannelLayout
    package var channelCount: Int { Int(layout.nb_channels) }
    private let bytesPerSample = Int(av_get_bytes_per_sample(AV_SAMPLE_FMT_FLTP))
    private var sampleTick: MediaTime { MediaTime(value: 1, timescale: Int64(rate)) }
    /// The span's length in samples.
    package let totalSamples: Int64
    /// Where the resampled output begins on the span's timeline, in samples (from the first frame).
    private var firstSample: Int64?
    private var resampled: Int64 = 0
    /// Samples queued so far, silence included: the span is read up to here.
    package private(set) var queued: Int64 = 0
    /// True once the whole span is queued, or the source has no more.
    package private(set) var isDone = false
    /// When it loops: where the source's first sample lies on its own timeline, and one play's length.
    private let loop: Loop?
    /// Plays begun, the first included: the current one starts `(plays - 1) * period` later.
    private var plays: Int64 = 1
    private var queuedAtPlayStart: Int64 = 0
    /// Where the next decoded frame should start, in the stream's time base, were none missing.
    private var nextTimestamp: Int64?
    /// How far a frame may start after the previous one's end without being
    /// taken for missing samples: timestamps rounded to milliseconds (WebM) wobble.
    private static let timestampJitter = MediaTime(value: 3, timescale: 1000)

    /// Samples of the source in the span (silence not counted).
    package private(set) var sourceSamples: Int64 = 0
    /// The span sample just past the last of the source's samples queued: how far the source reached.
    package private(set) var reached: Int64 = 0
    /// Samples of silence put where the source had none: gaps, and the decoder's rejected packets.
    package private(set) var silenceSamples: Int64 = 0
    /// Packets the decoder rejected as damaged.
    package var damagedPackets: Int { decoder.rejectedPackets }

    /// - Parameters:
    ///   - demuxer: the input, which this reads from now on (it discards the other streams).
    ///   - zero: the time on the source's timeline (its stream's timestamps) of output sample 0.
    ///   - samples: the span's length in samples at `rate`.
    ///   - loop: repeat the source every `period` from `start` (on its own timeline) until the span is full; nil plays it once.
    package init(
        demuxer: DemuxerHandle, streamIndex: Int, zero: MediaTime, samples: Int64, loop: Loop? = nil,
        rate: Int32, channels: Int, cancellation: CancellationFlag
    ) throws {
        input = demuxer.path
        self.cancellation = cancellation
        self.zero = zero
        self.streamIndex = streamIndex
        self.rate = rate
        totalSamples = samples
        self.loop = loop
        self.demuxer = demuxer
        let stream = try demuxer.plannedStream(streamIndex, kind: .audio)
        timeBase = stream.pointee.time_base
        demuxer.keepOnly(streamIndex)
        decoder = try DecoderHandle(stream: stream, path: input, threads: 1)
        packet = try PacketBuffer()
        decoded = try FrameBuffer()
        layout = AVChannelLayout()
        av_channel_layout_default(&layout, Int32(channels))
        resampler = try Resampler(layout: &layout, format: AV_SAMPLE_FMT_FLTP, rate: rate, path: input)
        queue = try SampleQueue(format: AV_SAMPLE_FMT_FLTP, channels: Int32(channels), path: input)

        // Start a little before the span: every audio packet is a keyframe, but
        // the first frame decoded after a seek lacks the overlap of the one
        // before it (MDCT codecs), so that frame falls before the span and is cut.
        let preRoll = MediaTime(value: 1, timescale: 4)
        if zero > preRoll {
            let target = (zero - preRoll).ticks(in: timeBase, rounding: .down)
            _ = avformat_seek_file(demuxer.context, Int32(streamIndex), Int64.min, target, target, AVSEEK_FLAG_BACKWARD)
        }
    }

    deinit { av_channel_layout_uninit(&layout) }

    /// The samples' channel layout, for what takes them.
    package func withLayout<T>(_ body: (UnsafePointer<AVChannelLayout>) throws -> T) rethrows -> T {
        try body(&layout)
    }

    /// Reads until `count` samples are queued or the span is done.
    package func fill(to count: Int) throws {
        while !isDone && queue.count < count {
            try readMore()
        }
    }

    /// Silence up to the span's end, for a source that ended early.
    package func padToEnd() throws {
        try pad(to: totalSamples)
    }

    /// Silence up to span sample `sample` (at most the span's end), for a
    /// source that ended early, a little at a time.
    package func pad(to sample: Int64) throws {
        let target = min(sample, totalSamples)
        if queued < target { try queueSilence(Int32(clamping: target - queued)) }
    }

    /// Takes `samples` queued samples into a new frame.
    package func take(_ samples: Int32) throws -> FrameBuffer {
        let frame = try makeAudioFrame(samples: samples, format: AV_SAMPLE_FMT_FLTP, layout: &layout, rate: rate, path: input)
        try queue.take(samples, into: frame)
        return frame
    }

    /// Decodes one packet's worth and queues its samples that fall inside the span.
    private func readMore() throws {
        if cancellation.isRaised { throw MediaMuxError.cancelled(path: input) }
        switch try decoder.receive(into: decoded) {
        case .frame:
            let timestamp = decoded.timestamp
            if firstSample == nil {
                let playStart = loop.map { MediaTime(ticks: plays - 1, of: $0.period) } ?? .zero()
                firstSample = (MediaTime(ticks: timestamp ?? 0, in: timeBase) + playStart - zero)
                    .ticks(of: sampleTick, rounding: .nearest)
            } else if let timestamp, let expected = nextTimestamp, timestamp > expected {
                // Samples missing from the source (a packet the decoder rejected): keep the rest in place.
                let gap = MediaTime(ticks: timestamp - expected, in: timeBase)
                if gap > Self.timestampJitter {
                    resampled += gap.ticks(of: sampleTick, rounding: .nearest)
                }
            }
            let sourceRate = max(decoded.pointer.pointee.sample_rate, 1)
            nextTimestamp = timestamp.map {
                $0 + av_rescale_q(Int64(decoded.pointer.pointee.nb_samples), AVRational(num: 1, den: sourceRate), timeBase)
            }
            try keep(resampler.convert(decoded))
        case .finished:
            if let rest = try resampler.flush() { try keep(rest) }
            if loop != nil, !isDone { try startNextPlay() } else { isDone = true }
        case .needsInput:
            if try demuxer.read(into: packet, of: streamIndex) {
                _ = try decoder.send(packet.pointer)
            } else {
                _ = try decoder.send(nil)
            }
        }
    }

    /// Reads the source again from its start for the next play.
    private func startNextPlay() throws {
        guard queued > queuedAtPlayStart else {
            throw MediaMuxError.damaged(path: input, detail: "a repeat of the audio decoded to nothing to play again")
        }
        try demuxer.rewind(streamIndex)
        decoder.flush()
        resampler.restart()
        plays += 1
        queuedAtPlayStart = queued
        firstSample = nil
        nextTimestamp = nil
        resampled = 0
    }

    /// Queues the part of a resampled frame that lies inside the span, after
    /// silence for any gap before it; what overlaps samples already queued is
    /// dropped.
    private func keep(_ frame: FrameBuffer) throws {
        let count = Int64(frame.pointer.pointee.nb_samples)
        let position = (firstSample ?? 0) + resampled
        resampled += count
        let from = max(position, queued)
        var end = min(position + count, totalSamples)
        if let loop {
            // The source's samples past its end (an encoder's flush, which its edit list hid) are not played.
            let playEnd = (loop.start + MediaTime(ticks: plays, of: loop.period) - zero).ticks(of: sampleTick, rounding: .nearest)
            end = min(end, playEnd)
        }
        if end >= totalSamples { isDone = true }
        guard end > from else { return }
        if from > queued {
            let gap = from - queued
            try queueSilence(Int32(clamping: gap))
            if queued > gap { silenceSamples += gap }
        }
        try queue.append(frame, from: Int(from - position), samples: Int32(end - from), bytesPerSample: bytesPerSample)
        queued += end - from
        sourceSamples += end - from
        reached = max(reached, end)
    }

    private func queueSilence(_ samples: Int32) throws {
        guard samples > 0 else { return }
        let silence = try makeSilence(samples: samples, layout: &layout, rate: rate, path: input)
        try queue.append(silence, from: 0, samples: samples, bytesPerSample: bytesPerSample)
        queued += Int64(samples)
    }
}
