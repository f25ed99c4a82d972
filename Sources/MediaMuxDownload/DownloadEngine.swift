import MediaMuxBase
public import AsyncHTTPClient

/// Downloads over HTTP(S): resumed where a transfer broke off, kept in a
/// cache that revalidates with the server, checked to be audio. Links no
/// FFmpeg: a body's audio check reads MP4 boxes and the first bytes of the
/// common audio files, and takes Ogg and Matroska bodies as they are
/// (`MuxEngine.download` asks FFmpeg about those). Cancel the Task to stop:
/// the call throws `MediaMuxError.cancelled` and keeps the bytes so far for
/// the next call to resume from. Progress handlers run on the event loop or
/// pool thread doing the work.
public struct DownloadEngine: Sendable {
    /// Where hashing and file copies run.
    public var runtime: MediaRuntime
    /// The caller's HTTP client, shared with the rest of a server; its own
    /// redirect and timeout settings then apply instead of `DownloadOptions`'.
    /// Nil: each download makes a client of its own (on an event loop of its
    /// own) and shuts it down when done.
    public var httpClient: HTTPClient?

    public init(runtime: MediaRuntime = MediaRuntime(), httpClient: HTTPClient? = nil) {
        self.runtime = runtime
        self.httpClient = httpClient
    }

    /// Downloads `url` into the download cache (or revalidates the cached
    /// copy) and returns where the file is. Cancel the Task to stop: the bytes
    /// so far are kept, and the next call resumes from them.
    public func download(
        _ url: String, options: DownloadOptions = DownloadOptions(),
        progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws -> DownloadResult {
        try await download(url, options: options, progress: progress, probeForAudio: nil)
    }

    /// The same, with a probe for bodies the first bytes do not identify.
    package func download(
        _ url: String, options: DownloadOptions, progress: (@Sendable (DownloadProgress) -> Void)?, probeForAudio: AudioProbe?
    ) async throws -> DownloadResult {
        try Self.checkURL(url)
        let cache = try DownloadCache(directory: DownloadCache.resolveDirectory(options.cacheDirectory))
        return try await reportingCancellation(of: url) {
            try await Downloader(url: url, options: options, progress: progress, probeForAudio: probeForAudio, runtime: runtime, client: httpClient).intoCache(cache)
        }
    }

    /// Downloads `url` to `destination`. Through the cache unless
    /// `options.useCache` is false; then an interrupted transfer is kept as a
    /// hidden `.NAME.download` file beside `destination` and resumed from there.
    /// Nothing ever appears under `destination` until the file is complete.
    public func download(
        _ url: String, to destination: String, overwrite: Bool = false,
        options: DownloadOptions = DownloadOptions(), progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws -> DownloadResult {
        try await download(url, to: destination, overwrite: overwrite, options: options, progress: progress, probeForAudio: nil)
    }

    /// The same, with a probe for bodies the first bytes do not identify.
    package func download(
        _ url: String, to destination: String, overwrite: Bool, options: DownloadOptions,
        progress: (@Sendable (DownloadProgress) -> Void)?, probeForAudio: AudioProbe?
    ) async throws -> DownloadResult {
        try Self.checkURL(url)
        let facts = outputFacts(output: destination, inputs: [])
        if facts.isFolder || destination.hasSuffix("/") {
            throw MediaMuxError.outputNotWritable(path: destination, reason: "it is a folder; give a file name")
        }
        guard facts.folderExists else { throw MediaMuxError.outputDirectoryMissing(path: destination) }
        if facts.exists && !overwrite { throw MediaMuxError.outputExists(path: destination) }
        let downloader = Downloader(url: url, options: options, progress: progress, probeForAudio: probeForAudio, runtime: runtime, client: httpClient)
        return try await reportingCancellation(of: url) {
            if options.useCache {
                let cache = try DownloadCache(directory: DownloadCache.resolveDirectory(options.cacheDirectory))
                var result = try await downloader.intoCache(cache)
                let cached = result.path
                try await runBlocking(on: runtime.threadPool) { _ in try shareFile(cached, to: destination, overwrite: overwrite) }
                result.path = destination
                return result
            }
            return try await downloader.intoFile(destination, overwrite: overwrite)
        }
    }

    /// Cancellation, wherever it lands (a retry wait, the cache lock), is the
    /// library's own error, like every other.
    private func reportingCancellation<T>(of url: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch is CancellationError {
            throw MediaMuxError.cancelled(path: url)
        }
    }

    /// The complete downloads in the cache, most recently used first.
    public func cachedDownloads(in directory: String? = nil) throws -> [CachedDownload] {
        let cache = try DownloadCache(directory: DownloadCache.resolveDirectory(directory))
        return cache.entries().map { entry in
            CachedDownload(
                url: entry.record.url, path: cache.path(entry.record.file), bytes: entry.record.bytes,
                contentType: entry.record.validators.contentType, storedAt: entry.record.storedAt, lastUsedAt: entry.record.lastUsedAt)
        }
    }

    /// Empties the download cache, partial transfers included, except what a
    /// download running meanwhile holds; returns how many files were removed.
    @discardableResult
    public func clearDownloadCache(in directory: String? = nil) throws -> Int {
        try DownloadCache(directory: DownloadCache.resolveDirectory(directory)).clear()
    }

    /// Is this something `download` takes? (For front ends deciding between a path and a URL.)
    package static func isDownloadURL(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("http://") || lower.hasPrefix("https://")
    }

    private static func checkURL(_ url: String) throws {
        guard isDownloadURL(url) else {
            let scheme = url.split(separator: ":", maxSplits: 1).first.map(String.init) ?? url
            throw MediaMuxError.unsupportedURL(url: url, reason: "only http and https URLs can be downloaded (not \(scheme))")
        }
        let afterScheme = url.split(separator: "/", omittingEmptySubsequences: false).dropFirst(2).first ?? ""
        guard !afterScheme.isEmpty else { throw MediaMuxError.unsupportedURL(url: url, reason: "the URL has no host") }
    }
}
