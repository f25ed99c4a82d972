import MediaMuxBase
import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import SystemPackage

/// What is known of the resource a partial file holds, so a later attempt
/// can ask for the rest with a Range request validated by If-Range.
package struct ResourceValidators: Codable, Equatable, Sendable {
    package var etag: String?
    package var lastModified: String?
    package var contentType: String?
    package var totalBytes: Int64?

    /// A strong ETag, else Last-Modified: what If-Range may carry.
    package var ifRange: String? {
        if let etag, !etag.hasPrefix("W/") { return etag }
        return lastModified
    }
}

/// How one transfer ended.
package struct TransferOutcome: Sendable {
    package var finalURL: String
    package var validators: ResourceValidators
    package var bytes: Int64
    package var notModified: Bool
    package var resumedFrom: Int64
    package var attempts: Int
}

/// Fetches one URL into a partial file, resuming and retrying as the
/// TransferPolicy decides. It makes no decisions of its own.
package struct HTTPTransfer {
    package let url: String
    package let partialPath: String
    package let options: DownloadOptions
    package let progress: (@Sendable (DownloadProgress) -> Void)?
    /// The caller's client (its own redirect and timeout settings apply), or
    /// nil for a client of the transfer's own, configured from `options`.
    package let client: HTTPClient?

    /// `known`: validators of the partial file's resource, if any.
    /// `revalidating`: validators of a complete cached copy, to send as If-None-Match / If-Modified-Since.
    /// `saveValidators` records what a partial file holds; it runs on the event
    /// loop when a body is accepted, before its first byte is written.
    package func run(
        known: ResourceValidators?, revalidating: ResourceValidators?,
        saveValidators: @escaping @Sendable (ResourceValidators) throws -> Void
    ) async throws -> TransferOutcome {
        let policy = TransferPolicy(
            url: url, maximumAttempts: options.maximumAttempts, retryDelay: options.retryDelay, maximumBytes: options.maximumBytes)
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .follow(max: options.maximumRedirects, allowCycles: false),
            timeout: .init(connect: timeAmount(options.connectTimeout), read: timeAmount(options.idleTimeout)))
        configuration.decompression = .disabled
        // A refused connection is one failed attempt; the policy decides on retries.
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.httpVersion = .http1Only
        if let client {
            return try await attempts(client: client, policy: policy, known: known, revalidating: revalidating, saveValidators: saveValidators)
        }
        // NIO's shared event loops: the body's file work runs on a thread
        // pool (see BodyExchange), never on them, so no download needs loops of its own.
        return try await HTTPClient.withHTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration) { client in
            try await attempts(client: client, policy: policy, known: known, revalidating: revalidating, saveValidators: saveValidators)
        }
    }

    /// Requests until the policy says the transfer is done or failed.
    private func attempts(
        client: HTTPClient, policy: TransferPolicy,
        known: ResourceValidators?, revalidating: ResourceValidators?,
        saveValidators: @escaping @Sendable (ResourceValidators) throws -> Void
    ) async throws -> TransferOutcome {
        do {
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
                // One exchange: the head is judged by the policy as it arrives; a
                // body the policy wants is written as it comes, on NIO's thread pool.
                let exchange = BodyExchange(
                    path: partialPath, url: url, policy: policy, offset: offset, attempt: attempt,
                    revalidating: revalidating != nil, maximumBytes: options.maximumBytes, meter: meter, save: saveValidators)
                var failure: (any Error)?
                var loop: (any EventLoop)?
                do {
                    var head = HTTPHeaders()
                    for (name, value) in request.headers { head.add(name: name, value: value) }
                    let ask = try HTTPClient.Request(url: url, method: .GET, headers: head)
                    let task = client.execute(request: ask, delegate: exchange, deadline: .now() + .hours(24))
                    loop = task.eventLoop
                    try await withTaskCancellationHandler {
                        _ = try await task.futureResult.get()
                    } onCancel: {
                        task.cancel()
                    }
                } catch {
                    failure = error
                }
                // The bytes that arrived are on disk, and the file closed, before they are counted.
                if let loop { try? await exchange.settled(on: loop).get() }
                if let error = exchange.fileFailure as? MediaMuxError { throw error }
                let answer = exchange.answer
                if case .write? = answer?.decision, let answer { validators = answer.validators }
                if let failure { try rethrowIfCancelled(failure) }
                guard let answer else {
                    // No response at all: a connection failure, judged like one.
                    let error = failure ?? MediaMuxError.network(url: url, reason: "no response")
                    if let error = error as? MediaMuxError { throw error }
                    switch policy.decide(classify(error), attempt: attempt, revalidating: revalidating != nil) {
                    case .retry(let wait):
                        try await Task.sleep(for: wait)
                        continue
                    case .fail(let error):
                        throw error
                    case .notModified, .complete, .restart, .write:
                        throw MediaMuxError.network(url: url, reason: "no response")
                    }
                }
                switch answer.decision {
                case .notModified:
                    return TransferOutcome(finalURL: answer.finalURL, validators: revalidating ?? ResourceValidators(), bytes: 0,
                                           notModified: true, resumedFrom: 0, attempts: attempt)
                case .complete(let total):
                    meter.finish(bytes: total, total: total)
                    return TransferOutcome(finalURL: answer.finalURL, validators: validators ?? ResourceValidators(), bytes: total,
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
                    if start == 0 { resumedFrom = 0 } else if resumedFrom == 0 { resumedFrom = start }
                    // A body framed by the connection's close ends cleanly in the parser;
                    // an error here is a cut (Content-Length or chunked body short).
                    if let failure {
                        if let error = failure as? MediaMuxError { throw error }
                        // Whatever broke the body, the bytes so far are kept for a resume.
                        let broken: TransferFailure
                        switch classify(failure) {
                        case .idle: broken = .idle
                        case .tls(let reason): broken = .tls(reason)
                        default: broken = .truncated(received: answer.written, expected: total)
                        }
                        let next = policy.decide(broken, attempt: attempt)
                        if case .retry(let wait) = next {
                            try await Task.sleep(for: wait)
                            continue
                        }
                        if case .fail(let error) = next { throw error }
                        throw MediaMuxError.network(url: url, reason: "\(broken)")
                    }
                    let received = answer.written
                    // The delegate refuses an oversized body; a refusal can be lost when the
                    // connection fails at the same moment, so the size is checked again.
                    if received > options.maximumBytes { throw MediaMuxError.tooLarge(url: url, limit: options.maximumBytes) }
                    if let next = policy.decideEnd(received: received, expected: total, attempt: attempt) {
                        if case .retry(let wait) = next {
                            try await Task.sleep(for: wait)
                            continue
                        }
                        if case .fail(let error) = next { throw error }
                    }
                    meter.finish(bytes: received, total: total)
                    return TransferOutcome(finalURL: answer.finalURL, validators: validators ?? answer.validators, bytes: received,
                                           notModified: false, resumedFrom: resumedFrom, attempts: attempt)
                }
            }
        }
    }

    private func rethrowIfCancelled(_ error: any Error) throws {
        if error is CancellationError || Task.isCancelled { throw MediaMuxError.cancelled(path: url) }
        if let client = error as? HTTPClientError, client == .cancelled { throw MediaMuxError.cancelled(path: url) }
    }
}

