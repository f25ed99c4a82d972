import MediaMuxBase
import MediaMuxCore
import MediaMuxDownload
import MediaMuxPreview
public import SystemPackage
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
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
        let (video, audio, output, download) = (job.video, job.audio, job.output, job.download)
        let thumbnails = job.thumbnails ?? ThumbnailOptions()
        try thumbnails.validate()
        var audioPath = audio
        var fetched: DownloadResult?
        var scratch: String?
        defer { if let scratch { removeFile(scratch) } }
        if DownloadEngine.looksLikeURL(audio) {
            // An ftp:// or file:// audio is a URL MediaMux cannot fetch, not a missing file.
            try DownloadEngine.checkURL(audio)
            if download.useCache {
                fetched = try await self.download(audio, options: download, progress: downloadProgress)
            } else {
                // The audio is only for this merge: nothing of it stays, merged or not.
                let beside: String
                switch output {
                case .file(let path): beside = path
                case .stream: beside = temporaryFolder() + "/soundtrack"
                }
                let path = TemporaryOutput(finalPath: beside).path + ".audio"
                scratch = path
                var once = download
                once.keepsPartialForResume = false
                fetched = try await self.download(audio, to: path, overwrite: true, options: once, progress: downloadProgress)
            }
            audioPath = fetched?.path ?? audio
        }
        let none: @Sendable (MergePlan, StreamInfo) throws -> PacketObserving? = { _, _ in nil }
        let observing = preview.map { ThumbnailPlan.observing(thumbnails, handler: $0) } ?? none
        var report = try await merging.merge(
            video: video, audio: audioPath, output: output, options: job.options, progress: progress, observing: observing)
        if audioPath != audio {
            // The caller named a URL: the report says the URL, and the download's result where the bytes were.
            report.audio.source = audio
            report.warnings = report.warnings.map { $0.replacing(audioPath, with: audio) }
        }
        return MuxReport(merge: report, audioDownload: fetched)
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
