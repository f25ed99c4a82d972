import MediaMuxBase
public import NIOCore
import Synchronization

/// A merge's output as its consumer pulls it: fragmented MP4 in chunks of
/// NIO's `ByteBuffer`, the currency of Swift's HTTP servers (a Hummingbird
/// `ResponseBody(asyncSequence:)` or a Vapor body stream takes them as they
/// are). Made by `MergeEngine.body(video:audio:name:options:progress:)`
/// (or `MuxEngine.body(for:)`), once the merge is planned, its inputs open
/// and its header made: every error that can be known before the first
/// byte has been thrown by then.
///
/// The merge advances only while the consumer pulls. A pull that finds no
/// chunk ready writes packets on a thread of the runtime's pool until about
/// a megabyte is ready (or the end), and gives the thread back: while the
/// consumer waits, no thread is held and the merge holds that megabyte,
/// its open files and the muxer's fragment. A chunk is handed over as it
/// was made, not copied again.
///
/// Errors found after the first byte (an input damaged or cut short
/// further on, a failed read, an encoder that fails) are thrown from the
/// sequence, and the body ends there: never a silently short body.
/// Cancelling the task that pulls fails that pull with `.cancelled`; then,
/// or once the sequence is dropped, the merge is closed and freed. The
/// sequence is read once: a second iteration gets what the first left.
public struct MergeBody: AsyncSequence, Sendable {
    public typealias Element = ByteBuffer
    public typealias Failure = MediaMuxError

    let merge: PulledMerge

    /// Every decision the merge carries out.
    public var plan: MergePlan { merge.plan }

    /// What was written, once the last chunk has been taken; nil before,
    /// and after a failure.
    public var report: MergeReport? { merge.report }

    public func makeAsyncIterator() -> Iterator {
        Iterator(merge: merge)
    }

    public struct Iterator: AsyncIteratorProtocol {
        let merge: PulledMerge

        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(MediaMuxError) -> ByteBuffer? {
            try await merge.next()
        }

        public mutating func next() async throws(MediaMuxError) -> ByteBuffer? {
            try await merge.next()
        }
    }
}

/// The state behind a `MergeBody`: the started merge, the chunks made and
/// not yet taken, and how it ended. One pull at a time advances it (a
/// second one waiting its turn); the merge itself runs only on a pool
/// thread, inside a pull.
final class PulledMerge: Sendable {
    let plan: MergePlan
    private let runtime: MediaRuntime
    private let flag: CancellationFlag
    private let chunks: ChunkQueue
    /// Run once, when the merge ends or is dropped (a scratch soundtrack removed).
    private let cleanup: (@Sendable () -> Void)?
    private let state: Mutex<State>
    /// Pulls wait here for the one advancing the merge.
    private let turn = AsyncTurn()

    private struct State: ~Copyable {
        /// Nil once the merge has ended, well or not.
        var remuxer: Remuxer.Unchecked?
        var report: MergeReport?
        var cleanedUp = false
    }

    /// Chunks made ahead of the consumer before the merge stops to wait.
    static let readyAhead = 1 << 20

    init(plan: MergePlan, remuxer: Remuxer, chunks: ChunkQueue, runtime: MediaRuntime, flag: CancellationFlag, cleanup: (@Sendable () -> Void)?) {
        self.plan = plan
        self.runtime = runtime
        self.flag = flag
        self.chunks = chunks
        self.cleanup = cleanup
        state = Mutex(State(remuxer: Remuxer.Unchecked(remuxer)))
    }

    deinit {
        // Dropped before its end: the merge's files close with the remuxer.
        end(report: nil)
    }

    var report: MergeReport? { state.withLock { $0.report } }

