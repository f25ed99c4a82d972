internal import CFFmpeg

/// Carries out a clip plan: decodes the span, scales and turns the picture,
/// encodes H.264 (libx264) and AAC, and writes a faststart MP4 beside the
/// output that becomes the output only when complete.
final class ClipWriter {
    private let plan: ClipPlan
    private let cancellation: CancellationFlag
    private let progress: ((PreviewProgress) -> Void)?
    /// Encoder ticks: 1/90000 s holds 24, 25, 30 and 29.97 fps frames exactly.
    private static let videoTimeBase = AVRational(num: 1, den: 90000)

    init(plan: ClipPlan, cancellation: CancellationFlag, progress: ((PreviewProgress) -> Void)?) {
        self.plan = plan
        self.cancellation = cancellation
        self.progress = progress
    }

    func run() throws -> PreviewClipReport {
        let temporary = TemporaryOutput(finalPath: plan.output)
        do {
            let report = try write(to: temporary.path)
            let bytes = try temporary.commit(overwrite: plan.overwrite)
            return PreviewClipReport(
                output: plan.output, start: report.start, duration: report.duration, width: plan.frames.width,
                height: plan.frames.height, videoFrames: report.frames, hasAudio: plan.audio != nil, bytes: bytes)
        } catch {
            temporary.discard()
            throw error
        }
    }

    private func write(to path: String) throws -> (start: MediaTime, duration: MediaTime, frames: Int) {
        let reader = try FrameReader(plan: plan.frames, cancellation: cancellation)
        let muxer = try MuxerHandle(path: path, reportedPath: plan.output, muxer: "mp4")
        let video = try VideoEncoder(plan: plan, frameRate: reader.frameRate, globalHeaders: muxer.wantsGlobalHeaders)
        let videoStream = try muxer.addStream(encodedBy: video.context)
        var audio: AudioTrackEncoder?
        var audioStream: UnsafeMutablePointer<AVStream>?
        if let part = plan.audio {
            let made = try AudioTrackEncoder(plan: plan, audio: part, cancellation: cancellation, globalHeaders: muxer.wantsGlobalHeaders)
            audioStream = try muxer.addStream(encodedBy: made.encoder)
            audio = made
        }
        try muxer.open(options: ["movflags": "+faststart"])

        let videoIndex = videoStream.pointee.index
        let writeVideo: (UnsafeMutablePointer<AVPacket>) throws -> Void = { packet in
            packet.pointee.stream_index = videoIndex
            av_packet_rescale_ts(packet, Self.videoTimeBase, muxer.stream(Int(videoIndex)).pointee.time_base)
            try muxer.writeInterleaved(packet)
        }
        let writeAudio: (UnsafeMutablePointer<AVPacket>) throws -> Void = { packet in
            guard let audioStream else { return }
            packet.pointee.stream_index = audioStream.pointee.index
            av_packet_rescale_ts(packet, AVRational(num: 1, den: Int32(self.plan.audio?.sampleRate ?? 1)), muxer.stream(Int(audioStream.pointee.index)).pointee.time_base)
            try muxer.writeInterleaved(packet)
        }

        let clipEnd = seconds(plan.duration)
        let expected = max(1, Int(plan.duration * (reader.frameRate.map { Double($0.num) / Double($0.den) } ?? 30)))
        var frames = 0
        // A frame is encoded once the next one tells how long it is shown.
        var held: (ticks: Int64, picture: FrameBuffer)?
        var spare = try FrameBuffer()
        let turner = try UprightYUV(plan: plan.frames)
        while let (frame, time) = try reader.nextDecoded() {
            let ticks = max(0, seconds((time.seconds - plan.start)))
            if let previous = held {
                guard ticks > previous.ticks else { continue }
                // Audio first up to this point, so the muxer's queue stays short.
                try audio?.encode(until: Double(previous.ticks) / 90000 + 0.5, write: writeAudio)
                try video.encode(previous.picture, pts: previous.ticks, duration: ticks - previous.ticks, write: writeVideo)
                frames += 1
                progress?(PreviewProgress(done: frames, total: expected))
                spare = previous.picture
            }
            guard ticks < clipEnd else { break }
            try turner.convert(frame, into: spare)
            held = (ticks, spare)
            spare = try FrameBuffer()
        }
        if let last = held, last.ticks < clipEnd {
            try video.encode(last.picture, pts: last.ticks, duration: clipEnd - last.ticks, write: writeVideo)
            frames += 1
        }
        try video.finish(write: writeVideo)
        try audio?.encode(until: .infinity, write: writeAudio)
        try audio?.finish(write: writeAudio)
        try muxer.finish()
        return (MediaTime(value: Int64((plan.start * 90000).rounded()), timescale: 90000), MediaTime(value: clipEnd, timescale: 90000), frames)
    }

