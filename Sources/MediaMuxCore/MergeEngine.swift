import MediaMuxBase
import Logging
public import SystemPackage

/// Probing, planning and merging by stream copy, with the soundtrack
/// encoded AAC when it cannot be copied: the core, with no pictures decoded
/// and no network.
///
/// - Threads: FFmpeg's calls block, so all work runs on the runtime's thread
///   pool, never on the caller's task. A `progress` callback runs on the pool
///   thread doing the merge, at most ten times a second and never two at
///   once for one call, the last with `fraction` 1; keep it short.
/// - Errors: every call throws `MediaMuxError` alone.
/// - Cancellation: cancelling the calling Task stops the work at the next
///   packet (or FFmpeg's next read) and the call throws
///   `MediaMuxError.cancelled(path:)`, leaving no output and no temporary file.
public struct MergeEngine: Sendable {
    /// Where the blocking work runs and where warnings and FFmpeg's messages go.
    public var runtime: MediaRuntime

    public init(runtime: MediaRuntime = MediaRuntime()) {
        self.runtime = runtime
    }

    /// What MediaMux sees in a media file.
    public func probe(_ path: String) async throws(MediaMuxError) -> MediaInfo {
        try await typedErrors(subject: path) {
            try await runFFmpeg(runtime) { flag in try Prober(cancellation: flag).probe(path: path) }
        }
    }

    public func probe(_ path: FilePath) async throws(MediaMuxError) -> MediaInfo {
        try await probe(path.string)
    }

    /// Every decision a merge would make, without writing anything.
    public func plan(
        video: String, audio: String, output: String, options: MergeOptions = MergeOptions()
    ) async throws(MediaMuxError) -> MergePlan {
        try await typedErrors(subject: output) {
            try await runFFmpeg(runtime) { flag in
                try Self.makePlan(video: video, audio: audio, output: output, options: options, flag: flag).plan
            }
        }
    }

    /// Merges the first video stream of `video` with the first audio stream of
    /// `audio` into `output` by stream copy (the audio encoded AAC where the
    /// output cannot carry it, or as `options.audio` asks), ending where the
    /// shorter one ends.
    /// The output appears under its name only once it is complete.
    public func merge(
        video: String, audio: String, output: String, options: MergeOptions = MergeOptions(),
        progress: (@Sendable (MergeProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> MergeReport {
        try await merge(video: video, audio: audio, output: output, options: options, progress: progress, observing: { _, _ in nil })
    }

    public func merge(
        video: FilePath, audio: FilePath, output: FilePath, options: MergeOptions = MergeOptions(),
        progress: (@Sendable (MergeProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> MergeReport {
        try await merge(video: video.string, audio: audio.string, output: output.string, options: options, progress: progress)
    }

    /// The same merge as an asynchronous sequence: its progress, then its
    /// report (see `ProgressEvents`).
    public func mergeEvents(
        video: String, audio: String, output: String, options: MergeOptions = MergeOptions()
    ) -> ProgressEvents<MergeProgress, MergeReport> {
        ProgressEvents(subject: output) { progress throws(MediaMuxError) in
            try await merge(video: video, audio: audio, output: output, options: options, progress: progress)
        }
    }

    /// The same, with an observer of the video packets copied, made from the
    /// plan and the video's probed facts (nil for none).
    package func merge(
        video: String, audio: String, output: String, options: MergeOptions,
        progress: (@Sendable (MergeProgress) -> Void)?,
        observing: @escaping @Sendable (MergePlan, StreamInfo) throws -> PacketObserving?
    ) async throws(MediaMuxError) -> MergeReport {
        try await typedErrors(subject: output) {
            try await runFFmpeg(runtime) { flag in
                let (plan, videoInfo) = try Self.makePlan(video: video, audio: audio, output: output, options: options, flag: flag)
                let stream = videoInfo.streams.first { $0.index == plan.video.streamIndex }
                let observer = try stream.flatMap { try observing(plan, $0) }
                return try Remuxer(plan: plan, cancellation: flag, progress: progress, observing: observer).run()
            }
        }.logged(to: runtime.logger)
    }

    /// Carries out an existing plan.
    public func execute(
        _ plan: MergePlan, progress: (@Sendable (MergeProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> MergeReport {
        try await typedErrors(subject: plan.outputPath) {
            try await runFFmpeg(runtime) { flag in try Remuxer(plan: plan, cancellation: flag, progress: progress).run() }
        }.logged(to: runtime.logger)
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
