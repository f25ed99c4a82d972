#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Every failure MediaMux reports. Each case names the file it is about, so a
/// message can always say which input or output went wrong; `description` is
/// the one line a command-line tool prints (muxctl adds a hint of its own
/// where there is an obvious next step).
///
/// Every public call throws this type alone (typed throws), so a `catch`
/// gets it without a cast. `kind` groups the cases for callers that handle
/// them alike; `subject` is the file or URL the error is about.
public enum MediaMuxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Which kind of stream an error is about.
    public enum StreamKind: String, Sendable, Equatable {
        /// `video` for a video stream (cover art does not count), `audio` for
        /// an audio stream.
        case video, audio
    }

    /// No file at `path` (or a folder in the path is missing).
    case fileNotFound(path: String)
    /// `path` is a folder where a media file was expected.
    case notAFile(path: String)
    /// The file exists but cannot be opened or read; `reason` is the system's
    /// or FFmpeg's word for why.
    case unreadable(path: String, reason: String)
    /// The file is empty, or no format MediaMux reads recognises it.
    case notMedia(path: String, detail: String)
    /// The file is recognised but cannot be read through: truncated,
    /// corrupt, missing what its format requires, or changed since it was
    /// probed.
    case damaged(path: String, detail: String)
    /// The file has no stream of that kind (a video without pictures, an
    /// audio file without sound).
    case noStream(kind: StreamKind, path: String)
    /// A stream index asked for is not in the file, which has `available`
    /// streams of that kind.
    case streamIndexOutOfRange(kind: StreamKind, index: Int, available: Int, path: String)
    /// Neither the container nor the packets say where the stream starts and
    /// ends, so it cannot be cut or placed exactly.
    case unknownDuration(kind: StreamKind, path: String)
    /// The output's name does not end in an extension MediaMux writes
    /// (`extension` is empty when it has none).
    case unsupportedOutputExtension(path: String, extension: String)
    /// The output's container cannot hold `codec` as it is, and the stream
    /// is copied: video always is, audio when copying was asked for.
    case codecNotSupportedInContainer(codec: String, container: String, path: String)
    /// The output exists and the call was not asked to overwrite it.
    case outputExists(path: String)
    /// The folder the output should go in does not exist.
    case outputDirectoryMissing(path: String)
    /// The output cannot be created, written or moved into place; `reason`
    /// says why.
    case outputNotWritable(path: String, reason: String)
    /// An option, or a combination of options, asks for something
    /// impossible; the message names it and says what is allowed.
    case invalidOption(String)
    /// The URL cannot be downloaded: not http or https, or without a host.
    case unsupportedURL(url: String, reason: String)
    /// The server answered with this status, after any retries.
    case http(status: Int, url: String)
    /// The exchange with the server failed (no connection, a timeout, TLS,
    /// too many redirects, an answer that is not HTTP), after any retries.
    case network(url: String, reason: String)
    /// The body is larger than the limit asked for, in bytes.
    case tooLarge(url: String, limit: Int64)
    /// The body ended before the length the server announced, after any retries.
    case incomplete(url: String, received: Int64, expected: Int64)
    /// The body's SHA-256 is not the one expected (both lowercase hex).
    case checksumMismatch(url: String, expected: String, actual: String)
    /// The downloaded body is not audio (an HTML error page served with
    /// 200, say), with the Content-Type the server gave, if any.
    case notAudio(url: String, contentType: String?, detail: String)
    /// The download cache at `path` cannot be used.
    case cache(path: String, reason: String)
    /// An FFmpeg call failed at `operation`, with its error code (a negative
    /// AVERROR) and message.
    case ffmpeg(operation: String, path: String, code: Int32, message: String)
    /// The Task was cancelled, and the call has cleaned up before throwing
    /// this: no output and no temporary file (a download keeps the bytes so
    /// far for the next call to resume from).
    case cancelled(path: String)
    /// The runtime's thread pool was shut down before the work could run.
    case runtimeStopped
    /// A failure MediaMux did not expect, about `path`: a defect to report.
    case unexpected(path: String, detail: String)

    /// The one-line message: the file or URL, then what is wrong with it.
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
        case .unsupportedURL(let url, let reason):
            return "\(url): \(reason)"
        case .http(let status, let url):
            return "\(url): the server answered \(status) \(httpReason(status))"
        case .network(let url, let reason):
            return "\(url): \(reason)"
        case .tooLarge(let url, let limit):
            return "\(url): larger than the \(limit / (1 << 20)) MiB limit"
        case .incomplete(let url, let received, let expected):
            return "\(url): only \(received) of \(expected) bytes arrived"
        case .checksumMismatch(let url, let expected, let actual):
            return "\(url): SHA-256 is \(actual), expected \(expected)"
        case .notAudio(let url, let contentType, let detail):
            return "\(url): not an audio file (Content-Type \(contentType ?? "not given"); \(detail))"
        case .cache(let path, let reason):
            return "\(path): cache problem (\(reason))"
        case .ffmpeg(let operation, let path, _, let message):
            return "\(path): \(operation) failed (\(message))"
        case .cancelled(let path):
            return "\(path): interrupted"
        case .runtimeStopped:
            return "MediaMux's thread pool has been shut down"
        case .unexpected(let path, let detail):
            return "\(path): unexpected failure (\(detail))"
        }
    }

    /// What kind of failure this is, for callers that handle kinds alike.
    public enum Kind: String, Sendable, Equatable {
        /// An input file (or downloaded body) is missing, unreadable, not media, damaged or lacks what is needed.
        case input
        /// The output cannot be written there or in that form.
        case output
        /// The options (or the URL) asked for something impossible.
        case option
        /// A download failed: the network, the server, or the bytes that arrived.
        case network
        /// The Task was cancelled.
        case cancelled
        /// FFmpeg failed; `ffmpegCode` and the message say how.
        case ffmpeg
        /// MediaMux failed in a way it did not foresee: a defect.
        case unexpected
    }

    /// Which kind of failure this is.
    public var kind: Kind {
        switch self {
        case .fileNotFound, .notAFile, .unreadable, .notMedia, .damaged, .noStream, .unknownDuration, .notAudio:
            return .input
        case .unsupportedOutputExtension, .codecNotSupportedInContainer, .outputExists, .outputDirectoryMissing,
            .outputNotWritable, .cache:
            return .output
        case .streamIndexOutOfRange, .invalidOption, .unsupportedURL, .runtimeStopped:
            return .option
        case .http, .network, .tooLarge, .incomplete, .checksumMismatch:
            return .network
        case .cancelled:
            return .cancelled
        case .ffmpeg:
            return .ffmpeg
        case .unexpected:
            return .unexpected
        }
    }

    /// The file or URL the error concerns (nil for an option error that names none).
    public var subject: String? {
        switch self {
        case .fileNotFound(let path), .notAFile(let path), .unreadable(let path, _), .notMedia(let path, _),
            .damaged(let path, _), .noStream(_, let path), .streamIndexOutOfRange(_, _, _, let path),
            .unknownDuration(_, let path), .unsupportedOutputExtension(let path, _),
            .codecNotSupportedInContainer(_, _, let path), .outputExists(let path), .outputDirectoryMissing(let path),
            .outputNotWritable(let path, _), .cache(let path, _), .ffmpeg(_, let path, _, _), .cancelled(let path),
            .unexpected(let path, _):
            return path
        case .unsupportedURL(let url, _), .http(_, let url), .network(let url, _), .tooLarge(let url, _),
            .incomplete(let url, _, _), .checksumMismatch(let url, _, _), .notAudio(let url, _, _):
            return url
        case .invalidOption, .runtimeStopped:
            return nil
        }
    }

    /// FFmpeg's own error code (a negative AVERROR), for `.ffmpeg` errors.
    public var ffmpegCode: Int32? {
        if case .ffmpeg(_, _, let code, _) = self { return code }
        return nil
    }

    /// Any error from below a public call, typed: a MediaMuxError as it is,
    /// Swift's `CancellationError` as `.cancelled(subject)`, anything else
    /// (which no path is meant to throw) as `.unexpected`.
    package init(_ error: any Error, subject: String) {
        switch error {
        case let error as MediaMuxError: self = error
        case is CancellationError: self = .cancelled(path: subject)
        default: self = .unexpected(path: subject, detail: String(describing: error))
        }
    }

}

private func httpReason(_ status: Int) -> String {
    switch status {
    case 206: return "Partial Content, for a range not asked for"
    case 304: return "Not Modified, to a request that was not conditional"
    case 400: return "Bad Request"
    case 401: return "Unauthorized"
    case 403: return "Forbidden"
    case 404: return "Not Found"
    case 408: return "Request Timeout"
    case 410: return "Gone"
    case 416: return "Range Not Satisfiable"
    case 429: return "Too Many Requests"
    case 500: return "Internal Server Error"
    case 502: return "Bad Gateway"
    case 503: return "Service Unavailable"
    case 504: return "Gateway Timeout"
    default: return status >= 500 ? "(server error)" : status >= 400 ? "(client error)" : "(unexpected)"
    }
}

/// `localizedDescription` is the one-line message, as `description` is.
extension MediaMuxError: LocalizedError {
    /// The same one-line message as `description`.
    public var errorDescription: String? { description }
}
