import MediaMuxBase
import MediaMuxCore
internal import CFFmpeg

/// One AVFrame, reused or handed between owners by swapping.
final class FrameBuffer {
    let pointer: UnsafeMutablePointer<AVFrame>

    init() throws {
        guard let frame = av_frame_alloc() else {
            throw MediaMuxError.outOfMemory("allocating a frame", path: "-")
        }
        pointer = frame
    }

    deinit {
        var doomed: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&doomed)
    }
}

/// One decoder: owns the AVCodecContext opened for a stream.
final class DecoderHandle {
    let context: UnsafeMutablePointer<AVCodecContext>
    let path: String

    init(stream: UnsafeMutablePointer<AVStream>, path: String, threads: Int = 0) throws {
        self.path = path
        let parameters = stream.pointee.codecpar!
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            let name = String(cString: avcodec_get_name(parameters.pointee.codec_id))
            throw MediaMuxError.notMedia(path: path, detail: "no decoder for \(name) in this FFmpeg")
        }
        guard let fresh = avcodec_alloc_context3(codec) else {
            throw MediaMuxError.outOfMemory("allocating a decoder", path: path)
        }
        context = fresh
        // From here on a throw runs deinit, which frees the context.
        try ffmpegCheck(avcodec_parameters_to_context(context, parameters), "setting up the decoder", path: path)
        context.pointee.pkt_timebase = stream.pointee.time_base
        context.pointee.thread_count = Int32(threads)
        context.pointee.thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE
        try ffmpegCheck(avcodec_open2(context, codec, nil), "opening the decoder", path: path)
    }

    deinit {
        var doomed: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&doomed)
    }

    enum Output { case frame, needsInput, finished }

    /// Hands a packet to the decoder (nil: the end of the stream). False when
    /// the decoder has frames to give first.
    func send(_ packet: UnsafeMutablePointer<AVPacket>?) throws -> Bool {
        let code = avcodec_send_packet(context, packet)
        if code == CFFmpeg_AVERROR_EAGAIN() { return false }
        if code == CFFmpeg_AVERROR_EOF() { return true }
        // A damaged packet is the decoder's business; frames that decode still count.
        if code == CFFmpeg_AVERROR_INVALIDDATA() { return true }
        try ffmpegCheck(code, "decoding", path: path)
        return true
    }

    func receive(into frame: FrameBuffer) throws -> Output {
        while true {
            let code = avcodec_receive_frame(context, frame.pointer)
            if code == CFFmpeg_AVERROR_EAGAIN() { return .needsInput }
            if code == CFFmpeg_AVERROR_EOF() { return .finished }
            // A damaged frame (reported here with frame threads) is passed over, as from send().
            if code == CFFmpeg_AVERROR_INVALIDDATA() { continue }
            try ffmpegCheck(code, "decoding", path: path)
            return .frame
        }
    }

    /// Forgets everything buffered, after a seek.
    func flush() { avcodec_flush_buffers(context) }
}

/// Decoded video frames of one stream in presentation order, with their times
/// on the video's own timeline; seeks on request. No policy: the frame reader
/// decides where to seek and which frames to keep.
final class VideoFrameSource {
    let demuxer: DemuxerHandle
    let decoder: DecoderHandle
    let streamIndex: Int
    let timeBase: AVRational
    /// The timestamp of the video's first presented frame: time zero.
    let zero: Int64
    private let packet: PacketBuffer
    private let cancellation: CancellationFlag
    private var draining = false
    private var finished = false
    /// True once a frame has come out since the last seek.
    private(set) var decodedSinceSeek = 0

    /// `zero` is where the probe found the video's first frame: on the file's
    /// timeline, or with `ignoringEditLists` in the track's composition time.
    init(path: String, streamIndex: Int, zero: MediaTime, ignoringEditLists: Bool = false, cancellation: CancellationFlag) throws {
        self.cancellation = cancellation
        demuxer = try DemuxerHandle(path: path, cancellation: cancellation, ignoringEditLists: ignoringEditLists)
        let stream = try demuxer.plannedStream(streamIndex, kind: .video)
        self.streamIndex = streamIndex
        timeBase = stream.pointee.time_base
        let perTick = MediaTime(value: Int64(max(timeBase.num, 1)), timescale: Int64(max(timeBase.den, 1)))
        self.zero = zero.converted(to: perTick.timescale, rounding: .nearest).value / perTick.value
        decoder = try DecoderHandle(stream: stream, path: path)
        packet = try PacketBuffer()
        demuxer.keepOnly(streamIndex)
    }

