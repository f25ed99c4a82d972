public import Logging
public import NIOPosix

/// Where MediaMux does its blocking work and where it logs. Servers pass
/// their own thread pool and logger; the default is NIO's shared blocking
/// pool (one thread per core) and a logger that discards everything.
public struct MediaRuntime: Sendable {
    /// Runs FFmpeg's and the file system's blocking calls. Must be started;
    /// work submitted after it shuts down fails with `MediaMuxError.runtimeStopped`.
    public var threadPool: NIOThreadPool
    /// Receives MediaMux's warnings (also returned in reports) and FFmpeg's
    /// own messages about the files, at their levels (FFmpeg errors as
    /// `.error`, warnings as `.warning`, information as `.info`).
    public var logger: Logger

    /// A runtime on the given pool and logger.
    ///
    /// - Parameters:
    ///   - threadPool: Where blocking work runs. It must be started; the
    ///     default, NIO's shared blocking pool, is.
    ///   - logger: Where warnings and FFmpeg's messages go; by default nowhere.
    public init(threadPool: NIOThreadPool = .singleton, logger: Logger = MediaRuntime.silentLogger) {
        self.threadPool = threadPool
        self.logger = logger
    }

    /// Discards everything: a library is silent unless told otherwise.
    public static let silentLogger = Logger(label: "mediamux", factory: { _ in SwiftLogNoOpLogHandler() })
}
