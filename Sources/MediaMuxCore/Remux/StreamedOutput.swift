import MediaMuxBase
import NIOConcurrencyHelpers

/// Where a merge writes: a file, or a stream of fragmented MP4 made as it
/// goes. A file's name converts to it: `let output: MergeOutput = "out.mp4"`.
public enum MergeOutput: Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// A file by its path: .mp4, .m4v or .mov, written to a hidden file
    /// beside it and moved into place when complete.
    case file(String)
    /// Fragmented MP4, streamed as it is made (see `OutputLayout.fragmented`).
    case stream(MergeStream)

    public init(stringLiteral path: String) {
        self = .file(path)
    }

    /// The output as errors and the report name it: the file's path, or the stream's name.
    public var name: String {
        switch self {
        case .file(let path): return path
        case .stream(let stream): return stream.name
        }
    }

    public var description: String { name }
}

/// Where a merge streamed as it is made goes: fragmented MP4, in pieces,
/// in order, never sought back to (see `OutputLayout.fragmented`).
public struct MergeStream: Sendable {
    /// The output as errors and the report name it.
    public var name: String
    let target: Target

    enum Target: Sendable {
        case standardOutput
        case writer(@Sendable ([UInt8]) async throws -> Void)
    }

    /// The process's standard output, written directly. A reader that stops
    /// reading fails the merge with `.outputNotWritable` ("broken pipe"),
    /// and the process should ignore SIGPIPE, as muxctl does.
    public static let standardOutput = MergeStream(name: "standard output", target: .standardOutput)

    /// A writer of your own: called with each piece of the output, in
    /// order, one call at a time; the merge waits while a megabyte is
    /// written and not yet taken. A writer that throws stops the merge,
    /// which then throws `.outputNotWritable` naming `name`.
    ///
    /// - Parameters:
    ///   - name: The output as errors and the report name it ("response").
    ///   - write: Takes each piece (at most 256 KiB).
    public init(name: String, write: @escaping @Sendable ([UInt8]) async throws -> Void) {
        self.init(name: name, target: .writer(write))
    }

    private init(name: String, target: Target) {
        self.name = name
        self.target = target
    }

    /// Runs `merge` with a sink for this stream, on the thread it runs on:
    /// standard output written from that thread, or the caller's writer fed
    /// from a task of its own through a bounded hand-off.
    func run<Result: Sendable>(
        _ merge: @escaping @Sendable (any ByteSink) async throws -> Result
    ) async throws -> Result {
        switch target {
        case .standardOutput:
            return try await merge(DescriptorSink.standardOutput())
        case .writer(let write):
            let channel = ChunkChannel(name: name)
            async let drained: Void = channel.drain(into: write)
            let result: Swift.Result<Result, any Error>
            do {
                result = .success(try await merge(channel))
            } catch {
                result = .failure(error)
                // What is queued is not handed on: the output will not be whole.
                channel.stop(error)
            }
            channel.close()
            do {
                try await drained
            } catch {
                // The merge failed first or for it: its own error says more.
                if case .failure(let failure) = result { throw failure }
                throw MediaMuxError.outputNotWritable(path: name, reason: "its writer failed: \(error)")
            }
            return try result.get()
        }
    }
}

/// A hand-off from the merge's thread, which blocks while `limit` bytes
/// wait, to an async task that takes the pieces one by one. Either side
/// can end it: the merge by closing it, the reader by stopping, which
/// makes the merge's next write fail.
final class ChunkChannel: ByteSink, @unchecked Sendable {
    let name: String
    /// Its value is 1 while the merge may go on writing (room, or the
    /// reader gone), 0 while it must wait; it guards everything below.
    private let room = ConditionLock<Int>(value: 1)
    private var queue: [[UInt8]] = []
    private var first = 0
    private var queuedBytes = 0
    private var closed = false
    private var stopped: (any Error)?
    private var waiting: CheckedContinuation<[UInt8]?, Never>?
    static let limit = 1 << 20

    init(name: String) {
        self.name = name
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        let piece = [UInt8](bytes)
        room.lock()
        if let stopped {
            room.unlock()
            throw readerStopped(stopped)
        }
        if let reader = waiting {
            waiting = nil
            room.unlock()
            reader.resume(returning: piece)
        } else {
            queue.append(piece)
            queuedBytes += piece.count
            room.unlock(withValue: queuedBytes < Self.limit ? 1 : 0)
        }
        room.lock(whenValue: 1)
        let stopped = self.stopped
        room.unlock()
        if let stopped { throw readerStopped(stopped) }
    }

    func finish() throws {}

    private func readerStopped(_ error: any Error) -> MediaMuxError {
        .outputNotWritable(path: name, reason: "its writer stopped: \(error)")
    }

    /// The merge is over (done or failed): the reader takes what is queued, then ends.
    func close() {
        room.lock()
        closed = true
        let reader = waiting
        waiting = nil
        room.unlock()
        reader?.resume(returning: nil)
    }

    /// Hands each piece to `write` until the merge closes the channel;
    /// a failed write stops the channel and is rethrown.
    func drain(into write: @Sendable ([UInt8]) async throws -> Void) async throws {
        while let piece = await next() {
            do {
                try await write(piece)
            } catch {
                stop(error)
                throw error
            }
        }
    }

    private func next() async -> [UInt8]? {
        await withCheckedContinuation { reader in
            room.lock()
            if first < queue.count {
                let piece = queue[first]
                first += 1
                if first == queue.count {
                    queue.removeAll(keepingCapacity: true)
                    first = 0
                }
                queuedBytes -= piece.count
                room.unlock(withValue: queuedBytes < Self.limit ? 1 : 0)
                reader.resume(returning: piece)
            } else if closed {
                room.unlock()
                reader.resume(returning: nil)
            } else {
                waiting = reader
                room.unlock()
            }
        }
    }

    /// Nothing more is taken or handed on; the merge's next write fails with `error`.
    func stop(_ error: any Error) {
        room.lock()
        stopped = error
        queue.removeAll()
        first = 0
        queuedBytes = 0
        room.unlock(withValue: 1)
    }
}
