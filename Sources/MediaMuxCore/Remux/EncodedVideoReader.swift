import MediaMuxBase
internal import CFFmpeg

/// The video re-framed as the plan's encoding says: the packets a copy
/// would keep (`TrackReader`), decoded on the decoder's frame threads,
/// turned and fitted by a libavfilter graph, and encoded, each frame at its
/// own presentation time, so that a variable frame rate stays variable.
/// Frames before the start are dropped but the one on screen there; frames
/// from the end on are dropped. Handed out a few packets at a time.
final class EncodedVideoReader: PacketSource {
    let timeBase: AVRational
    private let source: TrackReader
    private let decoder: DecoderHandle
    private let encoder: EncoderHandle
    /// The encoder's own thread, which takes each filtered frame.
    private let encoderThread: EncoderThread
    private let encoding: VideoEncoding
    private let inputStream: UnsafeMutablePointer<AVStream>
    private let path: String
    private let cancellation: CancellationFlag
    /// Created with the first decoded picture, whose format it takes.
    private var graph: FilterGraph?
    private let endTick: Int64
    /// The latest frame before the start, held until the next tells whether
    /// it is on screen at the start. Frames from the start on go straight to
    /// the filters, so that no decoded picture is kept beyond the decoder's own.
    private var held: FrameBuffer?
    private var heldTime: Int64 = 0
    private var spareFrame: FrameBuffer
    private let filtered: FrameBuffer
    /// The latest frame sent to the filters, whose duration the next frame's time gives.
    private var undatedTime: Int64?
    /// How long each frame sent to the encoder is shown, by presentation time, for its packet.
    private var durations: [Int64: Int64] = [:]
    /// The encoded packet of the undated frame, when the encoder gave it
    /// before the next frame came: it and what follows wait for its duration.
    private var undatedPacket: UnsafeMutablePointer<AVPacket>?
    private var queue = PacketQueue()
    private var finished = false
    /// Frames handed to the encoder.
    private(set) var framesEncoded = 0

    /// Source packets decoded at each turn: enough to keep the muxer fed, few enough to keep memory flat.
    private static let packetsPerTurn = 8
    private static func outputFormat(_ bitDepth: Int) -> AVPixelFormat { bitDepth > 8 ? AV_PIX_FMT_YUV420P10LE : AV_PIX_FMT_YUV420P }

    init(
        demuxer: DemuxerHandle, track: MergePlan.Track, encoding: VideoEncoding, output: String, globalHeaders: Bool,
        cancellation: CancellationFlag
    ) throws {
        self.encoding = encoding
        self.cancellation = cancellation
        path = track.path
        inputStream = try demuxer.plannedStream(track.streamIndex, kind: .video)
        source = try TrackReader(demuxer: demuxer, track: track, end: track.end)
        timeBase = source.timeBase
        endTick = track.end.ticks(of: track.timeBase, rounding: .up)
        // Two frame threads, not the cores + 1 of FFmpeg's automatic count: the
        // encoder, on a thread of its own, is the bottleneck, and each decoder
        // thread holds a picture (the frame handed to the encoder costs one).
        decoder = try DecoderHandle(stream: inputStream, path: track.path, threads: 2)
        spareFrame = try FrameBuffer()
        filtered = try FrameBuffer()
        guard let codec = avcodec_find_encoder_by_name(encoding.encoder) else {
            throw MediaMuxError.ffmpeg(
                operation: "finding the \(encoding.encoder) encoder", path: output, code: FFmpegCode.notAvailable,
                message: "this FFmpeg was built without \(encoding.encoder)")
        }
        encoder = try EncoderHandle(codec: codec, path: output)
        try Self.configure(encoder, encoding, input: inputStream, timeBase: timeBase, globalHeaders: globalHeaders, output: output)
        encoderThread = try EncoderThread(encoder: encoder)
    }

    /// The encoder, for the muxer's stream parameters.
    var encoderContext: UnsafeMutablePointer<AVCodecContext> { encoder.context }

