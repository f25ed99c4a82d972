import MediaMuxBase
import MediaMuxCore
import MediaMuxDownload
import MediaMuxPreview

/// One merge, everything it needs in one value: the inputs, the output and
/// the options. Make it once, change it in place, hand it to a task group,
/// and run it with one call, as a result or as one stream of events:
///
/// ```swift
/// var job = MergeJob(video: "clip.mov", audio: "https://example.com/song.m4a", output: "out.mp4")
/// job.options.overwrite = true
/// for try await event in engine.events(for: job) {
///     switch event {
///     case .progress(let step): print(step)          // "download: …", then "merge: …"
///     case .finished(let report): print(report.duration.seconds)
///     }
/// }
/// ```
///
/// `MuxEngine.merge(_:progress:thumbnail:)` runs it with handlers instead.
public struct MergeJob: Sendable {
    /// The file whose video stream is copied (or re-framed).
    public var video: String
    /// The file, or http(s) URL, whose audio stream becomes the soundtrack.
    public var audio: String
    /// Where the merge goes: a file (.mp4, .m4v or .mov), or a
    /// `MergeStream` that takes fragmented MP4 as it is made.
    public var output: MergeOutput
    /// Everything about the merge beyond the three names.
    public var options: MergeOptions
    /// How an `audio` URL is downloaded; unused for a file.
    public var download: DownloadOptions
    /// Thumbnails of the output as it is written, handed to the `thumbnail`
    /// handler of `MuxEngine.merge(_:progress:thumbnail:)`; nil for none.
    public var thumbnails: ThumbnailOptions?

    /// A merge job.
    ///
    /// - Parameters:
    ///   - video: The file whose video stream is copied.
    ///   - audio: The file, or http(s) URL, of the soundtrack.
    ///   - output: The file to write, or a stream (`.stream(.standardOutput)`).
    ///   - options: Everything beyond the three names.
    ///   - download: How an `audio` URL is downloaded.
    ///   - thumbnails: Thumbnails as the merge goes; nil for none.
    public init(
        video: String, audio: String, output: MergeOutput, options: MergeOptions = MergeOptions(),
        download: DownloadOptions = DownloadOptions(), thumbnails: ThumbnailOptions? = nil
    ) {
        self.video = video
        self.audio = audio
        self.output = output
        self.options = options
        self.download = download
        self.thumbnails = thumbnails
    }

    /// A merge job into the file at `output`; see `init(video:audio:output:options:download:thumbnails:)`.
    public init(
        video: String, audio: String, output: String, options: MergeOptions = MergeOptions(),
        download: DownloadOptions = DownloadOptions(), thumbnails: ThumbnailOptions? = nil
    ) {
        self.init(
            video: video, audio: audio, output: .file(output), options: options, download: download, thumbnails: thumbnails)
    }
}

extension MuxEngine {
    /// Runs a merge job: the first video stream of `job.video` and the first
    /// audio stream of `job.audio` into `job.output` by stream copy (the
    /// audio encoded AAC where the output cannot carry it, or as the options
    /// ask; a portrait video re-framed when they ask), ending where the
    /// shorter one ends unless `job.options.end` says otherwise. This is the
    /// one merge entry; `merge(video:audio:output:options:progress:)` and
    /// `events(for:)` go through it.
    ///
    /// An `audio` URL is downloaded first (through the download cache unless
    /// `job.download.useCache` is false, when it goes to a hidden file beside
    /// the output, or for a stream in the system's temporary folder, removed
    /// afterwards, merged or not). A file output is written to a file with
    /// no name in its folder and named when complete; a stream output gets
    /// fragmented MP4 as it is made.
    ///
    /// With `job.thumbnails` and a `thumbnail` handler, keyframes of the
    /// output become thumbnails as they are copied, upright as the output is
    /// shown. A thumbnail that cannot be made stops the thumbnails with a
    /// warning in the report, never the merge.
    ///
    /// - Parameters:
    ///   - job: The inputs, output and options.
    ///   - progress: Called with each report, the download's then the
    ///     merge's (see `MuxProgress`), at most ten times a second, on the
    ///     pool thread doing the work.
    ///   - thumbnail: Called with each thumbnail, upright, on the merge's
    ///     thread, when `job.thumbnails` is set.
    /// - Returns: What was written, and how the audio was downloaded.
    /// - Throws: `MediaMuxError`: `.invalidOption` for thumbnail options out
    ///   of range; for an `audio` URL, what `download(_:options:progress:)`
    ///   throws (or, without the cache, `download(_:to:overwrite:options:progress:)`),
    ///   and `.unsupportedURL` for a URL of another scheme; then what
    ///   `MergeEngine.merge(video:audio:output:options:progress:)` throws:
    ///   `.fileNotFound`, `.notAFile`, `.unreadable`, `.notMedia` or
    ///   `.damaged` for an input that cannot be read; `.noStream`,
    ///   `.streamIndexOutOfRange` or `.unknownDuration` for its streams;
    ///   `.unsupportedOutputExtension`, `.outputDirectoryMissing`,
    ///   `.outputExists` (without `options.overwrite`) or `.outputNotWritable`
    ///   for the output (for a stream, `.outputNotWritable` naming it when its
    ///   writer throws or its reader stops); `.codecNotSupportedInContainer`
    ///   for a video codec the container cannot hold or a soundtrack that
    ///   must be copied but cannot be; `.invalidOption` for merge options out
    ///   of range or contradicting each other; `.ffmpeg` when the muxer or an
    ///   encoder fails; `.cancelled` when the Task is cancelled;
    ///   `.runtimeStopped` when the runtime's thread pool has shut down.
    public func merge(
        _ job: MergeJob, progress: (@Sendable (MuxProgress) -> Void)? = nil,
        thumbnail: (@Sendable (PreviewFrame) -> Void)? = nil
    ) async throws(MediaMuxError) -> MuxReport {
        let merging: (@Sendable (MergeProgress) -> Void)? = progress.map { report in { @Sendable step in report(.merging(step)) } }
        let downloading: (@Sendable (DownloadProgress) -> Void)? = progress.map { report in
            { @Sendable step in report(.downloading(step)) }
        }
        return try await run(job, progress: merging, downloadProgress: downloading, preview: job.thumbnails == nil ? nil : thumbnail)
    }

    /// A merge job as one asynchronous sequence: its progress (the
    /// download's, then the merge's), then its report. The merge starts
    /// when iteration starts; leaving the loop early cancels it. Thumbnails
    /// are not part of the sequence (the job's `thumbnails` are checked, and
    /// none are made): run the job with `merge(_:progress:thumbnail:)` for those.
    ///
    /// - Parameter job: The inputs, output and options.
    /// - Returns: The events; iterating them throws what the merge throws.
    public func events(for job: MergeJob) -> ProgressEvents<MuxProgress, MuxReport> {
        ProgressEvents(subject: job.output.name) { report throws(MediaMuxError) in
            try await merge(job, progress: report)
        }
    }
}
