import MediaMuxBase
import MediaMuxCore
internal import CFFmpeg

/// Carries out a clip plan: decodes the span, scales and turns the picture,
/// encodes H.264 (libx264) and AAC, and writes a faststart MP4 beside the
/// output that becomes the output only when complete.
final class ClipWriter {
    private let plan: ClipPlan
    private let cancellation: CancellationFlag
    private var progress: ProgressReporter
    /// Encoder ticks: 1/90000 s holds 24, 25, 30 and 29.97 fps frames exactly.
    private static let videoTimeBase = AVRational(num: 1, den: 90000)

    /// The decoder's threads (0 lets FFmpeg choose).
    private let threads: Int

    init(plan: ClipPlan, threads: Int, cancellation: CancellationFlag, progress: ((PreviewProgress) -> Void)?) {
        self.threads = threads
        self.plan = plan
        self.cancellation = cancellation
        self.progress = ProgressReporter(progress)
    }

    func run() throws -> PreviewClipReport {
        let temporary = TemporaryOutput(finalPath: plan.output)
        do {
            let written = try write(to: temporary.path)
            // Finishing (the encoders' last frames, the trailer, faststart)
            // checks no flag: a cancellation meanwhile still leaves nothing.
            if cancellation.isRaised { throw MediaMuxError.cancelled(path: plan.input) }
            let bytes = try temporary.commit(overwrite: plan.overwrite)
            progress.finish(done: written.frames)
            return PreviewClipReport(
                output: plan.output, start: MediaTime(value: Self.ticks(plan.start), timescale: 90000),
                duration: MediaTime(value: Self.ticks(plan.duration), timescale: 90000), width: plan.frames.width,
                height: plan.frames.height, videoFrames: written.frames, hasAudio: written.audioSamples > 0, bytes: bytes)
        } catch {
            temporary.discard()
            throw error
        }
    }

    private static func ticks(_ seconds: Double) -> Int64 { Int64((seconds * 90000).rounded()) }

    private func write(to path: String) throws -> (frames: Int, audioSamples: Int64) {
        let reader = try FrameReader(plan: plan.frames, threads: threads, cancellation: cancellation)
        let muxer = try MuxerHandle(path: path, reportedPath: plan.output, muxer: "mp4")
        let video = try VideoEncoder(plan: plan, frameRate: reader.frameRate, globalHeaders: muxer.wantsGlobalHeaders)
        let videoIndex = try muxer.addStream(encodedBy: video.context).pointee.index
        var audio: AudioSpanEncoder?
        var audioIndex: Int32 = -1
        let audioRate = Double(plan.audio?.sampleRate ?? 1)
        if let part = plan.audio {
            // The clip's audio, cut to its span to the sample; a track that
            // starts after the clip does gets silence first, so that it starts
            // with the picture.
            let made = try AudioSpanEncoder(
                demuxer: DemuxerHandle(path: plan.input, cancellation: cancellation), streamIndex: part.streamIndex, zero: plan.frames.zero + MediaTime(seconds: plan.start),
                samples: Int64((plan.duration * audioRate).rounded()),
                settings: .init(sampleRate: part.sampleRate, channels: part.channels, bitRate: plan.audioBitRate),
                output: plan.output, globalHeaders: muxer.wantsGlobalHeaders, cancellation: cancellation)
            audioIndex = try muxer.addStream(encodedBy: made.context).pointee.index
            audio = made
        }
        try muxer.open(options: ["movflags": "+faststart"])

        func writer(_ index: Int32, from timeBase: AVRational) -> (UnsafeMutablePointer<AVPacket>) throws -> Void {
            { packet in
                packet.pointee.stream_index = index
                av_packet_rescale_ts(packet, timeBase, muxer.stream(Int(index)).pointee.time_base)
                try muxer.writeInterleaved(packet)
            }
        }
        let writeVideo = writer(videoIndex, from: Self.videoTimeBase)
        let writeAudio = writer(audioIndex, from: AVRational(num: 1, den: Int32(plan.audio?.sampleRate ?? 1)))

        let clipEnd = Self.ticks(plan.duration)
        var frames = 0
        // A frame is encoded once the next one tells how long it is shown;
        // two pictures take turns holding it.
        var pictures = [try FrameBuffer(), try FrameBuffer()]
        var held: Int64?
        let turner = try UprightYUV(plan: plan.frames)
        func encodeHeld(until end: Int64) throws {
            guard let start = held else { return }
            // Audio first up to this point, so the muxer's queue stays short.
            try audio?.encode(until: Int64((Double(start) / 90000 + 0.5) * audioRate), write: writeAudio)
            try video.encode(pictures[0], pts: start, duration: end - start, write: writeVideo)
            frames += 1
            // How many frames the clip has is known only at its end; how much of its time is encoded, all along.
            progress.report(done: frames, total: nil, fraction: Double(end) / Double(max(clipEnd, 1)))
            pictures.swapAt(0, 1)
        }
        while let (frame, time) = try reader.nextDecoded() {
            // The frame shown at the start may begin before it: the clip shows it from 0.
            let ticks = max(0, Self.ticks(time.seconds - plan.start))
            if let previous = held, ticks <= previous { continue }
            guard ticks < clipEnd else { break }
            try turner.convert(frame, into: pictures[1])
            if held != nil { try encodeHeld(until: ticks) } else { pictures.swapAt(0, 1) }
            held = ticks
        }
        guard held != nil else {
            throw MediaMuxError.damaged(path: plan.input, detail: "no picture could be decoded after \(fixedPoint(plan.start, decimals: 3)) s")
        }
        try encodeHeld(until: clipEnd)
        try video.finish(write: writeVideo)
        try audio?.finish(write: writeAudio)
        try muxer.finish()
        return (frames, audio?.sourceSamples ?? 0)
    }
}

