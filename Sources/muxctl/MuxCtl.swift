import ArgumentParser
import MediaMux

@main
struct MuxCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "muxctl",
        abstract: "Merge a video and an audio file by stream copy, ending exactly where the shorter one ends.",
        version: "muxctl \(MuxEngine.version) (FFmpeg \(FFmpegLibraries.version))",
        subcommands: [Merge.self, Probe.self, Preview.self, Download.self, Cache.self])
}

/// Options every subcommand shares.
struct CommonOptions: ParsableArguments {
    @Flag(name: .long, help: "Print one JSON object on stdout instead of a summary.")
    var json = false

    @Flag(name: .shortAndLong, help: "Print nothing but errors.")
    var quiet = false

    @Flag(name: .long, help: "Let FFmpeg print its own messages to stderr.")
    var verbose = false
}

/// The one engine every subcommand calls.
let engine = MuxEngine()
