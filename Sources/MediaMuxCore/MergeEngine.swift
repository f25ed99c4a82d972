import MediaMuxBase
import Logging

/// Probing, planning and merging by stream copy: the core, with no decoding
/// and no network. FFmpeg's calls block, so all work happens off the
/// caller's task; every call is cancelled with its Task and then throws
/// `MediaMuxError.cancelled`, leaving no output behind.
public struct MergeEngine: Sendable {
    /// Where the blocking work runs and where warnings and FFmpeg's messages go.
    public var runtime: MediaRuntime

    public init(runtime: MediaRuntime = MediaRuntime()) {
        self.runtime = runtime
    }

    /// What MediaMux sees in a media file.
    public func probe(_ path: String) async throws -> MediaInfo {
        try await runFFmpeg(runtime) { flag in try Prober(cancellation: flag).probe(path: path) }
    }

    /// Every decision a merge would make, without writing anything.
    public func plan(video: String, audio: String, output: String, options: MergeOptions = MergeOptions()) async throws -> MergePlan {
        try await runFFmpeg(runtime) { flag in try Self.makePlan(video: video, audio: audio, output: output, options: options, flag: flag).plan }
    }

    /// Merges the first video stream of `video` with the first audio stream of
    /// `audio` into `output` by stream copy, ending where the shorter one ends.
    /// `progress` runs on the merge's thread, at most ten times a second.
    public func merge(
        video: String, audio: String, output: String, options: MergeOptions = MergeOptions(),
        progress: (@Sendable (MergeProgress) -> Void)? = nil
    ) async throws -> MergeReport {
        try await merge(video: video, audio: audio, output: output, options: options, progress: progress, observing: { _, _ in nil })
    }

    /// The same, with an observer of the video packets copied, made from the
    /// plan and the video's probed facts (nil for none).
    package func merge(
        video: String, audio: String, output: String, options: MergeOptions,
        progress: (@Sendable (MergeProgress) -> Void)?,
        observing: @escaping @Sendable (MergePlan, StreamInfo) throws -> PacketObserving?
    ) async throws -> MergeReport {
        try await runFFmpeg(runtime) { flag in
            let (plan, videoInfo) = try Self.makePlan(video: video, audio: audio, output: output, options: options, flag: flag)
            let stream = videoInfo.streams.first { $0.index == plan.video.streamIndex }
            let observer = try stream.flatMap { try observing(plan, $0) }
            return try Remuxer(plan: plan, cancellation: flag, progress: progress, observing: observer).run()
        }.logged(to: runtime.logger)
    }

    /// Carries out an existing plan.
    public func execute(_ plan: MergePlan, progress: (@Sendable (MergeProgress) -> Void)? = nil) async throws -> MergeReport {
        try await runFFmpeg(runtime) { flag in try Remuxer(plan: plan, cancellation: flag, progress: progress).run() }
            .logged(to: runtime.logger)
    }

    private static func makePlan(
        video: String, audio: String, output: String, options: MergeOptions, flag: CancellationFlag
    ) throws -> (plan: MergePlan, video: MediaInfo) {
        let prober = Prober(cancellation: flag)
        let videoInfo = try prober.probe(path: video)
        let audioInfo = try prober.probe(path: audio)
        let planner = MergePlanner(canStore: muxerAccepts)
        let plan = try planner.plan(
            video: videoInfo, audio: audioInfo, output: output,
            outputFacts: outputFacts(output: output, inputs: [video, audio]), options: options)
        return (plan, videoInfo)
    }
}

extension MergeReport {
    /// Logs the report's warnings, which the caller also gets in it.
    func logged(to logger: Logger) -> MergeReport {
        for warning in warnings { logger.warning("\(warning)", metadata: ["output": "\(output)"]) }
        logger.debug("merged", metadata: ["output": "\(output)", "seconds": "\(duration.secondsText())"])
        return self
    }
}
