import MediaMuxBase
import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOPosix
import SystemPackage

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
/// work (recording the validators, opening, writing) runs on the transfers'
/// own threads (`transferFiles`), never on the event loop, whose other
/// connections it would hold up; each chunk's write is the future AsyncHTTPClient waits for
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
    private let threadPool = BodyExchange.transferFiles

    /// Threads for the writes of every transfer in the process, and for
    /// nothing else. Not the runtime's pool: that one runs jobs, each
    /// holding a thread for the length of an encode, and a write queued
    /// behind them would leave the connection unread until its idle
    /// timeout ended it (seen: merges on both threads of a two-core
    /// machine stalled a download for 15 s). A write is short, so two
    /// threads keep up with any number of transfers; started on first use
    /// and kept for the life of the process, like NIO's own shared pool.
    private static let transferFiles: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 2)
        pool.start()
        return pool
    }()

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
