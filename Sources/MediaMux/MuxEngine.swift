@_exported import MediaMuxBase
@_exported import MediaMuxCore
@_exported import MediaMuxDownload
@_exported import MediaMuxPreview
public import AsyncHTTPClient

/// MediaMux as one: merging by stream copy (`MediaMuxCore`), previews
/// (`MediaMuxPreview`) and downloads (`MediaMuxDownload`), composed: a merge
/// that also makes thumbnails in the same pass, a merge whose audio is a URL,
/// downloads whose bodies FFmpeg checks. A package that needs only one part
/// can depend on that product alone.
///
/// Blocking work (FFmpeg, files) runs off the caller's task. Every call is
/// cancelled with its Task and then throws `MediaMuxError.cancelled`; a
/// cancelled merge or preview leaves no output, a cancelled download keeps its
/// bytes for the next call to resume from. Progress and preview handlers run
/// on the thread doing the work, never on the caller's task: keep them short.
public struct MuxEngine: Sendable {
    /// MediaMux's version (Semantic Versioning; "-dev" until a release).
    public static let version = "0.1.0-dev"

    public var merging: MergeEngine
    public var previews: PreviewEngine
    public var downloads: DownloadEngine

    /// One runtime (thread pool and logger) for all three parts; downloads
    /// use `httpClient` when given (see `DownloadEngine.httpClient`).
    public init(runtime: MediaRuntime = MediaRuntime(), httpClient: HTTPClient? = nil) {
        merging = MergeEngine(runtime: runtime)
        previews = PreviewEngine(runtime: runtime)
        downloads = DownloadEngine(runtime: runtime, httpClient: httpClient)
    }

    /// What MediaMux sees in a media file.
    public func probe(_ path: String) async throws -> MediaInfo {
        try await merging.probe(path)
    }

    /// Every decision a merge would make, without writing anything.
    public func plan(video: String, audio: String, output: String, options: MergeOptions = MergeOptions()) async throws -> MergePlan {
        try await merging.plan(video: video, audio: audio, output: output, options: options)
    }

    /// Merges the first video stream of `video` with the first audio stream of
    /// `audio` into `output` by stream copy, ending where the shorter one ends.
    ///
    /// With `preview`, keyframes of the output become thumbnails as they are
    /// copied (`thumbnails` says how many and how large), upright as the
    /// output is shown; the handler runs on the merge's thread.
    public func merge(
        video: String, audio: String, output: String, options: MergeOptions = MergeOptions(),
        thumbnails: ThumbnailOptions = ThumbnailOptions(),
        progress: (@Sendable (MergeProgress) -> Void)? = nil,
        preview: (@Sendable (PreviewFrame) -> Void)? = nil
    ) async throws -> MergeReport {
        try thumbnails.validate()
        guard let preview else {
            return try await merging.merge(video: video, audio: audio, output: output, options: options, progress: progress)
        }
        return try await merging.merge(
            video: video, audio: audio, output: output, options: options, progress: progress,
            observing: ThumbnailPlan.observing(thumbnails, handler: preview))
    }

    /// Carries out an existing plan.
    public func execute(_ plan: MergePlan, progress: (@Sendable (MergeProgress) -> Void)? = nil) async throws -> MergeReport {
        try await merging.execute(plan, progress: progress)
    }
}
