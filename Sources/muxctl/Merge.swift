import ArgumentParser
import Foundation
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
                    bar?.update(fraction: progress.fraction, detail: String(format: "%.1f / %.1f s", progress.mediaSeconds, progress.totalSeconds))
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
        let start = track.start.seconds > 0 ? String(format: ", starts at %.3f s", track.start.seconds) : ""
        return String(format: "  %@ %@%@: %d packets, %.3f s%@, copied from %@", name, track.codec, tag, track.packets, track.duration.seconds, start, track.source)
    }
    return [
        String(format: "wrote %@: %.3f s, %@", report.output, report.duration.seconds, formatBytes(report.fileBytes)),
        track("video", report.video),
        track("audio", report.audio),
        "  end: \(report.endReason.rawValue); rotation \(report.rotation.degrees)° (\(report.rotation.reason))",
        String(format: "  done in %.2f s", report.elapsedSeconds),
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
    return unit == 0 ? "\(bytes) bytes" : String(format: "%.1f %@", value, units[unit])
}
