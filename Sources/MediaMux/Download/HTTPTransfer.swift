import AsyncHTTPClient
import NIOCore
import NIOHTTP1
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What is known of the resource a partial file holds, so a later attempt
/// can ask for the rest with a Range request validated by If-Range.
struct ResourceValidators: Codable, Equatable, Sendable {
    var etag: String?
    var lastModified: String?
    var contentType: String?
    var totalBytes: Int64?

    /// A strong ETag, else Last-Modified: what If-Range may carry.
    var ifRange: String? {
        if let etag, !etag.hasPrefix("W/") { return etag }
        return lastModified
    }
}

/// How one transfer ended.
struct TransferOutcome: Sendable {
    var finalURL: String
    var validators: ResourceValidators
    var bytes: Int64
    var notModified: Bool
    var resumedFrom: Int64
    var attempts: Int
}

/// Fetches one URL into a partial file, resuming and retrying as the
/// TransferPolicy decides. It makes no decisions of its own.
struct HTTPTransfer {
    let url: String
    let partialPath: String
    let options: DownloadOptions
    let progress: (@Sendable (DownloadProgress) -> Void)?

    /// `known`: validators of the partial file's resource, if any.
    /// `revalidating`: validators of a complete cached copy, to send as If-None-Match / If-Modified-Since.
    func run(known: ResourceValidators?, revalidating: ResourceValidators?, saveValidators: (ResourceValidators) throws -> Void) async throws -> TransferOutcome {
        let policy = TransferPolicy(
            url: url, maximumAttempts: options.maximumAttempts, retryDelay: options.retryDelay, maximumBytes: options.maximumBytes)
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .follow(max: options.maximumRedirects, allowCycles: false),
            timeout: .init(connect: timeAmount(options.connectTimeout), read: timeAmount(options.idleTimeout)))
        configuration.decompression = .disabled
        // A refused connection is one failed attempt; the policy decides on retries.
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.httpVersion = .http1Only
        return try await HTTPClient.withHTTPClient(configuration: configuration) { client in
            var validators = known
            var attempt = 0
            var resumedFrom: Int64 = 0
            let meter = ProgressMeter(sink: progress)
            while true {
                attempt += 1
                try Task.checkCancellation()
                let offset = validators?.ifRange != nil ? fileSize(partialPath) : 0
                var request = HTTPClientRequest(url: url)
                if offset > 0, let ifRange = validators?.ifRange {
                    request.headers.add(name: "Range", value: "bytes=\(offset)-")
                    request.headers.add(name: "If-Range", value: ifRange)
                } else if let revalidating {
                    if let etag = revalidating.etag { request.headers.add(name: "If-None-Match", value: etag) }
                    if let date = revalidating.lastModified { request.headers.add(name: "If-Modified-Since", value: date) }
                }
                let decision: TransferDecision
                var response: HTTPClientResponse?
                do {
                    let answer = try await client.execute(request, timeout: .hours(24))
                    response = answer
                    decision = policy.decide(facts(answer), requestedOffset: offset, attempt: attempt, revalidating: revalidating != nil)
                } catch {
                    try rethrowIfCancelled(error)
                    decision = policy.decide(classify(error), attempt: attempt, revalidating: revalidating != nil)
                }
                switch decision {
                case .notModified:
                    return TransferOutcome(finalURL: finalURL(response), validators: revalidating ?? ResourceValidators(), bytes: 0,
                                           notModified: true, resumedFrom: 0, attempts: attempt)
                case .complete(let total):
                    return TransferOutcome(finalURL: finalURL(response), validators: validators ?? ResourceValidators(), bytes: total,
                                           notModified: false, resumedFrom: total, attempts: attempt)
                case .restart:
                    try truncate(partialPath, to: 0)
                    validators = nil
                    resumedFrom = 0
                    continue
                case .retry(let wait):
                    try await Task.sleep(for: wait)
                    continue
                case .fail(let error):
                    throw error
                case .write(let start, let total):
                    guard let response else { throw MediaMuxError.network(url: url, reason: "no response") }
                    let fresh = ResourceValidators(
                        etag: response.headers.first(name: "ETag"),
                        lastModified: response.headers.first(name: "Last-Modified"),
                        contentType: response.headers.first(name: "Content-Type"),
                        totalBytes: total)
                    validators = fresh
                    try saveValidators(fresh)
                    if start == 0 { resumedFrom = 0 } else if resumedFrom == 0 { resumedFrom = start }
                    let received: Int64
                    do {
                        received = try await write(response.body, into: partialPath, from: start, total: total, meter: meter, policy: policy)
                    } catch let failure as TransferFailure {
                        let next = policy.decide(failure, attempt: attempt)
                        if case .retry(let wait) = next {
                            try await Task.sleep(for: wait)
                            continue
                        }
                        if case .fail(let error) = next { throw error }
                        continue
                    }
                    if let next = policy.decideEnd(received: received, expected: total, attempt: attempt) {
                        if case .retry(let wait) = next {
                            try await Task.sleep(for: wait)
                            continue
                        }
                        if case .fail(let error) = next { throw error }
                    }
                    meter.finish(bytes: received, total: total)
                    return TransferOutcome(finalURL: finalURL(response), validators: fresh, bytes: received,
                                           notModified: false, resumedFrom: resumedFrom, attempts: attempt)
                }
            }
        }
    }

    /// Streams a body into the file at `start`, returning the file's length.
    private func write(
        _ body: HTTPClientResponse.Body, into path: String, from start: Int64, total: Int64?,
        meter: ProgressMeter, policy: TransferPolicy
    ) async throws -> Int64 {
        // Starting over gets a new file: truncating one to zero makes ext4 write
        // all of it back on close (its protection for replace-by-truncate).
        if start == 0 { unlink(path) }
        let descriptor = open(path, O_WRONLY | O_CREAT, 0o644)
        guard descriptor >= 0 else { throw MediaMuxError.cache(path: path, reason: systemErrorText()) }
        defer { close(descriptor) }
        if fileSize(path) != start {
            guard ftruncate(descriptor, off_t(start)) == 0 else { throw MediaMuxError.cache(path: path, reason: systemErrorText()) }
        }
        var position = start
        do {
            for try await chunk in body {
                try chunk.withUnsafeReadableBytes { bytes in
                    var done = 0
                    while done < bytes.count {
                        let wrote = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(position) + off_t(done))
                        guard wrote > 0 else { throw MediaMuxError.cache(path: path, reason: systemErrorText()) }
                        done += wrote
                    }
                }
                position += Int64(chunk.readableBytes)
                if position > options.maximumBytes { throw MediaMuxError.tooLarge(url: url, limit: options.maximumBytes) }
                meter.report(bytes: position, total: total)
            }
        } catch let error as MediaMuxError {
            throw error
        } catch {
            try rethrowIfCancelled(error)
            // Whatever broke the body, the bytes so far are kept for a resume.
            let failure = classify(error)
            switch failure {
            case .idle, .tls: throw failure
            default: throw TransferFailure.truncated(received: position, expected: total)
            }
        }
        return position
    }

    private func facts(_ response: HTTPClientResponse) -> ResponseFacts {
        let range = parseContentRange(response.headers.first(name: "Content-Range"))
        return ResponseFacts(
            status: Int(response.status.code),
            contentLength: response.headers.first(name: "Content-Length").flatMap { Int64($0) },
            rangeStart: range.start,
            rangeTotal: range.total,
            retryAfter: response.headers.first(name: "Retry-After"))
    }

    private func finalURL(_ response: HTTPClientResponse?) -> String {
        response?.history.last?.request.url ?? url
    }

    private func rethrowIfCancelled(_ error: any Error) throws {
        if error is CancellationError || Task.isCancelled { throw MediaMuxError.cancelled(path: url) }
        if let client = error as? HTTPClientError, client == .cancelled { throw MediaMuxError.cancelled(path: url) }
    }
}