    private func seconds(_ value: Double) -> Int64 { Int64((value * 90000).rounded()) }
}

/// Scales decoded frames into 4:2:0 of the planned size and turns them upright.
private final class UprightYUV {
    private let plan: FramePlan
    private let scaler: Scaler
    private let scaled: FrameBuffer

    init(plan: FramePlan) throws {
        self.plan = plan
        scaler = Scaler(width: plan.scaledWidth, height: plan.scaledHeight, format: AV_PIX_FMT_YUV420P)
        scaled = try FrameBuffer()
        try allocate(scaled, width: plan.scaledWidth, height: plan.scaledHeight, path: plan.path)
    }

    func convert(_ frame: FrameBuffer, into target: FrameBuffer) throws {
        av_frame_unref(target.pointer)
        try allocate(target, width: plan.width, height: plan.height, path: plan.path)
        target.pointer.pointee.color_primaries = frame.pointer.pointee.color_primaries
        target.pointer.pointee.color_trc = frame.pointer.pointee.color_trc
        target.pointer.pointee.colorspace = frame.pointer.pointee.colorspace
        target.pointer.pointee.color_range = AVCOL_RANGE_MPEG
        if plan.rotation == 0 {
            try scaler.scale(frame.pointer, into: planes(target), strides: strides(target), path: plan.path)
            return
        }
        try scaler.scale(frame.pointer, into: planes(scaled), strides: strides(scaled), path: plan.path)
        let from = planes(scaled)
        let fromStrides = strides(scaled)
        let to = planes(target)
        let toStrides = strides(target)
        for plane in 0..<3 {
            let divisor = plane == 0 ? 1 : 2
            turnPicture(
                from: from[plane]!, sourceStride: Int(fromStrides[plane]),
                width: plan.scaledWidth / divisor, height: plan.scaledHeight / divisor, bytesPerPixel: 1,
                rotation: plan.rotation, into: to[plane]!, destinationStride: Int(toStrides[plane]))
        }
    }

    private func allocate(_ frame: FrameBuffer, width: Int, height: Int, path: String) throws {
        frame.pointer.pointee.width = Int32(width)
        frame.pointer.pointee.height = Int32(height)
        frame.pointer.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        try ffmpegCheck(av_frame_get_buffer(frame.pointer, 0), "allocating a picture", path: path)
    }
}

/// libx264 through libavcodec.
private final class VideoEncoder {
    let context: UnsafeMutablePointer<AVCodecContext>
    private let packet: PacketBuffer
    private let path: String
    /// Durations of the frames sent, by presentation time, for their packets.
    private var durations: [Int64: Int64] = [:]

    init(plan: ClipPlan, frameRate: AVRational?, globalHeaders: Bool) throws {
        path = plan.output
        guard let codec = avcodec_find_encoder_by_name("libx264") else {
            throw MediaMuxError.ffmpeg(operation: "finding the libx264 encoder", path: plan.output, code: -38, message: "this FFmpeg was built without libx264")
        }
        guard let made = avcodec_alloc_context3(codec) else {
            throw MediaMuxError.ffmpeg(operation: "allocating an encoder", path: plan.output, code: -12, message: "out of memory")
        }
        context = made
        packet = try PacketBuffer()
        made.pointee.width = Int32(plan.frames.width)
        made.pointee.height = Int32(plan.frames.height)
        made.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        made.pointee.time_base = AVRational(num: 1, den: 90000)
        if let frameRate { made.pointee.framerate = frameRate }
        made.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
        made.pointee.thread_count = 0
        if globalHeaders { made.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        var options: OpaquePointer?
        av_dict_set(&options, "preset", plan.preset, 0)
        av_dict_set(&options, "crf", String(plan.crf), 0)
        defer { av_dict_free(&options) }
        let code = avcodec_open2(made, codec, &options)
        if code < 0 {
            throw MediaMuxError.invalidOption("\(plan.output): libx264 refused the settings (preset \(plan.preset), crf \(plan.crf)): \(ffmpegErrorText(code))")
        }
    }

    deinit {
        var doomed: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&doomed)
    }