/// The policy's view of a response head.
package func responseFacts(status: Int, headers: HTTPHeaders) -> ResponseFacts {
    let range = parseContentRange(headers.first(name: "Content-Range"))
    return ResponseFacts(
        status: status,
        contentLength: headers.first(name: "Content-Length").flatMap { Int64($0) },
        rangeStart: range.start,
        rangeTotal: range.total,
        retryAfter: headers.first(name: "Retry-After"))
}

/// One request's response, taken as it arrives: the policy judges the head;
/// a body it wants is written into the partial file chunk by chunk. The file
/// work (recording the validators, opening, writing) runs on NIO's shared
/// thread pool, never on the event loop, whose other connections it would
/// hold up; each chunk's write is the future AsyncHTTPClient waits for
/// before it reads more, so a slow disk slows the transfer instead of
/// filling memory (as its FileDownloadDelegate does with NonBlockingFileIO).
/// Any other body is not read: the request is ended at its head. State sits
/// behind a lock: written on the pool, read by the transfer once the request is over.
package final class BodyExchange: HTTPClientResponseDelegate, Sendable {
    package typealias Response = Void

    /// What the head said and the policy decided, and what was written.
    package struct Answer {
        package var decision: TransferDecision
        package var validators: ResourceValidators
        package var finalURL: String
        package var written: Int64
    }

    /// Ends a request whose body is not wanted.
    package struct BodyNotWanted: Error {}

    private struct State: ~Copyable {
        var answer: Answer?
        var finalURL: String
        /// The partial file while a body is written into it.
        var file: SystemPackage.FileDescriptor?
        var position: Int64 = 0
        /// The last file operation queued: each starts when it ends.
        var lastOperation: EventLoopFuture<Void>?
        /// The first file operation that failed, and why: the ones after it
        /// are not done (a write after a failed one would land at its place).
        var failure: (any Error)?
        /// Where the body's bytes accepted so far end in the file.
        var received: Int64 = 0
        /// Bytes accepted and not yet written.
        var unwritten = 0
        /// Parts accepted and not yet taken by a write, in order.
        var pending: [ByteBuffer] = []
        /// Completed by the write queued for `pending`, until it takes them:
        /// parts that arrive meanwhile join that write instead of queueing their own.
        var nextWrite: EventLoopPromise<Void>?
    }

    /// Bytes accepted ahead of the disk before the client is made to wait:
    /// what has arrived is taken (and so kept for a resume, even when the
    /// connection fails next), with memory bounded.
    static let writeAhead = 1 << 20

    private let path: String
    private let url: String
    private let policy: TransferPolicy
    private let offset: Int64
    private let attempt: Int
    private let revalidating: Bool
    private let maximumBytes: Int64
    private let meter: ProgressMeter
    private let save: @Sendable (ResourceValidators) throws -> Void
    /// When the request went out: the progress rate is measured from here.
    private let requested = ContinuousClock.now
    private let state: Locked<State>
    /// Where the file work runs.
    private let threadPool = NIOThreadPool.singleton

    package init(path: String, url: String, policy: TransferPolicy, offset: Int64, attempt: Int, revalidating: Bool, maximumBytes: Int64, meter: ProgressMeter,
        save: @escaping @Sendable (ResourceValidators) throws -> Void
    ) {
        self.path = path
        self.url = url
        self.policy = policy
        self.offset = offset
        self.attempt = attempt
        self.revalidating = revalidating
        self.maximumBytes = maximumBytes
        self.meter = meter
        self.save = save
        state = Locked(State(finalURL: url))
    }

    deinit {
        // Closed by the queued close; this is for an exchange dropped before any.
        let file = state.withLock { state in
            defer { state.file = nil }
            return state.file
        }
        try? file?.close()
    }

    /// What the head said and the policy decided, and what was written: final once `settled` has completed.
    package var answer: Answer? { state.withLock { $0.answer } }

    /// Completes when every file operation queued so far has run, the close included.
    package func settled(on loop: any EventLoop) -> EventLoopFuture<Void> {
        let last = state.withLock { $0.lastOperation } ?? loop.makeSucceededVoidFuture()
        return last.hop(to: loop).flatMapErrorThrowing { _ in }
    }

    /// Why the body could not be written (the cache's error, a body over the
    /// limit), once `settled` has completed; nil when it was.
    package var fileFailure: (any Error)? { state.withLock { $0.failure } }

    /// Runs `operation` on the thread pool after the operations queued
    /// before it. After one fails, only closing operations (`always`) run.
    private func queue(
        on loop: any EventLoop, always: Bool = false, _ operation: @escaping @Sendable () throws -> Void
    ) -> EventLoopFuture<Void> {
        let pool = threadPool
        return state.withLock { state in
            let previous = state.lastOperation?.hop(to: loop).flatMapErrorThrowing { _ in } ?? loop.makeSucceededVoidFuture()
            let next = previous.flatMap { [self] in
                pool.runIfActive(eventLoop: loop) { [self] in
                    if !always, self.state.withLock({ $0.failure != nil }) { throw BodyNotWanted() }
                    do {
                        try operation()
                    } catch {
                        self.state.withLock { $0.failure = $0.failure ?? error }
                        throw error
                    }
                }
            }
            state.lastOperation = next
            return next
        }
    }

    package func didVisitURL(task: HTTPClient.Task<Void>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
        state.withLock { $0.finalURL = request.url.absoluteString }
    }

    package func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let decision = policy.decide(
            responseFacts(status: Int(head.status.code), headers: head.headers), requestedOffset: offset, attempt: attempt,
            revalidating: revalidating)
        var validators = ResourceValidators(
            etag: head.headers.first(name: "ETag"), lastModified: head.headers.first(name: "Last-Modified"),
            contentType: head.headers.first(name: "Content-Type"), totalBytes: nil)
        if case .write(_, let total) = decision { validators.totalBytes = total }
        let answer = state.withLock { state in
            state.answer = Answer(decision: decision, validators: validators, finalURL: state.finalURL, written: 0)
            return state.answer
        }
        guard case .write(let start, _)? = answer?.decision else { return task.eventLoop.makeFailedFuture(BodyNotWanted()) }
        let validatorsToSave = validators
        state.withLock { $0.received = start }
        // Not waited for: the body's first bytes are taken while the file opens.
        _ = queue(on: task.eventLoop) { [self] in
            // What the partial file will hold is on record before its first byte,
            // so even a killed process leaves a partial that resumes correctly.
            try save(validatorsToSave)
            let file = try openPartial(from: start)
            state.withLock { state in
                state.file = file
                state.position = start
                state.answer?.written = start
            }
            meter.startBody(at: start, requested: requested)
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    /// Takes a part of the body: it joins the parts waiting for the disk,
    /// which one queued write takes together (a part per write would cost a
    /// hop to the pool for every few kilobytes), and the client waits only
    /// when more than `writeAhead` bytes are waiting.
    package func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let count = buffer.readableBytes
        let accepted: Result<(write: EventLoopPromise<Void>, isNew: Bool, unwritten: Int), any Error> = state.withLock { state in
            if let failure = state.failure { return .failure(failure) }
            guard case .write? = state.answer?.decision else { return .failure(BodyNotWanted()) }
            state.received += Int64(count)
            if state.received > maximumBytes { return .failure(MediaMuxError.tooLarge(url: url, limit: maximumBytes)) }
            state.unwritten += count
            state.pending.append(buffer)
            if let queued = state.nextWrite { return .success((queued, false, state.unwritten)) }
            let write = task.eventLoop.makePromise(of: Void.self)
            state.nextWrite = write
            return .success((write, true, state.unwritten))
        }
        let write: EventLoopPromise<Void>
        switch accepted {
        case .success(let taken):
            write = taken.write
            if taken.isNew { queue(on: task.eventLoop) { [self] in try writePending() }.cascade(to: write) }
            if taken.unwritten <= Self.writeAhead { return task.eventLoop.makeSucceededVoidFuture() }
        case .failure(let error):
            return task.eventLoop.makeFailedFuture(error)
        }
        return write.futureResult
    }

    /// Writes every part waiting, in order, at the end of what is written;
    /// on the pool, one queued operation at a time, so the file and its
    /// position are this call's alone while it runs.
    private func writePending() throws {
        let (parts, file, position, total) = try state.withLock { state in
            defer {
                state.pending.removeAll(keepingCapacity: true)
                state.nextWrite = nil
            }
            guard let file = state.file, case .write(_, let total)? = state.answer?.decision else { throw BodyNotWanted() }
            return (state.pending, file, state.position, total)
        }
        var reached = position
        for part in parts {
            do {
                try file.writeAll(toAbsoluteOffset: reached, part.readableBytesView)
            } catch {
                throw MediaMuxError.cache(path: path, reason: systemErrorText(error))
            }
            reached += Int64(part.readableBytes)
            // Part by part, as the bytes reach the file, however many a write takes
            // (the meter keeps to its pace); outside the lock, as the caller's handler runs here.
            meter.report(bytes: reached, total: total)
        }
        state.withLock { state in
            state.unwritten -= Int(reached - position)
            state.position = reached
            state.answer?.written = reached
        }
    }

    package func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
        _ = queue(on: task.eventLoop, always: true) { [self] in closeFile() }
    }

    package func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        _ = queue(on: task.eventLoop, always: true) { [self] in closeFile() }
    }

    private func closeFile() {
        let file = state.withLock { state in
            defer { state.file = nil }
            return state.file
        }
        try? file?.close()
    }

    /// The partial file, ready for bytes from `start` on. Starting over gets a
    /// new file: truncating one to zero makes ext4 write all of it back on
    /// close (its protection for replace-by-truncate).
    private func openPartial(from start: Int64) throws -> SystemPackage.FileDescriptor {
        if start == 0 { removeFile(path) }
        do {
            let file = try SystemPackage.FileDescriptor.open(FilePath(path), .writeOnly, options: [.create, .closeOnExec], permissions: .createdFile)
            guard fileSize(path) != start else { return file }
            do {
                try file.resize(to: start)
            } catch {
                try? file.close()
                throw error
            }
            return file
        } catch {
            throw MediaMuxError.cache(path: path, reason: systemErrorText(error))
        }
    }
}

