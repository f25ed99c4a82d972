import MediaMuxBase
import AsyncHTTPClient
import NIOCore
import NIOHTTP1
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
