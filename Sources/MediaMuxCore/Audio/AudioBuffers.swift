import MediaMuxBase
package import CFFmpeg
internal import CFFmpegResample

/// An audio frame of `samples` samples in `format`, with buffers.
package func makeAudioFrame(
    samples: Int32, format: AVSampleFormat, layout: UnsafePointer<AVChannelLayout>, rate: Int32, path: String
) throws -> FrameBuffer {
    let frame = try FrameBuffer()
    frame.pointer.pointee.nb_samples = samples
    frame.pointer.pointee.format = format.rawValue
    frame.pointer.pointee.sample_rate = rate
    try ffmpegCheck(av_channel_layout_copy(&frame.pointer.pointee.ch_layout, layout), "allocating audio", path: path)
    try ffmpegCheck(av_frame_get_buffer(frame.pointer, 0), "allocating audio", path: path)
    return frame
}

/// A planar float frame of `samples` samples of silence.
package func makeSilence(samples: Int32, layout: UnsafePointer<AVChannelLayout>, rate: Int32, path: String) throws -> FrameBuffer {
    let silence = try makeAudioFrame(samples: samples, format: AV_SAMPLE_FMT_FLTP, layout: layout, rate: rate, path: path)
    try ffmpegCheck(
        av_samples_set_silence(silence.pointer.pointee.extended_data, 0, samples, layout.pointee.nb_channels, AV_SAMPLE_FMT_FLTP),
        "allocating audio", path: path)
    return silence
}

/// Planar pointers of a frame, as the audio APIs take them.
package func planePointers(_ frame: FrameBuffer, offset samples: Int = 0, bytesPerSample: Int = 0) -> [UnsafeMutableRawPointer?] {
    let data = frame.pointer.pointee.data
    return [data.0, data.1, data.2, data.3, data.4, data.5, data.6, data.7].map { plane in
        plane.map { UnsafeMutableRawPointer($0) + samples * bytesPerSample }
    }
}

/// libswresample into one format, layout and rate, set up from the frames
/// themselves: a stream whose layout, format or rate changes midway (ADTS
/// and MPEG-TS can; HE-AAC's decoder reports more than its container) gets
/// a new conversion from that frame on.
package final class Resampler {
    private var context: OpaquePointer?
    private var output: AVChannelLayout
    private let format: AVSampleFormat
    private let rate: Int32
    private let path: String
    private var input: (format: Int32, rate: Int32, channels: Int32, order: UInt32, mask: UInt64)?

    package init(layout: UnsafePointer<AVChannelLayout>, format: AVSampleFormat, rate: Int32, path: String) throws {
        output = AVChannelLayout()
        self.format = format
        self.rate = rate
        self.path = path
        try ffmpegCheck(av_channel_layout_copy(&output, layout), "setting up the resampler", path: path)
    }

    deinit {
        swr_free(&context)
        av_channel_layout_uninit(&output)
    }

    /// Converts `frame` into a new frame of the output format (which may hold
    /// no samples while the resampler fills its delay).
    package func convert(_ frame: FrameBuffer) throws -> FrameBuffer {
        let f = frame.pointer
        if f.pointee.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC {
            // Unnamed channels: call them the usual layout for their number.
            let channels = f.pointee.ch_layout.nb_channels
            av_channel_layout_uninit(&f.pointee.ch_layout)
            av_channel_layout_default(&f.pointee.ch_layout, max(channels, 1))
        }
        let layout = f.pointee.ch_layout
        let key = (f.pointee.format, f.pointee.sample_rate, layout.nb_channels, layout.order.rawValue, layout.u.mask)
        if input == nil || input! != key {
            try configure(for: f)
            input = key
        }
        let out = try outputFrame(capacity: swr_get_out_samples(context, f.pointee.nb_samples))
        try ffmpegCheck(swr_convert_frame(context, out.pointer, f), "resampling audio", path: path)
        return out
    }

    /// Starts afresh after `flush`: the next frame sets up a new conversion.
    package func restart() {
        swr_free(&context)
        input = nil
    }

    /// What the resampler still holds, at the end.
    package func flush() throws -> FrameBuffer? {
        guard context != nil else { return nil }
        let out = try outputFrame(capacity: swr_get_out_samples(context, 0))
        try ffmpegCheck(swr_convert_frame(context, out.pointer, nil), "resampling audio", path: path)
        return out.pointer.pointee.nb_samples > 0 ? out : nil
    }

    private func outputFrame(capacity: Int32) throws -> FrameBuffer {
        try withUnsafePointer(to: &output) { layout in
            try makeAudioFrame(samples: max(capacity, 1), format: format, layout: layout, rate: rate, path: path)
        }
    }

    private func configure(for frame: UnsafeMutablePointer<AVFrame>) throws {
        swr_free(&context)
        guard let made = swr_alloc() else {
            throw MediaMuxError.outOfMemory("setting up the resampler", path: path)
        }
        context = made
        let template = try outputFrame(capacity: 1)
        try ffmpegCheck(swr_config_frame(made, template.pointer, frame), "setting up the resampler", path: path)
        try ffmpegCheck(swr_init(made), "setting up the resampler", path: path)
    }
}

/// An AVAudioFifo of planar samples.
package final class SampleQueue {
    private let fifo: OpaquePointer
    private let path: String

    package init(format: AVSampleFormat, channels: Int32, path: String) throws {
        self.path = path
        guard let made = av_audio_fifo_alloc(format, channels, 4096) else {
            throw MediaMuxError.outOfMemory("allocating audio", path: path)
        }
        fifo = made
    }

    deinit { av_audio_fifo_free(fifo) }

    package var count: Int { Int(av_audio_fifo_size(fifo)) }

    /// Queues `samples` samples of `frame` from `offset` on.
    package func append(_ frame: FrameBuffer, from offset: Int, samples: Int32, bytesPerSample: Int) throws {
        guard samples > 0 else { return }
        var planes = planePointers(frame, offset: offset, bytesPerSample: bytesPerSample)
        let written = planes.withUnsafeMutableBufferPointer { av_audio_fifo_write(fifo, $0.baseAddress, samples) }
        try ffmpegCheck(written, "queueing audio", path: path)
    }

    /// Moves `samples` samples into `frame`, whose buffers hold that many.
    package func take(_ samples: Int32, into frame: FrameBuffer) throws {
        var planes = planePointers(frame)
        let read = planes.withUnsafeMutableBufferPointer { av_audio_fifo_read(fifo, $0.baseAddress, samples) }
        try ffmpegCheck(read, "queueing audio", path: path)
    }
}
