import MediaMuxBase
import MediaMuxCore
import MediaMuxDownload
import MediaMuxPreview
public import SystemPackage
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A merge's report, with how its audio was downloaded when it came from a
/// URL. It reads as the `MergeReport` it holds: `report.duration`,
/// `report.video.codec`.
@dynamicMemberLookup
public struct MuxReport: Sendable, Equatable {
    /// The merge's own report.
    public var merge: MergeReport
    /// The soundtrack's download, when the audio was an http(s) URL.
    public var audioDownload: DownloadResult?

    /// A report from its parts; for tests.
    ///
    /// - Parameters:
    ///   - merge: The merge's report.
    ///   - audioDownload: The soundtrack's download, when it was a URL.
    public init(merge: MergeReport, audioDownload: DownloadResult? = nil) {
        self.merge = merge
        self.audioDownload = audioDownload
    }

    /// A property of the merge's report, read through this one:
    /// `report.duration` is `report.merge.duration`.
    ///
    /// - Parameter keyPath: The property of `MergeReport`.
    public subscript<Value>(dynamicMember keyPath: KeyPath<MergeReport, Value>) -> Value {
        merge[keyPath: keyPath]
    }

    /// The download's warnings, then the merge's.
    public var warnings: [String] { (audioDownload?.warnings ?? []) + merge.warnings }
}

/// How far a merge whose audio is a URL has come: first its download, then
/// the merge. A merge of local files reports `.merging` alone. As a
/// `WorkProgress`, `completed` and `description` are those of the step under
/// way, so a caller that shows progress need not tell the two apart.
public enum MuxProgress: Sendable, Equatable, WorkProgress {
    /// The soundtrack's download: bytes so far, rate, time left.
    case downloading(DownloadProgress)
    /// The merge: media time written so far.
    case merging(MergeProgress)

    /// The step's own `completed`.
    public var completed: Double? {
        switch self {
        case .downloading(let step): return step.completed
        case .merging(let step): return step.completed
        }
    }

    /// "download: 4.2 MiB of 9.3 MiB, 2.1 MiB/s", then "merge: 3.200 of 10.000 s".
    public var description: String {
        switch self {
        case .downloading(let step): return "download: \(step)"
        case .merging(let step): return "merge: \(step)"
        }
    }
}

extension MuxEngine {
    /// What MediaMux sees in a media file: its container, its streams, and
    /// where each stream's presentation starts and ends.
    ///
    /// - Parameter path: The media file.
    /// - Returns: The file's facts, free of FFmpeg types.
    /// - Throws: `MediaMuxError`: `.fileNotFound`, `.notAFile` or `.unreadable`
    ///   when the file cannot be opened; `.notMedia` when it is empty or no
    ///   format MediaMux reads recognises it; `.damaged` when its container
    ///   cannot be read through; `.ffmpeg` when an FFmpeg call fails;
    ///   `.cancelled` when the Task is cancelled; `.runtimeStopped` when the
    ///   runtime's thread pool has shut down.
    public func probe(_ path: String) async throws(MediaMuxError) -> MediaInfo {
        try await merging.probe(path)
    }

    /// What MediaMux sees in a media file, named by a `FilePath`.
    ///
    /// - Parameter path: The media file.
    /// - Returns: The file's facts.
    /// - Throws: `MediaMuxError`, as `probe(_:)` with a `String` path does.
    public func probe(_ path: FilePath) async throws(MediaMuxError) -> MediaInfo {
        try await merging.probe(path)
    }

    /// Every decision a merge would make, without writing anything; see
    /// `MergeEngine.plan(video:audio:output:options:)`. Both inputs are
    /// local files: a plan does not download.
    ///
    /// - Parameters:
    ///   - video: The file whose video stream is copied.
    ///   - audio: The file whose audio stream becomes the soundtrack.
    ///   - output: The file to write: .mp4, .m4v or .mov.
    ///   - options: Everything beyond the three paths.
    /// - Returns: The plan, for `execute(_:progress:)`.
    /// - Throws: `MediaMuxError`, as `MergeEngine.plan(video:audio:output:options:)`
    ///   does: input errors for either file, output errors, stream errors,
    ///   `.codecNotSupportedInContainer`, `.invalidOption`, `.cancelled` and
    ///   `.runtimeStopped`.
    public func plan(
        video: String, audio: String, output: String, options: MergeOptions = MergeOptions()
    ) async throws(MediaMuxError) -> MergePlan {
        try await merging.plan(video: video, audio: audio, output: output, options: options)
    }

