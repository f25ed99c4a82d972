import ArgumentParser
import MediaMux
import Logging
import NIOPosix

@main
struct MuxCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "muxctl",
        abstract: "Merge a video and an audio file by stream copy, ending exactly where the shorter one ends.",
        version: "muxctl \(MuxEngine.version) (FFmpeg \(FFmpegLibraries.version))",
        subcommands: [Merge.self, Compose.self, Probe.self, Preview.self, Download.self, Batch.self, Cache.self])
}

/// Options every subcommand shares.
struct CommonOptions: ParsableArguments {
    @Flag(name: .long, help: "Print one JSON object on stdout instead of a summary.")
    var json = false

    @Flag(name: .shortAndLong, help: "Print nothing but errors.")
    var quiet = false

    @Flag(name: .long, help: "Print FFmpeg's own messages about the files to stderr.")
    var verbose = false

    /// The engine a subcommand calls: silent, or with --verbose logging
    /// FFmpeg's messages to stderr. (The library's own warnings come back in
    /// its reports, which muxctl prints.)
    var engine: MuxEngine { engine(threadPool: .singleton) }

    /// The same, with its blocking work on `threadPool` and each preview's
    /// decoder on `decodingThreads` threads (0: FFmpeg's choice).
    func engine(threadPool: NIOThreadPool, decodingThreads: Int = 0) -> MuxEngine {
        var runtime = MediaRuntime(threadPool: threadPool, decodingThreads: decodingThreads)
        if verbose {
            var logger = Logger(label: "muxctl", factory: { _ in FFmpegMessagePrinter() })
            logger.logLevel = .info
            runtime.logger = logger
        }
        return MuxEngine(runtime: runtime)
    }
}

/// Prints FFmpeg's messages to stderr as `ffmpeg: LEVEL: line`.
struct FFmpegMessagePrinter: LogHandler {
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.metadata?["source"] == "ffmpeg" else { return }
        writeToStandardError("ffmpeg: \(event.level): \(event.message)\n")
    }
}
