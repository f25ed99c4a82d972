@_exported import MediaMuxBase
internal import CFFmpeg
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The entry points. All work happens off the caller's task on a thread of
/// its own (FFmpeg's calls block), and every call is cancelled with its Task.
public enum MediaMux {
    /// MediaMux's version (Semantic Versioning; "-dev" until a release).
    public static let version = "0.1.0-dev"

    /// The FFmpeg libraries MediaMux runs on, as they name their build ("5.1.9-0+deb12u1" on Debian 12).
    public static var ffmpegVersion: String { String(cString: av_version_info()) }

    /// What MediaMux sees in a media file.
    public static func probe(_ path: String) async throws -> MediaInfo {
        try await runFFmpeg { flag in try Prober(cancellation: flag).probe(path: path) }
    }

    /// Every decision a merge would make, without writing anything.
    public static func plan(video: String, audio: String, output: String, options: MergeOptions = MergeOptions()) async throws -> MergePlan {
        try await runFFmpeg { flag in try makePlan(video: video, audio: audio, output: output, options: options, flag: flag) }
    }

    /// Merges the first video stream of `video` with the first audio stream of
    /// `audio` into `output` by stream copy, ending where the shorter one ends.
    ///
    /// With `preview`, keyframes of the output become thumbnails as they are
    /// copied (`options.thumbnails` says how many and how large), upright as
    /// the output is shown; the handler runs on the merge's thread.
    public static func merge(
        video: String, audio: String, output: String, options: MergeOptions = MergeOptions(),
        progress: (@Sendable (MergeProgress) -> Void)? = nil,
        preview: (@Sendable (PreviewFrame) -> Void)? = nil
    ) async throws -> MergeReport {
        try await runFFmpeg { flag in
            let plan = try makePlan(video: video, audio: audio, output: output, options: options, flag: flag)
            return try Remuxer(plan: plan, cancellation: flag, progress: progress, preview: preview).run()
        }
    }

    /// Carries out an existing plan.
    public static func execute(
        _ plan: MergePlan, progress: (@Sendable (MergeProgress) -> Void)? = nil,
        preview: (@Sendable (PreviewFrame) -> Void)? = nil
    ) async throws -> MergeReport {
        try await runFFmpeg { flag in try Remuxer(plan: plan, cancellation: flag, progress: progress, preview: preview).run() }
    }

    /// Sets how much FFmpeg itself prints to stderr. MediaMux keeps it quiet
    /// unless told otherwise: its own errors say what went wrong.
    public static func setFFmpegLogging(verbose: Bool) {
        FFmpegLogging.chosen.store(true, ordering: .relaxed)
        av_log_set_level(verbose ? AV_LOG_INFO : AV_LOG_QUIET)
    }

    private static func makePlan(video: String, audio: String, output: String, options: MergeOptions, flag: CancellationFlag) throws -> MergePlan {
        let prober = Prober(cancellation: flag)
        let videoInfo = try prober.probe(path: video)
        let audioInfo = try prober.probe(path: audio)
        let planner = MergePlanner(canStore: muxerAccepts)
        return try planner.plan(
            video: videoInfo, audio: audioInfo, output: output,
            outputFacts: outputFacts(output: output, inputs: [video, audio]), options: options)
    }
}

/// Whether FFmpeg's muxer for `container` can store `codec` by stream copy.
@Sendable func muxerAccepts(_ codec: String, _ container: MergePlan.Container) -> Bool {
    guard let descriptor = avcodec_descriptor_get_by_name(codec),
          let muxer = av_guess_format(container.muxer, nil, nil) else { return false }
    if refusedAtHeader[container, default: []].contains(codec) { return false }
    return avformat_query_codec(muxer, descriptor.pointee.id, FF_COMPLIANCE_NORMAL) == 1
}

/// Codecs FFmpeg 5.1's mov muxer lists for a container but refuses when it
/// writes the header: in MOV "only supported in MP4" (Opus, FLAC, TrueHD);
/// in MP4 FLAC and TrueHD only at experimental compliance. Refused here,
/// the plan names the problem instead of the header failing with EINVAL.
private let refusedAtHeader: [MergePlan.Container: Set<String>] = [.mov: ["opus", "flac", "truehd"], .mp4: ["flac", "truehd"]]

/// Runs blocking FFmpeg work on its own thread (see runBlocking), with
/// FFmpeg's own logging quiet unless the caller chose it.
func runFFmpeg<T: Sendable>(_ body: @escaping @Sendable (CancellationFlag) throws -> T) async throws -> T {
    FFmpegLogging.quietUnlessChosen()
    return try await runBlocking(raising: CancellationFlag(), body)
}

/// The same, raising a flag that outlives the call.
func runFFmpeg<T: Sendable>(raising flag: CancellationFlag, _ body: @escaping @Sendable (CancellationFlag) throws -> T) async throws -> T {
    FFmpegLogging.quietUnlessChosen()
    return try await runBlocking(raising: flag, body)
}

/// FFmpeg prints warnings to stderr by default; a library should not.
enum FFmpegLogging {
    static let chosen = Atomic<Bool>(false)
    private static let installed = Atomic<Bool>(false)

    static func quietUnlessChosen() {
        if !installed.exchange(true, ordering: .relaxed) { FFmpegMessages.install() }
        if !chosen.load(ordering: .relaxed) { av_log_set_level(AV_LOG_QUIET) }
    }
}

extension MediaMux {
    /// A number with a fixed number of decimals, as MediaMux's messages print
    /// them; for front ends that, like MediaMux, do without Foundation.
    public static func decimal(_ value: Double, places: Int) -> String {
        fixedPoint(value, decimals: places)
    }
}