/// Names a failed attempt in the policy's terms.
func classify(_ error: any Error) -> TransferFailure {
    if let client = error as? HTTPClientError {
        switch client {
        case .readTimeout: return .idle
        case .connectTimeout: return .connection("could not connect in time")
        case .remoteConnectionClosed: return .truncated(received: 0, expected: nil)
        case .redirectLimitReached: return .redirects("too many redirects")
        case .redirectCycleDetected: return .redirects("the redirects go round in a loop")
        case .tlsHandshakeTimeout: return .tls("handshake timed out")
        default: return .other(String(describing: client))
        }
    }
    let text = String(describing: error)
    if text.contains("NIOSSL") || text.contains("BoringSSL") || text.contains("certificate") || text.contains("handshake") {
        return .tls(tlsReason(text))
    }
    if text.contains("connectionRefused") || text.contains("Connection refused") || text.contains("ECONNREFUSED") {
        return .connection("connection refused")
    }
    if text.contains("dns") || text.contains("DNS") || text.contains("resolve") || text.contains("NXDOMAIN") {
        return .connection("the host name could not be resolved")
    }
    if text.contains("NIOConnectionError") || text.contains("connect") {
        return .connection("could not connect (\(text))")
    }
    if text.contains("EOF") || text.contains("closed") || text.contains("reset") { return .truncated(received: 0, expected: nil) }
    return .other(text)
}