    /// The next chunk, advancing the merge when none is ready; nil at the end.
    func next() async throws(MediaMuxError) -> ByteBuffer? {
        if let chunk = chunks.take() { return chunk }
        return try await turn.run { () async throws(MediaMuxError) -> ByteBuffer? in
            if let chunk = chunks.take() { return chunk }
            guard let remuxer = state.withLock({ $0.remuxer }) else { return nil }
            let chunks = self.chunks
            let plan = self.plan
            do throws(MediaMuxError) {
                let execution = try await typedErrors(subject: plan.outputPath) {
                    try await runFFmpeg(runtime, raising: flag) { _ -> PlanExecution? in
                        guard try remuxer.value.advance(until: { chunks.readyBytes >= Self.readyAhead }) else { return nil }
                        return try remuxer.value.complete()
                    }
                }
                if let execution { end(report: MergeReport(plan: plan, execution: execution)) }
            } catch {
                // Nothing more comes: what is queued is not handed on, as the body will not be whole.
                chunks.discard()
                end(report: nil)
                throw error
            }
            return chunks.take()
        }
    }

    private func end(report: MergeReport?) {
        let ended = state.withLock { state -> Bool in
            state.remuxer = nil
            state.report = report
            defer { state.cleanedUp = true }
            return !state.cleanedUp
        }
        if ended { cleanup?() }
    }
}

extension Remuxer {
    /// A started remuxer handed from pull to pull: only one pull at a time
    /// reaches it (`PulledMerge`'s turn), and only on a pool thread.
    struct Unchecked: @unchecked Sendable {
        let value: Remuxer
        init(_ value: Remuxer) { self.value = value }
    }
}

/// One at a time: a pull waits for the one before it to end, without a thread.
final class AsyncTurn: Sendable {
    private let state = Mutex<(busy: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func run<T>(_ body: () async throws(MediaMuxError) -> T) async throws(MediaMuxError) -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.busy {
                    state.waiting.append(continuation)
                    return false
                }
                state.busy = true
                return true
            }
            if now { continuation.resume() }
        }
        defer {
            let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
                if state.waiting.isEmpty {
                    state.busy = false
                    return nil
                }
                return state.waiting.removeFirst()
            }
            next?.resume()
        }
        return try await body()
    }
}

/// The bytes a pulled merge has made and its consumer not yet taken, in
/// chunks of up to `chunkBytes`: written by the merge's thread inside a
/// pull, taken by the consumer; it never blocks. FFmpeg's bytes are copied
/// once, into the chunk that is handed over.
final class ChunkQueue: ByteSink, Sendable {
    let name: String
    static let chunkBytes = 256 << 10
    private let state: Mutex<State>
    private let allocator = ByteBufferAllocator()

    private struct State: ~Copyable {
        /// Whole chunks, oldest first from `first`.
        var ready: [ByteBuffer] = []
        var first = 0
        var readyBytes = 0
        /// The chunk being filled.
        var filling: ByteBuffer?
    }

    init(name: String) {
        self.name = name
        state = Mutex(State())
    }

    /// Bytes in whole chunks not yet taken.
    var readyBytes: Int { state.withLock { $0.readyBytes } }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var rest = bytes
        state.withLock { state in
            while !rest.isEmpty {
                var chunk = state.filling ?? allocator.buffer(capacity: Self.chunkBytes)
                let count = min(rest.count, Self.chunkBytes - chunk.readableBytes)
                chunk.writeBytes(UnsafeRawBufferPointer(rebasing: rest[..<count]))
                rest = UnsafeRawBufferPointer(rebasing: rest[count...])
                if chunk.readableBytes == Self.chunkBytes {
                    state.ready.append(chunk)
                    state.readyBytes += chunk.readableBytes
                    state.filling = nil
                } else {
                    state.filling = chunk
                }
            }
        }
    }

    /// The output is complete: the chunk being filled is ready as it is.
    func finish() throws {
        state.withLock { state in
            guard let chunk = state.filling else { return }
            state.filling = nil
            state.ready.append(chunk)
            state.readyBytes += chunk.readableBytes
        }
    }

    /// The oldest ready chunk, or nil.
    func take() -> ByteBuffer? {
        state.withLock { state in
            guard state.first < state.ready.count else { return nil }
            let chunk = state.ready[state.first]
            state.first += 1
            state.readyBytes -= chunk.readableBytes
            if state.first == state.ready.count {
                state.ready.removeAll(keepingCapacity: true)
                state.first = 0
            }
            return chunk
        }
    }

    /// Forgets every byte not yet taken.
    func discard() {
        state.withLock { state in
            state.ready.removeAll()
            state.first = 0
            state.readyBytes = 0
            state.filling = nil
        }
    }
}