    func encode(_ frame: FrameBuffer, pts: Int64, duration: Int64, write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        frame.pointer.pointee.pts = pts
        frame.pointer.pointee.pict_type = AV_PICTURE_TYPE_NONE
        durations[pts] = duration
        try ffmpegCheck(avcodec_send_frame(context, frame.pointer), "encoding video", path: path)
        try drain(write)
    }

    func finish(write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        try ffmpegCheck(avcodec_send_frame(context, nil), "encoding video", path: path)
        try drain(write)
    }

    private func drain(_ write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        while true {
            let code = avcodec_receive_packet(context, packet.pointer)
            if code == CFFmpeg_AVERROR_EAGAIN() || code == CFFmpeg_AVERROR_EOF() { return }
            try ffmpegCheck(code, "encoding video", path: path)
            packet.pointer.pointee.duration = durations.removeValue(forKey: packet.pointer.pointee.pts) ?? 0
            try write(packet.pointer)
            av_packet_unref(packet.pointer)
        }
    }
}

/// The clip's audio: decoded from its own reader of the input, resampled to
/// the planned rate and layout, cut to the clip's span to the sample, AAC.
private final class AudioTrackEncoder {
    let encoder: UnsafeMutablePointer<AVCodecContext>
    private let plan: ClipPlan
    private let demuxer: DemuxerHandle
    private let decoder: DecoderHandle
    private let streamIndex: Int
    private let timeBase: AVRational
    private let resampler: OpaquePointer
    private let fifo: OpaquePointer
    private let packet: PacketBuffer
    private let decoded: FrameBuffer
    private let chunk: FrameBuffer
    private let cancellation: CancellationFlag
    private let rate: Int
    /// The clip's sample count, and how many samples went in so far (the position of the next one).
    private let totalSamples: Int64
    private var samplesIn: Int64 = 0
    private var samplesEncoded: Int64 = 0
    /// Where the resampler's output starts on the clip's timeline, in samples (set by the first frame).
    private var firstSample: Int64?
    private var resampledOut: Int64 = 0
    private var inputDone = false
    private var zeroSeconds: Double

