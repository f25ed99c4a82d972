import MediaMuxCore

/// Downloads as `DownloadEngine` makes them, with FFmpeg's probe judging the
/// bodies whose first bytes do not say whether they are audio.
extension MuxEngine {
    /// Downloads `url` into the download cache (or revalidates the cached
    /// copy) and returns where the file is. Cancel the Task to stop: the bytes
    /// so far are kept, and the next call resumes from them.
    public func download(
        _ url: String, options: DownloadOptions = DownloadOptions(),
        progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws -> DownloadResult {
        try await downloads.download(url, options: options, progress: progress, probeForAudio: ffmpegAudioProbe)
    }

    /// Downloads `url` to `destination`. Through the cache unless
    /// `options.useCache` is false; then an interrupted transfer is kept as a
    /// hidden `.NAME.download` file beside `destination` and resumed from there.
    /// Nothing ever appears under `destination` until the file is complete.
    public func download(
        _ url: String, to destination: String, overwrite: Bool = false,
        options: DownloadOptions = DownloadOptions(), progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws -> DownloadResult {
        try await downloads.download(
            url, to: destination, overwrite: overwrite, options: options, progress: progress, probeForAudio: ffmpegAudioProbe)
    }

    /// The complete downloads in the cache, most recently used first.
    public func cachedDownloads(in directory: String? = nil) throws -> [CachedDownload] {
        try downloads.cachedDownloads(in: directory)
    }

    /// Empties the download cache, partial transfers included, except what a
    /// download running meanwhile holds; returns how many files were removed.
    @discardableResult
    public func clearDownloadCache(in directory: String? = nil) throws -> Int {
        try downloads.clearDownloadCache(in: directory)
    }
}

/// FFmpeg's answer for downloaded bodies the download module cannot
/// recognise alone (Ogg, Matroska and other containers).
let ffmpegAudioProbe: AudioProbe = { path, flag in
    FFmpegMessages.listen(for: MediaRuntime.silentLogger)
    return !(try Prober(cancellation: flag).probe(path: path).audioStreams.isEmpty)
}
