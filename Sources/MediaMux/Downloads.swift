import MediaMuxCore
public import SystemPackage
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Downloads as `DownloadEngine` makes them, with FFmpeg's probe judging the
/// bodies whose first bytes do not say whether they are audio.
extension MuxEngine {
    /// Downloads `url` into the download cache (or revalidates the cached
    /// copy) and returns where the file is.
    ///
    /// `progress` runs on the NIO event loop thread reading the body (the
    /// download's own, or one of the engine's HTTP client's), and once more
    /// from the calling task when the file is complete; its calls never
    /// overlap. Cancelling the Task ends the call with
    /// `MediaMuxError.cancelled(path: url)`: no cache entry is made from a
    /// part, and the bytes so far stay in the cache for the next call to
    /// resume from.
    public func download(
        _ url: String, options: DownloadOptions = DownloadOptions(),
        progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> DownloadResult {
        try await downloads.download(url, options: options, progress: progress, probeForAudio: ffmpegAudioProbe)
    }

    /// `download(_:options:progress:)` as an asynchronous sequence: its
    /// progress, then its result as the last event. The download starts when
    /// iteration starts; ending the loop early cancels it as cancelling its
    /// Task would (the bytes so far stay in the cache). Events are delivered
    /// to the iterating task, one at a time.
    public func downloadEvents(
        _ url: String, options: DownloadOptions = DownloadOptions()
    ) -> ProgressEvents<DownloadProgress, DownloadResult> {
        ProgressEvents(subject: url) { progress throws(MediaMuxError) in
            try await self.download(url, options: options, progress: progress)
        }
    }

    /// Downloads `url` to `destination`. Through the cache unless
    /// `options.useCache` is false; then an interrupted transfer is kept as a
    /// hidden `.NAME.download` file beside `destination` and resumed from there.
    /// Nothing ever appears under `destination` until the file is complete.
    ///
    /// `progress` runs on the NIO event loop thread reading the body (the
    /// download's own, or one of the engine's HTTP client's), and once more
    /// from the calling task when the file is complete; its calls never
    /// overlap. Cancelling the Task ends the call with
    /// `MediaMuxError.cancelled(path: url)` and leaves nothing under
    /// `destination`; the bytes so far stay in the cache (or in the hidden
    /// partial file) for the next call to resume from.
    public func download(
        _ url: String, to destination: String, overwrite: Bool = false,
        options: DownloadOptions = DownloadOptions(), progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> DownloadResult {
        try await downloads.download(
            url, to: destination, overwrite: overwrite, options: options, progress: progress, probeForAudio: ffmpegAudioProbe)
    }

    /// The same, with the URL as a `URL` and the destination as a `FilePath`.
    public func download(
        _ url: URL, to destination: FilePath, overwrite: Bool = false,
        options: DownloadOptions = DownloadOptions(), progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> DownloadResult {
        try await download(url.absoluteString, to: destination.string, overwrite: overwrite, options: options, progress: progress)
    }

    /// `download(_:to:overwrite:options:progress:)` as an asynchronous
    /// sequence: its progress, then its result as the last event. The
    /// download starts when iteration starts; ending the loop early cancels
    /// it as cancelling its Task would (nothing appears under `destination`).
    /// Events are delivered to the iterating task, one at a time.
    public func downloadEvents(
        _ url: String, to destination: String, overwrite: Bool = false, options: DownloadOptions = DownloadOptions()
    ) -> ProgressEvents<DownloadProgress, DownloadResult> {
        ProgressEvents(subject: url) { progress throws(MediaMuxError) in
            try await self.download(url, to: destination, overwrite: overwrite, options: options, progress: progress)
        }
    }

    /// The complete downloads in the cache, most recently used first.
    public func cachedDownloads(in directory: String? = nil) throws(MediaMuxError) -> [CachedDownload] {
        try downloads.cachedDownloads(in: directory)
    }

    /// Empties the download cache, partial transfers included, except what a
    /// download running meanwhile holds; returns how many files were removed.
    @discardableResult
    public func clearDownloadCache(in directory: String? = nil) throws(MediaMuxError) -> Int {
        try downloads.clearDownloadCache(in: directory)
    }
}

/// FFmpeg's answer for downloaded bodies the download module cannot
/// recognise alone (Ogg, Matroska and other containers).
let ffmpegAudioProbe: AudioProbe = { path, flag in
    FFmpegMessages.listen(for: MediaRuntime.silentLogger)
    return !(try Prober(cancellation: flag).probe(path: path).audioStreams.isEmpty)
}
