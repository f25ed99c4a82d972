import MediaMuxBase
/// The facts of a response that decide what happens next.
package struct ResponseFacts: Equatable {
    package var status: Int
    package var contentLength: Int64?
    /// From Content-Range `bytes START-END/TOTAL` (or `*/TOTAL` on 416).
    package var rangeStart: Int64?
    package var rangeTotal: Int64?
    package var retryAfter: String?
}

/// Why an attempt failed before or during the body.
package enum TransferFailure: Error, Equatable {
    /// Could not connect (refused, unreachable, no such host, connect timeout).
    case connection(String)
    /// Connected, then the server went quiet for longer than the idle timeout.
    case idle
    /// The connection closed before the body was complete.
    case truncated(received: Int64, expected: Int64?)
    /// TLS failed: a certificate or protocol problem, not worth retrying.
    case tls(String)
    /// Too many redirects, or a redirect loop.
    case redirects(String)
    case other(String)

    package var isTransient: Bool {
        switch self {
        case .connection, .idle, .truncated: return true
        case .tls, .redirects, .other: return false
        }
    }

    package var reason: String {
        switch self {
        case .connection(let detail): return detail
        case .idle: return "the server sent nothing for longer than the idle timeout"
        case .truncated(let received, let expected):
            return "the connection closed after \(received)" + (expected.map { " of \($0)" } ?? "") + " bytes"
        case .tls(let detail): return "TLS failed: \(detail)"
        case .redirects(let detail): return detail
        case .other(let detail): return detail
        }
    }
}

/// What the transfer does next.
package enum TransferDecision: Equatable {
    /// Stream the body into the partial file from this offset (0 truncates it).
    case write(from: Int64, total: Int64?)
    /// The cached copy is current (304).
    case notModified
    /// The partial file is already the whole resource.
    case complete(total: Int64)
    /// Throw away the partial file and ask again from the start, now.
    case restart
    case retry(after: Duration)
    case fail(MediaMuxError)
}

/// Every decision of a download, from response facts: pure, so each rule is a
/// unit test. The transfer loop only does what this says.
package struct TransferPolicy: Equatable {
    package var url: String
    package var maximumAttempts: Int
    package var retryDelay: Duration
    package var maximumBytes: Int64
    /// Retry-After longer than this is not waited for.
    package var longestWait: Duration = .seconds(60)

    /// After response headers arrive for a request that asked for `offset`
    /// onwards (and, when `revalidating`, carried the cached copy's validators).
    package func decide(_ response: ResponseFacts, requestedOffset offset: Int64, attempt: Int, revalidating: Bool = false) -> TransferDecision {
        switch response.status {
        case 200:
            // A server that ignores Range, or a resource that changed (If-Range), sends it all.
            if let length = response.contentLength, length > maximumBytes {
                return .fail(.tooLarge(url: url, limit: maximumBytes))
            }
            return .write(from: 0, total: response.contentLength)
        case 206:
            guard let start = response.rangeStart, start == offset else { return restart(response, offset: offset, attempt: attempt) }
            if let total = response.rangeTotal, total > maximumBytes {
                return .fail(.tooLarge(url: url, limit: maximumBytes))
            }
            return .write(from: offset, total: response.rangeTotal ?? response.contentLength.map { $0 + offset })
        case 304 where revalidating:
            return .notModified
        case 416:
            if offset > 0, let total = response.rangeTotal, total == offset { return .complete(total: total) }
            return restart(response, offset: offset, attempt: attempt)
        case 408, 429, 500...599:
            guard attempt < maximumAttempts else { return .fail(.http(status: response.status, url: url)) }
            let wait = max(backoff(attempt: attempt), retryAfter(response.retryAfter) ?? .zero)
            guard wait <= longestWait else { return .fail(.http(status: response.status, url: url)) }
            return .retry(after: wait)
        default:
            return .fail(.http(status: response.status, url: url))
        }
    }

    /// A range answer that does not fit: start over, once there was a range to
    /// give up and attempts remain; a server that answers a plain request so is broken.
    private func restart(_ response: ResponseFacts, offset: Int64, attempt: Int) -> TransferDecision {
        guard offset > 0, attempt < maximumAttempts else { return .fail(.http(status: response.status, url: url)) }
        return .restart
    }

    /// After an attempt failed without a usable response. When only
    /// revalidating a cached copy, an unreachable server is not retried: the
    /// cached copy serves at once.
    package func decide(_ failure: TransferFailure, attempt: Int, revalidating: Bool = false) -> TransferDecision {
        let unreachable: Bool
        if case .connection = failure { unreachable = true } else { unreachable = false }
        guard failure.isTransient, attempt < maximumAttempts, !(revalidating && unreachable) else {
            if case .truncated(let received, let expected) = failure, let expected {
                return .fail(.incomplete(url: url, received: received, expected: expected))
            }
            return .fail(.network(url: url, reason: failure.reason))
        }
        return .retry(after: backoff(attempt: attempt))
    }

    /// After the body ended normally: short of its declared length is a cut.
    package func decideEnd(received: Int64, expected: Int64?, attempt: Int) -> TransferDecision? {
        guard let expected, received < expected else { return nil }
        return decide(.truncated(received: received, expected: expected), attempt: attempt)
    }

    /// Failures after which the bytes so far are no use for a resume.
    package static func spoilsPartial(_ error: any Error) -> Bool {
        guard let error = error as? MediaMuxError else { return false }
        switch error.failure {
        case .tooLarge, .checksumMismatch, .notAudio: return true
        default: return false
        }
    }

    /// A server that cannot be reached (or fails on its side) does not stop
    /// the use of a cached copy; a server that says the resource is gone does.
    package static func allowsOfflineUse(_ error: MediaMuxError) -> Bool {
        switch error.failure {
        case .network: return true
        case .http(let status, _): return status >= 500 || status == 408 || status == 429
        default: return false
        }
    }

    /// 1x, 2x, 4x ... the retry delay, at most 30 s.
    package func backoff(attempt: Int) -> Duration {
        var wait = retryDelay
        for _ in 1..<max(attempt, 1) where wait < .seconds(30) { wait *= 2 }
        return min(wait, .seconds(30))
    }

    /// Retry-After in seconds; an HTTP date is treated as "a little while".
    private func retryAfter(_ value: String?) -> Duration? {
        guard let value = value?.trimmingWhitespace(), !value.isEmpty else { return nil }
        if let seconds = Int(value), seconds >= 0 { return .seconds(seconds) }
        return .seconds(5)
    }
}

/// Parses `bytes START-END/TOTAL` and `bytes */TOTAL`.
package func parseContentRange(_ value: String?) -> (start: Int64?, total: Int64?) {
    guard let value, value.hasPrefix("bytes ") else { return (nil, nil) }
    let spec = value.dropFirst(6)
    let parts = spec.split(separator: "/", maxSplits: 1)
    guard parts.count == 2 else { return (nil, nil) }
    let total = Int64(parts[1])
    if parts[0] == "*" { return (nil, total) }
    let start = parts[0].split(separator: "-").first.flatMap { Int64($0) }
    return (start, total)
}
