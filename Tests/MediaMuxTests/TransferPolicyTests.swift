import AsyncHTTPClient
import Testing
@testable import MediaMux
@testable import MediaMuxCore
@testable import MediaMuxPreview
@testable import MediaMuxDownload

/// Every rule of the pure download policy, without a network.
struct TransferPolicyTests {
    static let url = "http://127.0.0.1:1/song.m4a"

    static func policy(attempts: Int = 5, delay: Duration = .milliseconds(500), limit: Int64 = 1 << 30) -> TransferPolicy {
        TransferPolicy(url: url, maximumAttempts: attempts, retryDelay: delay, maximumBytes: limit)
    }

    static func response(
        _ status: Int, length: Int64? = nil, start: Int64? = nil, total: Int64? = nil, retryAfter: String? = nil
    ) -> ResponseFacts {
        ResponseFacts(status: status, contentLength: length, rangeStart: start, rangeTotal: total, retryAfter: retryAfter)
    }

    // MARK: 200

    @Test func okWritesTheWholeBodyFromZero() {
        let policy = Self.policy()
        #expect(policy.decide(Self.response(200, length: 1000), requestedOffset: 0, attempt: 1) == .write(from: 0, total: 1000))
        #expect(policy.decide(Self.response(200), requestedOffset: 0, attempt: 1) == .write(from: 0, total: nil))
    }

    @Test func okToARangeRequestStartsOver() {
        // The server ignored Range, or If-Range found the resource changed: it sent everything.
        let decision = Self.policy().decide(Self.response(200, length: 1000), requestedOffset: 400, attempt: 2)
        #expect(decision == .write(from: 0, total: 1000))
    }

