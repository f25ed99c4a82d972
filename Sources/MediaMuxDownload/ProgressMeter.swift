import MediaMuxBase

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
