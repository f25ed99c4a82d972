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
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A merge's report, with how its audio was downloaded when it came from a
/// URL. It reads as the `MergeReport` it holds: `report.duration`,
/// `report.video.codec`.
@dynamicMemberLookup
public struct MuxReport: Sendable, Equatable {
    public var merge: MergeReport
    /// The soundtrack's download, when the audio was an http(s) URL.
    public var audioDownload: DownloadResult?

    public init(merge: MergeReport, audioDownload: DownloadResult? = nil) {
        self.merge = merge
        self.audioDownload = audioDownload
    }

    public subscript<Value>(dynamicMember keyPath: KeyPath<MergeReport, Value>) -> Value {
        merge[keyPath: keyPath]
    }

    /// The download's warnings, then the merge's.
    public var warnings: [String] { (audioDownload?.warnings ?? []) + merge.warnings }
}

/// How far a merge whose audio is a URL has come: first its download, then the merge.
public enum MuxProgress: Sendable, Equatable {
    case downloading(DownloadProgress)
    case merging(MergeProgress)
}

extension MuxEngine {
    /// What MediaMux sees in a media file.
    public func probe(_ path: String) async throws(MediaMuxError) -> MediaInfo {
        try await merging.probe(path)
    }

    public func probe(_ path: FilePath) async throws(MediaMuxError) -> MediaInfo {
        try await merging.probe(path)
    }

    /// Every decision a merge would make, without writing anything.
    public func plan(
        video: String, audio: String, output: String, options: MergeOptions = MergeOptions()
    ) async throws(MediaMuxError) -> MergePlan {
        try await merging.plan(video: video, audio: audio, output: output, options: options)
    }

    /// Merges the first video stream of `video` with the first audio stream of
    /// `audio` into `output` by stream copy (the audio encoded AAC where the
    /// output cannot carry it, or as `options.audio` asks), ending where the
    /// shorter one ends.
    ///
    /// `audio` is a file, or an http(s) URL: then it is downloaded first
    /// (through the download cache unless `download.useCache` is false, when
    /// it goes to a hidden file beside `output` that is removed afterwards,
    /// merged or not), and `downloadProgress` reports the transfer.
    ///
    /// With `preview`, keyframes of the output become thumbnails as they are
    /// copied (`thumbnails` says how many and how large), upright as the
    /// output is shown; the handler runs on the merge's thread.
    public func merge(
        video: String, audio: String, output: String, options: MergeOptions = MergeOptions(),
        download: DownloadOptions = DownloadOptions(),
        thumbnails: ThumbnailOptions = ThumbnailOptions(),
        progress: (@Sendable (MergeProgress) -> Void)? = nil,
        downloadProgress: (@Sendable (DownloadProgress) -> Void)? = nil,
        preview: (@Sendable (PreviewFrame) -> Void)? = nil
    ) async throws(MediaMuxError) -> MuxReport {
        try thumbnails.validate()
        var audioPath = audio
        var fetched: DownloadResult?
        var scratch: String?
        defer { if let scratch { unlink(scratch) } }
        if DownloadEngine.looksLikeURL(audio) {
            // An ftp:// or file:// audio is a URL MediaMux cannot fetch, not a missing file.
            try DownloadEngine.checkURL(audio)
            if download.useCache {
                fetched = try await self.download(audio, options: download, progress: downloadProgress)
            } else {
                // The audio is only for this merge: nothing of it stays, merged or not.
                let path = TemporaryOutput(finalPath: output).path + ".audio"
                scratch = path
                var once = download
                once.keepsPartialForResume = false
                fetched = try await self.download(audio, to: path, overwrite: true, options: once, progress: downloadProgress)
            }
            audioPath = fetched?.path ?? audio
        }
        let report: MergeReport
        if let preview {
            report = try await merging.merge(
                video: video, audio: audioPath, output: output, options: options, progress: progress,
                observing: ThumbnailPlan.observing(thumbnails, handler: preview))
        } else {
            report = try await merging.merge(video: video, audio: audioPath, output: output, options: options, progress: progress)
        }
        return MuxReport(merge: report, audioDownload: fetched)
    }

    public func merge(
        video: FilePath, audio: FilePath, output: FilePath, options: MergeOptions = MergeOptions(),
        thumbnails: ThumbnailOptions = ThumbnailOptions(),
        progress: (@Sendable (MergeProgress) -> Void)? = nil,
        preview: (@Sendable (PreviewFrame) -> Void)? = nil
    ) async throws(MediaMuxError) -> MuxReport {
        try await merge(
            video: video.string, audio: audio.string, output: output.string, options: options, thumbnails: thumbnails,
            progress: progress, preview: preview)
    }

    /// A merge whose audio is downloaded from `audio`, in one call.
    public func merge(
        video: FilePath, audio: URL, output: FilePath, options: MergeOptions = MergeOptions(),
        download: DownloadOptions = DownloadOptions(),
        thumbnails: ThumbnailOptions = ThumbnailOptions(),
        progress: (@Sendable (MergeProgress) -> Void)? = nil,
        downloadProgress: (@Sendable (DownloadProgress) -> Void)? = nil,
        preview: (@Sendable (PreviewFrame) -> Void)? = nil
    ) async throws(MediaMuxError) -> MuxReport {
        try await merge(
            video: video.string, audio: audio.absoluteString, output: output.string, options: options, download: download,
            thumbnails: thumbnails, progress: progress, downloadProgress: downloadProgress, preview: preview)
    }

    /// The same merge (audio a file or a URL) as an asynchronous sequence:
    /// the download's progress, the merge's, then the report (see `ProgressEvents`).
    public func mergeEvents(
        video: String, audio: String, output: String, options: MergeOptions = MergeOptions(),
        download: DownloadOptions = DownloadOptions(), thumbnails: ThumbnailOptions = ThumbnailOptions()
    ) -> ProgressEvents<MuxProgress, MuxReport> {
        ProgressEvents(subject: output) { report throws(MediaMuxError) in
            try await merge(
                video: video, audio: audio, output: output, options: options, download: download, thumbnails: thumbnails,
                progress: { report(.merging($0)) }, downloadProgress: { report(.downloading($0)) })
        }
    }

    /// Carries out an existing plan.
    public func execute(
        _ plan: MergePlan, progress: (@Sendable (MergeProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> MergeReport {
        try await merging.execute(plan, progress: progress)
    }
}