    /// Every decision a merge job would make, or the error it would fail
    /// with before writing its first byte, without writing anything: for a
    /// file output or a stream (planned as the fragmented MP4 it would
    /// stream). An `audio` URL is downloaded first, through the download
    /// cache, as the job would download it: the plan names the cached file.
    ///
    /// - Parameter job: The inputs, output and options.
    /// - Returns: The plan, for `execute(_:progress:)` (a file output).
    /// - Throws: `MediaMuxError`: for an `audio` URL, what
    ///   `download(_:options:progress:)` throws, `.unsupportedURL`, and
    ///   `.invalidOption` when `job.download.useCache` is false (a plan names
    ///   the file it reads, which the cache keeps); then what
    ///   `MergeEngine.plan(video:audio:output:options:)` throws.
    public func plan(_ job: MergeJob) async throws(MediaMuxError) -> MergePlan {
        if DownloadEngine.looksLikeURL(job.audio) && !job.download.useCache {
            throw MediaMuxError.invalidOption(
                option: "DownloadOptions.useCache",
                message: "a plan of a soundtrack URL names the downloaded file, which only the cache keeps; plan with the cache on")
        }
        let soundtrack = try await soundtrack(of: job.audio, beside: job.output, download: job.download, progress: nil)
        return try await merging.plan(video: job.video, audio: soundtrack.path, output: job.output, options: job.options)
    }