    /// The frame, the source's colour (primaries, transfer, matrix, range) and
    /// for x265 its HDR10 metadata, the plan's quality and preset, and the
    /// source's time base, in which every frame keeps its own time.
    private static func configure(
        _ encoder: EncoderHandle, _ encoding: VideoEncoding, input: UnsafeMutablePointer<AVStream>, timeBase: AVRational,
        globalHeaders: Bool, output: String
    ) throws {
        let context = encoder.context
        let parameters = input.pointee.codecpar.pointee
        context.pointee.width = Int32(encoding.frame.width)
        context.pointee.height = Int32(encoding.frame.height)
        context.pointee.pix_fmt = outputFormat(encoding.bitDepth)
        context.pointee.time_base = timeBase
        if input.pointee.avg_frame_rate.num > 0, input.pointee.avg_frame_rate.den > 0 { context.pointee.framerate = input.pointee.avg_frame_rate }
        context.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
        context.pointee.color_primaries = parameters.color_primaries
        context.pointee.color_trc = parameters.color_trc
        context.pointee.colorspace = parameters.color_space
        context.pointee.color_range = parameters.color_range
        context.pointee.thread_count = 0
        if globalHeaders { context.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        var options = [("preset", encoding.preset), ("crf", String(encoding.quality))]
        if encoding.encoder == "libx265" {
            options.append(("x265-params", (["log-level=error"] + hdr10Parameters(input)).joined(separator: ":")))
        }
        let code = encoder.open(options: options)
        if code < 0 {
            throw MediaMuxError.ffmpeg(
                operation: "opening \(encoding.encoder) for \(encoding.frame), preset \(encoding.preset), crf \(encoding.quality)",
                path: output, code: code, message: ffmpegErrorText(code))
        }
    }

    /// x265's HDR10 parameters from the source's mastering display and light
    /// levels: primaries and white point in 1/50000, luminance in 1/10000 cd/m².
    private static func hdr10Parameters(_ stream: UnsafeMutablePointer<AVStream>) -> [String] {
        var parameters: [String] = []
        if let display = CFFmpeg_stream_mastering_display(stream)?.pointee, display.has_primaries != 0, display.has_luminance != 0 {
            func scaled(_ value: AVRational, _ unit: Double) -> Int { Int((av_q2d(value) * unit).rounded()) }
            let (r, g, b) = (display.display_primaries.0, display.display_primaries.1, display.display_primaries.2)
            let point = { (xy: (AVRational, AVRational)) in "(\(scaled(xy.0, 50000)),\(scaled(xy.1, 50000)))" }
            parameters.append(
                "master-display=G\(point(g))B\(point(b))R\(point(r))WP\(point(display.white_point))"
                    + "L(\(scaled(display.max_luminance, 10000)),\(scaled(display.min_luminance, 10000)))")
            parameters.append("hdr10=1")
        }
        if let light = CFFmpeg_stream_content_light(stream)?.pointee {
            parameters.append("max-cll=\(light.MaxCLL),\(light.MaxFALL)")
        }
        return parameters
    }

    func next() throws -> PacketBuffer? {
        while queue.isEmpty || (undatedPacket != nil && queue.front == undatedPacket) {
            if finished { return queue.pop() }
            try advance()
        }
        return queue.pop()
    }

    func reuse(_ buffer: PacketBuffer) {
        queue.reuse(buffer)
    }

    /// The last packet in decode order lasts at least until the end, as a copy's does.
    func makeFinal(_ packet: UnsafeMutablePointer<AVPacket>) {
        let reach = endTick.saturatingSubtracting(packet.pointee.dts)
        if packet.pointee.duration < reach { packet.pointee.duration = reach }
    }

    func checkComplete(declaredPackets: Int?) throws {
        try source.checkComplete(declaredPackets: declaredPackets)
    }

    var damagedPackets: Int { decoder.rejectedPackets }

    var warnings: [String] {
        let count = decoder.rejectedPackets
        guard count > 0 else { return [] }
        return ["\(path): \(count) damaged video frame\(count == 1 ? "" : "s") could not be decoded and \(count == 1 ? "was" : "were") left out"]
    }

    /// Decodes a few source packets and encodes what they give; at the
    /// source's end, the rest and the encoder's delayed packets.
    private func advance() throws {
        for _ in 0..<Self.packetsPerTurn {
            if cancellation.isRaised { throw MediaMuxError.cancelled(path: path) }
            guard let buffer = try source.next() else {
                try decode(nil)
                if let current = held {
                    held = nil
                    try emit(current, at: heldTime, until: endTick)
                }
                date(until: endTick)
                try graph?.send(nil)
                try drainGraph()
                try encoderThread.finish()
                try collectEncoded()
                finished = true
                return
            }
            defer { source.reuse(buffer) }
            try decode(buffer.pointer)
        }
    }

    /// Hands the decoder a packet (nil: the end), taking the frames it gives meanwhile.
    private func decode(_ packet: UnsafeMutablePointer<AVPacket>?) throws {
        while true {
            let accepted = try decoder.send(packet)
            while case .frame = try decoder.receive(into: spareFrame) { try take(spareFrame) }
            if accepted { return }
        }
    }

    /// A decoded frame, in presentation order. It dates the frame sent
    /// before it. Before the start it is held: the frame held before it is
    /// dropped, unless this one comes after the start, which makes that one
    /// the picture on screen at the start.
    private func take(_ frame: FrameBuffer) throws {
        guard let time = frame.timestamp, time < endTick else {
            av_frame_unref(frame.pointer)
            return
        }
        date(until: time)
        let released = held
        if let current = held {
            held = nil
            if time > 0 {
                try emit(current, at: heldTime, until: time)
            } else {
                av_frame_unref(current.pointer)
            }
        }
        if time < 0 {
            held = frame
            heldTime = time
            spareFrame = try released ?? FrameBuffer()
            return
        }
        try emit(frame, at: time, until: nil)
    }

    /// The frame sent last is shown until `next`: its packet's duration.
    private func date(until next: Int64) {
        guard let time = undatedTime else { return }
        undatedTime = nil
        let duration = max(1, next.saturatingSubtracting(time))
        if let packet = undatedPacket, packet.pointee.pts == time {
            packet.pointee.duration = duration
            undatedPacket = nil
        } else {
            durations[time] = duration
        }
    }

    /// Filters and encodes a frame shown from `time` until `next` (nil: until the next frame, not yet decoded).
    private func emit(_ frame: FrameBuffer, at time: Int64, until next: Int64?) throws {
        frame.pointer.pointee.pts = time
        if let next {
            durations[time] = max(1, next.saturatingSubtracting(time))
        } else {
            undatedTime = time
        }
        let graph = try self.graph ?? makeGraph(for: frame.pointer.pointee)
        self.graph = graph
        try graph.send(frame)
        av_frame_unref(frame.pointer)
        try drainGraph()
    }

    private func drainGraph() throws {
        guard let graph else { return }
        while try graph.receive(into: filtered) {
            filtered.pointer.pointee.pict_type = AV_PICTURE_TYPE_NONE
            framesEncoded += 1
            try encoderThread.encode(filtered.pointer)
            try collectEncoded()
        }
    }

    /// Takes what the encoder's thread has encoded so far.
    private func collectEncoded() throws {
        for var packet in encoderThread.takePackets() as [UnsafeMutablePointer<AVPacket>?] {
            defer { av_packet_free(&packet) }
            if let packet { try collect(packet) }
        }
    }

    private func makeGraph(for frame: AVFrame) throws -> FilterGraph {
        try FilterGraph(
            filters: encoding.filterGraph, width: frame.width, height: frame.height, format: AVPixelFormat(rawValue: frame.format),
            timeBase: timeBase, pixelAspect: frame.sample_aspect_ratio, outputFormat: Self.outputFormat(encoding.bitDepth), path: path)
    }

    /// Takes one encoded packet, with the duration its frame is shown.
    private func collect(_ packet: UnsafeMutablePointer<AVPacket>) throws {
        let queued = try queue.push(moving: packet)
        if let duration = durations.removeValue(forKey: queued.pointee.pts) {
            queued.pointee.duration = duration
        } else if queued.pointee.pts == undatedTime {
            undatedPacket = queued
        }
    }
}
