import MediaMuxBase
package import CFFmpeg

/// The one encoder of a video output track. It takes decoded pictures, each
/// at its time on the track in the track's time base, whatever the source's
/// was; turns and fits them with the encoding's filter graph; and encodes them
/// on a thread of its own (`EncoderThread`). Each packet comes out with the
/// duration its picture is shown: up to the next picture's time, or to the
/// end given with the last. A merge's re-framed video (`EncodedVideoReader`)
/// and a preview clip feed it alike.
package final class VideoSpanEncoder {
    /// The track's time base: the pictures' times and the packets'.
    package let timeBase: AVRational
    /// What the graph is made from: the track's encoding, with the turn
    /// and size of the pictures of the span being encoded.
    private var encoding: VideoEncoding
    private let encoder: EncoderHandle
    private let encoderThread: EncoderThread
    /// The file the pictures come from, named by errors.
    private let path: String
    /// Created with the first picture, whose format, size and colour it
    /// takes, and again when a picture comes in another (a later span's source).
    private var graph: FilterGraph?
    private var graphInput: PictureFormat?
    /// For an encoding that only scales and turns, in place of the graph.
    private var direct: ScaledUprightPictures?
    private let filtered: FrameBuffer
    /// The latest picture sent, whose duration the next picture's time gives.
    private var undatedTime: Int64?
    /// How long each picture sent to the encoder is shown, by presentation time, for its packet.
    private var durations: [Int64: Int64] = [:]
    /// The encoded packet of the undated picture, when the encoder gave it
    /// before the next picture came: it and what follows wait for its duration.
    private var undatedPacket: UnsafeMutablePointer<AVPacket>?
    private var queue = PacketQueue()
    private var finished = false
    /// Pictures handed to the encoder.
    package private(set) var framesEncoded = 0
    /// Encoding a smart cut's frames: the decoded pictures go to the encoder as they are.
    private let cut: CutEncoding?

    /// - Parameters:
    ///   - stream: the source stream, for the frame rate the encoder is told,
    ///     and for an encoding that keeps the source's colour, that colour
    ///     and (x265) its HDR10 metadata.
    ///   - timeBase: the output track's.
    ///   - path: the source file, named by errors of decoding and filtering.
    ///   - output: the file written, named by errors of the encoder.
    package init(
        encoding: VideoEncoding, stream: UnsafeMutablePointer<AVStream>, timeBase: AVRational, globalHeaders: Bool,
        path: String, output: String
    ) throws {
        self.encoding = encoding
        self.timeBase = timeBase
        self.path = path
        cut = nil
        filtered = try FrameBuffer()
        direct = encoding.isScaleAndTurn ? try ScaledUprightPictures(encoding: encoding, path: path) : nil
        encoder = try Self.encoder(named: encoding.encoder, output: output)
        try Self.configure(encoder, encoding, input: stream, timeBase: timeBase, globalHeaders: globalHeaders, output: output)
        encoderThread = try EncoderThread(encoder: encoder)
    }

    /// The encoder of a smart cut's frames (`CutEncoding`): the source's
    /// pictures as decoded, in their size, pixel format, shape and colour,
    /// at `frameRate` (the same for every cut of a track, whose encoders
    /// must all write the same parameter sets).
    init(cut: CutEncoding, stream: UnsafeMutablePointer<AVStream>, frameRate: AVRational, timeBase: AVRational, path: String, output: String) throws {
        let parameters = stream.pointee.codecpar.pointee
        let size = VideoSize(width: Int(parameters.width), height: Int(parameters.height))
        encoding = VideoEncoding(
            codec: cut.codec, encoder: cut.encoder, sourceCodec: cut.codec, frame: size, picture: size, fit: .pad, turn: .none,
            bitDepth: cut.bitDepth, quality: cut.quality, preset: cut.preset, reason: "a cut inside a GOP", notes: [])
        self.cut = cut
        self.timeBase = timeBase
        self.path = path
        filtered = try FrameBuffer()
        direct = nil
        encoder = try Self.encoder(named: cut.encoder, output: output)
        let context = encoder.context
        context.pointee.width = parameters.width
        context.pointee.height = parameters.height
        let format = AVPixelFormat(rawValue: parameters.format)
        context.pointee.pix_fmt = [AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUV420P10LE].contains(format)
            ? format : Self.outputFormat(cut.bitDepth)
        context.pointee.time_base = timeBase
        context.pointee.framerate = frameRate
        context.pointee.sample_aspect_ratio = parameters.sample_aspect_ratio
        context.pointee.color_primaries = parameters.color_primaries
        context.pointee.color_trc = parameters.color_trc
        context.pointee.colorspace = parameters.color_space
        context.pointee.color_range = parameters.color_range
        context.pointee.chroma_sample_location = parameters.chroma_location
        // No B-frames: each packet is decoded where it is shown, so the copy's decode times go on from the cut's.
        context.pointee.max_b_frames = 0
        context.pointee.level = Int32(cut.level)
        context.pointee.thread_count = 0
        context.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
        var options = [("preset", cut.preset), ("crf", String(cut.quality)), ("profile", cut.profile)]
        if cut.codec == "hevc" {
            // x265 writes ids 0, rewritten afterwards; closed GOPs; HDR10 metadata kept. Its level is its own (a
            // level it is told, x265 enforces with a rate limit: a small source's level 1 holds it to 128 kb/s).
            let parameters = ["log-level=error", "bframes=0", "open-gop=0"] + Self.hdr10Parameters(stream)
            options.append(("x265-params", parameters.joined(separator: ":")))
        } else {
            options.append(("x264-params", "sps-id=\(cut.parameterSets.sequence)"))
        }
        let code = encoder.open(options: options)
        if code < 0 {
            throw MediaMuxError.ffmpeg(
                operation: "opening \(cut.encoder) for the frames at a cut (\(cut.summary))", path: output, code: code, message: ffmpegErrorText(code))
        }
        encoderThread = try EncoderThread(encoder: encoder)
    }

    private static func encoder(named name: String, output: String) throws -> EncoderHandle {
        guard let codec = avcodec_find_encoder_by_name(name) else {
            throw MediaMuxError.ffmpeg(
                operation: "finding the \(name) encoder", path: output, code: FFmpegCode.notAvailable, message: "this FFmpeg was built without \(name)")
        }
        return try EncoderHandle(codec: codec, path: output)
    }

    /// The encoder, for the muxer's stream parameters.
    package var context: UnsafeMutablePointer<AVCodecContext> { encoder.context }

    private static func outputFormat(_ bitDepth: Int) -> AVPixelFormat { bitDepth > 8 ? AV_PIX_FMT_YUV420P10LE : AV_PIX_FMT_YUV420P }

    /// The frame; the colour (the source's primaries, transfer, matrix and
    /// range, or BT.709 limited range) and for x265 the source's HDR10
    /// metadata; the plan's quality and preset; and the track's time base, in
    /// which every picture keeps its own time.
    private static func configure(
        _ encoder: EncoderHandle, _ encoding: VideoEncoding, input: UnsafeMutablePointer<AVStream>, timeBase: AVRational,
        globalHeaders: Bool, output: String
    ) throws {
        let context = encoder.context
        context.pointee.width = Int32(encoding.frame.width)
        context.pointee.height = Int32(encoding.frame.height)
        context.pointee.pix_fmt = outputFormat(encoding.bitDepth)
        context.pointee.time_base = timeBase
        if input.pointee.avg_frame_rate.num > 0, input.pointee.avg_frame_rate.den > 0 { context.pointee.framerate = input.pointee.avg_frame_rate }
        context.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
        switch encoding.colour {
        case .kept:
            let parameters = input.pointee.codecpar.pointee
            context.pointee.color_primaries = parameters.color_primaries
            context.pointee.color_trc = parameters.color_trc
            context.pointee.colorspace = parameters.color_space
            context.pointee.color_range = parameters.color_range
        case .bt709:
            context.pointee.color_primaries = AVCOL_PRI_BT709
            context.pointee.color_trc = AVCOL_TRC_BT709
            context.pointee.colorspace = AVCOL_SPC_BT709
            context.pointee.color_range = AVCOL_RANGE_MPEG
        }
        context.pointee.thread_count = 0
        if globalHeaders { context.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        var options = [("preset", encoding.preset), ("crf", String(encoding.quality))]
        if encoding.encoder == "libx265" {
            let hdr = encoding.colour == .kept ? hdr10Parameters(input) : []
            options.append(("x265-params", (["log-level=error"] + hdr).joined(separator: ":")))
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

    /// Encodes `frame` (its reference is taken; it is left blank), shown from
    /// `time` until `next`, or until the next picture's time when `next` is
    /// nil. Times are ticks of the track's time base, and rise.
    package func encode(_ frame: FrameBuffer, at time: Int64, until next: Int64? = nil) throws {
        date(until: time)
        frame.pointer.pointee.pts = time
        if let next {
            durations[time] = max(1, next.saturatingSubtracting(time))
        } else {
            undatedTime = time
        }
        if cut != nil {
            guard frame.pointer.pointee.format == encoder.context.pointee.pix_fmt.rawValue,
                  frame.pointer.pointee.width == encoder.context.pointee.width, frame.pointer.pointee.height == encoder.context.pointee.height
            else {
                throw MediaMuxError.damaged(path: path, detail: "a picture at a cut is decoded in another size or pixel format than its stream declares")
            }
            try hand(frame)
            return
        }
        if let direct {
            try direct.convert(frame, into: filtered)
            av_frame_unref(frame.pointer)
            filtered.pointer.pointee.pts = time
            try hand(filtered)
            return
        }
        let picture = PictureFormat(frame.pointer.pointee)
        if let graph, picture != graphInput {
            // A span from another source: its pictures go through a graph of their own.
            try graph.send(nil)
            try drainGraph()
            self.graph = nil
        }
        let graph = try self.graph ?? makeGraph(for: frame.pointer.pointee)
        self.graph = graph
        graphInput = picture
        try graph.send(frame)
        av_frame_unref(frame.pointer)
        try drainGraph()
    }

    /// The pictures from here on are turned by `turn` and are `shown`
    /// large upright (a later span's source of another shape or turn): what
    /// the graph has is flushed, and the next picture gets a graph of its own.
    package func takePictures(turned turn: PictureTurn, shown: VideoSize) throws {
        guard turn != encoding.turn || shown != encoding.picture else { return }
        try graph?.send(nil)
        try drainGraph()
        graph = nil
        encoding.turn = turn
        encoding.picture = shown
        if direct != nil { direct = try ScaledUprightPictures(encoding: encoding, path: path) }
    }

    /// The last picture is shown until `end`; the encoder's delayed packets follow.
    package func finish(until end: Int64) throws {
        date(until: end)
        try graph?.send(nil)
        try drainGraph()
        try encoderThread.finish()
        try collectEncoded()
        finished = true
    }

    /// The next packet whose duration is known, in decode order; nil when
    /// none is ready yet (or, once finished, none is left). The caller owns it
    /// until it hands it back with `reuse`.
    package func next() -> PacketBuffer? {
        if !finished, let undated = undatedPacket, queue.front == undated { return nil }
        return queue.pop()
    }

    package func reuse(_ buffer: PacketBuffer) {
        queue.reuse(buffer)
    }

    /// Finished, and every packet handed out.
    package var isDrained: Bool { finished && queue.isEmpty }

    /// The picture sent last is shown until `next`: its packet's duration.
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

    private func drainGraph() throws {
        guard let graph else { return }
        while try graph.receive(into: filtered) { try hand(filtered) }
    }

    /// Hands a picture of the frame to the encoder's thread (its reference is moved).
    private func hand(_ picture: FrameBuffer) throws {
        picture.pointer.pointee.pict_type = AV_PICTURE_TYPE_NONE
        framesEncoded += 1
        try encoderThread.encode(picture.pointer)
        try collectEncoded()
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
            filters: encoding.filterGraph(decoded: frame.colorspace.rawValue, height: Int(frame.height), fullRange: frame.color_range == AVCOL_RANGE_JPEG),
            width: frame.width, height: frame.height, format: AVPixelFormat(rawValue: frame.format),
            timeBase: timeBase, pixelAspect: frame.sample_aspect_ratio, outputFormat: Self.outputFormat(encoding.bitDepth), path: path)
    }

    /// Takes one encoded packet, with the duration its picture is shown.
    private func collect(_ packet: UnsafeMutablePointer<AVPacket>) throws {
        let queued = try queue.push(moving: packet)
        if let duration = durations.removeValue(forKey: queued.pointee.pts) {
            queued.pointee.duration = duration
        } else if queued.pointee.pts == undatedTime {
            undatedPacket = queued
        }
    }
}

/// What a filter graph is made for: a decoded picture's size, pixel format,
/// colour and pixel shape.
private struct PictureFormat: Equatable {
    var width, height, format: Int32
    var colorspace, range: UInt32
    var pixelAspect: AVRational

    init(_ frame: AVFrame) {
        width = frame.width
        height = frame.height
        format = frame.format
        colorspace = frame.colorspace.rawValue
        range = frame.color_range.rawValue
        pixelAspect = frame.sample_aspect_ratio
    }

    static func == (a: Self, b: Self) -> Bool {
        a.width == b.width && a.height == b.height && a.format == b.format && a.colorspace == b.colorspace && a.range == b.range
            && av_cmp_q(a.pixelAspect, b.pixelAspect) == 0
    }
}
