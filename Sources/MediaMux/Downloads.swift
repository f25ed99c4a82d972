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
    /// `progress` runs on the pool thread writing the body (never an event loop),
    /// from the calling task when the file is complete; its calls never
    /// overlap. Cancelling the Task ends the call with
    /// `MediaMuxError.cancelled(path: url)`: no cache entry is made from a
    /// part, and the bytes so far stay in the cache for the next call to
    /// resume from.
    ///
    /// - Parameters:
    ///   - url: An http or https URL.
    ///   - options: The cache, limits, retries and checks.
    ///   - progress: Called with how far the body has come.
    /// - Returns: Where the file is in the cache, and how it was obtained.
    /// - Throws: `MediaMuxError`, as `DownloadEngine.download(_:options:progress:)`
    ///   does: `.unsupportedURL`, `.http`, `.network`, `.incomplete`,
    ///   `.tooLarge`, `.checksumMismatch`, `.notAudio` (also for an Ogg or
    ///   Matroska body in which FFmpeg finds no audio), `.cache`, `.cancelled`
    ///   naming `url`, `.runtimeStopped`.
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
    ///
    /// - Parameters:
    ///   - url: An http or https URL.
    ///   - options: The cache, limits, retries and checks.
    /// - Returns: The events; iterating them throws what
    ///   `download(_:options:progress:)` throws.
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
    /// `progress` runs on the pool thread writing the body (never an event loop),
    /// from the calling task when the file is complete; its calls never
    /// overlap. Cancelling the Task ends the call with
    /// `MediaMuxError.cancelled(path: url)` and leaves nothing under
    /// `destination`; the bytes so far stay in the cache (or in the hidden
    /// partial file) for the next call to resume from.
    ///
    /// - Parameters:
    ///   - url: An http or https URL.
    ///   - destination: The file to write.
    ///   - overwrite: Replace an existing file instead of failing.
    ///   - options: The cache, limits, retries and checks.
    ///   - progress: Called with how far the body has come.
    /// - Returns: How the file was obtained, with `path` set to `destination`.
    /// - Throws: `MediaMuxError`, as `DownloadEngine.download(_:options:progress:)`
    ///   does: `.unsupportedURL`, `.http`, `.network`, `.incomplete`,
    ///   `.tooLarge`, `.checksumMismatch`, `.notAudio` (also for an Ogg or
    ///   Matroska body in which FFmpeg finds no audio), `.cache`, `.cancelled`
    ///   naming `url`, `.runtimeStopped`.
    ///   For `destination`: `.outputNotWritable` when it is a folder or cannot
    ///   be written, `.outputDirectoryMissing` when its folder does not
    ///   exist, `.outputExists` when it exists and `overwrite` is false.
    public func download(
        _ url: String, to destination: String, overwrite: Bool = false,
        options: DownloadOptions = DownloadOptions(), progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> DownloadResult {
        try await downloads.download(
            url, to: destination, overwrite: overwrite, options: options, progress: progress, probeForAudio: ffmpegAudioProbe)
    }

    /// The same, with the URL as a `URL` and the destination as a `FilePath`.
    ///
    /// - Parameters:
    ///   - url: An http or https URL.
    ///   - destination: The file to write.
    ///   - overwrite: Replace an existing file instead of failing.
    ///   - options: The cache, limits, retries and checks.
    ///   - progress: Called with how far the body has come.
    /// - Returns: How the file was obtained.
    /// - Throws: `MediaMuxError`, as the download with a `String` URL and path does.
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
    ///
    /// - Parameters:
    ///   - url: An http or https URL.
    ///   - destination: The file to write.
    ///   - overwrite: Replace an existing file instead of failing.
    ///   - options: The cache, limits, retries and checks.
    /// - Returns: The events; iterating them throws what
    ///   `download(_:to:overwrite:options:progress:)` throws.
    public func downloadEvents(
        _ url: String, to destination: String, overwrite: Bool = false, options: DownloadOptions = DownloadOptions()
    ) -> ProgressEvents<DownloadProgress, DownloadResult> {
        ProgressEvents(subject: url) { progress throws(MediaMuxError) in
            try await self.download(url, to: destination, overwrite: overwrite, options: options, progress: progress)
        }
    }

    /// The complete downloads in the cache, most recently used first.
    ///
    /// - Parameter directory: The cache folder; nil for the default
    ///   (`$XDG_CACHE_HOME/mediamux`, else `~/.cache/mediamux`).
    /// - Returns: One entry per cached file.
    /// - Throws: `MediaMuxError.cache` when the cache folder cannot be made.
    public func cachedDownloads(in directory: String? = nil) throws(MediaMuxError) -> [CachedDownload] {
        try downloads.cachedDownloads(in: directory)
    }

    /// Empties the download cache, partial transfers included, except what a
    /// download running meanwhile holds; returns how many files were removed.
    ///
    /// - Parameter directory: The cache folder; nil for the default.
    /// - Returns: How many files were removed.
    /// - Throws: `MediaMuxError.cache` when the cache folder cannot be made.
    @discardableResult
    public func clearDownloadCache(in directory: String? = nil) throws(MediaMuxError) -> Int {
        try downloads.clearDownloadCache(in: directory)
    }
}

/// FFmpeg's answer for downloaded bodies the download module cannot
/// recognise alone (Ogg, Matroska and other containers).
let ffmpegAudioProbe: AudioProbe = { path, flag in
    FFmpegMessages.listen()
    return !(try Prober(cancellation: flag).probe(path: path).audioStreams.isEmpty)
}
