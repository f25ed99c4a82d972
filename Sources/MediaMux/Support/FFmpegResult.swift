internal import CFFmpeg

/// The outcome of an FFmpeg call that may legitimately say "not now" or
/// "no more": those come back as values, every other negative code as an error.
enum FFmpegStatus: Equatable {
    case ok(Int32)
    case endOfFile
    case again
}

/// FFmpeg's text for an error code (what `av_err2str` gives in C).
func ffmpegErrorText(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    if av_strerror(code, &buffer, buffer.count) < 0 {
        return "error \(code)"
    }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Every FFmpeg return code passes through here.
@discardableResult
func ffmpegCheck(_ code: Int32, _ operation: @autoclosure () -> String, path: String) throws -> Int32 {
    guard code < 0 else { return code }
    throw MediaMuxError.ffmpeg(operation: operation(), path: path, code: code, message: ffmpegErrorText(code))
}

/// As `ffmpegCheck`, but EOF and EAGAIN are values.
func ffmpegStatus(_ code: Int32, _ operation: @autoclosure () -> String, path: String) throws -> FFmpegStatus {
    if code == CFFmpeg_AVERROR_EOF() { return .endOfFile }
    if code == CFFmpeg_AVERROR_EAGAIN() { return .again }
    return .ok(try ffmpegCheck(code, operation(), path: path))
}

let noTimestamp: Int64 = CFFmpeg_AV_NOPTS_VALUE()