    @Test func okLargerThanTheLimitFails() {
        let policy = Self.policy(limit: 999)
        #expect(policy.decide(Self.response(200, length: 1000), requestedOffset: 0, attempt: 1)
            == .fail(.tooLarge(url: Self.url, limit: 999)))
        #expect(policy.decide(Self.response(200, length: 999), requestedOffset: 0, attempt: 1) == .write(from: 0, total: 999))
    }

    // MARK: 206

    @Test func partialContentAtTheRequestedOffsetContinues() {
        let policy = Self.policy()
        #expect(policy.decide(Self.response(206, length: 600, start: 400, total: 1000), requestedOffset: 400, attempt: 2)
            == .write(from: 400, total: 1000))
        // `bytes 400-999/*`: the total comes from Content-Length plus the offset.
        #expect(policy.decide(Self.response(206, length: 600, start: 400), requestedOffset: 400, attempt: 2)
            == .write(from: 400, total: 1000))
        #expect(policy.decide(Self.response(206, start: 400), requestedOffset: 400, attempt: 2) == .write(from: 400, total: nil))
    }

    @Test func partialContentWithTheWrongStartRestarts() {
        let policy = Self.policy()
        #expect(policy.decide(Self.response(206, length: 1000, start: 0, total: 1000), requestedOffset: 400, attempt: 2) == .restart)
        #expect(policy.decide(Self.response(206, length: 500, start: 500, total: 1000), requestedOffset: 400, attempt: 2) == .restart)
        // No (parsable) Content-Range at all.
        #expect(policy.decide(Self.response(206, length: 600), requestedOffset: 400, attempt: 2) == .restart)
    }

    @Test func partialContentOfATooLargeResourceFails() {
        let decision = Self.policy(limit: 999).decide(Self.response(206, length: 600, start: 400, total: 1000), requestedOffset: 400, attempt: 2)
        #expect(decision == .fail(.tooLarge(url: Self.url, limit: 999)))
    }

    // MARK: 304, 416

    @Test func notModified() {
        #expect(Self.policy().decide(Self.response(304), requestedOffset: 0, attempt: 1, revalidating: true) == .notModified)
        // A 304 to a request that carried no validators makes no sense: an error, not a "cached" answer.
        #expect(Self.policy().decide(Self.response(304), requestedOffset: 0, attempt: 1) == .fail(.http(status: 304, url: Self.url)))
    }

    @Test func rangeNotSatisfiableAtTheEndIsComplete() {
        #expect(Self.policy().decide(Self.response(416, total: 1000), requestedOffset: 1000, attempt: 2) == .complete(total: 1000))
    }

    @Test func rangeNotSatisfiableOtherwiseRestarts() {
        let policy = Self.policy()
        // The resource shrank below what the partial file holds.
        #expect(policy.decide(Self.response(416, total: 800), requestedOffset: 1000, attempt: 2) == .restart)
        // No total given.
        #expect(policy.decide(Self.response(416), requestedOffset: 1000, attempt: 2) == .restart)
        // Nothing was asked for by range: never "complete", and no endless restarting either.
        #expect(policy.decide(Self.response(416, total: 0), requestedOffset: 0, attempt: 1) == .fail(.http(status: 416, url: Self.url)))
        #expect(policy.decide(Self.response(206, length: 10, start: 5, total: 100), requestedOffset: 0, attempt: 1)
                == .fail(.http(status: 206, url: Self.url)))
        // Restarts count as attempts.
        #expect(Self.policy(attempts: 2).decide(Self.response(416, total: 800), requestedOffset: 1000, attempt: 2)
                == .fail(.http(status: 416, url: Self.url)))
    }

    // MARK: Transient statuses

    @Test(arguments: [408, 429, 500, 502, 503, 504, 599])
    func transientStatusesAreRetriedUntilTheLastAttempt(status: Int) {
        let policy = Self.policy(attempts: 3, delay: .milliseconds(100))
        #expect(policy.decide(Self.response(status), requestedOffset: 0, attempt: 1) == .retry(after: .milliseconds(100)))
        #expect(policy.decide(Self.response(status), requestedOffset: 0, attempt: 2) == .retry(after: .milliseconds(200)))
        #expect(policy.decide(Self.response(status), requestedOffset: 0, attempt: 3) == .fail(.http(status: status, url: Self.url)))
    }

    @Test(arguments: [204, 301, 400, 401, 403, 404, 405, 410, 451])
    func otherStatusesFailAtOnce(status: Int) {
        #expect(Self.policy().decide(Self.response(status), requestedOffset: 0, attempt: 1) == .fail(.http(status: status, url: Self.url)))
    }

    @Test func retryAfterSecondsIsWaitedWhenLongerThanTheBackoff() {
        let policy = Self.policy(delay: .milliseconds(100))
        #expect(policy.decide(Self.response(503, retryAfter: "3"), requestedOffset: 0, attempt: 1) == .retry(after: .seconds(3)))
        #expect(policy.decide(Self.response(429, retryAfter: " 2 "), requestedOffset: 0, attempt: 1) == .retry(after: .seconds(2)))
        // Shorter than the backoff (or zero, or empty): the backoff wins.
        #expect(policy.decide(Self.response(429, retryAfter: "0"), requestedOffset: 0, attempt: 1) == .retry(after: .milliseconds(100)))
        #expect(policy.decide(Self.response(429, retryAfter: ""), requestedOffset: 0, attempt: 2) == .retry(after: .milliseconds(200)))
        #expect(Self.policy(delay: .seconds(4)).decide(Self.response(503, retryAfter: "1"), requestedOffset: 0, attempt: 1)
            == .retry(after: .seconds(4)))
    }

    @Test func retryAfterAsADateWaitsAFewSeconds() {
        let decision = Self.policy(delay: .milliseconds(100))
            .decide(Self.response(503, retryAfter: "Wed, 21 Oct 2026 07:28:00 GMT"), requestedOffset: 0, attempt: 1)
        #expect(decision == .retry(after: .seconds(5)))
    }

    @Test func retryAfterLongerThanTheLongestWaitFails() {
        let policy = Self.policy()
        #expect(policy.decide(Self.response(503, retryAfter: "61"), requestedOffset: 0, attempt: 1) == .fail(.http(status: 503, url: Self.url)))
        #expect(policy.decide(Self.response(503, retryAfter: "60"), requestedOffset: 0, attempt: 1) == .retry(after: .seconds(60)))
        var short = policy
        short.longestWait = .seconds(1)
        #expect(short.decide(Self.response(429, retryAfter: "2"), requestedOffset: 0, attempt: 1) == .fail(.http(status: 429, url: Self.url)))
    }

    // MARK: Backoff

    @Test func backoffDoublesFromTheRetryDelay() {
        let policy = Self.policy(delay: .milliseconds(20))
        #expect(policy.backoff(attempt: 0) == .milliseconds(20))
        #expect(policy.backoff(attempt: 1) == .milliseconds(20))
        #expect(policy.backoff(attempt: 2) == .milliseconds(40))
        #expect(policy.backoff(attempt: 3) == .milliseconds(80))
        #expect(policy.backoff(attempt: 4) == .milliseconds(160))
        let waits = (1...20).map(policy.backoff(attempt:))
        #expect(zip(waits, waits.dropFirst()).allSatisfy { $0 <= $1 })
    }

    @Test func backoffIsCappedAtThirtySeconds() {
        let policy = Self.policy(delay: .seconds(1))
        #expect(policy.backoff(attempt: 5) == .seconds(16))
        #expect(policy.backoff(attempt: 6) == .seconds(30))
        #expect(policy.backoff(attempt: 7) == .seconds(30))
        #expect(policy.backoff(attempt: 1000) == .seconds(30))
        #expect(Self.policy(delay: .seconds(45)).backoff(attempt: 1) == .seconds(30))
    }

    // MARK: Failures without a response

    @Test(arguments: [TransferFailure.connection("connection refused"), .idle, .truncated(received: 10, expected: 100), .truncated(received: 0, expected: nil)])
    func transientFailuresAreRetriedWithBackoff(failure: TransferFailure) {
        #expect(failure.isTransient)
        let policy = Self.policy(attempts: 4, delay: .milliseconds(50))
        #expect(policy.decide(failure, attempt: 1) == .retry(after: .milliseconds(50)))
        #expect(policy.decide(failure, attempt: 3) == .retry(after: .milliseconds(200)))
    }

    @Test(arguments: [TransferFailure.tls("bad certificate"), .redirects("too many redirects"), .other("weird")])
    func permanentFailuresFailAtOnce(failure: TransferFailure) {
        #expect(!failure.isTransient)
        #expect(Self.policy().decide(failure, attempt: 1) == .fail(.network(url: Self.url, reason: failure.reason)))
    }

    @Test func lastAttemptFailures() {
        let policy = Self.policy(attempts: 2)
        #expect(policy.decide(.connection("connection refused"), attempt: 2) == .fail(.network(url: Self.url, reason: "connection refused")))
        #expect(policy.decide(.idle, attempt: 2) == .fail(.network(url: Self.url, reason: "the server sent nothing for longer than the idle timeout")))
        #expect(policy.decide(.truncated(received: 10, expected: 100), attempt: 2)
            == .fail(.incomplete(url: Self.url, received: 10, expected: 100)))
        #expect(policy.decide(.truncated(received: 10, expected: nil), attempt: 2)
            == .fail(.network(url: Self.url, reason: "the connection closed after 10 bytes")))
    }

    @Test func failureReasons() {
        #expect(TransferFailure.truncated(received: 5, expected: 9).reason == "the connection closed after 5 of 9 bytes")
        #expect(TransferFailure.tls("handshake timed out").reason == "TLS failed: handshake timed out")
        #expect(TransferFailure.redirects("the redirects go round in a loop").reason == "the redirects go round in a loop")
    }

    // MARK: decideEnd

    @Test func bodyEndingAtItsLengthIsDone() {
        let policy = Self.policy()
        #expect(policy.decideEnd(received: 1000, expected: 1000, attempt: 1) == nil)
        #expect(policy.decideEnd(received: 1000, expected: nil, attempt: 1) == nil)
        #expect(policy.decideEnd(received: 0, expected: nil, attempt: 5) == nil)
        #expect(policy.decideEnd(received: 1200, expected: 1000, attempt: 1) == nil)
    }

    @Test func bodyEndingShortIsACut() {
        let policy = Self.policy(attempts: 3, delay: .milliseconds(10))
        #expect(policy.decideEnd(received: 400, expected: 1000, attempt: 1) == .retry(after: .milliseconds(10)))
        #expect(policy.decideEnd(received: 400, expected: 1000, attempt: 2) == .retry(after: .milliseconds(20)))
        #expect(policy.decideEnd(received: 400, expected: 1000, attempt: 3) == .fail(.incomplete(url: Self.url, received: 400, expected: 1000)))
    }

    // MARK: Parsing and classification

    @Test func contentRange() {
        #expect(parseContentRange("bytes 0-99/1000") == (0, 1000))
        #expect(parseContentRange("bytes 400-999/1000") == (400, 1000))
        #expect(parseContentRange("bytes */1000") == (nil, 1000))
        #expect(parseContentRange("bytes 5-9/*") == (5, nil))
        #expect(parseContentRange(nil) == (nil, nil))
        #expect(parseContentRange("items 0-1/2") == (nil, nil))
        #expect(parseContentRange("bytes 0-99") == (nil, nil))
    }

    @Test func ifRangePrefersAStrongETag() {
        let date = "Wed, 21 Oct 2026 07:28:00 GMT"
        #expect(ResourceValidators(etag: "\"v1\"", lastModified: date).ifRange == "\"v1\"")
        #expect(ResourceValidators(etag: "W/\"v1\"", lastModified: date).ifRange == date)
        #expect(ResourceValidators(etag: "W/\"v1\"").ifRange == nil)
        #expect(ResourceValidators(lastModified: date).ifRange == date)
        #expect(ResourceValidators().ifRange == nil)
    }

    @Test func clientErrorsAreClassified() {
        #expect(classify(HTTPClientError.readTimeout) == .idle)
        #expect(classify(HTTPClientError.connectTimeout) == .connection("could not connect in time"))
        #expect(classify(HTTPClientError.remoteConnectionClosed) == .truncated(received: 0, expected: nil))
        #expect(classify(HTTPClientError.redirectLimitReached) == .redirects("too many redirects"))
        #expect(classify(HTTPClientError.redirectCycleDetected) == .redirects("the redirects go round in a loop"))
        #expect(!classify(HTTPClientError.tlsHandshakeTimeout).isTransient)
    }

    @Test func offlineUseIsAllowedOnlyWhenTheServerCannotAnswer() {
        #expect(TransferPolicy.allowsOfflineUse(.network(url: Self.url, reason: "connection refused")))
        #expect(TransferPolicy.allowsOfflineUse(.http(status: 503, url: Self.url)))
        #expect(TransferPolicy.allowsOfflineUse(.http(status: 500, url: Self.url)))
        #expect(TransferPolicy.allowsOfflineUse(.http(status: 429, url: Self.url)))
        #expect(TransferPolicy.allowsOfflineUse(.http(status: 408, url: Self.url)))
        #expect(!TransferPolicy.allowsOfflineUse(.http(status: 404, url: Self.url)))
        #expect(!TransferPolicy.allowsOfflineUse(.http(status: 410, url: Self.url)))
        #expect(!TransferPolicy.allowsOfflineUse(.notAudio(url: Self.url, contentType: "text/html", detail: "x")))
        #expect(!TransferPolicy.allowsOfflineUse(.incomplete(url: Self.url, received: 1, expected: 2)))
    }
}
