import MediaMuxBase
package import CFFmpeg

/// One span of audio as planar float samples at one rate and channel
/// layout, from one source or several in turn (`Play`): each decoded from a
/// reader of its input given to it alone, resampled (libswresample's
/// standard matrices for down- and upmixing), placed by timestamps and cut
/// to its stretch of the span, queued. Span sample 0 is a play's source
/// sample at its `zero`; a source that starts after its play does gets
/// silence first. Samples are placed by their timestamps, so a packet the
/// decoder rejects leaves silence in its place rather than pulling the rest
/// early. A loop is plays of one source, each from its first sample. What
/// encodes the span (`AudioSpanEncoder`) or measures it (`LoudnessMeter`)
/// takes the samples from `queue`.
package final class AudioSpanReader {
    /// A stretch of the span that one source plays.
    package struct Play: Sendable, Equatable {
        /// The input file, and its stream's index.
        package var path: String
        package var streamIndex: Int
        /// The time on the source's timeline (its stream's timestamps) that
        /// span sample 0 would be: its time `t` plays at `t - zero` in the span.
        package var zero: MediaTime
        /// Where the play begins and ends in the span.
        package var start: MediaTime
        package var end: MediaTime

        package init(path: String, streamIndex: Int, zero: MediaTime, start: MediaTime, end: MediaTime) {
            self.path = path
            self.streamIndex = streamIndex
            self.zero = zero
            self.start = start
            self.end = end
        }
    }

    /// The file being read, named by errors.
    private var input: String
    private var demuxer: DemuxerHandle
    private var decoder: DecoderHandle
    /// The inputs read so far, by file, for a later play of one of them.
    private var inputs: [String: DemuxerHandle] = [:]
    private let resampler: Resampler
    /// The span's samples read and not yet taken.
    package let queue: SampleQueue
    private let packet: PacketBuffer
    private let decoded: FrameBuffer
    private let cancellation: CancellationFlag
    private var timeBase: AVRational
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
    /// True once the whole span is queued, or the sources have no more.
    package private(set) var isDone = false
    /// The span's plays, in order, and the one being read.
    private let plays: [Play]
    private var playIndex = 0
    /// The current play's end, in span samples: what its source has past it is not played.
    private var playEnd: Int64
    /// The current play has queued up to its end: the next begins.
    private var playFilled = false
    private var queuedAtPlayStart: Int64 = 0
    /// Where the next decoded frame should start, in the stream's time base, were none missing.
    private var nextTimestamp: Int64?
    /// How far a frame may start after the previous one's end without being
    /// taken for missing samples: timestamps rounded to milliseconds (WebM) wobble.
    private static let timestampJitter = MediaTime(value: 3, timescale: 1000)
    /// Decoding starts this long before a play's first sample (when that is
    /// later than it): every audio packet is a keyframe, but the first frame
    /// decoded after a seek lacks the overlap of the one before it (MDCT
    /// codecs), so that frame falls before the play and is cut.
    private static let preRoll = MediaTime(value: 1, timescale: 4)

    /// Samples of the sources in the span (silence not counted).
    package private(set) var sourceSamples: Int64 = 0
    /// The span sample just past the last of the sources' samples queued: how far the sources reached.
    package private(set) var reached: Int64 = 0
    /// Samples of silence put where the sources had none: gaps, and the decoders' rejected packets.
    package private(set) var silenceSamples: Int64 = 0
    /// Packets the decoders rejected as damaged.
    package var damagedPackets: Int { rejectedBefore + decoder.rejectedPackets }
    private var rejectedBefore = 0

    /// One source, played once.
    /// - Parameters:
    ///   - demuxer: the input, which this reads from now on (it discards the other streams).
    ///   - zero: the time on the source's timeline (its stream's timestamps) of output sample 0.
    ///   - samples: the span's length in samples at `rate`.
    package convenience init(
        demuxer: DemuxerHandle, streamIndex: Int, zero: MediaTime, samples: Int64, rate: Int32, channels: Int, cancellation: CancellationFlag
    ) throws {
        let end = MediaTime(ticks: samples, of: MediaTime(value: 1, timescale: Int64(rate)))
        try self.init(
            demuxer: demuxer, plays: [Play(path: demuxer.path, streamIndex: streamIndex, zero: zero, start: .zero(), end: end)],
            samples: samples, rate: rate, channels: channels, cancellation: cancellation)
    }

    /// - Parameters:
    ///   - demuxer: the first play's input, which this reads from now on (it
    ///     discards the other streams); a later play of another file opens its own.
    ///   - plays: the span's stretches in order, each from its source.
    ///   - samples: the span's length in samples at `rate`.
    package init(
        demuxer: DemuxerHandle, plays: [Play], samples: Int64, rate: Int32, channels: Int, cancellation: CancellationFlag
    ) throws {
        guard let first = plays.first else {
            throw MediaMuxError.unexpected(path: demuxer.path, detail: "internal error: an audio span with nothing to play; please report it")
        }
        input = demuxer.path
        self.cancellation = cancellation
        self.rate = rate
        totalSamples = samples
        self.plays = plays
        self.demuxer = demuxer
        inputs[demuxer.path] = demuxer
        let stream = try demuxer.plannedStream(first.streamIndex, kind: .audio)
        timeBase = stream.pointee.time_base
        demuxer.keepOnly(first.streamIndex)
        decoder = try DecoderHandle(stream: stream, path: input, threads: 1)
        packet = try PacketBuffer()
        decoded = try FrameBuffer()
        layout = AVChannelLayout()
        av_channel_layout_default(&layout, Int32(channels))
        resampler = try Resampler(layout: &layout, format: AV_SAMPLE_FMT_FLTP, rate: rate, path: input)
        queue = try SampleQueue(format: AV_SAMPLE_FMT_FLTP, channels: Int32(channels), path: input)
        playEnd = first.end.ticks(of: MediaTime(value: 1, timescale: Int64(rate)), rounding: .nearest)
        seekBefore(first, rewound: false)
    }

    deinit { av_channel_layout_uninit(&layout) }

    /// Seeks to a little before the play's first sample, when that lies past
    /// the pre-roll and, for a stream rewound, past where the rewind went (a
    /// loop's play from the source's first sample reads from the rewind).
    private func seekBefore(_ play: Play, rewound: Bool) {
        let from = play.zero + play.start
        guard from > Self.preRoll else { return }
        let target = (from - Self.preRoll).ticks(in: timeBase, rounding: .down)
        if rewound {
            let stream = demuxer.stream(play.streamIndex)
            let first = avformat_index_get_entry(stream, 0)?.pointee.timestamp ?? stream.pointee.start_time
            guard first == noTimestamp || target > first else { return }
        }
        _ = avformat_seek_file(demuxer.context, Int32(play.streamIndex), Int64.min, target, target, AVSEEK_FLAG_BACKWARD)
    }

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
        if playFilled {
            // The play is full before its source ends: what the resampler holds, then the next.
            if let rest = try resampler.flush() { try keep(rest) }
            try startNextPlay()
            return
        }
        switch try decoder.receive(into: decoded) {
        case .frame:
            let timestamp = decoded.timestamp
            if firstSample == nil {
                firstSample = (MediaTime(ticks: timestamp ?? 0, in: timeBase) - plays[playIndex].zero)
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
            if playIndex + 1 < plays.count, !isDone { try startNextPlay() } else { isDone = true }
        case .needsInput:
            if try demuxer.read(into: packet, of: plays[playIndex].streamIndex) {
                _ = try decoder.send(packet.pointer)
            } else {
                _ = try decoder.send(nil)
            }
        }
    }

    /// Begins the next play: its source read from the start of its stream
    /// (again, for a file read before), from a little before its first sample.
    private func startNextPlay() throws {
        guard queued > queuedAtPlayStart else {
            throw MediaMuxError.damaged(path: input, detail: "a repeat of the audio decoded to nothing to play again")
        }
        guard playIndex + 1 < plays.count else {
            isDone = true
            return
        }
        let previous = plays[playIndex]
        playIndex += 1
        let play = plays[playIndex]
        var rewound = true
        if play.path == previous.path, play.streamIndex == previous.streamIndex {
            try demuxer.rewind(play.streamIndex)
            decoder.flush()
        } else {
            if let open = inputs[play.path] {
                demuxer = open
                try demuxer.rewind(play.streamIndex)
            } else {
                rewound = false
                demuxer = try DemuxerHandle(path: play.path, cancellation: cancellation)
                inputs[play.path] = demuxer
            }
            input = play.path
            let stream = try demuxer.plannedStream(play.streamIndex, kind: .audio)
            demuxer.keepOnly(play.streamIndex)
            timeBase = stream.pointee.time_base
            rejectedBefore += decoder.rejectedPackets
            decoder = try DecoderHandle(stream: stream, path: input, threads: 1)
        }
        seekBefore(play, rewound: rewound)
        resampler.restart()
        queuedAtPlayStart = queued
        playEnd = play.end.ticks(of: sampleTick, rounding: .nearest)
        playFilled = false
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
        // What the source has past its play (an encoder's flush, which its
        // edit list hid, or the rest of a range cut short) is not played.
        let end = min(position + count, totalSamples, playEnd)
        if end >= totalSamples { isDone = true }
        if position + count >= playEnd, playIndex + 1 < plays.count { playFilled = true }
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
