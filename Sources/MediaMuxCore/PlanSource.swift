import MediaMuxBase

/// What a job's plan is made from: a merge's two files, or a composition's
/// clips and soundtrack. The one step between a job and its plan: the
/// inputs probed (a composition's clips also scanned where they are cut),
/// then planned by the pure planner.
package enum PlanSource: Sendable {
    case merge(video: String, audio: String, options: MergeOptions)
    case composition(Composition)

    /// The plan into `output`, and the probed video stream the plan copies
    /// first (for what observes its packets).
    func plan(output: String, isStream: Bool, flag: CancellationFlag) throws -> (plan: MergePlan, video: StreamInfo?) {
        let prober = Prober(cancellation: flag)
        let planner = MergePlanner(canStore: muxerAccepts, hasEncoder: encoderAvailable)
        switch self {
        case .merge(let video, let audio, let options):
            let videoInfo = try prober.probe(path: video)
            let audioInfo = try prober.probe(path: audio)
            let plan = try planner.plan(
                video: videoInfo, audio: audioInfo, output: output,
                outputFacts: isStream ? .stream : outputFacts(output: output, inputs: [video, audio]), options: options)
            return (plan, videoInfo.streams.first { $0.index == plan.video.streamIndex })
        case .composition(let composition):
            let infos = try composition.clips.enumerated().map { index, clip in
                do {
                    return try prober.probe(path: clip.path)
                } catch let error as MediaMuxError {
                    throw error.inClip(index, file: clip.path)
                }
            }
            let soundtrack = try composition.soundtrack.map { try prober.probe(path: $0) }
            let clips = try planner.composedClips(composition, infos: infos)
            let cuts = try clips.map { clip in
                do {
                    let start = try CutScan.scan(clip.track, at: clip.start, cancellation: flag)
                    let end = clip.endsEarly ? try CutScan.scan(clip.track, at: clip.end, cancellation: flag) : nil
                    // A clip that plays to the end of its video before another: how its last packets are decoded.
                    let last = clip.index == composition.clips.count - 1
                    let tail = !clip.endsEarly && !last
                        ? try CutScan.scan(clip.track, at: max(clip.start, clip.track.sourceEnd - MediaTime(value: 1, timescale: 1000)), cancellation: flag)
                        : nil
                    return MergePlanner.ClipCuts(start: start, end: end, tail: tail)
                } catch let error as MediaMuxError {
                    throw error.inClip(clip.index, file: clip.clip.path)
                }
            }
            let inputs = composition.clips.map(\.path) + (composition.soundtrack.map { [$0] } ?? [])
            let plan = try planner.plan(
                composition, clips: clips, cuts: cuts, soundtrack: soundtrack, output: output,
                outputFacts: isStream ? .stream : outputFacts(output: output, inputs: inputs))
            return (plan, clips.first?.stream)
        }
    }
}
