@_exported import MediaMuxBase
public import AsyncHTTPClient
public import SystemPackage
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Downloads over HTTP(S): resumed where a transfer broke off, kept in a
/// cache that revalidates with the server, checked to be audio. Links no
/// FFmpeg: a body's audio check reads MP4 boxes and the first bytes of the
/// common audio files, and takes Ogg and Matroska bodies as they are
/// (`MuxEngine.download` asks FFmpeg about those).
///
/// Every call throws `MediaMuxError` alone; each lists the codes it throws,
/// and any may also throw `.unexpected`, which is a defect to report.
///
/// Cancel the Task to stop: the call throws `MediaMuxError.cancelled(path:)`
/// naming the URL, nothing half written appears under a destination, and
/// the bytes so far are kept for the next call to resume from.
///
/// Progress handlers run on the thread that writes the body (one of two
/// that MediaMux keeps for the writes of every download) (never on an event loop), at most ten times a second, then once
/// more from the calling task when the file is complete.
/// Reports of one call never overlap. Keep a handler short: the body waits
/// while it runs.
public struct DownloadEngine: RuntimeEngine {
    /// Where hashing and file copies run.
    public var runtime: MediaRuntime
    /// The caller's HTTP client, shared with the rest of a server; its own
    /// redirect and timeout settings then apply instead of `DownloadOptions`'
    /// (AsyncHTTPClient has no per-request ones), and the result warns of
    /// each option so set that was not applied. Nil: each download makes a
    /// client of its own on NIO's shared event loops and shuts it down when done.
    public var httpClient: HTTPClient?

    /// An engine on `runtime`, with its own HTTP client per download unless given one.
    ///
    /// - Parameters:
    ///   - runtime: Where hashing and file copies run.
    ///   - httpClient: A client to share; nil makes one per download.
    public init(runtime: MediaRuntime = MediaRuntime(), httpClient: HTTPClient? = nil) {
        self.runtime = runtime
        self.httpClient = httpClient
    }

