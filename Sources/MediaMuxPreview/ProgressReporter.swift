import MediaMuxBase

/// One call's progress on its way to the caller's handler: through the
/// base's throttle (at most ten reports a second), never going backwards,
/// and ending with one report of `done` of `done`, fraction 1, that is never
/// throttled away. It lives on the one thread doing the call's work, so the
/// handler is never entered twice at once.
struct ProgressReporter {
    private let handler: ((PreviewProgress) -> Void)?
    private var throttle = ProgressThrottle()
    private var reached = 0.0
    private var lastSent: PreviewProgress?

    init(_ handler: ((PreviewProgress) -> Void)?) {
        self.handler = handler
    }

    /// Work in progress: dropped when a report went out less than a tenth
    /// of a second ago. The fraction is kept between the last one and 1.
    mutating func report(done: Int, total: Int?, fraction: Double, totalIsEstimate: Bool = false) {
        guard handler != nil else { return }
        reached = min(max(reached, fraction), 1)
        guard throttle.isDue() else { return }
        var progress = PreviewProgress(done: done, total: total, fraction: reached)
        progress.totalIsEstimate = totalIsEstimate && total != nil
        send(progress)
    }

    /// The call has finished, `done` frames made: always delivered, unless
    /// the same report went out last.
    mutating func finish(done: Int) {
        let last = PreviewProgress(done: done, total: done, fraction: 1)
        guard lastSent != last else { return }
        send(last)
    }

    private mutating func send(_ progress: PreviewProgress) {
        lastSent = progress
        handler?(progress)
    }
}

extension FramePlan {
    /// How far a job is once `done` frames are out, the last one shown at
    /// `time`: frames of the planned count, or the part of the range before
    /// that frame.
    func fraction(done: Int, lastShownAt time: MediaTime) -> Double {
        switch moments {
        case .at(let times):
            return Double(done) / Double(max(times.count, 1))
        case .every(let from, let to):
            return to > from ? (time.seconds - from) / (to - from) : 0
        }
    }
}
