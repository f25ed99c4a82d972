import MediaMuxBase
internal import CFFmpeg
internal import CFFmpegFilter

/// A graph of libavfilter's audio filters from one or more inputs, named
/// [in0], [in1]... in the description, to one output ("[in0]volume=-6dB,afade=t=in:ss=0:ns=48000"),
/// on planar float audio whose rate and channel layout it keeps. libavfilter
/// is opened on first use (see CFFmpegFilter), so merges without audio
/// effects never map it.
final class AudioFilterGraph {
    private var graph: OpaquePointer?
    private let path: String

    /// - Parameters:
    ///   - frameSize: samples in each frame handed out (the last may hold fewer); 0 for as they come.
    ///   - path: the file the audio is for, named by errors.
    init(filters: String, inputs: Int = 1, rate: Int32, layout: UnsafePointer<AVChannelLayout>, frameSize: Int32 = 0, path: String) throws {
        self.path = path
        var code: Int32 = 0
        var message = [CChar](repeating: 0, count: 512)
        graph = CFFmpegFilter_create(filters, Int32(inputs), rate, layout, frameSize, &code, &message, message.count)
        guard graph != nil else {
            let said = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw MediaMuxError.ffmpeg(operation: "setting up the audio filters (\(filters))", path: path, code: code, message: said)
        }
    }

    deinit { CFFmpegFilter_free(&graph) }

    /// Hands an input a frame, or its end (nil).
    func send(_ frame: FrameBuffer?, to input: Int = 0) throws {
        try ffmpegCheck(CFFmpegFilter_send(graph, Int32(input), frame?.pointer), "filtering audio", path: path)
    }

    /// A filtered frame into `frame`: false when the graph needs more input or has ended.
    func receive(into frame: FrameBuffer) throws -> Bool {
        av_frame_unref(frame.pointer)
        let code = CFFmpegFilter_receive(graph, frame.pointer)
        if code == CFFmpeg_AVERROR_EAGAIN() || code == CFFmpeg_AVERROR_EOF() { return false }
        try ffmpegCheck(code, "filtering audio", path: path)
        return true
    }
}
