/// Every failure MediaMux reports. Each case names the file it is about, so a
/// message can always say which input or output went wrong; `description` is
/// the one line a command-line tool prints, `hint` an optional next step.
public enum MediaMuxError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum StreamKind: String, Sendable, Equatable { case video, audio }

    case fileNotFound(path: String)
    case notAFile(path: String)
    case unreadable(path: String, reason: String)
    case notMedia(path: String, detail: String)
    case damaged(path: String, detail: String)
    case noStream(kind: StreamKind, path: String)
    case streamIndexOutOfRange(kind: StreamKind, index: Int, available: Int, path: String)
    case unknownDuration(kind: StreamKind, path: String)
    case unsupportedOutputExtension(path: String, extension: String)
    case codecNotSupportedInContainer(codec: String, container: String, path: String)
    case outputExists(path: String)
    case outputDirectoryMissing(path: String)
    case outputNotWritable(path: String, reason: String)
    case invalidOption(String)
    case ffmpeg(operation: String, path: String, code: Int32, message: String)
    case cancelled(path: String)

    public var description: String {
        switch self {
        case .fileNotFound(let path):
            return "\(path): no such file"
        case .notAFile(let path):
            return "\(path): is a directory, not a media file"
        case .unreadable(let path, let reason):
            return "\(path): cannot be read (\(reason))"
        case .notMedia(let path, let detail):
            return "\(path): not a media file MediaMux can read (\(detail))"
        case .damaged(let path, let detail):
            return "\(path): damaged or truncated media (\(detail))"
        case .noStream(let kind, let path):
            return "\(path): has no \(kind.rawValue) stream"
        case .streamIndexOutOfRange(let kind, let index, let available, let path):
            return "\(path): there is no \(kind.rawValue) stream \(index); the file has \(available)"
        case .unknownDuration(let kind, let path):
            return "\(path): the \(kind.rawValue) stream has no known duration"
        case .unsupportedOutputExtension(let path, let ext):
            let shown = ext.isEmpty ? "no extension" : ".\(ext)"
            return "\(path): unsupported output type (\(shown)); use .mp4, .m4v or .mov"
        case .codecNotSupportedInContainer(let codec, let container, let path):
            return "\(path): \(codec) cannot be stored in \(container) without re-encoding"
        case .outputExists(let path):
            return "\(path): already exists"
        case .outputDirectoryMissing(let path):
            return "\(path): the output folder does not exist"
        case .outputNotWritable(let path, let reason):
            return "\(path): cannot be written (\(reason))"
        case .invalidOption(let message):
            return message
        case .ffmpeg(let operation, let path, _, let message):
            return "\(path): \(operation) failed (\(message))"
        case .cancelled(let path):
            return "\(path): interrupted; nothing was written"
        }
    }

    /// A next step for the user, where there is an obvious one.
    public var hint: String? {
        switch self {
        case .outputExists: return "pass --force to overwrite it"
        case .noStream(.audio, _): return "pass a file with an audio track as AUDIO"
        case .noStream(.video, _): return "pass a file with a video track as VIDEO"
        case .streamIndexOutOfRange: return "run `muxctl probe` on the file to list its streams"
        case .codecNotSupportedInContainer(_, let container, _) where container != "mov":
            return "try a .mov output"
        default: return nil
        }
    }
}