    /// Downloads `url` into the download cache (or revalidates the cached
    /// copy) and returns where the file is.
    ///
    /// `progress` runs on the pool thread writing the body, and once more
    /// from the calling task when the file is complete; its calls never overlap.
    /// Cancelling the Task ends the call with `MediaMuxError.cancelled(path: url)`:
    /// no cache entry is made from a part, and the bytes so far stay in the
    /// cache for the next call to resume from.
    ///
    /// - Parameters:
    ///   - url: An http or https URL.
    ///   - options: The cache, limits, retries and checks.
    ///   - progress: Called with how far the body has come.
    /// - Returns: Where the file is in the cache, and how it was obtained.
    /// - Throws: `MediaMuxError`: `.unsupportedURL` for a URL that is not
    ///   http or https or has no host; `.http` for a status that is not
    ///   success (after retries for 5xx, 408 and 429), `.network` when the
    ///   exchange fails (no connection, a timeout, TLS, too many redirects),
    ///   `.incomplete` when the body stays short, `.tooLarge` past
    ///   `options.maximumBytes`, `.checksumMismatch` when it does not have
    ///   `options.expectedSHA256`, `.notAudio` when `options.requireAudio`
    ///   and it is not audio; `.cache` when the cache folder cannot be made
    ///   or written; `.cancelled` naming `url` when the Task is cancelled;
    ///   `.runtimeStopped` when the runtime's thread pool has shut down.
    public func download(
        _ url: String, options: DownloadOptions = DownloadOptions(),
        progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> DownloadResult {
        try await download(url, options: options, progress: progress, probeForAudio: nil)
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

    /// The same, with a probe for bodies the first bytes do not identify.
    package func download(
        _ url: String, options: DownloadOptions, progress: (@Sendable (DownloadProgress) -> Void)?, probeForAudio: AudioProbe?
    ) async throws(MediaMuxError) -> DownloadResult {
        try await typedErrors(subject: url) {
            try Self.checkURL(url)
            let cache = try DownloadCache(directory: DownloadCache.resolveDirectory(options.cacheDirectory))
            return try await Downloader(
                url: url, options: options, progress: progress, probeForAudio: probeForAudio, runtime: runtime, client: httpClient
            ).intoCache(cache)
        }
    }

    /// Downloads `url` to `destination`. Through the cache unless
    /// `options.useCache` is false; then an interrupted transfer is kept as a
    /// hidden `.NAME.download` file beside `destination` and resumed from there.
    /// Nothing ever appears under `destination` until the file is complete.
    ///
    /// `progress` runs on the pool thread writing the body, and once more
    /// from the calling task when the file is complete; its calls never overlap.
    /// Cancelling the Task ends the call with `MediaMuxError.cancelled(path: url)`
    /// and leaves nothing under `destination`; the bytes so far stay in the
    /// cache (or in the hidden partial file) for the next call to resume from.
    ///
    /// - Parameters:
    ///   - url: An http or https URL.
    ///   - destination: The file to write.
    ///   - overwrite: Replace an existing file instead of failing.
    ///   - options: The cache, limits, retries and checks.
    ///   - progress: Called with how far the body has come.
    /// - Returns: How the file was obtained, with `path` set to `destination`.
    /// - Throws: `MediaMuxError`: `.unsupportedURL` for a URL that is not
    ///   http or https or has no host; `.http` for a status that is not
    ///   success (after retries for 5xx, 408 and 429), `.network` when the
    ///   exchange fails (no connection, a timeout, TLS, too many redirects),
    ///   `.incomplete` when the body stays short, `.tooLarge` past
    ///   `options.maximumBytes`, `.checksumMismatch` when it does not have
    ///   `options.expectedSHA256`, `.notAudio` when `options.requireAudio`
    ///   and it is not audio; `.cache` when the cache folder cannot be made
    ///   or written; `.cancelled` naming `url` when the Task is cancelled;
    ///   `.runtimeStopped` when the runtime's thread pool has shut down.
    ///   For `destination`: `.outputNotWritable` when it is a folder or cannot
    ///   be written, `.outputDirectoryMissing` when its folder does not
    ///   exist, `.outputExists` when it exists and `overwrite` is false.
    public func download(
        _ url: String, to destination: String, overwrite: Bool = false,
        options: DownloadOptions = DownloadOptions(), progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> DownloadResult {
        try await download(url, to: destination, overwrite: overwrite, options: options, progress: progress, probeForAudio: nil)
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

    /// The same, with a probe for bodies the first bytes do not identify.
    package func download(
        _ url: String, to destination: String, overwrite: Bool, options: DownloadOptions,
        progress: (@Sendable (DownloadProgress) -> Void)?, probeForAudio: AudioProbe?
    ) async throws(MediaMuxError) -> DownloadResult {
        try await typedErrors(subject: url) {
            try Self.checkURL(url)
            let facts = outputFacts(output: destination, inputs: [])
            if facts.isFolder || destination.hasSuffix("/") {
                throw MediaMuxError.outputNotWritable(path: destination, reason: "it is a folder; give a file name")
            }
            guard facts.folderExists else { throw MediaMuxError.outputDirectoryMissing(path: destination) }
            if facts.exists && !overwrite { throw MediaMuxError.outputExists(path: destination) }
            let downloader = Downloader(
                url: url, options: options, progress: progress, probeForAudio: probeForAudio, runtime: runtime, client: httpClient)
            guard options.useCache else { return try await downloader.intoFile(destination, overwrite: overwrite) }
            let cache = try DownloadCache(directory: DownloadCache.resolveDirectory(options.cacheDirectory))
            var result = try await downloader.intoCache(cache)
            let cached = result.path
            try await runBlocking(on: runtime.threadPool) { _ in try shareFile(cached, to: destination, overwrite: overwrite) }
            result.path = destination
            return result
        }
    }

    /// The complete downloads in the cache, most recently used first.
    ///
    /// - Parameter directory: The cache folder; nil for the default
    ///   (`$XDG_CACHE_HOME/mediamux`, else `~/.cache/mediamux`).
    /// - Returns: One entry per cached file.
    /// - Throws: `MediaMuxError.cache` when the cache folder cannot be made.
    public func cachedDownloads(in directory: String? = nil) throws(MediaMuxError) -> [CachedDownload] {
        let cache = try DownloadCache(directory: DownloadCache.resolveDirectory(directory))
        return cache.entries().map { entry in
            CachedDownload(
                url: entry.record.url, path: cache.path(entry.record.file), bytes: entry.record.bytes,
                contentType: entry.record.validators.contentType, storedAt: entry.record.storedAt, lastUsedAt: entry.record.lastUsedAt)
        }
    }

    /// Empties the download cache, partial transfers included, except what a
    /// download running meanwhile holds; returns how many files were removed.
    ///
    /// - Parameter directory: The cache folder; nil for the default.
    /// - Returns: How many files were removed.
    /// - Throws: `MediaMuxError.cache` when the cache folder cannot be made.
    @discardableResult
    public func clearDownloadCache(in directory: String? = nil) throws(MediaMuxError) -> Int {
        try DownloadCache(directory: DownloadCache.resolveDirectory(directory)).clear()
    }

    /// Is this something `download` takes? (For front ends deciding between a path and a URL.)
    package static func isDownloadURL(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("http://") || lower.hasPrefix("https://")
    }

    /// True for text that names a URL of any scheme (`ftp://host/...`),
    /// which no file path a user types looks like.
    package static func looksLikeURL(_ text: String) -> Bool {
        guard let separator = text.firstRange(of: "://"), separator.lowerBound > text.startIndex else { return false }
        let scheme = text[..<separator.lowerBound]
        return scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) } && scheme.first?.isLetter == true
    }

    /// Throws the error a download of `url` would give for its scheme or a missing host.
    package static func checkURL(_ url: String) throws(MediaMuxError) {
        guard isDownloadURL(url) else {
            let scheme = url.split(separator: ":", maxSplits: 1).first.map(String.init) ?? url
            throw MediaMuxError.unsupportedURL(url: url, reason: "only http and https URLs can be downloaded (not \(scheme))")
        }
        let afterScheme = url.split(separator: "/", omittingEmptySubsequences: false).dropFirst(2).first ?? ""
        guard !afterScheme.isEmpty else { throw MediaMuxError.unsupportedURL(url: url, reason: "the URL has no host") }
    }
}
