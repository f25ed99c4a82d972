import MediaMuxBase
import MediaMuxCore

/// Carries out a clip plan: its tracks go through the core's executor, as
/// a merge's do (the video's one span decoded from the keyframe before it,
/// scaled, turned upright and encoded by the core's video encoder; the
/// sound's decoded, cut to the sample and encoded AAC), into an MP4 that
/// becomes the output only when complete. What this adds is the clip's
/// progress, in frames, and its report.
struct ClipWriter {
    let plan: ClipPlan
    let cancellation: CancellationFlag
    let progress: (@Sendable (PreviewProgress) -> Void)?

    func run() throws -> PreviewClipReport {
        let reporter = progress.map { handler in
            ClipProgress(handler: handler, expected: plan.expectedFrames)
        }
        let execution = try Remuxer.carryOut(plan.merge, cancellation: cancellation, progress: reporter.map { reporter in
            { @Sendable merge in reporter.report(merge) }
        })
        let video = execution.tracks[plan.merge.index(of: .video)]
        let sound = plan.merge.track(.soundtrack) == nil ? nil : execution.tracks[plan.merge.index(of: .soundtrack)]
        reporter?.finish(frames: video.packets)
        let picture = plan.merge.video.reframing?.frame
        return PreviewClipReport(
            output: plan.merge.outputPath, start: plan.start.converted(to: 90000, rounding: .nearest),
            duration: plan.merge.end.converted(to: 90000, rounding: .nearest), width: picture?.width ?? 0, height: picture?.height ?? 0,
            videoFrames: video.packets, hasAudio: (sound?.packets ?? 0) > 0, bytes: execution.fileBytes)
    }
}

/// A clip's progress from the executor's: the frames encoded so far of
/// those the span holds at the average rate (how many it has exactly is
/// known at its end), and how much of the clip's time is written.
private final class ClipProgress: Sendable {
    private let reporter: Locked<ProgressReporter>
    private let expected: Int?

    init(handler: @escaping @Sendable (PreviewProgress) -> Void, expected: Int?) {
        reporter = Locked(ProgressReporter(handler))
        self.expected = expected
    }

    func report(_ merge: MergeProgress) {
        let done = merge.framesEncoded ?? 0
        reporter.withLock { $0.report(done: done, total: expected.map { max($0, done) }, fraction: merge.fraction, totalIsEstimate: true) }
    }

    func finish(frames: Int) {
        reporter.withLock { $0.finish(done: frames) }
    }
}