/// Names a failed attempt in the policy's terms, by the types that
/// AsyncHTTPClient, NIO and NIOSSL throw.
package func classify(_ error: any Error) -> TransferFailure {
    switch error {
    case let client as HTTPClientError:
        return classify(client)
    case let connection as NIOConnectionError:
        // A host name: its address look-ups, then a connection to each address found.
        let attempts = connection.connectionErrors.map { classify($0.error) }
        if let connecting = attempts.first(where: { if case .connection = $0 { true } else { false } }) { return connecting }
        if let first = attempts.first { return first }
        if connection.dnsAError != nil || connection.dnsAAAAError != nil { return .connection("the host name could not be resolved") }
        return .connection("could not connect")
    case is SocketAddressError.UnknownHost:
        return .connection("the host name could not be resolved")
    case let io as IOError:
        return classify(errno: io.errnoCode)
    case let channel as ChannelError:
        switch channel {
        case .connectTimeout: return .connection("could not connect in time")
        case .writeHostUnreachable: return .connection("could not connect (the host is unreachable)")
        case .eof, .inputClosed, .outputClosed, .ioOnClosedChannel, .alreadyClosed: return .truncated(received: 0, expected: nil)
        default: return .other("the connection failed (\(channel))")
        }
    case let parser as HTTPParserError:
        switch parser {
        case .invalidEOFState, .closedConnection: return .truncated(received: 0, expected: nil)
        default: return .other("the server's answer is not valid HTTP (\(parser))")
        }
    case let tls as NIOSSLError:
        switch tls {
        case .handshakeFailed(let failure): return .tls(handshakeReason(failure))
        case .uncleanShutdown: return .truncated(received: 0, expected: nil)
        case .noCertificateToValidate, .unableToValidateCertificate: return .tls("the server's certificate is not trusted")
        default: return .tls("\(tls)")
        }
    case let tls as NIOSSLExtraError where tls == .failedToValidateHostname || tls == .serverHostnameImpossibleToMatch:
        return .tls("the certificate is for another host name")
    case let tls as NIOSSLExtraError:
        return .tls("\(tls)")
    case let failure as BoringSSLError:
        return .tls(handshakeReason(failure))
    default:
        return .other(String(describing: error))
    }
}

