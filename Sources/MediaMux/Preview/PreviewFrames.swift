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

/// The reader between steps of one iterator. `@unchecked Sendable`: an
/// iterator's `next()` is never called concurrently, so the fields are only
/// touched by one step at a time, each of which hands over to the next.
private final class FrameStreamState: @unchecked Sendable {
    let path: String
    let options: FrameOptions
    private let flag = CancellationFlag()
    private var reader: FrameReader?
    private var finished = false
    private var pace: (started: ContinuousClock.Instant, firstTime: MediaTime)?

    init(path: String, options: FrameOptions) {
        self.path = path
        self.options = options
    }

    func next() async throws -> PreviewFrame? {
        guard !finished else { return nil }
        do {
            guard let frame = try await runBlocking(raising: flag, { [self] _ in try step() }) else {
                finish()
                return nil
            }
            if options.paced { try await wait(for: frame) }
            return frame
        } catch {
            finish()
            throw error
        }
    }

    private func step() throws -> PreviewFrame? {
        if reader == nil {
            let info = try Prober(cancellation: flag).probe(path: path)
            reader = try FrameReader(plan: PreviewPlanner.framePlan(info, options: options), cancellation: flag)
        }
        return try reader?.next()
    }

    /// Holds a frame back until it is due, counting from the first one.
    private func wait(for frame: PreviewFrame) async throws {
        let clock = ContinuousClock()
        guard let pace else {
            self.pace = (clock.now, frame.time)
            return
        }
        let due = pace.started + .seconds((frame.time - pace.firstTime).seconds)
        try await clock.sleep(until: due)
    }

    private func finish() {
        finished = true
        reader = nil
    }
}