/// A TLS failure in words, not BoringSSL's error dump.
private func tlsReason(_ text: String) -> String {
    if text.contains("WRONG_VERSION_NUMBER") { return "the server does not speak TLS on this port (try http://)" }
    if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate") { return "the server's certificate is not trusted" }
    if text.contains("hostname") || text.contains("HostnameMismatch") { return "the certificate is for another host name" }
    return "the handshake failed"
}

/// Progress at most ten times a second, with a rate over the last half second.
/// Used by one transfer's task only.
final class ProgressMeter {
    private let sink: (@Sendable (DownloadProgress) -> Void)?
    private let clock = ContinuousClock()
    private var lastReport: ContinuousClock.Instant?
    private var windowStart: (ContinuousClock.Instant, Int64)?
    private var rate: Double = 0

    init(sink: (@Sendable (DownloadProgress) -> Void)?) {
        self.sink = sink
    }

    func report(bytes: Int64, total: Int64?) {
        guard let sink else { return }
        let now = clock.now
        if let (start, startBytes) = windowStart {
            let elapsed = (now - start).seconds
            if elapsed >= 0.5 {
                rate = Double(bytes - startBytes) / elapsed
                windowStart = (now, bytes)
            }
        } else {
            windowStart = (now, bytes)
        }
        if let lastReport, now - lastReport < .milliseconds(100) { return }
        lastReport = now
        sink(progressValue(bytes: bytes, total: total))
    }

    func finish(bytes: Int64, total: Int64?) {
        sink?(progressValue(bytes: bytes, total: total ?? bytes))
    }

    private func progressValue(bytes: Int64, total: Int64?) -> DownloadProgress {
        let remaining = total.flatMap { rate > 0 ? Double(max($0 - bytes, 0)) / rate : nil }
        return DownloadProgress(bytesReceived: bytes, totalBytes: total, bytesPerSecond: rate, secondsRemaining: remaining)
    }
}

func fileSize(_ path: String) -> Int64 {
    var info = stat()
    return stat(path, &info) == 0 ? Int64(info.st_size) : 0
}

func truncate(_ path: String, to length: Int64) throws {
    let descriptor = open(path, O_WRONLY | O_CREAT, 0o644)
    guard descriptor >= 0, ftruncate(descriptor, off_t(length)) == 0 else {
        if descriptor >= 0 { close(descriptor) }
        throw MediaMuxError.cache(path: path, reason: systemErrorText())
    }
    close(descriptor)
}

private func timeAmount(_ duration: Duration) -> TimeAmount {
    let (seconds, attoseconds) = duration.components
    return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
}
