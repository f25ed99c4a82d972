/// The one throttle every long call's progress goes through: at most ten
/// reports a second, the first at once. A value: its owner keeps it with the
/// rest of its state (behind that state's lock, where there is one).
package struct ProgressThrottle: Sendable {
    package static let interval: Duration = .milliseconds(100)
    private var last: ContinuousClock.Instant?

    package init() {}

    /// True when a report is due now, and counts it as made.
    package mutating func isDue(at now: ContinuousClock.Instant = ContinuousClock.now) -> Bool {
        if let last, now - last < Self.interval { return false }
        last = now
        return true
    }
}

/// What every progress report has in common, whatever the call (a merge, a
/// preview, a download, a batch, a merge that downloads its soundtrack
/// first): how much is done, and one line that says so. One progress bar or
/// log line serves them all:
///
/// ```swift
/// func show(_ progress: some WorkProgress) {
///     print(progress.completed.map { "\(Int($0 * 100))%" } ?? "…", progress)
/// }
/// ```
///
/// Each report also has fields of its own (a merge's media time written, a
/// download's rate); its type documents them.
public protocol WorkProgress: Sendable, CustomStringConvertible {
    /// How much is done, from 0 to 1; nil while the whole is not known (a
    /// download whose server gives no length, a batch's jobs before one ends).
    var completed: Double? { get }
}

/// What a long call reports while it runs, then its result.
public enum ProgressEvent<Progress: Sendable, Result: Sendable>: Sendable {
    /// How far the call has come; the newest report when the consumer is slower than the call.
    case progress(Progress)
    /// The last event: the call's result.
    case finished(Result)
}

extension ProgressEvent: Equatable where Progress: Equatable, Result: Equatable {}

/// A long call as an asynchronous sequence: its progress, then its result as
/// the last event; a failure is thrown from the loop.
///
/// ```swift
/// for try await event in engine.events(for: MergeJob(video: v, audio: a, output: o)) {
///     switch event {
///     case .progress(let progress): show(progress.completed ?? 0)
///     case .finished(let report): print(report.duration)
///     }
/// }
/// ```
///
/// The call starts when iteration starts; each iteration runs it once more.
/// Cancelling the iterating task cancels the call: the loop throws
/// `MediaMuxError.cancelled` once the call has cleaned up (no output, no
/// temporary file). Leaving the loop early (`break`, `return`, or a throw
/// from its body) cancels the call too, as the loop's iterator goes away:
/// the call stops at its next check and removes what it had written,
/// shortly after the loop is left (the loop does not wait for it). A
/// consumer slower than the call sees the newest progress, never a stale
/// backlog; the result is never dropped.
public struct ProgressEvents<Progress: Sendable, Result: Sendable>: AsyncSequence, Sendable {
    /// Progress reports, then the result.
    public typealias Element = ProgressEvent<Progress, Result>
    /// What iterating throws: the call's own error, or `.cancelled`.
    public typealias Failure = MediaMuxError

    package typealias Operation = @Sendable (_ progress: @escaping @Sendable (Progress) -> Void) async throws(MediaMuxError) -> Result

    private let operation: Operation
    private let subject: String

    /// `subject` names the file or URL a cancellation is reported for.
    package init(subject: String, _ operation: @escaping Operation) {
        self.operation = operation
        self.subject = subject
    }

    /// Starts the call, on a task of its own that the iterator cancels when
    /// the loop ends early.
    public func makeAsyncIterator() -> AsyncIterator {
        let (stream, continuation) = AsyncThrowingStream<Element, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let operation = operation
        let task = Task {
            do throws(MediaMuxError) {
                let result = try await operation { continuation.yield(.progress($0)) }
                continuation.yield(.finished(result))
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return AsyncIterator(base: stream.makeAsyncIterator(), task: task, subject: subject)
    }

    /// Throws `MediaMuxError.cancelled` when the iterating task is cancelled
    /// before the result arrives.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var base: AsyncThrowingStream<Element, any Error>.AsyncIterator
        private let task: Task<Void, Never>
        private let subject: String
        private var finished = false

        fileprivate init(base: AsyncThrowingStream<Element, any Error>.AsyncIterator, task: Task<Void, Never>, subject: String) {
            self.base = base
            self.task = task
            self.subject = subject
        }

        /// The next event: a progress report, or the result as the last one;
        /// nil after the result.
        ///
        /// - Throws: What the call throws, as it throws it; `.cancelled`
        ///   naming the call's file or URL when the iterating task is
        ///   cancelled before the result arrives, once the call has cleaned up.
        public mutating func next() async throws(MediaMuxError) -> Element? {
            try await next(isolation: nil)
        }

        /// The next event, as `next()` gives it, on the caller's actor.
        ///
        /// - Parameter actor: The actor the caller runs on, which the wait keeps.
        /// - Throws: What the call throws; `.cancelled` when the iterating task
        ///   is cancelled before the result arrives.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(MediaMuxError) -> Element? {
            let event: Element?
            do {
                event = try await base.next(isolation: actor)
            } catch {
                finished = true
                throw MediaMuxError(error, subject: subject)
            }
            switch event {
            case .finished:
                finished = true
            case nil where !finished:
                // The stream ends early only when the iterating task was
                // cancelled: the call is told, and has cleaned up when this throws.
                finished = true
                task.cancel()
                await task.value
                throw MediaMuxError.cancelled(path: subject)
            default:
                break
            }
            return event
        }
    }
}
