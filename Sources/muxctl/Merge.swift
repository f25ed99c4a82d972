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
        @Argument(help: "The audio file, or an http(s) URL to download it from.") var audio: String
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

        @OptionGroup var download: DownloadFlags
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
            let downloadOptions = download.options
            let (report, fetched) = try await runReportingErrors { [video, audio, output] in
                var audioPath = audio
                var fetched: DownloadResult?
                var scratch: String?
                defer { if let scratch { _ = unlinkFile(scratch) } }
                if MediaMux.isDownloadURL(audio) {
                    let report: @Sendable (DownloadProgress) -> Void = { bar?.update(fraction: $0.fraction ?? 0, detail: "downloading " + describe($0)) }
                    let result: DownloadResult
                    if downloadOptions.useCache {
                        result = try await MediaMux.download(audio, options: downloadOptions, progress: report)
                    } else {
                        // The audio is only for this merge: nothing of it stays, finished or not.
                        let path = hiddenSibling(of: output, suffix: ".audio")
                        scratch = path
                        var once = downloadOptions
                        once.keepsPartialForResume = false
                        result = try await MediaMux.download(audio, to: path, overwrite: true, options: once, progress: report)
                    }
                    audioPath = result.path
                    fetched = result
                }
                let merged = try await MediaMux.merge(video: video, audio: audioPath, output: output, options: options) { progress in
                    bar?.update(fraction: progress.fraction, detail: "merging \(MediaMux.decimal(progress.mediaSeconds, places: 1)) / \(MediaMux.decimal(progress.totalSeconds, places: 1)) s")
                }
                return (merged, fetched)
            }
            bar?.clear()
            if !common.quiet { fetched?.warnings.forEach { writeToStandardError("warning: \($0)\n") } }
            if common.json {
                var summary = MergeSummary(report)
                summary.audioDownload = fetched
                printJSON(summary)
            } else if !common.quiet {
                if let fetched { print("audio: " + describe(fetched).replacingFirstLine(with: fetched.url)) }
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

/// A hidden file beside `path` for intermediate data, removed afterwards.
func hiddenSibling(of path: String, suffix: String) -> String {
    let slash = path.lastIndex(of: "/")
    let folder = slash.map { String(path[..<$0]) } ?? "."
    let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
    return folder + "/." + name + suffix + "-\(UInt32.random(in: 0...UInt32.max))"
}

extension String {
    func replacingFirstLine(with line: String) -> String {
        guard let newline = firstIndex(of: "\n") else { return line }
        return line + self[newline...]
    }
}