    /// The stream's average frame rate, when the container tells.
    var frameRate: AVRational? {
        let rate = demuxer.stream(streamIndex).pointee.avg_frame_rate
        return rate.num > 0 && rate.den > 0 ? rate : nil
    }

    /// A timestamp of the stream as a time on the video's timeline.
    func time(_ timestamp: Int64) -> MediaTime {
        MediaTime(value: Int64(timeBase.num) * (timestamp - zero), timescale: Int64(max(timeBase.den, 1)))
    }

    /// The stream timestamp of a time on the video's timeline, rounded down.
    /// A thousandth of a tick counts as on the tick: times computed in
    /// floating point (4 s / 12 * 2.5) land a hair below the frame they name.
    func timestamp(_ seconds: Double) -> Int64 {
        let ticks = seconds * Double(timeBase.den) / Double(max(timeBase.num, 1))
        guard ticks.isFinite else { return ticks > 0 ? Int64.max / 2 : zero }
        return zero + Int64((ticks + 1e-3).rounded(.down))
    }

    /// The presentation time of the keyframe at or before `timestamp`, from
    /// the container's index, when it has one.
    func keyframe(atOrBefore timestamp: Int64) -> Int64? {
        let stream = demuxer.stream(streamIndex)
        let position = av_index_search_timestamp(stream, timestamp, AVSEEK_FLAG_BACKWARD)
        guard position >= 0, let entry = avformat_index_get_entry(stream, position) else { return nil }
        return entry.pointee.timestamp
    }

    /// Moves to the keyframe at or before `timestamp` (the video's start for
    /// anything before it) and forgets decoded state.
    func seek(to timestamp: Int64) throws {
        let point = max(timestamp, zero)
        var code = avformat_seek_file(demuxer.context, Int32(streamIndex), Int64.min, point, point, AVSEEK_FLAG_BACKWARD)
        if code < 0 && point > zero {
            // Some demuxers cannot find a point before this one; the start always works.
            code = avformat_seek_file(demuxer.context, Int32(streamIndex), Int64.min, zero, zero, AVSEEK_FLAG_BACKWARD)
        }
        if code < 0, let first = avformat_index_get_entry(demuxer.stream(streamIndex), 0)?.pointee.timestamp {
            // No sync sample before the start in the index: phones leave
            // their first IDR picture out of it. Decoding starts at the first sample.
            code = avformat_seek_file(demuxer.context, Int32(streamIndex), Int64.min, first, first, AVSEEK_FLAG_BACKWARD | AVSEEK_FLAG_ANY)
        }
        if cancellation.isRaised { throw MediaMuxError.cancelled(path: demuxer.path) }
        try ffmpegCheck(code, "seeking", path: demuxer.path)
        decoder.flush()
        draining = false
        finished = false
        decodedSinceSeek = 0
    }

    /// The next frame in presentation order, decoded into `frame`; false at
    /// the end of the stream.
    func next(into frame: FrameBuffer) throws -> Bool {
        while true {
            switch try decoder.receive(into: frame) {
            case .frame:
                decodedSinceSeek += 1
                return true
            case .finished:
                finished = true
                return false
            case .needsInput:
                if finished || draining {
                    // The decoder asked for input after the end: nothing more will come.
                    return false
                }
                try feed()
            }
        }
    }

    /// Reads the next packet of the video stream into the decoder.
    private func feed() throws {
        guard try demuxer.read(into: packet, of: streamIndex) else {
            if let overrun = demuxer.indexOverrun(of: streamIndex) {
                throw MediaMuxError.damaged(
                    path: demuxer.path, detail: "the video's samples run to byte \(overrun.needed) but the file ends at \(overrun.present)")
            }
            draining = true
            _ = try decoder.send(nil)
            return
        }
        // receive() gave back everything it held, so the decoder takes the packet.
        guard try decoder.send(packet.pointer) else {
            throw MediaMuxError.ffmpeg(operation: "decoding", path: demuxer.path, code: FFmpegCode.tryAgain, message: "the decoder refused input while holding no frame")
        }
    }

    /// The presentation time of a decoded frame, in stream ticks: its own
    /// packet's, which the decoder carries through. FFmpeg's best-effort
    /// guess is only for packets without one: it switches to decode times
    /// once presentation times go backwards, as they do where an iPhone's
    /// first IDR picture is presented after the pictures that follow it,
    /// and then labels every later picture with another's time.
    static func timestamp(of frame: FrameBuffer) -> Int64? {
        let noTimestamp = CFFmpeg_AV_NOPTS_VALUE()
        let own = frame.pointer.pointee.pts
        if own != noTimestamp { return own }
        let guess = frame.pointer.pointee.best_effort_timestamp
        return guess == noTimestamp ? nil : guess
    }
}