    init(plan: ClipPlan, audio: ClipPlan.Audio, cancellation: CancellationFlag, globalHeaders: Bool) throws {
        self.plan = plan
        self.cancellation = cancellation
        rate = audio.sampleRate
        totalSamples = Int64((plan.duration * Double(audio.sampleRate)).rounded())
        zeroSeconds = plan.frames.zero.seconds
        demuxer = try DemuxerHandle(path: plan.input, cancellation: cancellation)
        let stream = try demuxer.plannedStream(audio.streamIndex, kind: .audio)
        streamIndex = audio.streamIndex
        timeBase = stream.pointee.time_base
        for index in 0..<demuxer.streamCount where index != audio.streamIndex {
            demuxer.stream(index).pointee.discard = AVDISCARD_ALL
        }
        decoder = try DecoderHandle(stream: stream, path: plan.input, threads: 1)
        packet = try PacketBuffer()
        decoded = try FrameBuffer()
        chunk = try FrameBuffer()

        guard let codec = avcodec_find_encoder(AV_CODEC_ID_AAC), let made = avcodec_alloc_context3(codec) else {
            throw MediaMuxError.ffmpeg(operation: "setting up the AAC encoder", path: plan.output, code: -38, message: "no AAC encoder")
        }
        encoder = made
        made.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        made.pointee.sample_rate = Int32(audio.sampleRate)
        av_channel_layout_default(&made.pointee.ch_layout, Int32(audio.channels))
        made.pointee.bit_rate = Int64(plan.audioBitRate)
        made.pointee.time_base = AVRational(num: 1, den: Int32(audio.sampleRate))
        if globalHeaders { made.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        try ffmpegCheck(avcodec_open2(made, codec, nil), "opening the AAC encoder", path: plan.output)

        var swr: OpaquePointer?
        let source = decoder.context.pointee
        var sourceLayout = AVChannelLayout()
        if source.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC || source.ch_layout.nb_channels == 0 {
            av_channel_layout_default(&sourceLayout, max(source.ch_layout.nb_channels, 1))
        } else {
            // The copy happens inside the closure: the pointer is valid only there.
            _ = withUnsafePointer(to: decoder.context.pointee.ch_layout) { av_channel_layout_copy(&sourceLayout, $0) }
        }
        defer { av_channel_layout_uninit(&sourceLayout) }
        try ffmpegCheck(
            swr_alloc_set_opts2(&swr, &made.pointee.ch_layout, AV_SAMPLE_FMT_FLTP, Int32(audio.sampleRate),
                                &sourceLayout, source.sample_fmt, source.sample_rate, 0, nil),
            "setting up the resampler", path: plan.input)
        guard let swr else { throw MediaMuxError.ffmpeg(operation: "setting up the resampler", path: plan.input, code: -12, message: "out of memory") }
        resampler = swr
        try ffmpegCheck(swr_init(swr), "setting up the resampler", path: plan.input)
        guard let queue = av_audio_fifo_alloc(AV_SAMPLE_FMT_FLTP, Int32(audio.channels), 4096) else {
            throw MediaMuxError.ffmpeg(operation: "allocating audio", path: plan.input, code: -12, message: "out of memory")
        }
        fifo = queue

        // Start at the clip's start: every audio packet is a keyframe.
        let target = Int64(((zeroSeconds + plan.start) * Double(timeBase.den) / Double(max(timeBase.num, 1))).rounded(.down))
        if plan.start > 0 {
            _ = avformat_seek_file(demuxer.context, Int32(streamIndex), Int64.min, target, target, AVSEEK_FLAG_BACKWARD)
        }
    }

    deinit {
        var doomed: UnsafeMutablePointer<AVCodecContext>? = encoder
        avcodec_free_context(&doomed)
        var swr: OpaquePointer? = resampler
        swr_free(&swr)
        av_audio_fifo_free(fifo)
    }

    /// Encodes the clip's audio up to `seconds` on the clip's timeline.
    func encode(until seconds: Double, write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        let frameSize = Int64(max(encoder.pointee.frame_size, 1))
        let wanted = seconds.isFinite ? min(totalSamples, Int64(max(0, seconds) * Double(rate))) : totalSamples
        while !inputDone && (samplesEncoded + Int64(av_audio_fifo_size(fifo))) < wanted {
            try readMore()
        }
        while Int64(av_audio_fifo_size(fifo)) >= frameSize {
            try encodeChunk(Int32(frameSize), write: write)
        }
    }

    func finish(write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        if av_audio_fifo_size(fifo) > 0 { try encodeChunk(av_audio_fifo_size(fifo), write: write) }
        try ffmpegCheck(avcodec_send_frame(encoder, nil), "encoding audio", path: plan.output)
        try drain(write)
    }

    /// Decodes one packet's worth and queues its samples that fall inside the clip.
    private func readMore() throws {
        if cancellation.isRaised { throw MediaMuxError.cancelled(path: plan.input) }
        switch try decoder.receive(into: decoded) {
        case .frame:
            try queue(decoded)
        case .finished:
            inputDone = true
        case .needsInput:
            while true {
                guard try demuxer.read(into: packet) else {
                    _ = try decoder.send(nil)
                    return
                }
                if packet.pointer.pointee.stream_index == Int32(streamIndex) {
                    _ = try decoder.send(packet.pointer)
                    return
                }
            }
        }
    }

    private func queue(_ frame: FrameBuffer) throws {
        if firstSample == nil {
            let timestamp = frame.pointer.pointee.best_effort_timestamp
            let seconds = timestamp == CFFmpeg_AV_NOPTS_VALUE() ? 0 : Double(timestamp) * Double(timeBase.num) / Double(timeBase.den)
            firstSample = Int64(((seconds - zeroSeconds - plan.start) * Double(rate)).rounded())
        }
        let capacity = Int32(swr_get_out_samples(resampler, frame.pointer.pointee.nb_samples))
        guard capacity > 0 else { return }
        chunk.pointer.pointee.nb_samples = capacity
        chunk.pointer.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        av_channel_layout_uninit(&chunk.pointer.pointee.ch_layout)
        av_channel_layout_copy(&chunk.pointer.pointee.ch_layout, &encoder.pointee.ch_layout)
        chunk.pointer.pointee.sample_rate = Int32(rate)
        try ffmpegCheck(av_frame_get_buffer(chunk.pointer, 0), "allocating audio", path: plan.input)
        defer { av_frame_unref(chunk.pointer) }
        let inputPlanes = UnsafeMutableRawPointer(frame.pointer.pointee.extended_data)?.assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
        let count = withUnsafeMutablePointer(to: &chunk.pointer.pointee.data) { tuple in
            tuple.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 8) { output in
                swr_convert(resampler, output, capacity, inputPlanes, frame.pointer.pointee.nb_samples)
            }
        }
        try ffmpegCheck(count, "resampling audio", path: plan.input)
        // Keep the samples between the clip's start and end.
        let position = (firstSample ?? 0) + resampledOut
        resampledOut += Int64(count)
        let skip = Int32(clamping: max(0, -position))
        let end = min(position + Int64(count), totalSamples)
        let keep = Int32(clamping: max(0, end - max(position, 0)))
        guard keep > 0 else {
            if position + Int64(count) >= totalSamples { inputDone = true }
            return
        }
        if samplesIn == 0 && position > 0 {
            // Audio that starts after the clip does: silence until it starts,
            // so the track spans the clip like the picture.
            try queueSilence(Int32(clamping: min(position, totalSamples)))
        }
        var pointers = withUnsafeMutablePointer(to: &chunk.pointer.pointee.data) { tuple in
            tuple.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 8) { Array(UnsafeBufferPointer(start: $0, count: 8)) }
        }
        let bytesPerSample = Int(av_get_bytes_per_sample(AV_SAMPLE_FMT_FLTP))
        for index in pointers.indices { pointers[index] = pointers[index].map { $0 + Int(skip) * bytesPerSample } }
        let written = pointers.withUnsafeMutableBufferPointer { av_audio_fifo_write(fifo, $0.baseAddress, keep) }
        try ffmpegCheck(written, "queueing audio", path: plan.input)
        samplesIn += Int64(keep)
        if end >= totalSamples { inputDone = true }
    }

    private func queueSilence(_ samples: Int32) throws {
        guard samples > 0 else { return }
        let silence = try FrameBuffer()
        silence.pointer.pointee.nb_samples = samples
        silence.pointer.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        av_channel_layout_copy(&silence.pointer.pointee.ch_layout, &encoder.pointee.ch_layout)
        try ffmpegCheck(av_frame_get_buffer(silence.pointer, 0), "allocating audio", path: plan.input)
        try ffmpegCheck(
            av_samples_set_silence(silence.pointer.pointee.extended_data, 0, samples, encoder.pointee.ch_layout.nb_channels, AV_SAMPLE_FMT_FLTP),
            "allocating audio", path: plan.input)
        let written = withUnsafeMutablePointer(to: &silence.pointer.pointee.data) { tuple in
            tuple.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 8) { av_audio_fifo_write(fifo, $0, samples) }
        }
        try ffmpegCheck(written, "queueing audio", path: plan.input)
        samplesIn += Int64(samples)
    }

    private func encodeChunk(_ samples: Int32, write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        let frame = try FrameBuffer()
        frame.pointer.pointee.nb_samples = samples
        frame.pointer.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        av_channel_layout_copy(&frame.pointer.pointee.ch_layout, &encoder.pointee.ch_layout)
        frame.pointer.pointee.sample_rate = Int32(rate)
        try ffmpegCheck(av_frame_get_buffer(frame.pointer, 0), "allocating audio", path: plan.output)
        let read = withUnsafeMutablePointer(to: &frame.pointer.pointee.data) { tuple in
            tuple.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 8) { av_audio_fifo_read(fifo, $0, samples) }
        }
        try ffmpegCheck(read, "queueing audio", path: plan.output)
        frame.pointer.pointee.pts = samplesEncoded
        samplesEncoded += Int64(samples)
        try ffmpegCheck(avcodec_send_frame(encoder, frame.pointer), "encoding audio", path: plan.output)
        try drain(write)
    }

    private func drain(_ write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        while true {
            let code = avcodec_receive_packet(encoder, packet.pointer)
            if code == CFFmpeg_AVERROR_EAGAIN() || code == CFFmpeg_AVERROR_EOF() { return }
            try ffmpegCheck(code, "encoding audio", path: plan.output)
            try write(packet.pointer)
            av_packet_unref(packet.pointer)
        }
    }
}
