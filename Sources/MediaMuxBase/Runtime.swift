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
    /// Threads each video decoder of a preview may use; 0 lets FFmpeg choose
    /// (frame threads, one more than the cores). Where as many previews run
    /// at once as there are cores (a batch), 1 does the same work in less
    /// time and memory: no thread waits on another's frame.
    public var decodingThreads: Int

    /// A runtime on the given pool and logger.
    ///
    /// - Parameters:
    ///   - threadPool: Where blocking work runs. It must be started; the
    ///     default, NIO's shared blocking pool, is.
    ///   - logger: Where warnings and FFmpeg's messages go; by default nowhere.
    ///   - decodingThreads: Threads for each preview's video decoder; 0, the
    ///     default, lets FFmpeg choose.
    public init(threadPool: NIOThreadPool = .singleton, logger: Logger = MediaRuntime.silentLogger, decodingThreads: Int = 0) {
        self.threadPool = threadPool
        self.logger = logger
        self.decodingThreads = max(0, decodingThreads)
    }

    /// Discards everything: a library is silent unless told otherwise.
    public static let silentLogger = Logger(label: "mediamux", factory: { _ in SwiftLogNoOpLogHandler() })
}

/// One of MediaMux's engines (`MergeEngine`, `PreviewEngine`,
/// `DownloadEngine`): a value holding the runtime its calls work on.
public protocol RuntimeEngine: Sendable {
    /// Where the engine's blocking work runs and where its messages go.
    var runtime: MediaRuntime { get set }
}

extension RuntimeEngine {
    /// This engine, with its calls' messages going to `logger`: MediaMux's
    /// warnings and FFmpeg's lines during those calls carry its metadata (a
    /// request's id, a job's name), so that a server tells whose file an
    /// FFmpeg line is about. The thread pool stays the same; making one
    /// costs nothing, so make one per request or job.
    public func logging(to logger: Logger) -> Self {
        var engine = self
        engine.runtime.logger = logger
        return engine
    }
}
