import MediaMuxBase
import MediaMuxCore
import Synchronization

/// Decoded frames of a file as an asynchronous sequence, in time order.
/// Decoding happens on a thread of its own, one frame per `next()`, so a slow
/// consumer holds at most one frame in memory; cancelling the consuming task
/// stops decoding at once.
public struct PreviewFrames: AsyncSequence, Sendable {
    public typealias Element = PreviewFrame
    public typealias Failure = any Error

    public let path: String
    public let options: FrameOptions

    public func makeAsyncIterator() -> Iterator { Iterator(state: FrameStreamState(path: path, options: options)) }

    public struct Iterator: AsyncIteratorProtocol {
        fileprivate let state: FrameStreamState

        public mutating func next() async throws -> PreviewFrame? { try await state.next() }
    }
}

/// The reader between steps of one iterator. Each step runs on a thread of
/// its own; the lock hands the reader from one to the next (an iterator's
/// `next()` is never called concurrently, so it is never contended).
private final class FrameStreamState: Sendable {
    private struct Stepping: ~Copyable {
        var reader: FrameReader?
        var finished = false
    }

    let path: String
    let options: FrameOptions
    private let flag = CancellationFlag()
    private let stepping = Mutex(Stepping())
    private let pace = Mutex<(started: ContinuousClock.Instant, firstTime: MediaTime)?>(nil)

    init(path: String, options: FrameOptions) {
        self.path = path
        self.options = options
    }

    func next() async throws -> PreviewFrame? {
        do {
            guard let frame = try await runFFmpeg(raising: flag, { [self] _ in try step() }) else { return nil }
            if options.paced { try await wait(for: frame) }
            return frame
        } catch {
            stepping.withLock { $0.finished = true; $0.reader = nil }
            throw error
        }
    }

    private func step() throws -> PreviewFrame? {
        try stepping.withLock { state in
            guard !state.finished else { return nil }
            if state.reader == nil {
                let info = try Prober(cancellation: flag).probe(path: path)
                state.reader = try FrameReader(plan: PreviewPlanner.framePlan(info, options: options), cancellation: flag)
            }
            guard let frame = try state.reader?.next() else {
                state.finished = true
                state.reader = nil
                return nil
            }
            return frame
        }
    }

    /// Holds a frame back until it is due, counting from the first one.
    private func wait(for frame: PreviewFrame) async throws {
        let clock = ContinuousClock()
        let due: ContinuousClock.Instant? = pace.withLock { pace in
            guard let pace else {
                pace = (clock.now, frame.time)
                return nil
            }
            return pace.started + .seconds((frame.time - pace.firstTime).seconds)
        }
        if let due { try await clock.sleep(until: due) }
    }
}
