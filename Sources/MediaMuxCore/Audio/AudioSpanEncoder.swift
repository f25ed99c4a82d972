import MediaMuxBase
package import CFFmpeg

/// One span of audio encoded AAC to the sample: the span's samples, from
/// one source or several in turn (`AudioSpanReader`), through libavfilter's filters when the level
/// changes or a second span is mixed in, into libavcodec's encoder. Used for
/// merged soundtracks and for preview clips.
package final class AudioSpanEncoder {
    package struct Settings: Sendable, Equatable {
        package var sampleRate: Int
        package var channels: Int
        package var bitRate: Int

        package init(sampleRate: Int, channels: Int, bitRate: Int) {
            self.sampleRate = sampleRate
            self.channels = channels
            self.bitRate = bitRate
        }
    }

    private let output: String
    private let reader: AudioSpanReader
    /// A second span mixed under the first, sample for sample.
    private let mixed: AudioSpanReader?
    private var readers: [AudioSpanReader] { [reader] + (mixed.map { [$0] } ?? []) }
    private let encoder: EncoderHandle
    /// The level's filters, and the samples they have handed out waiting for the encoder.
    private let filters: FilterGraph?
    private let filtered: SampleQueue?
    private let filteredFrame: FrameBuffer
    private let bytesPerSample = Int(av_get_bytes_per_sample(AV_SAMPLE_FMT_FLTP))
    private var encodedSamples: Int64 = 0
    private var filtersDrained = false

    /// The span's length in samples.
    package var totalSamples: Int64 { reader.totalSamples }
    /// The encoder, for the muxer's stream parameters.
    package var context: UnsafeMutablePointer<AVCodecContext> { encoder.context }
    /// Samples of the source in the span (silence not counted).
    package var sourceSamples: Int64 { reader.sourceSamples }
    /// The span sample just past the source's last.
    package var reached: Int64 { reader.reached }
    /// Samples of silence put where the source had none: gaps, and the decoder's rejected packets.
    package var silenceSamples: Int64 { reader.silenceSamples }
    /// Packets the decoder rejected as damaged.
    package var damagedPackets: Int { reader.damagedPackets }

    /// - Parameters:
    ///   - demuxer: the first play's input, which this reads from now on (it discards the other streams).
    ///   - plays: the span's stretches, each from its source (`AudioSpanReader.Play`).
    ///   - samples: the span's length in samples at the encoded rate.
    ///   - filters: libavfilter filters to run the samples through before encoding (`AudioEffects.filters`).
    ///   - mixing: a second span of as many samples, at the encoded rate and channels, and its level in dB, mixed under the first after its filters.
    ///   - output: the file written, named by encoder errors.
    package init(
        demuxer: DemuxerHandle, plays: [AudioSpanReader.Play], samples: Int64,
        filters: String? = nil, mixing: (reader: AudioSpanReader, level: Double)? = nil, settings: Settings, output: String,
        globalHeaders: Bool, cancellation: CancellationFlag
    ) throws {
        self.output = output
        reader = try AudioSpanReader(
            demuxer: demuxer, plays: plays, samples: samples, rate: Int32(settings.sampleRate), channels: settings.channels,
            cancellation: cancellation)
        mixed = mixing?.reader
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_AAC) else {
            throw MediaMuxError.ffmpeg(operation: "finding the AAC encoder", path: output, code: FFmpegCode.notAvailable, message: "this FFmpeg has none")
        }
        encoder = try EncoderHandle(codec: codec, path: output)
        let made = encoder.context
        made.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        made.pointee.sample_rate = reader.rate
        av_channel_layout_default(&made.pointee.ch_layout, Int32(settings.channels))
        made.pointee.bit_rate = Int64(settings.bitRate)
        made.pointee.time_base = AVRational(num: 1, den: reader.rate)
        if globalHeaders { made.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        try ffmpegCheck(encoder.open(), "opening the AAC encoder", path: output)
        filteredFrame = try FrameBuffer()
        var description = filters.map { "[in0]" + $0 }
        if let mixing {
            let level = "volume=\(fixedPoint(mixing.level, decimals: 4))dB"
            description = "[in0]\(filters ?? "anull")[a];[in1]\(level)[b];[a][b]amix=inputs=2:duration=first:dropout_transition=0:normalize=0"
        }
        if let description {
            self.filters = try FilterGraph(
                filters: description, inputs: mixing == nil ? 1 : 2, rate: reader.rate, layout: &made.pointee.ch_layout, path: demuxer.path)
            filtered = try SampleQueue(format: AV_SAMPLE_FMT_FLTP, channels: Int32(settings.channels), path: demuxer.path)
        } else {
            self.filters = nil
            filtered = nil
        }
    }

    private var frameSize: Int { Int(max(encoder.context.pointee.frame_size, 1)) }
    /// Samples ready for the encoder.
    private var ready: Int { filtered?.count ?? reader.queue.count }
    /// Samples every reader has queued: what can go through the filters together.
    private var queuedEverywhere: Int { readers.map(\.queue.count).min() ?? 0 }
    /// Nothing more to read: the source has ended, or, mixing, every span is queued to its end
    /// (one that ends early is padded with silence as the other goes on).
    private var readersDone: Bool {
        guard mixed != nil else { return reader.isDone && reader.queue.count == 0 }
        return readers.allSatisfy { $0.queued >= $0.totalSamples && $0.queue.count == 0 }
    }

    /// Encodes the span up to output sample `sample` (all of it for nil),
    /// handing each packet to `write` in the encoder's time base.
    package func encode(until sample: Int64?, write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        let wanted = min(totalSamples, max(0, sample ?? totalSamples))
        while encodedSamples + Int64(ready) < wanted && !readersDone {
            for source in readers {
                if mixed != nil, source.isDone {
                    // Mixed, a span that ended early is silent from there on, a frame at a time.
                    try source.pad(to: source.queued + Int64(frameSize))
                } else {
                    try source.fill(to: source.queue.count + frameSize)
                }
            }
            try filterQueued()
            if reader.isDone && filters == nil { break }
        }
        while ready >= frameSize && encodedSamples < totalSamples {
            try encodeChunk(Int32(min(Int64(frameSize), totalSamples - encodedSamples)), write: write)
        }
    }

    /// Encodes the rest of the span and drains the encoder. With `padding`, a
    /// source that ended early is followed by silence up to the span's end.
    package func finish(padding: Bool = false, write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        try encode(until: nil, write: write)
        if padding || mixed != nil { try readers.forEach { try $0.padToEnd() } }
        try filterQueued()
        if let filters, !filtersDrained {
            for input in readers.indices { try filters.send(nil, to: input) }
            try collectFiltered()
            filtersDrained = true
            // Filters may hand out a few samples fewer than they took (resampling's edges): the span keeps its length.
            if padding, let filtered, encodedSamples + Int64(filtered.count) < totalSamples {
                let missing = Int32(clamping: totalSamples - encodedSamples - Int64(filtered.count))
                try filtered.append(try makeSilence(samples: missing, layout: &encoder.context.pointee.ch_layout, rate: reader.rate, path: output),
                                    from: 0, samples: missing, bytesPerSample: bytesPerSample)
            }
        }
        while ready > 0 && encodedSamples < totalSamples {
            try encodeChunk(Int32(min(Int64(min(ready, frameSize)), totalSamples - encodedSamples)), write: write)
        }
        try encoder.encode(nil, what: "audio", write: write)
    }

    /// Moves what the readers have queued through the filters, as many
    /// samples from each.
    private func filterQueued() throws {
        guard let filters, queuedEverywhere > 0 else { return }
        let count = Int32(queuedEverywhere)
        for (input, source) in readers.enumerated() {
            let frame = try source.take(count)
            frame.pointer.pointee.pts = source.queued - Int64(source.queue.count) - Int64(count)
            try filters.send(frame, to: input)
        }
        try collectFiltered()
    }

    private func collectFiltered() throws {
        guard let filters, let filtered else { return }
        while try filters.receive(into: filteredFrame) {
            try filtered.append(filteredFrame, from: 0, samples: filteredFrame.pointer.pointee.nb_samples, bytesPerSample: bytesPerSample)
        }
    }

    private func encodeChunk(_ samples: Int32, write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        let frame: FrameBuffer
        if let filtered {
            frame = try makeAudioFrame(samples: samples, format: AV_SAMPLE_FMT_FLTP, layout: &encoder.context.pointee.ch_layout, rate: reader.rate, path: output)
            try filtered.take(samples, into: frame)
        } else {
            frame = try reader.take(samples)
        }
        frame.pointer.pointee.pts = encodedSamples
        encodedSamples += Int64(samples)
        try encoder.encode(frame.pointer, what: "audio", write: write)
    }
}