/// Scales decoded frames into 4:2:0 of the planned size and turns them upright.
private final class UprightYUV {
    private let plan: FramePlan
    private let scaler: Scaler
    private let scaled: FrameBuffer

    init(plan: FramePlan) throws {
        self.plan = plan
        scaler = Scaler(width: plan.picture.scaledWidth, height: plan.picture.scaledHeight, format: AV_PIX_FMT_YUV420P)
        scaled = try FrameBuffer()
        try allocate(scaled, width: plan.picture.scaledWidth, height: plan.picture.scaledHeight, path: plan.path)
    }

    func convert(_ frame: FrameBuffer, into target: FrameBuffer) throws {
        av_frame_unref(target.pointer)
        try allocate(target, width: plan.width, height: plan.height, path: plan.path)
        target.pointer.pointee.color_primaries = AVCOL_PRI_BT709
        target.pointer.pointee.color_trc = AVCOL_TRC_BT709
        target.pointer.pointee.colorspace = AVCOL_SPC_BT709
        target.pointer.pointee.color_range = AVCOL_RANGE_MPEG
        if plan.picture.rotation == 0 {
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
                width: plan.picture.scaledWidth / divisor, height: plan.picture.scaledHeight / divisor, bytesPerPixel: 1,
                rotation: plan.picture.rotation, into: to[plane]!, destinationStride: Int(toStrides[plane]))
        }
    }

    private func allocate(_ frame: FrameBuffer, width: Int, height: Int, path: String) throws {
        frame.pointer.pointee.width = Int32(width)
        frame.pointer.pointee.height = Int32(height)
        frame.pointer.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        try ffmpegCheck(av_frame_get_buffer(frame.pointer, 0), "allocating a picture", path: path)
    }
}

/// libx264 through libavcodec, BT.709 limited range (what the scaler makes).
private final class VideoEncoder {
    private let encoder: EncoderHandle
    /// Durations of the frames sent, by presentation time, for their packets.
    private var durations: [Int64: Int64] = [:]

    var context: UnsafeMutablePointer<AVCodecContext> { encoder.context }

    init(plan: ClipPlan, frameRate: AVRational?, globalHeaders: Bool) throws {
        guard let codec = avcodec_find_encoder_by_name("libx264") else {
            throw MediaMuxError.ffmpeg(operation: "finding the libx264 encoder", path: plan.output, code: FFmpegCode.notAvailable, message: "this FFmpeg was built without libx264")
        }
        encoder = try EncoderHandle(codec: codec, path: plan.output)
        let made = encoder.context
        made.pointee.width = Int32(plan.frames.width)
        made.pointee.height = Int32(plan.frames.height)
        made.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        made.pointee.time_base = AVRational(num: 1, den: 90000)
        if let frameRate { made.pointee.framerate = frameRate }
        made.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
        made.pointee.colorspace = AVCOL_SPC_BT709
        made.pointee.color_primaries = AVCOL_PRI_BT709
        made.pointee.color_trc = AVCOL_TRC_BT709
        made.pointee.color_range = AVCOL_RANGE_MPEG
        made.pointee.thread_count = 0
        if globalHeaders { made.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        let code = encoder.open(options: [("preset", plan.preset), ("crf", String(plan.crf))])
        if code < 0 {
            throw MediaMuxError.ffmpeg(
                operation: "opening libx264 for \(plan.frames.width)x\(plan.frames.height), preset \(plan.preset), crf \(plan.crf)",
                path: plan.output, code: code, message: ffmpegErrorText(code))
        }
    }

    func encode(_ frame: FrameBuffer, pts: Int64, duration: Int64, write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        frame.pointer.pointee.pts = pts
        frame.pointer.pointee.pict_type = AV_PICTURE_TYPE_NONE
        durations[pts] = duration
        try encoder.encode(frame.pointer, what: "video") { packet in
            try self.stamp(packet)
            try write(packet)
        }
    }

    func finish(write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        try encoder.encode(nil, what: "video") { packet in
            try self.stamp(packet)
            try write(packet)
        }
    }

    private func stamp(_ packet: UnsafeMutablePointer<AVPacket>) throws {
        packet.pointee.duration = durations.removeValue(forKey: packet.pointee.pts) ?? 0
    }
}
