import MediaMuxBase
import Logging
internal import CFFmpeg
internal import CFFmpegLog
import Synchronization

/// Runs blocking FFmpeg work on the runtime's pool (see runBlocking), with
/// FFmpeg's messages on that thread going to the runtime's logger.
package func runFFmpeg<T: Sendable>(
    _ runtime: MediaRuntime, _ body: @escaping @Sendable (CancellationFlag) throws -> T
) async throws -> T {
    try await runFFmpeg(runtime, raising: CancellationFlag(), body)
}

/// The same, raising a flag that outlives the call.
package func runFFmpeg<T: Sendable>(
    _ runtime: MediaRuntime, raising flag: CancellationFlag, _ body: @escaping @Sendable (CancellationFlag) throws -> T
) async throws -> T {
    FFmpegMessages.listen()
    return try await runBlocking(on: runtime.threadPool, raising: flag) { flag in
        try FFmpegMessages.withLogger(runtime.logger) { try body(flag) }
    }
}

/// FFmpeg's own lines ("moov atom not found"). Errors are kept per logging
/// object so that an error can say what FFmpeg saw in that file (bounded:
/// lines from objects nobody asks about are dropped oldest first). Every line
/// logged on a thread doing a call's work goes to that call's logger; lines
/// from FFmpeg's own decoding threads have no call to go to and are dropped.
/// Nothing is printed.
package enum FFmpegMessages {
    private static let errors = Locked<[(logger: UInt, line: String)]>([])
    private static let limit = 64
    private static let installed = Atomic<Bool>(false)
    /// The logger of the call each pool thread is working for.
    private static let loggers = Locked<[UInt: Logger]>([:])

    /// Installs the sink, once: FFmpeg's errors are kept from then on.
    package static func listen() {
        if !installed.exchange(true, ordering: .relaxed) { CFFmpegLog_install_sink(sink) }
    }

    /// Runs `body` with the lines this thread logs, at the levels `logger`
    /// shows, going to `logger`. The level is the thread's own: FFmpeg
    /// drops every other thread's lines before formatting them.
    static func withLogger<T>(_ logger: Logger, _ body: () throws -> T) rethrows -> T {
        let thread = currentThread()
        loggers.withLock { $0[thread] = logger }
        let previous = CFFmpegLog_set_thread_level(ffmpegLevel(showing: logger.logLevel))
        defer {
            CFFmpegLog_set_thread_level(previous)
            _ = loggers.withLock { $0.removeValue(forKey: thread) }
        }
        return try body()
    }

    /// The latest error line logged by `logger`, forgetting all of its lines.
    package static func take(for logger: UnsafeMutableRawPointer) -> String? {
        let key = UInt(bitPattern: logger)
        return errors.withLock { lines in
            let latest = lines.last { $0.logger == key }?.line
            lines.removeAll { $0.logger == key }
            return latest
        }
    }

    private static let sink: CFFmpegLog_sink = { object, level, category, name, line in
        guard let line else { return }
        let text = String(cString: line)
        if level <= AV_LOG_ERROR {
            let key = UInt(bitPattern: object)
            errors.withLock { lines in
                lines.append((key, text))
                if lines.count > limit { lines.removeFirst(lines.count - limit) }
            }
        }
        let thread = currentThread()
        guard let logger = loggers.withLock({ $0[thread] }) else { return }
        var metadata: Logger.Metadata = ["source": "ffmpeg"]
        if let name { metadata["ffmpeg.object"] = "\(String(cString: name))" }
        logger.log(level: logLevel(ffmpeg: level, category: category, line: text), "\(text)", metadata: metadata)
    }

    /// FFmpeg's lines about what MediaMux handles itself, which a caller's
    /// warnings should not repeat: at debug, not at FFmpeg's level.
    ///
    /// - A decoder's complaints, and a demuxer's parser's: a merge or
    ///   preview that decodes skips a frame that does not decode and counts
    ///   it, and its report gives one warning naming the file and how many
    ///   were skipped (where the decoder gives up for good, the error that
    ///   ends the call says so); a copied packet the container cannot store
    ///   is refused with an error naming the file and the time.
    /// - "codec frame size is not set": the mov muxer's warning for a
    ///   copied sound track whose parameters do not say its frame size;
    ///   every packet carries its own duration, which is what it writes.
    static let expected: [String] = ["codec frame size is not set"]

    static func logLevel(ffmpeg level: Int32, category: Int32, line: String) -> Logger.Level {
        let handled = category == Int32(AV_CLASS_CATEGORY_DECODER.rawValue) || expected.contains { line.contains($0) }
        if handled && level <= AV_LOG_WARNING { return .debug }
        return logLevel(ffmpeg: level)
    }

    private static func logLevel(ffmpeg level: Int32) -> Logger.Level {
        switch level {
        case ...AV_LOG_ERROR: return .error
        case ...AV_LOG_WARNING: return .warning
        case ...AV_LOG_INFO: return .info
        case ...AV_LOG_VERBOSE: return .debug
        default: return .trace
        }
    }

    private static func ffmpegLevel(showing level: Logger.Level) -> Int32 {
        switch level {
        case .trace: return AV_LOG_DEBUG
        case .debug: return AV_LOG_VERBOSE
        case .info, .notice: return AV_LOG_INFO
        case .warning: return AV_LOG_WARNING
        case .error, .critical: return AV_LOG_ERROR
        }
    }

    private static func currentThread() -> UInt { currentThreadID }
}

/// The FFmpeg libraries MediaMux runs on.
public enum FFmpegLibraries {
    /// As they name their build ("5.1.9-0+deb12u1" on Debian 12).
    public static var version: String { String(cString: av_version_info()) }
}
