@_exported import MediaMuxBase
@_exported import MediaMuxCore
@_exported import MediaMuxDownload
@_exported import MediaMuxPreview
public import AsyncHTTPClient
public import Logging

/// MediaMux as one: merging by stream copy, audio encoded where it must be (`MediaMuxCore`), previews
/// (`MediaMuxPreview`) and downloads (`MediaMuxDownload`), composed: a merge
/// that also makes thumbnails in the same pass, a merge whose audio is a URL,
/// downloads whose bodies FFmpeg checks. A package that needs only one part
/// can depend on that product alone.
///
/// - Threads: blocking work (FFmpeg, files) runs on the runtime's thread
///   pool, never on the caller's task. Progress and preview handlers run on
///   the thread doing the work (a pool thread; for a download's progress,
///   one of the threads that write downloads), never two at once for one call: keep them short.
/// - Errors: every call throws `MediaMuxError` alone; switch on its `kind`.
///   Each call lists the codes it throws; any may also throw `.unexpected`,
///   which is a defect to report.
/// - Cancellation: every call is cancelled with its Task and then throws
///   `MediaMuxError.cancelled(path:)`. A cancelled merge or preview leaves no
///   output and no temporary file; a cancelled download keeps its bytes in the
///   cache for the next call to resume from.
public struct MuxEngine: Sendable {
    /// MediaMux's version (Semantic Versioning), as CHANGELOG.md's latest release names it.
    public static let version = "0.1.0"

    /// Probing, planning and merging (`MediaMuxCore`).
    public var merging: MergeEngine
    /// Frames, images, contact sheets and preview clips (`MediaMuxPreview`).
    public var previews: PreviewEngine
    /// Downloads and the cache (`MediaMuxDownload`), without FFmpeg's check
    /// of the bodies that this engine's own `download` calls add.
    public var downloads: DownloadEngine

    /// One runtime (thread pool and logger) for all three parts; downloads
    /// use `httpClient` when given (see `DownloadEngine.httpClient`).
    ///
    /// - Parameters:
    ///   - runtime: Where the blocking work runs and where messages go; by
    ///     default NIO's shared blocking pool and no logging.
    ///   - httpClient: A client for downloads to share; nil makes one per download.
    public init(runtime: MediaRuntime = MediaRuntime(), httpClient: HTTPClient? = nil) {
        merging = MergeEngine(runtime: runtime)
        previews = PreviewEngine(runtime: runtime)
        downloads = DownloadEngine(runtime: runtime, httpClient: httpClient)
    }

    /// This engine, with its calls' messages going to `logger`: MediaMux's
    /// warnings and FFmpeg's lines during those calls carry its metadata (a
    /// request's id, a job's name), so that a server tells whose file an
    /// FFmpeg line is about. The pool and the HTTP client stay the same;
    /// making one costs nothing, so make one per request or job.
    ///
    /// ```swift
    /// let body = try await engine.logging(to: context.logger).body(for: job)
    /// ```
    ///
    /// FFmpeg's lines carry `source: ffmpeg` and `ffmpeg.object` (the
    /// demuxer, decoder or muxer that wrote it). Lines about what MediaMux
    /// handles itself are at debug: a decoder's complaints about a damaged
    /// frame (the report's one warning names the file and how many frames
    /// were skipped), and the mov muxer's "codec frame size is not set".
    public func logging(to logger: Logger) -> MuxEngine {
        var engine = self
        engine.merging = merging.logging(to: logger)
        engine.previews = previews.logging(to: logger)
        engine.downloads = downloads.logging(to: logger)
        return engine
    }
}