private func classify(_ client: HTTPClientError) -> TransferFailure {
    switch client {
    case .readTimeout: return .idle
    case .connectTimeout, .getConnectionFromPoolTimeout: return .connection("could not connect in time")
    case .remoteConnectionClosed: return .truncated(received: 0, expected: nil)
    case .redirectLimitReached: return .redirects("too many redirects")
    case .redirectCycleDetected: return .redirects("the redirects go round in a loop")
    case .tlsHandshakeTimeout: return .tls("handshake timed out")
    case .deadlineExceeded: return .other("the transfer took longer than its deadline")
    case .cancelled, .alreadyShutdown: return .other("the HTTP client stopped the request")
    default: return .other("the request failed (\(client.shortDescription))")
    }
}

/// A socket's errno, from connecting or reading.
private func classify(errno code: Int32) -> TransferFailure {
    switch code {
    case ECONNREFUSED: return .connection("connection refused")
    case ECONNRESET, ECONNABORTED, EPIPE: return .truncated(received: 0, expected: nil)
    default: return .connection("could not connect (\(systemErrorText(code)))")
    }
}

/// A failed TLS handshake in words, not BoringSSL's error dump. BoringSSL's
/// packed error codes are private to NIOSSL (`BoringSSLInternalError` shows
/// only its description), so which handshake error it was is read from the
/// reason names BoringSSL puts in that text; this is the one place where an
/// error is recognised by its text.
private func handshakeReason(_ failure: BoringSSLError) -> String {
    let stack: NIOBoringSSLErrorStack
    switch failure {
    case .sslError(let errors), .unknownError(let errors): stack = errors
    default: return "the handshake failed"
    }
    if stack.contains(.eofDuringHandshake) { return "the server closed the connection during the handshake" }
    let text = stack.map(\.description).joined(separator: " ")
    if text.contains("WRONG_VERSION_NUMBER") { return "the server does not speak TLS on this port (try http://)" }
    if text.contains("CERTIFICATE_VERIFY_FAILED") { return "the server's certificate is not trusted" }
    return "the handshake failed"
}

