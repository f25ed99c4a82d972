import MediaMuxBase
package import CFFmpeg
package import CFFmpegLog
import Synchronization

/// Runs blocking FFmpeg work off the caller's task (see runBlocking), with
/// FFmpeg's own logging quiet unless the caller chose it.
package func runFFmpeg<T: Sendable>(_ body: @escaping @Sendable (CancellationFlag) throws -> T) async throws -> T {
    FFmpegLogging.quietUnlessChosen()
    return try await runBlocking(raising: CancellationFlag(), body)
}

/// The same, raising a flag that outlives the call.
package func runFFmpeg<T: Sendable>(raising flag: CancellationFlag, _ body: @escaping @Sendable (CancellationFlag) throws -> T) async throws -> T {
    FFmpegLogging.quietUnlessChosen()
    return try await runBlocking(raising: flag, body)
}

/// FFmpeg prints warnings to stderr by default; a library should not.
package enum FFmpegLogging {
    static let chosen = Atomic<Bool>(false)
    private static let installed = Atomic<Bool>(false)

    package static func quietUnlessChosen() {
        if !installed.exchange(true, ordering: .relaxed) { FFmpegMessages.install() }
        if !chosen.load(ordering: .relaxed) { av_log_set_level(AV_LOG_QUIET) }
    }
}

/// The FFmpeg libraries MediaMux runs on.
public enum FFmpegLibraries {
    /// As they name their build ("5.1.9-0+deb12u1" on Debian 12).
    public static var version: String { String(cString: av_version_info()) }

    /// Sets how much FFmpeg itself prints to stderr. MediaMux keeps it quiet
    /// unless told otherwise: its own errors say what went wrong.
    public static func setLogging(verbose: Bool) {
        FFmpegLogging.chosen.store(true, ordering: .relaxed)
        av_log_set_level(verbose ? AV_LOG_INFO : AV_LOG_QUIET)
    }
}
