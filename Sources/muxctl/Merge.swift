import ArgumentParser
import MediaMux

extension Orientation: ExpressibleByArgument {}

extension MuxCtl {
    struct Merge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Merge the video of VIDEO with the audio of AUDIO into OUTPUT (.mp4, .m4v or .mov).",
            discussion: """
            Streams are copied, never re-encoded. OUTPUT ends where the shorter input ends, to the millisecond, \
            using edit lists. The video's own audio is not copied.
            """)

        @Argument(help: "The video file.") var video: String
        @Argument(help: "The audio file.") var audio: String
        @Argument(help: "The file to write: .mp4, .m4v or .mov.") var output: String

        @Option(name: .customLong("video-stream"), help: "Which video stream of VIDEO, counting from 0.")
        var videoStream: Int?

        @Option(name: .customLong("audio-stream"), help: "Which audio stream of AUDIO, counting from 0.")
        var audioStream: Int?

        @Option(help: "landscape, portrait or keep: how the output should be shown.")
        var orientation: Orientation = .landscape

        @Option(help: "Clockwise display rotation to write (0, 90, 180, 270); overrides --orientation.")
        var rotate: Int?

        @Flag(name: [.customShort("y"), .long], help: "Overwrite OUTPUT if it exists.")
        var force = false

        @Flag(name: .customLong("no-faststart"), help: "Leave the movie header at the end of the file.")
        var noFaststart = false

        @OptionGroup var common: CommonOptions

        func validate() throws {
            if let rotate, ![0, 90, 180, 270].contains(rotate) {
                throw ValidationError("--rotate must be 0, 90, 180 or 270")
            }
            if let videoStream, videoStream < 0 { throw ValidationError("--video-stream must be 0 or more") }
            if let audioStream, audioStream < 0 { throw ValidationError("--audio-stream must be 0 or more") }
        }

        func run() async throws {
            MediaMux.setFFmpegLogging(verbose: common.verbose)
            let options = MergeOptions(
                videoStream: videoStream, audioStream: audioStream, orientation: orientation,
                rotation: rotate, overwrite: force, faststart: !noFaststart)
            let bar = ProgressBar.forStandardError(enabled: !common.quiet && !common.json)
            let report = try await runReportingErrors {
                try await MediaMux.merge(video: video, audio: audio, output: output, options: options) { progress in
                    bar?.update(fraction: progress.fraction, detail: "\(MediaMux.decimal(progress.mediaSeconds, places: 1)) / \(MediaMux.decimal(progress.totalSeconds, places: 1)) s")
                }
            }
            bar?.clear()
            if common.json {
                printJSON(MergeSummary(report))
            } else if !common.quiet {
                print(describe(report))
            }
        }
    }
}

func describe(_ report: MergeReport) -> String {
    func track(_ name: String, _ track: MergeReport.Track) -> String {
        let tag = track.codecTag.map { " (\($0))" } ?? ""
        let start = track.start.seconds > 0 ? ", starts at \(track.start.secondsText()) s" : ""
        return "  \(name) \(track.codec)\(tag): \(track.packets) packets, \(track.duration.secondsText()) s\(start), copied from \(track.source)"
    }
    return [
        "wrote \(report.output): \(report.duration.secondsText()) s, \(formatBytes(report.fileBytes))",
        track("video", report.video),
        track("audio", report.audio),
        "  end: \(report.endReason.rawValue); rotation \(report.rotation.degrees)° (\(report.rotation.reason))",
        "  done in \(MediaMux.decimal(report.elapsedSeconds, places: 2)) s",
    ].joined(separator: "\n")
}

func formatBytes(_ bytes: Int) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB"]
    var value = Double(bytes)
    var unit = 0
    while value >= 1024 && unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    return unit == 0 ? "\(bytes) bytes" : "\(MediaMux.decimal(value, places: 1)) \(units[unit])"
}
