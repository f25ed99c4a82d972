import MediaMuxBase
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension MediaMux {
    /// Downloads `url` into the download cache (or revalidates the cached
    /// copy) and returns where the file is. Cancel the Task to stop: the bytes
    /// so far are kept, and the next call resumes from them.
    public static func download(
        _ url: String, options: DownloadOptions = DownloadOptions(),
        progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws -> DownloadResult {
        try checkURL(url)
        FFmpegLogging.quietUnlessChosen()
        let cache = try DownloadCache(directory: DownloadCache.resolveDirectory(options.cacheDirectory))
        return try await reportingCancellation(of: url) {
            try await Downloader(url: url, options: options, progress: progress).intoCache(cache)
        }
    }

    /// Downloads `url` to `destination`. Through the cache unless
    /// `options.useCache` is false; then an interrupted transfer is kept as a
    /// hidden `.NAME.download` file beside `destination` and resumed from there.
    /// Nothing ever appears under `destination` until the file is complete.
    public static func download(
        _ url: String, to destination: String, overwrite: Bool = false,
        options: DownloadOptions = DownloadOptions(), progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws -> DownloadResult {
        try checkURL(url)
        FFmpegLogging.quietUnlessChosen()
        let facts = outputFacts(output: destination, inputs: [])
        if facts.isFolder || destination.hasSuffix("/") {
            throw MediaMuxError.outputNotWritable(path: destination, reason: "it is a folder; give a file name")
        }
        guard facts.folderExists else { throw MediaMuxError.outputDirectoryMissing(path: destination) }
        if facts.exists && !overwrite { throw MediaMuxError.outputExists(path: destination) }
        let downloader = Downloader(url: url, options: options, progress: progress)
        return try await reportingCancellation(of: url) {
            if options.useCache {
                let cache = try DownloadCache(directory: DownloadCache.resolveDirectory(options.cacheDirectory))
                var result = try await downloader.intoCache(cache)
                let cached = result.path
                try await runBlocking { _ in try shareFile(cached, to: destination, overwrite: overwrite) }
                result.path = destination
                return result
            }
            return try await downloader.intoFile(destination, overwrite: overwrite)
        }
    }

    /// Cancellation, wherever it lands (a retry wait, the cache lock), is the
    /// library's own error, like every other.
    private static func reportingCancellation<T>(of url: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch is CancellationError {
            throw MediaMuxError.cancelled(path: url)
        }
    }

    /// The complete downloads in the cache, most recently used first.
    public static func cachedDownloads(in directory: String? = nil) throws -> [CachedDownload] {
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
    public static func clearDownloadCache(in directory: String? = nil) throws -> Int {
        try DownloadCache(directory: DownloadCache.resolveDirectory(directory)).clear()
    }

    /// Is this something `download` takes? (For front ends deciding between a path and a URL.)
    public static func isDownloadURL(_ text: String) -> Bool {
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

/// One download: the order of steps (lock, revalidate or transfer, verify,
/// commit). Each step's rules live in TransferPolicy and DownloadCache.
struct Downloader {
    let url: String
    let options: DownloadOptions
    let progress: (@Sendable (DownloadProgress) -> Void)?
    private let clock = ContinuousClock()

    init(url: String, options: DownloadOptions, progress: (@Sendable (DownloadProgress) -> Void)?) {
        self.url = url
        self.options = options
        self.progress = progress
    }

    func intoCache(_ cache: DownloadCache) async throws -> DownloadResult {
        let started = clock.now
        let key = cache.key(for: url)
        return try await cache.withLock(key) {
            let transfer = HTTPTransfer(url: url, partialPath: cache.partialPath(key), options: options, progress: progress)
            let save: @Sendable (ResourceValidators) throws -> Void = { try cache.savePartialValidators(key, $0) }
            if let record = cache.record(key) {
                let outcome: TransferOutcome
                do {
                    outcome = try await transfer.run(known: nil, revalidating: record.validators, saveValidators: save)
                } catch let error as MediaMuxError where TransferPolicy.allowsOfflineUse(error) {
                    cache.touch(key, record: record)
                    return result(record, path: cache.path(record.file), source: .offlineCache, started: started, attempts: options.maximumAttempts,
                                  warnings: ["could not revalidate (\(error.description)); using the copy cached at \(formatDate(record.storedAt))"])
                }
                if outcome.notModified {
                    cache.touch(key, record: record)
                    progress?(DownloadProgress(bytesReceived: record.bytes, totalBytes: record.bytes, bytesPerSecond: 0, secondsRemaining: 0))
                    return result(record, path: cache.path(record.file), source: .revalidatedCache, started: started, attempts: outcome.attempts)
                }
                return try await commit(outcome, into: cache, key: key, started: started)
            }
            do {
                let outcome = try await transfer.run(known: cache.partialValidators(key), revalidating: nil, saveValidators: save)
                return try await commit(outcome, into: cache, key: key, started: started)
            } catch {
                if !options.keepsPartialForResume || TransferPolicy.spoilsPartial(error) { cache.discardPartial(key) }
                throw error
            }
        }
    }

    func intoFile(_ destination: String, overwrite: Bool) async throws -> DownloadResult {
        let started = clock.now
        let partial = folderPart(of: destination) + "/." + namePart(of: destination) + ".download"
        let validatorsPath = partial + ".json"
        let transfer = HTTPTransfer(url: url, partialPath: partial, options: options, progress: progress)
        let known: ResourceValidators? = fileSize(partial) > 0 ? readJSONFile(validatorsPath) : nil
        let outcome: TransferOutcome
        do {
            outcome = try await transfer.run(known: known, revalidating: nil) { try writeJSONFile($0, to: validatorsPath) }
        } catch {
            if !options.keepsPartialForResume || TransferPolicy.spoilsPartial(error) {
                unlink(partial)
                unlink(validatorsPath)
            }
            throw error
        }
        let sha256 = try await verify(partial, outcome: outcome, discard: { unlink(partial); unlink(validatorsPath) })
        _ = try TemporaryOutput(finalPath: destination, existing: partial).commit(overwrite: overwrite)
        unlink(validatorsPath)
        return DownloadResult(
            path: destination, url: url, finalURL: outcome.finalURL, bytes: outcome.bytes, contentType: outcome.validators.contentType,
            source: .network, resumedFrom: outcome.resumedFrom, attempts: outcome.attempts, sha256: sha256,
            elapsedSeconds: (clock.now - started).seconds, warnings: [])
    }

    private func commit(_ outcome: TransferOutcome, into cache: DownloadCache, key: String, started: ContinuousClock.Instant) async throws -> DownloadResult {
        let sha256 = try await verify(cache.partialPath(key), outcome: outcome, discard: { cache.discardPartial(key) })
        let now = secondsSince1970()
        let record = CacheRecord(
            url: url, finalURL: outcome.finalURL, file: cache.dataFileName(key: key, url: url), bytes: outcome.bytes,
            validators: outcome.validators, sha256: sha256, storedAt: now, lastUsedAt: now)
        try cache.commit(key, record: record)
        cache.trim(to: options.maximumCacheBytes, keeping: key)
        var result = result(record, path: cache.path(record.file), source: .network, started: started, attempts: outcome.attempts)
        result.resumedFrom = outcome.resumedFrom
        return result
    }

    /// The checks a body passes before it takes its final name: the expected
    /// SHA-256, and that it is audio (an HTML error page served with 200 is not).
    private func verify(_ path: String, outcome: TransferOutcome, discard: () -> Void) async throws -> String? {
        var digest: String?
        if let expected = options.expectedSHA256 {
            // Hashing gigabytes and probing block; they run on a thread of their own.
            let actual = try await runBlocking { _ in SHA256.hex(try SHA256.hashFile(atPath: path)) }
            guard actual == expected else {
                discard()
                throw MediaMuxError.checksumMismatch(url: url, expected: expected, actual: actual)
            }
            digest = actual
        }
        if options.requireAudio {
            let contentType = outcome.validators.contentType
            do {
                // MP4/M4A (what soundtracks mostly are) by its boxes; anything else through FFmpeg.
                let hasAudio = try await runBlocking { flag in
                    try quickTimeHasSoundTrack(path: path) ?? !Prober(cancellation: flag).probe(path: path).audioStreams.isEmpty
                }
                guard hasAudio else {
                    discard()
                    throw MediaMuxError.notAudio(url: url, contentType: contentType, detail: "it has no audio stream")
                }
            } catch let error as MediaMuxError {
                if case .notAudio = error { throw error }
                let detail = fileSize(path) == 0 ? "the body is empty" : "\(fileSize(path)) bytes that are not audio"
                discard()
                throw MediaMuxError.notAudio(url: url, contentType: contentType, detail: detail)
            }
        }
        return digest
    }

    private func result(
        _ record: CacheRecord, path: String, source: DownloadSource, started: ContinuousClock.Instant, attempts: Int, warnings: [String] = []
    ) -> DownloadResult {
        DownloadResult(
            path: path, url: url, finalURL: record.finalURL, bytes: record.bytes, contentType: record.validators.contentType,
            source: source, resumedFrom: 0, attempts: attempts, sha256: record.sha256,
            elapsedSeconds: (clock.now - started).seconds, warnings: warnings)
    }

}

/// Gives a cached file a second name at `destination` through a temporary
/// file beside it: a hard link where both are on one file system (no bytes
/// written; the cache notices if either name is then edited), else a copy.
func shareFile(_ source: String, to destination: String, overwrite: Bool) throws {
    let temporary = TemporaryOutput(finalPath: destination)
    defer { temporary.discard() }
    if link(source, temporary.path) == 0 {
        _ = try temporary.commit(overwrite: overwrite)
        return
    }
    let input = open(source, O_RDONLY)
    guard input >= 0 else { throw MediaMuxError.unreadable(path: source, reason: systemErrorText()) }
    defer { close(input) }
    let output = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard output >= 0 else { throw MediaMuxError.outputNotWritable(path: destination, reason: systemErrorText()) }
    // A reflink shares the blocks where the file system can (btrfs, xfs);
    // otherwise the kernel copies without a trip through user space.
    if ioctl(output, fileCloneRequest, input) != 0 {
        while true {
            let copied = sendfile(output, input, nil, 1 << 30)
            if copied == 0 { break }
            guard copied > 0 else {
                close(output)
                throw MediaMuxError.outputNotWritable(path: destination, reason: systemErrorText())
            }
        }
    }
    close(output)
    _ = try temporary.commit(overwrite: overwrite)
}

/// FICLONE from linux/fs.h: _IOW(0x94, 9, int).
private let fileCloneRequest: UInt = 0x4004_9409

func formatDate(_ seconds: Int64) -> String {
    var time = time_t(seconds)
    var parts = tm()
    gmtime_r(&time, &parts)
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)) UTC"
}