    /// Merges two files (or a file and a soundtrack URL) into a file: the
    /// everyday merge, as `muxctl merge` runs it. A thin wrapper over
    /// `merge(_:progress:thumbnail:)` with `MergeJob(video:audio:output:options:)`;
    /// make the job yourself for a stream output, download options or
    /// thumbnails.
    ///
    /// - Parameters:
    ///   - video: The file whose video stream is copied.
    ///   - audio: The file, or http(s) URL, whose audio stream becomes the soundtrack.
    ///   - output: The file to write: .mp4, .m4v or .mov.
    ///   - options: Everything beyond the three names.
    ///   - progress: Called with the download's progress, then the merge's.
    /// - Returns: What was written, and how the audio was downloaded.
    /// - Throws: `MediaMuxError`, as `merge(_:progress:thumbnail:)` does.
    public func merge(
        video: String, audio: String, output: String, options: MergeOptions = MergeOptions(),
        progress: (@Sendable (MuxProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> MuxReport {
        try await merge(MergeJob(video: video, audio: audio, output: output, options: options), progress: progress)
    }

    /// Runs a job: the download of an `audio` URL first, then the merge.
    func run(
        _ job: MergeJob, progress: (@Sendable (MergeProgress) -> Void)?,
        downloadProgress: (@Sendable (DownloadProgress) -> Void)?, preview: (@Sendable (PreviewFrame) -> Void)?
    ) async throws(MediaMuxError) -> MuxReport {
        let thumbnails = job.thumbnails ?? ThumbnailOptions()
        try thumbnails.validate()
        let soundtrack = try await soundtrack(of: job.audio, beside: job.output, download: job.download, progress: downloadProgress)
        defer { soundtrack.removeScratch() }
        let none: @Sendable (MergePlan, StreamInfo) throws -> PacketObserving? = { _, _ in nil }
        let observing = preview.map { ThumbnailPlan.observing(thumbnails, handler: $0) } ?? none
        let report = try await merging.merge(
            video: job.video, audio: soundtrack.path, output: job.output, options: job.options, progress: progress, observing: observing)
        return MuxReport(merge: soundtrack.namingTheURL(in: report, asked: job.audio), audioDownload: soundtrack.fetched)
    }

    /// A job's soundtrack as a local file: the file named, or a URL
    /// downloaded (through the cache unless `download.useCache` is false,
    /// when it goes to a scratch file beside `output`, or for a stream in
    /// the system's temporary folder, for the caller to remove).
    func soundtrack(
        of audio: String, beside output: MergeOutput, download options: DownloadOptions,
        progress: (@Sendable (DownloadProgress) -> Void)?
    ) async throws(MediaMuxError) -> Soundtrack {
        guard DownloadEngine.looksLikeURL(audio) else { return Soundtrack(path: audio, fetched: nil, scratch: nil) }
        // An ftp:// or file:// audio is a URL MediaMux cannot fetch, not a missing file.
        try DownloadEngine.checkURL(audio)
        if options.useCache {
            let fetched = try await download(audio, options: options, progress: progress)
            return Soundtrack(path: fetched.path, fetched: fetched, scratch: nil)
        }
        // The audio is only for this job: nothing of it stays, made or not.
        let beside: String
        switch output {
        case .file(let path): beside = path
        case .stream: beside = temporaryFolder() + "/soundtrack"
        }
        let path = TemporaryOutput(finalPath: beside).path + ".audio"
        var once = options
        once.keepsPartialForResume = false
        do {
            let fetched = try await download(audio, to: path, overwrite: true, options: once, progress: progress)
            return Soundtrack(path: fetched.path, fetched: fetched, scratch: path)
        } catch {
            removeFile(path)
            throw error
        }
    }

    /// A merge job's output as a body its consumer pulls (a Swift server's
    /// response body): `MergeEngine.body(video:audio:name:options:progress:)`
    /// for the job, after the download of an `audio` URL. Every error that
    /// can be known before the first byte is thrown before this returns,
    /// so a server answers it with an error status instead of a cut-off 200;
    /// the sequence throws the errors found after (see `MergeBody`).
    ///
    /// ```swift
    /// let job = MergeJob(video: video, audio: audio, output: .stream(.body(named: "response")))
    /// let body = try await engine.body(for: job)
    /// return Response(status: .ok, body: ResponseBody(asyncSequence: body))
    /// ```
    ///
    /// - Parameters:
    ///   - job: The inputs and options; its output must be a stream, whose
    ///     name the errors and the report give (a writer it has is not
    ///     called). Its thumbnails are not made.
    ///   - progress: Called with the download's progress, then the merge's.
    /// - Returns: The body; its `plan` says every decision.
    /// - Throws: `MediaMuxError`: `.invalidOption` for a file output; for an
    ///   `audio` URL, what `merge(_:progress:thumbnail:)` throws for it; then
    ///   what `MergeEngine.body(video:audio:name:options:progress:)` throws.
    public func body(for job: MergeJob, progress: (@Sendable (MuxProgress) -> Void)? = nil) async throws(MediaMuxError) -> MergeBody {
        guard case .stream(let stream) = job.output else {
            throw MediaMuxError.invalidOption(
                option: "output", message: "\(job.output.name) is a file; a body is streamed (give the job .stream(.body(named:)))")
        }
        let soundtrack = try await soundtrack(
            of: job.audio, beside: job.output, download: job.download, progress: progress.map { report in { @Sendable step in report(.downloading(step)) } })
        return try await merging.body(
            video: job.video, audio: soundtrack.path, name: stream.name, options: job.options,
            progress: progress.map { report in { @Sendable step in report(.merging(step)) } }, cleanup: soundtrack.removeScratch)
    }

    /// Carries out an existing plan; see `MergeEngine.execute(_:progress:)`.
    ///
    /// - Parameters:
    ///   - plan: The decisions to carry out.
    ///   - progress: Called with how far the merge has come, on the pool thread doing it.
    /// - Returns: What was written.
    /// - Throws: `MediaMuxError`, as `MergeEngine.execute(_:progress:)` does:
    ///   input errors for a file that cannot be opened as planned (`.damaged`
    ///   when it changed since), `.ffmpeg`, `.outputNotWritable`,
    ///   `.outputExists`, `.invalidOption` for a silent soundtrack to bring to
    ///   a loudness, `.cancelled` and `.runtimeStopped`.
    public func execute(
        _ plan: MergePlan, progress: (@Sendable (MergeProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> MergeReport {
        try await merging.execute(plan, progress: progress)
    }
}

/// A merge job's soundtrack as a local file, and what it took to get it.
struct Soundtrack: Sendable {
    /// What the merge reads.
    var path: String
    /// The download of an `audio` URL.
    var fetched: DownloadResult?
    /// A file downloaded for this merge alone, to remove once it is over.
    var scratch: String?

    @Sendable func removeScratch() {
        if let scratch { removeFile(scratch) }
    }

    /// The caller named a URL: the report says the URL, and the download's result where the bytes were.
    func namingTheURL(in report: MergeReport, asked audio: String) -> MergeReport {
        guard path != audio else { return report }
        var report = report
        report.audio?.source = audio
        report.warnings = report.warnings.map { $0.replacing(path, with: audio) }
        return report
    }
}
