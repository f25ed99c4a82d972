import MediaMuxBase
internal import CFFmpeg
internal import CFFmpegLog

/// FFmpeg's text for an error code (what `av_err2str` gives in C).
package func ffmpegErrorText(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    if av_strerror(code, &buffer, buffer.count) < 0 {
        return "error \(code)"
    }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Every FFmpeg return code passes through here.
@discardableResult
package func ffmpegCheck(_ code: Int32, _ operation: @autoclosure () -> String, path: String) throws -> Int32 {
    guard code < 0 else { return code }
    throw MediaMuxError.ffmpeg(operation: operation(), path: path, code: code, message: ffmpegErrorText(code))
}

/// A failure of FFmpeg's while reading `path`, an input: the file is at
/// fault, so it is damage, said in MediaMux's words (`problem`) with
/// FFmpeg's after them.
@discardableResult
package func inputCheck(_ code: Int32, _ problem: @autoclosure () -> String, path: String) throws -> Int32 {
    guard code < 0 else { return code }
    throw MediaMuxError.damaged(path: path, detail: "\(problem()); FFmpeg: \(ffmpegErrorText(code))")
}

/// A failure of FFmpeg's while writing `path`, an output. What the system
/// refused (a full disk, a file-size limit, a quota, a read-only or failing
/// disk) is the output's problem and said as the system says it; the rest is
/// FFmpeg's.
@discardableResult
package func outputCheck(_ code: Int32, _ operation: @autoclosure () -> String, path: String) throws -> Int32 {
    guard code < 0 else { return code }
    if [ENOSPC, EFBIG, EDQUOT, EIO, EROFS, EACCES, EPERM].contains(-code) {
        throw MediaMuxError.outputNotWritable(path: path, reason: systemErrorText(-code))
    }
    throw MediaMuxError.ffmpeg(operation: operation(), path: path, code: code, message: ffmpegErrorText(code))
}

package let noTimestamp: Int64 = CFFmpeg_AV_NOPTS_VALUE()

/// The FFmpeg error codes MediaMux raises itself, named once. FFmpeg's
/// AVERROR(e) is -e for errno values on POSIX systems.
package enum FFmpegCode {
    /// An allocation failed.
    package static let outOfMemory = -ENOMEM
    /// This FFmpeg build lacks a component (an encoder).
    package static let notAvailable = -ENOSYS
    /// FFmpeg refused the arguments (a picture format or size).
    package static let invalid = -EINVAL
    /// A write whose reader has gone (returned by MediaMux's stream writer).
    package static let brokenPipe = -EPIPE
    /// An argument no call should get.
    package static let invalidArgument = -EINVAL
    /// A codec asked to be called again.
    package static let tryAgain = CFFmpeg_AVERROR_EAGAIN()
}

extension MediaMuxError {
    /// FFmpeg could not allocate what `operation` needed.
    package static func outOfMemory(_ operation: String, path: String) -> MediaMuxError {
        .ffmpeg(operation: operation, path: path, code: FFmpegCode.outOfMemory, message: "out of memory")
    }
}