/// Progress through the base's throttle (at most ten reports a second),
/// with a rate over the last half second. Until the first half second has
/// passed, the rate is measured from when the request went out, so the first
/// reports after bytes arrive already carry a rate and the time left.
/// Reported from the event loop while a body arrives, finished by the
/// transfer's task: the state is behind a lock.
package final class ProgressMeter: Sendable {
    package static let window: Duration = .milliseconds(500)

    private struct State {
        var throttle = ProgressThrottle()
        /// Where the window being measured starts: an instant and the bytes then.
        var start: (instant: ContinuousClock.Instant, bytes: Int64)?
        /// Whether a whole window has been measured since the body started.
        var filled = false
        var rate: Double = 0

        mutating func measure(bytes: Int64, at now: ContinuousClock.Instant) {
            guard let start else {
                self.start = (now, bytes)
                return
            }
            let elapsed = now - start.instant
            guard elapsed > .zero else { return }
            let measured = Double(bytes - start.bytes) / elapsed.seconds
            if elapsed >= ProgressMeter.window {
                rate = measured
                self.start = (now, bytes)
                filled = true
            } else if !filled {
                rate = measured
            }
        }
    }

    private let sink: (@Sendable (DownloadProgress) -> Void)?
    private let state = Locked(State())

    package init(sink: (@Sendable (DownloadProgress) -> Void)?) {
        self.sink = sink
    }

    /// A body starts at `bytes` (what the partial file already holds) for a
    /// request sent at `requested`: the rate is measured afresh from then.
    package func startBody(at bytes: Int64, requested: ContinuousClock.Instant) {
        state.withLock { state in
            state.start = (requested, bytes)
            state.filled = false
            state.rate = 0
        }
    }

    package func report(bytes: Int64, total: Int64?) {
        guard let sink else { return }
        let now = ContinuousClock.now
        let due: DownloadProgress? = state.withLock { state in
            state.measure(bytes: bytes, at: now)
            guard state.throttle.isDue(at: now) else { return nil }
            return Self.progress(bytes: bytes, total: total, rate: state.rate)
        }
        if let due { sink(due) }
    }

    /// The last report, once the body is complete: always made, whatever the throttle says.
    package func finish(bytes: Int64, total: Int64?) {
        guard let sink else { return }
        let rate = state.withLock { $0.rate }
        sink(Self.progress(bytes: bytes, total: total ?? bytes, rate: rate))
    }

    private static func progress(bytes: Int64, total: Int64?, rate: Double) -> DownloadProgress {
        var remaining: Duration?
        if let total, total <= bytes {
            remaining = .zero
        } else if let total, rate > 0 {
            remaining = .seconds(Double(total - bytes) / rate)
        }
        return DownloadProgress(bytesReceived: bytes, totalBytes: total, bytesPerSecond: rate, remaining: remaining)
    }
}

package func truncate(_ path: String, to length: Int64) throws {
    do {
        let file = try SystemPackage.FileDescriptor.open(FilePath(path), .writeOnly, options: [.create, .closeOnExec], permissions: .createdFile)
        try file.closeAfter { try file.resize(to: length) }
    } catch {
        throw MediaMuxError.cache(path: path, reason: systemErrorText(error))
    }
}

private func timeAmount(_ duration: Duration) -> TimeAmount {
    let (seconds, attoseconds) = duration.components
    return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
}
