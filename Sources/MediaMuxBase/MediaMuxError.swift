#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Every failure MediaMux reports: a struct with a `code`, so that later
/// releases can add codes without breaking a caller's `switch`. Each error
/// names the file or URL it is about (`subject`), so a message can always say
/// which input or output went wrong; `description` is the one line a
/// command-line tool prints (muxctl adds a hint of its own where there is an
/// obvious next step).
///
/// Every public call throws this type alone (typed throws), so a `catch`
/// gets it without a cast. Switch on `kind` (a closed set: whose failure it
/// is) to decide what to do, or compare `code` with the codes you handle:
///
/// ```swift
/// do {
///     try await engine.merge(video: video, audio: audio, output: output)
/// } catch let error where error.code == .outputExists {
///     // ask before overwriting
/// } catch {
///     switch error.kind {
///     case .input: ...
///     default: ...
///     }
/// }
/// ```
///
/// The static functions named like the codes (`.fileNotFound(path:)`) make
/// one, for a test's expected error or a caller's own.
public struct MediaMuxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Which kind of stream an error is about.
    public enum StreamKind: String, Sendable, Equatable {
        /// `video` for a video stream (cover art does not count), `audio` for
        /// an audio stream.
        case video, audio
    }

    /// What went wrong, and with it the details each code carries. Package
    /// code matches on it; callers outside see `code` and the properties.
    package enum Failure: Sendable, Equatable {
        // One case for each code; the public factories below say what each means.
        case fileNotFound(path: String)
        case notAFile(path: String)
        case unreadable(path: String, reason: String)
        case notMedia(path: String, detail: String)
        case damaged(path: String, detail: String)
        case noStream(kind: StreamKind, path: String)
        case streamIndexOutOfRange(kind: StreamKind, index: Int, available: Int, path: String)
        case unknownDuration(kind: StreamKind, path: String)
        case unsupportedOutputExtension(path: String, extension: String, accepted: [String])
        case codecNotSupportedInContainer(codec: String, container: String, path: String)
        case outputExists(path: String)
        case outputDirectoryMissing(path: String)
        case outputNotWritable(path: String, reason: String)
        case invalidOption(option: String, message: String)
        case unsupportedURL(url: String, reason: String)
        case http(status: Int, url: String)
        case network(url: String, reason: String)
        case tooLarge(url: String, limit: Int64)
        case incomplete(url: String, received: Int64, expected: Int64)
        case checksumMismatch(url: String, expected: String, actual: String)
        case notAudio(url: String, contentType: String?, detail: String)
        case cache(path: String, reason: String)
        case ffmpeg(operation: String, path: String, code: Int32, message: String)
        case cancelled(path: String)
        case runtimeStopped
        case unexpected(path: String, detail: String)
    }

    /// What went wrong, with its details.
    package let failure: Failure

    /// Where it went wrong, beyond the file: which clip, at what time.
    public private(set) var context = Context()

    /// The option an `.invalidOption` error is about, in the library's terms
    /// (`videoQuality`, `shard`, `jobs[2].rotate`); nil for other codes.
    public let option: String?
    /// The kind of stream a `.noStream`, `.streamIndexOutOfRange` or
    /// `.unknownDuration` error is about; nil for other codes.
    public let streamKind: StreamKind?
    /// The server's status for an `.http` error; nil for other codes.
    public let httpStatus: Int?
    /// FFmpeg's own error code (a negative AVERROR), for `.ffmpeg` errors.
    public let ffmpegCode: Int32?

    // The details are stored, taken from `failure` once, rather than
    // computed on each read: Swift 6.3.1's optimizer crashed ("Found
    // outside of lifetime use?!", in CopyPropagation) compiling a caller's
    // async code that read a computed one, inlined across modules, and
    // went on with the optional (`error.ffmpegCode ?? 0`,
    // `error.httpStatus.map(String.init)`). A stored one is a plain load.
    // Examples/Sources/error-properties, built in release by CI, reads them all.
    package init(_ failure: Failure) {
        self.failure = failure
        switch failure {
        case .invalidOption(let option, _): self.option = option
        default: option = nil
        }
        switch failure {
        case .noStream(let kind, _), .streamIndexOutOfRange(let kind, _, _, _), .unknownDuration(let kind, _): streamKind = kind
        default: streamKind = nil
        }
        switch failure {
        case .http(let status, _): httpStatus = status
        default: httpStatus = nil
        }
        switch failure {
        case .ffmpeg(_, _, let code, _): ffmpegCode = code
        default: ffmpegCode = nil
        }
    }

    /// Where in a job a failure happened, beyond the file the error names:
    /// which clip of a composition, and at what time in it. Empty unless the
    /// code that threw knew more than the file.
    public struct Context: Sendable, Equatable {
        /// A clip: its place in the job's list (counting from 0) and its file.
        public struct Clip: Sendable, Equatable {
            public var index: Int
            public var file: String

            public init(index: Int, file: String) {
                self.index = index
                self.file = file
            }
        }

        /// The clip the failure is about, when the job has clips.
        public var clip: Clip?
        /// The time in the input the failure is about, when known.
        public var time: MediaTime?

        public init(clip: Clip? = nil, time: MediaTime? = nil) {
            self.clip = clip
            self.time = time
        }

        /// "clips[2] (b.mp4), 3.200 s: ": what the message starts with; empty when nothing is known.
        fileprivate func prefix(subject: String?) -> String {
            var parts: [String] = []
            if let clip { parts.append(clip.file == subject ? "clips[\(clip.index)]" : "clips[\(clip.index)] (\(clip.file))") }
            if let time { parts.append("\(time.secondsText()) s") }
            return parts.isEmpty ? "" : parts.joined(separator: ", ") + ": "
        }
    }

    /// This error, about the clip at `index` of the job (whose file is `file`).
    package func inClip(_ index: Int, file: String) -> MediaMuxError {
        var error = self
        error.context.clip = Context.Clip(index: index, file: file)
        return error
    }

    /// This error, about the moment `time` of its input.
    package func at(_ time: MediaTime) -> MediaMuxError {
        var error = self
        error.context.time = time
        return error
    }

    /// What went wrong, as a name programs compare (`error.code == .outputExists`).
    /// Later releases may add codes, so a `switch` over codes needs a
    /// `default`; each code belongs to one `kind`, which is a closed set.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, as the static property is named (`fileNotFound`);
        /// `muxctl batch --json` carries it as a failed job's `errorCode`.
        public let name: String
        /// Whose failure an error with this code is.
        public let kind: Kind

        private init(_ name: String, _ kind: Kind) {
            self.name = name
            self.kind = kind
        }

        /// The name.
        public var description: String { name }

        /// See `MediaMuxError.fileNotFound`.
        public static let fileNotFound = Code("fileNotFound", .input)
        /// See `MediaMuxError.notAFile`.
        public static let notAFile = Code("notAFile", .input)
        /// See `MediaMuxError.unreadable`.
        public static let unreadable = Code("unreadable", .input)
        /// See `MediaMuxError.notMedia`.
        public static let notMedia = Code("notMedia", .input)
        /// See `MediaMuxError.damaged`.
        public static let damaged = Code("damaged", .input)
        /// See `MediaMuxError.noStream`.
        public static let noStream = Code("noStream", .input)
        /// See `MediaMuxError.streamIndexOutOfRange`.
        public static let streamIndexOutOfRange = Code("streamIndexOutOfRange", .option)
        /// See `MediaMuxError.unknownDuration`.
        public static let unknownDuration = Code("unknownDuration", .input)
        /// See `MediaMuxError.unsupportedOutputExtension`.
        public static let unsupportedOutputExtension = Code("unsupportedOutputExtension", .output)
        /// See `MediaMuxError.codecNotSupportedInContainer`.
        public static let codecNotSupportedInContainer = Code("codecNotSupportedInContainer", .output)
        /// See `MediaMuxError.outputExists`.
        public static let outputExists = Code("outputExists", .output)
        /// See `MediaMuxError.outputDirectoryMissing`.
        public static let outputDirectoryMissing = Code("outputDirectoryMissing", .output)
        /// See `MediaMuxError.outputNotWritable`.
        public static let outputNotWritable = Code("outputNotWritable", .output)
        /// See `MediaMuxError.invalidOption`.
        public static let invalidOption = Code("invalidOption", .option)
        /// See `MediaMuxError.unsupportedURL`.
        public static let unsupportedURL = Code("unsupportedURL", .option)
        /// See `MediaMuxError.http`.
        public static let http = Code("http", .network)
        /// See `MediaMuxError.network`.
        public static let network = Code("network", .network)
        /// See `MediaMuxError.tooLarge`.
        public static let tooLarge = Code("tooLarge", .network)
        /// See `MediaMuxError.incomplete`.
        public static let incomplete = Code("incomplete", .network)
        /// See `MediaMuxError.checksumMismatch`.
        public static let checksumMismatch = Code("checksumMismatch", .network)
        /// See `MediaMuxError.notAudio`.
        public static let notAudio = Code("notAudio", .input)
        /// See `MediaMuxError.cache`.
        public static let cache = Code("cache", .output)
        /// See `MediaMuxError.ffmpeg`.
        public static let ffmpeg = Code("ffmpeg", .ffmpeg)
        /// See `MediaMuxError.cancelled`.
        public static let cancelled = Code("cancelled", .cancelled)
        /// See `MediaMuxError.runtimeStopped`.
        public static let runtimeStopped = Code("runtimeStopped", .option)
        /// See `MediaMuxError.unexpected`.
        public static let unexpected = Code("unexpected", .unexpected)
    }

    /// This error's code.
    public var code: Code { spelling.code }

    /// No file at `path` (or a folder in the path is missing).
    public static func fileNotFound(path: String) -> MediaMuxError {
        MediaMuxError(.fileNotFound(path: path))
    }
    /// `path` is a folder where a media file was expected.
    public static func notAFile(path: String) -> MediaMuxError {
        MediaMuxError(.notAFile(path: path))
    }
    /// The file exists but cannot be opened or read; `reason` is the system's
    /// or FFmpeg's word for why.
    public static func unreadable(path: String, reason: String) -> MediaMuxError {
        MediaMuxError(.unreadable(path: path, reason: reason))
    }
    /// The file is empty, or no format MediaMux reads recognises it.
    public static func notMedia(path: String, detail: String) -> MediaMuxError {
        MediaMuxError(.notMedia(path: path, detail: detail))
    }
    /// The file is recognised but cannot be read through: truncated,
    /// corrupt, missing what its format requires, or changed since it was
    /// probed.
    public static func damaged(path: String, detail: String) -> MediaMuxError {
        MediaMuxError(.damaged(path: path, detail: detail))
    }
    /// The file has no stream of that kind (a video without pictures, an
    /// audio file without sound).
    public static func noStream(kind: StreamKind, path: String) -> MediaMuxError {
        MediaMuxError(.noStream(kind: kind, path: path))
    }
    /// A stream index asked for is not in the file, which has `available`
    /// streams of that kind.
    public static func streamIndexOutOfRange(kind: StreamKind, index: Int, available: Int, path: String) -> MediaMuxError {
        MediaMuxError(.streamIndexOutOfRange(kind: kind, index: index, available: available, path: path))
    }
    /// Neither the container nor the packets say where the stream starts and
    /// ends, so it cannot be cut or placed exactly.
    public static func unknownDuration(kind: StreamKind, path: String) -> MediaMuxError {
        MediaMuxError(.unknownDuration(kind: kind, path: path))
    }
    /// The output's name does not end in an extension MediaMux writes
    /// (`extension` is empty when it has none); `accepted` lists those it
    /// writes, without dots.
    public static func unsupportedOutputExtension(path: String, extension ext: String, accepted: [String]) -> MediaMuxError {
        MediaMuxError(.unsupportedOutputExtension(path: path, extension: ext, accepted: accepted))
    }
    /// The output's container cannot hold `codec` as it is, and the stream
    /// is copied: video always is, audio when copying was asked for.
    public static func codecNotSupportedInContainer(codec: String, container: String, path: String) -> MediaMuxError {
        MediaMuxError(.codecNotSupportedInContainer(codec: codec, container: container, path: path))
    }
    /// The output exists and the call was not asked to overwrite it.
    public static func outputExists(path: String) -> MediaMuxError {
        MediaMuxError(.outputExists(path: path))
    }
    /// The folder the output should go in does not exist.
    public static func outputDirectoryMissing(path: String) -> MediaMuxError {
        MediaMuxError(.outputDirectoryMissing(path: path))
    }
    /// The output cannot be created, written or moved into place; `reason`
    /// says why.
    public static func outputNotWritable(path: String, reason: String) -> MediaMuxError {
        MediaMuxError(.outputNotWritable(path: path, reason: reason))
    }
    /// An option, or a combination of options, asks for something
    /// impossible: `option` is the option's name in the library's terms
    /// (`videoQuality`, `shard`, a manifest's `jobs[2].rotate`), and the
    /// message names it and says what is allowed.
    public static func invalidOption(option: String, message: String) -> MediaMuxError {
        MediaMuxError(.invalidOption(option: option, message: message))
    }
    /// The URL cannot be downloaded: not http or https, or without a host.
    public static func unsupportedURL(url: String, reason: String) -> MediaMuxError {
        MediaMuxError(.unsupportedURL(url: url, reason: reason))
    }
    /// The server answered with this status, after any retries.
    public static func http(status: Int, url: String) -> MediaMuxError {
        MediaMuxError(.http(status: status, url: url))
    }
    /// The exchange with the server failed (no connection, a timeout, TLS,
    /// too many redirects, an answer that is not HTTP), after any retries.
    public static func network(url: String, reason: String) -> MediaMuxError {
        MediaMuxError(.network(url: url, reason: reason))
    }
    /// The body is larger than the limit asked for, in bytes.
    public static func tooLarge(url: String, limit: Int64) -> MediaMuxError {
        MediaMuxError(.tooLarge(url: url, limit: limit))
    }
    /// The body ended before the length the server announced, after any retries.
    public static func incomplete(url: String, received: Int64, expected: Int64) -> MediaMuxError {
        MediaMuxError(.incomplete(url: url, received: received, expected: expected))
    }
    /// The body's SHA-256 is not the one expected (both lowercase hex).
    public static func checksumMismatch(url: String, expected: String, actual: String) -> MediaMuxError {
        MediaMuxError(.checksumMismatch(url: url, expected: expected, actual: actual))
    }
    /// The downloaded body is not audio (an HTML error page served with
    /// 200, say), with the Content-Type the server gave, if any.
    public static func notAudio(url: String, contentType: String?, detail: String) -> MediaMuxError {
        MediaMuxError(.notAudio(url: url, contentType: contentType, detail: detail))
    }
    /// The download cache at `path` cannot be used.
    public static func cache(path: String, reason: String) -> MediaMuxError {
        MediaMuxError(.cache(path: path, reason: reason))
    }
    /// An FFmpeg call failed at `operation`, with its error code (a negative
    /// AVERROR) and message.
    public static func ffmpeg(operation: String, path: String, code: Int32, message: String) -> MediaMuxError {
        MediaMuxError(.ffmpeg(operation: operation, path: path, code: code, message: message))
    }
    /// The Task was cancelled, and the call has cleaned up before throwing
    /// this: no output and no temporary file (a download keeps the bytes so
    /// far for the next call to resume from).
    public static func cancelled(path: String) -> MediaMuxError {
        MediaMuxError(.cancelled(path: path))
    }
    /// The runtime's thread pool was shut down before the work could run.
    public static var runtimeStopped: MediaMuxError { MediaMuxError(.runtimeStopped) }
    /// A failure MediaMux did not expect, about `path`: a defect to report.
    public static func unexpected(path: String, detail: String) -> MediaMuxError {
        MediaMuxError(.unexpected(path: path, detail: detail))
    }

    /// The one-line message: where (the clip and time, when known), the
    /// file or URL, then what is wrong with it.
    public var description: String {
        let spelled = spelling
        let message = spelled.subject.map { "\($0): \(spelled.problem)" } ?? spelled.problem
        return context.prefix(subject: spelled.subject) + message
    }

    /// Each failure spelled once: its code, the file or URL it is about
    /// (nil for an option error that names none), and what is wrong.
    private var spelling: (code: Code, subject: String?, problem: String) {
        switch failure {
        case .fileNotFound(let path):
            return (.fileNotFound, path, "no such file")
        case .notAFile(let path):
            return (.notAFile, path, "is a directory, not a media file")
        case .unreadable(let path, let reason):
            return (.unreadable, path, "cannot be read (\(reason))")
        case .notMedia(let path, let detail):
            return (.notMedia, path, "not a media file MediaMux can read (\(detail))")
        case .damaged(let path, let detail):
            return (.damaged, path, "damaged or truncated media (\(detail))")
        case .noStream(let kind, let path):
            return (.noStream, path, "has no \(kind.rawValue) stream")
        case .streamIndexOutOfRange(let kind, let index, let available, let path):
            return (.streamIndexOutOfRange, path, "there is no \(kind.rawValue) stream \(index); the file has \(available)")
        case .unknownDuration(let kind, let path):
            return (.unknownDuration, path, "the \(kind.rawValue) stream has no known duration")
        case .unsupportedOutputExtension(let path, let ext, let accepted):
            let shown = ext.isEmpty ? "no extension" : ".\(ext)"
            return (.unsupportedOutputExtension, path, "unsupported output type (\(shown)); use \(spokenList(accepted.map { "." + $0 }, "or"))")
        case .codecNotSupportedInContainer(let codec, let container, let path):
            return (.codecNotSupportedInContainer, path, "\(codec) cannot be stored in \(container) without re-encoding")
        case .outputExists(let path):
            return (.outputExists, path, "already exists")
        case .outputDirectoryMissing(let path):
            return (.outputDirectoryMissing, path, "the output folder does not exist")
        case .outputNotWritable(let path, let reason):
            return (.outputNotWritable, path, "cannot be written (\(reason))")
        case .invalidOption(_, let message):
            // The message names the option itself (and the file, where one is at fault).
            return (.invalidOption, nil, message)
        case .unsupportedURL(let url, let reason):
            return (.unsupportedURL, url, reason)
        case .http(let status, let url):
            return (.http, url, "the server answered \(status) \(httpReason(status))")
        case .network(let url, let reason):
            return (.network, url, reason)
        case .tooLarge(let url, let limit):
            return (.tooLarge, url, "larger than the \(limit / (1 << 20)) MiB limit")
        case .incomplete(let url, let received, let expected):
            return (.incomplete, url, "only \(received) of \(expected) bytes arrived")
        case .checksumMismatch(let url, let expected, let actual):
            return (.checksumMismatch, url, "SHA-256 is \(actual), expected \(expected)")
        case .notAudio(let url, let contentType, let detail):
            return (.notAudio, url, "not an audio file (Content-Type \(contentType ?? "not given"); \(detail))")
        case .cache(let path, let reason):
            return (.cache, path, "cache problem (\(reason))")
        case .ffmpeg(let operation, let path, _, let message):
            return (.ffmpeg, path, "\(operation) failed (\(message))")
        case .cancelled(let path):
            return (.cancelled, path, "interrupted")
        case .runtimeStopped:
            return (.runtimeStopped, nil, "MediaMux's thread pool has been shut down")
        case .unexpected(let path, let detail):
            return (.unexpected, path, "unexpected failure (\(detail))")
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

    /// Which kind of failure this is: whose failure, which decides what a
    /// program does next (muxctl's exit status follows it alone).
    public var kind: Kind { code.kind }

    /// The file or URL the error concerns (nil for an option error that names none).
    public var subject: String? { spelling.subject }


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
