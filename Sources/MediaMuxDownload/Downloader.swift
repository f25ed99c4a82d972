import MediaMuxBase
import AsyncHTTPClient
import SystemPackage

/// One download: the order of steps (lock, revalidate or transfer, verify,
/// commit). Each step's rules live in TransferPolicy and DownloadCache.
package struct Downloader {
    package let url: String
    package let options: DownloadOptions
    package let progress: (@Sendable (DownloadProgress) -> Void)?
    /// Settles whether a body is audio where its first bytes and boxes do not
    /// tell (Ogg, Matroska, others): the facade passes FFmpeg's probe. Without
    /// one, such a body is taken as it is.
    package let probeForAudio: AudioProbe?
    /// Where hashing and probing run.
    package let runtime: MediaRuntime
    /// The caller's HTTP client, or nil for one of the download's own.
    package let client: HTTPClient?
    private let clock = ContinuousClock()

    package init(
        url: String, options: DownloadOptions, progress: (@Sendable (DownloadProgress) -> Void)?, probeForAudio: AudioProbe? = nil,
        runtime: MediaRuntime = MediaRuntime(), client: HTTPClient? = nil
    ) {
        self.url = url
        self.options = options
        self.progress = progress
        self.probeForAudio = probeForAudio
        self.runtime = runtime
        self.client = client
    }

    package func intoCache(_ cache: DownloadCache) async throws -> DownloadResult {
        let started = clock.now
        let key = cache.key(for: url)
        return try await cache.withLock(key) {
            let transfer = HTTPTransfer(url: url, partialPath: cache.partialPath(key), options: options, progress: progress, client: client)
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
                    progress?(DownloadProgress(bytesReceived: record.bytes, totalBytes: record.bytes, remaining: .zero))
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

    /// Into `destination` without the cache, through a hidden partial file
    /// beside it. A lock beside it too makes tasks and processes downloading
    /// to one destination take turns instead of writing one partial file.
    package func intoFile(_ destination: String, overwrite: Bool) async throws -> DownloadResult {
        let started = clock.now
        let partial = folderPart(of: destination) + "/." + namePart(of: destination) + ".download"
        let validatorsPath = partial + ".json"
        return try await withFileLock(
            partial + ".lock", removingAfter: true, failure: { MediaMuxError.outputNotWritable(path: destination, reason: $0) }
        ) {
            let transfer = HTTPTransfer(url: url, partialPath: partial, options: options, progress: progress, client: client)
            let known: ResourceValidators? = fileSize(partial) > 0 ? readJSONFile(validatorsPath) : nil
            let outcome: TransferOutcome
            do {
                outcome = try await transfer.run(known: known, revalidating: nil) { try writeJSONFile($0, to: validatorsPath) }
            } catch {
                if !options.keepsPartialForResume || TransferPolicy.spoilsPartial(error) {
                    removeFile(partial)
                    removeFile(validatorsPath)
                }
                throw error
            }
            let sha256 = try await verify(partial, outcome: outcome, discard: { removeFile(partial); removeFile(validatorsPath) })
            _ = try TemporaryOutput(finalPath: destination, existing: partial).commit(overwrite: overwrite)
            removeFile(validatorsPath)
            return DownloadResult(
                path: destination, url: url, finalURL: outcome.finalURL, bytes: outcome.bytes, contentType: outcome.validators.contentType,
                source: .network, resumedFrom: outcome.resumedFrom, attempts: outcome.attempts, sha256: sha256,
                elapsed: clock.now - started, warnings: optionsTheClientOverrides)
        }
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
            let actual = try await runBlocking(on: runtime.threadPool) { _ in try FileDigest.sha256(file: path) }
            guard actual == expected else {
                discard()
                throw MediaMuxError.checksumMismatch(url: url, expected: expected, actual: actual)
            }
            digest = actual
        }
        if options.requireAudio {
            let contentType = outcome.validators.contentType
            do {
                // MP4/M4A (what soundtracks mostly are) by its boxes, the common
                // audio files and text pages by their first bytes, the rest by the probe.
                let probe = probeForAudio
                let hasAudio = try await runBlocking(on: runtime.threadPool) { flag in
                    try recognizedAudio(path: path) ?? probe?(path, flag) ?? true
                }
                guard hasAudio else {
                    discard()
                    throw MediaMuxError.notAudio(url: url, contentType: contentType, detail: "it has no audio stream")
                }
            } catch let error as MediaMuxError {
                if error.code == .notAudio { throw error }
                // Cancelled while checking: the body stays for the next call to resume or reuse.
                if error.code == .cancelled { throw error }
                if Task.isCancelled { throw MediaMuxError.cancelled(path: url) }
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
            elapsed: clock.now - started, warnings: optionsTheClientOverrides + warnings)
    }

    /// The download options a caller's client does not apply (it keeps its
    /// own redirect and timeout settings; AsyncHTTPClient has no per-request
    /// ones), as warnings for the result; empty without a client.
    var optionsTheClientOverrides: [String] {
        guard client != nil else { return [] }
        let defaults = DownloadOptions()
        var ignored: [String] = []
        if options.maximumRedirects != defaults.maximumRedirects { ignored.append("maximumRedirects (\(options.maximumRedirects))") }
        if options.connectTimeout != defaults.connectTimeout { ignored.append("connectTimeout (\(options.connectTimeout))") }
        if options.idleTimeout != defaults.idleTimeout { ignored.append("idleTimeout (\(options.idleTimeout))") }
        return ignored.map { "\($0) was not applied: the HTTPClient given decides redirects and timeouts" }
    }


}

/// Gives a cached file a second name at `destination` through a temporary
/// file beside it: a hard link where both are on one file system (no bytes
/// written; the cache notices if either name is then edited), else a copy.
package func shareFile(_ source: String, to destination: String, overwrite: Bool) throws {
    let temporary = TemporaryOutput(finalPath: destination)
    defer { temporary.discard() }
    if linkFile(source, to: temporary.path) {
        _ = try temporary.commit(overwrite: overwrite)
        return
    }
    let input: FileDescriptor
    do {
        input = try FileDescriptor.open(FilePath(source), .readOnly, options: .closeOnExec)
    } catch {
        throw MediaMuxError.unreadable(path: source, reason: systemErrorText(error))
    }
    do {
        try input.closeAfter {
            let output = try FileDescriptor.open(
                FilePath(temporary.path), .writeOnly, options: [.create, .truncate, .closeOnExec], permissions: .createdFile)
            try output.closeAfter { try copyContents(from: input, to: output) }
        }
    } catch {
        throw MediaMuxError.outputNotWritable(path: destination, reason: systemErrorText(error))
    }
    _ = try temporary.commit(overwrite: overwrite)
}

