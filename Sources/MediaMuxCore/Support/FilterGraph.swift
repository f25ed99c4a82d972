import MediaMuxBase
internal import CFFmpeg
internal import CFFmpegFilter

/// A graph of libavfilter's filters from one or more inputs, named [in0],
/// [in1]... in the description, to one output: audio ("[in0]volume=-6dB,afade=t=in:ss=0:ns=48000")
/// on planar float audio whose rate and channel layout it keeps, or video
/// ("[in0]transpose=clock,scale=1080:-2") from one input into a pixel
/// format. libavfilter is opened on first use (see CFFmpegFilter), so merges
/// without effects or re-framing never map it.
final class FilterGraph {
    private var graph: OpaquePointer?
    private let path: String
    /// "audio" or "video", for messages.
    private let media: String

    /// An audio graph.
    ///
    /// - Parameters:
    ///   - frameSize: samples in each frame handed out (the last may hold fewer); 0 for as they come.
    ///   - path: the file the audio is for, named by errors.
    init(filters: String, inputs: Int = 1, rate: Int32, layout: UnsafePointer<AVChannelLayout>, frameSize: Int32 = 0, path: String) throws {
        self.path = path
        media = "audio"
        graph = try Self.made(filters, path: path, media: media) { code, message, size in
            CFFmpegFilter_create(filters, Int32(inputs), rate, layout, frameSize, code, message, size)
        }
    }

    /// A video graph from pictures of `format`, `width` x `height` and
    /// `pixelAspect`, timed in `timeBase`, into `outputFormat`, on libavfilter's
    /// own threads (0: as many as there are cores).
    init(
        filters: String, width: Int32, height: Int32, format: AVPixelFormat, timeBase: AVRational, pixelAspect: AVRational,
        outputFormat: AVPixelFormat, threads: Int32 = 0, path: String
    ) throws {
        self.path = path
        media = "video"
        graph = try Self.made(filters, path: path, media: media) { code, message, size in
            CFFmpegFilter_create_video(filters, width, height, format, timeBase, pixelAspect, outputFormat, threads, code, message, size)
        }
    }

    private static func made(
        _ filters: String, path: String, media: String,
        _ create: (UnsafeMutablePointer<Int32>, UnsafeMutablePointer<CChar>, Int) -> OpaquePointer?
    ) throws -> OpaquePointer {
        var code: Int32 = 0
        var message = [CChar](repeating: 0, count: 512)
        guard let graph = create(&code, &message, message.count) else {
            let said = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw MediaMuxError.ffmpeg(operation: "setting up the \(media) filters (\(filters))", path: path, code: code, message: said)
        }
        return graph
    }

    deinit { CFFmpegFilter_free(&graph) }

    /// Hands an input a frame, or its end (nil).
    func send(_ frame: FrameBuffer?, to input: Int = 0) throws {
        try ffmpegCheck(CFFmpegFilter_send(graph, Int32(input), frame?.pointer), "filtering \(media)", path: path)
    }

    /// A filtered frame into `frame`: false when the graph needs more input or has ended.
    func receive(into frame: FrameBuffer) throws -> Bool {
        av_frame_unref(frame.pointer)
        let code = CFFmpegFilter_receive(graph, frame.pointer)
        if code == CFFmpeg_AVERROR_EAGAIN() || code == CFFmpeg_AVERROR_EOF() { return false }
        try ffmpegCheck(code, "filtering \(media)", path: path)
        return true
    }
}
