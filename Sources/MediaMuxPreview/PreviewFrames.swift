import MediaMuxBase
import MediaMuxCore

/// Decoded frames of a file as an asynchronous sequence, in time order.
/// Decoding happens on a thread of the runtime's pool, one frame per
/// `next()`, so a slow consumer holds at most one frame in memory. Failures
/// are `MediaMuxError`s naming the file; cancelling the consuming task stops
/// decoding at once, and `next()` throws `MediaMuxError.cancelled(path:)`.
/// After a failure the sequence ends.
public struct PreviewFrames: AsyncSequence, Sendable {
    /// One decoded picture.
    public typealias Element = PreviewFrame
    /// What iterating throws.
    public typealias Failure = MediaMuxError

    /// The video file the frames come from.
    public let path: String
    /// Which frames, at what size, in which layout.
    public let options: FrameOptions
    let runtime: MediaRuntime

    package init(path: String, options: FrameOptions, runtime: MediaRuntime) {
        self.path = path
        self.options = options
        self.runtime = runtime
    }

    /// An iterator that opens the file at its first `next()`; each iterator
    /// decodes the file anew.
    public func makeAsyncIterator() -> Iterator { Iterator(state: FrameStreamState(path: path, options: options, runtime: runtime)) }

    /// Decodes one frame per `next()`, on a thread of the runtime's pool.
    public struct Iterator: AsyncIteratorProtocol {
        /// One decoded picture.
        public typealias Element = PreviewFrame
        /// What `next()` throws.
        public typealias Failure = MediaMuxError

        fileprivate let state: FrameStreamState

        /// The next frame in time order, or nil after the last.
        ///
        /// - Throws: `MediaMuxError`: `.fileNotFound`, `.notAFile`,
        ///   `.unreadable`, `.notMedia` or `.damaged` when the file cannot be
        ///   read as media (or no picture can be decoded near a time asked
        ///   for); `.noStream` when it has no video stream;
        ///   `.streamIndexOutOfRange` when `FrameOptions.videoStream` names
        ///   none; `.unknownDuration` when the video's length is not known;
        ///   `.invalidOption` for a size outside 1-8192, a time before zero or
        ///   past the end, or a selection of no frames or more than 100,000;
        ///   `.ffmpeg` when decoding or scaling fails; `.cancelled` naming the
        ///   file when the consuming task is cancelled; `.runtimeStopped` when
        ///   the runtime's thread pool has shut down. After a failure the
        ///   sequence ends.
        public mutating func next() async throws(MediaMuxError) -> PreviewFrame? { try await state.next() }

        /// The next frame, as `next()` gives it.
        ///
        /// - Parameter actor: The caller's actor; the frame is decoded on the pool regardless.
        /// - Throws: What `next()` throws.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(MediaMuxError) -> PreviewFrame? {
            try await state.next()
        }
    }
}

/// The reader between steps of one iterator. Each step runs on a pool
/// thread; the lock hands the reader from one to the next and is never held
/// while decoding (an iterator's `next()` is never called concurrently).
private final class FrameStreamState: Sendable {
    private struct Handoff: @unchecked Sendable {
        let reader: FrameReader
    }

    private struct Stepping: ~Copyable {
        var reader: FrameReader?
        var finished = false
    }

    let path: String
    let options: FrameOptions
    private let flag = CancellationFlag()
    private let stepping = Locked(Stepping())
    private let pace = Locked<(started: ContinuousClock.Instant, firstTime: MediaTime)?>(nil)

    let runtime: MediaRuntime

    init(path: String, options: FrameOptions, runtime: MediaRuntime) {
        self.path = path
        self.options = options
        self.runtime = runtime
    }

    func next() async throws(MediaMuxError) -> PreviewFrame? {
        do {
            guard let frame = try await runFFmpeg(runtime, raising: flag, { [self] _ in try step() }) else { return nil }
            if options.paced { try await wait(for: frame) }
            return frame
        } catch {
            stepping.withLock { $0.finished = true; $0.reader = nil }
            throw MediaMuxError(error, subject: path)
        }
    }

    /// Takes the reader out of the lock, decodes one frame without holding
    /// it, and puts the reader back.
    private func step() throws -> PreviewFrame? {
        let (finished, taken) = stepping.withLock { state -> (Bool, FrameReader?) in
            let reader = state.reader
            state.reader = nil
            return (state.finished, reader)
        }
        guard !finished else { return nil }
        let reader: FrameReader
        if let taken {
            reader = taken
        } else {
            let info = try Prober(cancellation: flag).probe(path: path)
            reader = try FrameReader(
                plan: PreviewPlanner.framePlan(info, options: options), threads: runtime.decodingThreads, cancellation: flag)
        }
        guard let frame = try reader.next() else {
            stepping.withLock { $0.finished = true }
            return nil
        }
        // Only one step at a time ever holds the reader (an iterator's next()
        // is never concurrent), so handing it back to the lock is safe.
        let handedBack = Handoff(reader: reader)
        stepping.withLock { $0.reader = handedBack.reader }
        return frame
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
