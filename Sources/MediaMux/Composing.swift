import MediaMuxBase
import MediaMuxCore
import MediaMuxDownload

/// One composition to make: its clips, soundtrack and options
/// (`Composition`), where it goes, and how a soundtrack URL is downloaded.
/// What `muxctl compose` and a batch's composition jobs run.
///
/// ```swift
/// let job = CompositionJob(
///     Composition(clips: [.init("a.mp4"), .init("b.mp4", from: 2, to: 7)], soundtrack: "https://example.com/song.m4a"),
///     output: "out.mp4")
/// let report = try await engine.compose(job)
/// ```
public struct CompositionJob: Sendable {
    /// The clips, the soundtrack (a file or an http(s) URL) and the options.
    public var composition: Composition
    /// A file (.mp4, .m4v or .mov), or a stream of fragmented MP4.
    public var output: MergeOutput
    /// How a soundtrack URL is downloaded; unused for a file.
    public var download: DownloadOptions

    public init(_ composition: Composition, output: MergeOutput, download: DownloadOptions = DownloadOptions()) {
        self.composition = composition
        self.output = output
        self.download = download
    }
}

extension CompositionJob {
    /// A composition from its timeline, a JSON file with the fields of a
    /// batch manifest's composition job: `clips` (each `"FILE"`,
    /// `"FILE@IN-OUT"` or `{"file": ..., "from": ..., "to": ...}`, times in
    /// seconds or `"h:mm:ss.fff"`), `output`, and any of `soundtrack`, `cut`
    /// and a merge's options under `muxctl merge`'s names. Relative paths are
    /// taken from the file's folder.
    ///
    /// ```json
    /// {"output": "trip.mp4", "soundtrack": "song.m4a", "end": "video",
    ///  "clips": ["a.mp4@0:02-0:07.5", {"file": "b.mp4", "from": 1.5}, "c.mp4"]}
    /// ```
    ///
    /// - Parameter path: The timeline.
    /// - Returns: The job, its output a file.
    /// - Throws: `fileNotFound`, `notAFile` or `unreadable` when the file
    ///   cannot be read; `invalidOption` naming the file and the field for
    ///   anything wrong in it (`trip.json: clips[1].from: must be a time`).
    public static func load(timeline path: String) throws(MediaMuxError) -> CompositionJob {
        let value = try BatchManifest.json(BatchManifest.readFile(path), path: path, option: "timeline")
        var fields = JobFields(file: path, folder: BatchManifest.folder(of: path))
        let (composition, output) = try fields.timeline(from: value)
        return CompositionJob(composition, output: .file(output))
    }
}

extension MuxEngine {
    /// Makes a composition (see `MergeEngine.compose(_:output:progress:)`),
    /// its soundtrack downloaded first when it is a URL, as a merge's is.
    ///
    /// - Parameters:
    ///   - job: The composition, its output and how a URL is downloaded.
    ///   - progress: Called with the download's progress, then the composition's.
    /// - Returns: What was written, and how the soundtrack was downloaded.
    /// - Throws: `MediaMuxError`: for a soundtrack URL, what
    ///   `merge(_:progress:thumbnail:)` throws for one; then what
    ///   `MergeEngine.compose(_:output:progress:)` throws.
    public func compose(_ job: CompositionJob, progress: (@Sendable (MuxProgress) -> Void)? = nil) async throws(MediaMuxError) -> MuxReport {
        var composition = job.composition
        guard let asked = composition.soundtrack else {
            let report = try await merging.compose(
                composition, output: job.output, progress: progress.map { report in { @Sendable step in report(.merging(step)) } })
            return MuxReport(merge: report, audioDownload: nil)
        }
        let soundtrack = try await soundtrack(
            of: asked, beside: job.output, download: job.download,
            progress: progress.map { report in { @Sendable step in report(.downloading(step)) } })
        defer { soundtrack.removeScratch() }
        composition.soundtrack = soundtrack.path
        let report = try await merging.compose(
            composition, output: job.output, progress: progress.map { report in { @Sendable step in report(.merging(step)) } })
        return MuxReport(merge: soundtrack.namingTheURL(in: report, asked: asked), audioDownload: soundtrack.fetched)
    }
}
