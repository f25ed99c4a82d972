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
    /// Runs a merge job: its soundtrack downloaded first when it is a URL,
    /// then the merge, with thumbnails as it goes when the job asks for them.
    ///
    /// - Parameters:
    ///   - job: The inputs, output and options.
    ///   - progress: Called with each report, the download's then the
    ///     merge's (see `MuxProgress`), at most ten times a second, on the
    ///     pool thread doing the work.
    ///   - thumbnail: Called with each thumbnail, upright, on the merge's
    ///     thread, when `job.thumbnails` is set.
    /// - Returns: What was written, and how the audio was downloaded.
    /// - Throws: `MediaMuxError`, as
    ///   `merge(video:audio:output:options:download:thumbnails:progress:downloadProgress:preview:)` does.
    public func merge(
        _ job: MergeJob, progress: (@Sendable (MuxProgress) -> Void)? = nil,
        thumbnail: (@Sendable (PreviewFrame) -> Void)? = nil
    ) async throws(MediaMuxError) -> MuxReport {
        let merging: (@Sendable (MergeProgress) -> Void)? = progress.map { report in { @Sendable step in report(.merging(step)) } }
        let downloading: (@Sendable (DownloadProgress) -> Void)? = progress.map { report in
            { @Sendable step in report(.downloading(step)) }
        }
        return try await merge(
            video: job.video, audio: job.audio, output: job.output, options: job.options, download: job.download,
            thumbnails: job.thumbnails ?? ThumbnailOptions(), progress: merging, downloadProgress: downloading,
            preview: job.thumbnails == nil ? nil : thumbnail)
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
