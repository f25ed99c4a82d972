import ArgumentParser
import MediaMux
import MediaMuxBase
import MediaMuxCore

extension Composition.Cut: ExpressibleByArgument {}

/// A clip as typed: FILE, or FILE@IN-OUT with IN and OUT in seconds (12.5)
/// or h:mm:ss.fff (1:02.5, 0:01:02.500); either may be left out (FILE@5-,
/// FILE@-1:00). The last `@` followed by a range splits, so a file name may hold one.
struct ClipArgument: ExpressibleByArgument {
    var clip: Composition.Clip

    init?(argument: String) {
        guard let at = argument.lastIndex(of: "@"), case let suffix = argument[argument.index(after: at)...],
              suffix.contains("-"), suffix.allSatisfy({ $0.isNumber || ":.-".contains($0) })
        else {
            guard !argument.isEmpty else { return nil }
            clip = Composition.Clip(argument)
            return
        }
        // What follows the last @ is a range: it must be one.
        guard let range = Self.range(suffix) else { return nil }
        let path = String(argument[..<at])
        guard !path.isEmpty else { return nil }
        clip = Composition.Clip(path, from: range.start, to: range.end)
    }

    /// IN-OUT, either side possibly empty, not both.
    private static func range(_ text: Substring) -> (start: MediaTime?, end: MediaTime?)? {
        let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !(parts[0].isEmpty && parts[1].isEmpty) else { return nil }
        var times: [MediaTime?] = []
        for part in parts {
            if part.isEmpty {
                times.append(nil)
            } else {
                guard let time = time(part) else { return nil }
                times.append(time)
            }
        }
        return (times[0], times[1])
    }

    /// Seconds, or h:mm:ss.fff / mm:ss.fff, to the microsecond.
    static func time(_ text: Substring) -> MediaTime? {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(fields.count) else { return nil }
        var seconds = 0.0
        for (i, field) in fields.enumerated() {
            let isLast = i == fields.count - 1
            guard !field.isEmpty, field.allSatisfy({ $0.isNumber || (isLast && $0 == ".") }),
                  let value = Double(field), value.isFinite, value >= 0, value < 1e9
            else { return nil }
            if !isLast || fields.count == 1 {
                seconds = seconds * 60 + value
            } else {
                guard value < 60 else { return nil }
                seconds = seconds * 60 + value
            }
        }
        return MediaTime(seconds: seconds)
    }
}

extension MuxCtl {
    struct Compose: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put clips in sequence into OUTPUT, each trimmed to a range, by copy, with a soundtrack over the whole or the clips' own sound.",
            discussion: """
            Each --clip is FILE or FILE@IN-OUT (seconds, or h:mm:ss.fff; FILE@5- runs to the end). Clips are copied \
            and joined under one sample entry, so their video must agree: the same codec, size, rotation and \
            parameter sets (clips from one camera or phone do). Cuts fall at the frames asked for when copying \
            can start and stop there (at keyframes); --cut keyframe moves each cut to a keyframe instead, so \
            that nothing asked for is lost, and the summary says where each landed. With --soundtrack the file's \
            audio plays over the whole, as merge lays audio over a video (--end, --loop-audio, --audio-offset, \
            fades, loudness); without it the clips' own sound is the audio: one clip's copied, several joined \
            into one AAC track with no gap or click at a join.
            """)

        @Argument(help: "The file to write: \(MergePlan.Container.spokenExtensions()); - streams fragmented MP4 to standard output (the summary goes to standard error).")
        var output: String

        @Option(name: .customLong("clip"), help: ArgumentHelp("A clip: FILE or FILE@IN-OUT. Give one for each clip, in order.", valueName: "file[@in-out]"))
        var clips: [ClipArgument] = []

        @Option(help: ArgumentHelp("A file whose audio plays over the whole composition.", valueName: "file"))
        var soundtrack: String?

        @Option(help: "exact or keyframe: cut at the frames asked for (the default), or move each cut to a keyframe.")
        var cut: Composition.Cut = .exact

        @Option(name: .customLong("video-stream"), help: "Which video stream of each clip, counting from 0.")
        var videoStream: Int?

        @Option(name: .customLong("audio-stream"), help: "Which audio stream of the soundtrack, counting from 0.")
        var audioStream: Int?

        @OptionGroup var written: OutputFlags
        @OptionGroup var sound: SoundFlags
        @OptionGroup var common: CommonOptions

        var streamsToStandardOutput: Bool { output == "-" }

        func validate() throws {
            guard !clips.isEmpty else { throw ValidationError("give at least one --clip FILE[@IN-OUT]") }
            try written.validate(streaming: streamsToStandardOutput, example: "muxctl compose - --clip a.mp4 --clip b.mp4 | ffplay -")
            if let videoStream, videoStream < 0 { throw ValidationError("--video-stream must be 0 or more") }
            if let audioStream, audioStream < 0 { throw ValidationError("--audio-stream must be 0 or more") }
        }

        func run() async throws {
            var options = MergeOptions(videoStream: videoStream, audioStream: audioStream)
            written.apply(to: &options, streaming: streamsToStandardOutput)
            sound.apply(to: &options)
            let composition = Composition(clips: clips.map(\.clip), soundtrack: soundtrack, cut: cut, options: options)
            let streams = streamsToStandardOutput
            let bar = ProgressBar.forStandardError(enabled: !common.quiet && !common.json)
            if streams { ignoreBrokenPipeSignal() }
            let engine = common.engine.merging
            let report = try await runReportingErrors {
                try await engine.compose(
                    composition, output: streams ? .stream(.standardOutput) : .file(output), progress: { bar?.show($0) })
            }
            bar?.clear()
            if !common.quiet {
                report.warnings.forEach { writeToStandardError("warning: \($0)\n") }
            }
            if common.json {
                printJSON(MergeSummary(report), toStandardError: streams)
            } else if !common.quiet {
                let say = { (line: String) in if streams { writeToStandardError(line + "\n") } else { print(line) } }
                say(describe(report))
                for (index, clip) in report.clips.enumerated() {
                    say("  clip \(index + 1) at \(clip.place.secondsText()) s: \(clip.source) from \(clip.range.lowerBound.secondsText()) to \(clip.range.upperBound.secondsText()) s, \(clip.reason)")
                }
            }
        }
    }
}
