import ArgumentParser
import MediaMux
import MediaMuxBase
import MediaMuxCore

extension Composition.Cut: ExpressibleByArgument {}

/// A clip as typed: FILE or FILE@IN-OUT (see `Composition.Clip(parsing:)`).
struct ClipArgument: ExpressibleByArgument {
    var clip: Composition.Clip

    init?(argument: String) {
        guard let clip = Composition.Clip(parsing: argument) else { return nil }
        self.clip = clip
    }
}

extension MuxCtl {
    struct Compose: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put clips in sequence into OUTPUT, each trimmed to a range, by copy, with a soundtrack over the whole or the clips' own sound.",
            discussion: """
            Each --clip is FILE or FILE@IN-OUT (seconds, or h:mm:ss.fff; FILE@5- runs to the end). Clips are copied \
            and joined under one sample entry when their video agrees: the same codec, size, rotation and \
            parameter sets (clips from one camera or phone do). Cuts fall at the frames asked for; where a cut \
            falls inside a GOP or a clip differs, every clip is encoded to the first clip's format, each turned \
            upright and fitted into its frame (--fit, --size, --video-quality, --video-preset), and the summary \
            says why. --cut keyframe copies only, moving each cut outward to a keyframe, so \
            that nothing asked for is lost, and the summary says where each landed. With --soundtrack the file's \
            audio plays over the whole, as merge lays audio over a video (--end, --loop-audio, --audio-offset, \
            fades, loudness); without it the clips' own sound is the audio: one clip's copied, several joined \
            into one AAC track with no gap or click at a join.
            """)

        @Argument(help: "The file to write: \(MergePlan.Container.spokenExtensions()); - streams fragmented MP4 to standard output (the summary goes to standard error). Or a timeline, TIMELINE.json, which names the clips, the output and the options itself.")
        var output: String

        @Option(name: .customLong("clip"), help: ArgumentHelp("A clip: FILE or FILE@IN-OUT. Give one for each clip, in order.", valueName: "file[@in-out]"))
        var clips: [ClipArgument] = []

        @Option(help: ArgumentHelp("A file, or an http(s) URL to download it from, whose audio plays over the whole composition.", valueName: "file|url"))
        var soundtrack: String?

        @Option(help: "exact or keyframe: cut at the frames asked for (the default), or move each cut to a keyframe.")
        var cut: Composition.Cut = .exact

        @Option(name: .customLong("video-stream"), help: "Which video stream of each clip, counting from 0.")
        var videoStream: Int?

        @Option(name: .customLong("audio-stream"), help: "Which audio stream of the soundtrack, counting from 0.")
        var audioStream: Int?

        @OptionGroup var encoded: VideoFlags
        @OptionGroup var written: OutputFlags
        @OptionGroup var sound: SoundFlags
        @OptionGroup var download: DownloadFlags
        @OptionGroup var common: CommonOptions

        var streamsToStandardOutput: Bool { output == "-" }

        /// OUTPUT is a timeline: the composition is in the file.
        var isTimeline: Bool { output.lowercased().hasSuffix(".json") }

        func validate() throws {
            if isTimeline {
                var asked = MergeOptions(video: encoded.options)
                written.apply(to: &asked, streaming: false)
                sound.apply(to: &asked)
                asked.overwrite = false
                guard clips.isEmpty, soundtrack == nil, cut == .exact, videoStream == nil, audioStream == nil, asked == MergeOptions() else {
                    throw ValidationError("\(output) is a timeline: give the clips, the soundtrack and the options in it (only --force, --json, --quiet and the download options go with it)")
                }
                return
            }
            guard !clips.isEmpty else { throw ValidationError("give at least one --clip FILE[@IN-OUT]") }
            try written.validate(streaming: streamsToStandardOutput, example: "muxctl compose - --clip a.mp4 --clip b.mp4 | ffplay -")
            if let videoStream, videoStream < 0 { throw ValidationError("--video-stream must be 0 or more") }
            if let audioStream, audioStream < 0 { throw ValidationError("--audio-stream must be 0 or more") }
        }

        func run() async throws {
            let streams = streamsToStandardOutput
            let timeline = isTimeline ? output : nil
            let force = written.force
            var job: CompositionJob?
            if timeline == nil {
                var options = MergeOptions(videoStream: videoStream, audioStream: audioStream, video: encoded.options)
                written.apply(to: &options, streaming: streams)
                sound.apply(to: &options)
                job = CompositionJob(
                    Composition(clips: clips.map(\.clip), soundtrack: soundtrack, cut: cut, options: options),
                    output: streams ? .stream(.standardOutput) : .file(output), download: download.options)
            }
            let bar = ProgressBar.forStandardError(enabled: !common.quiet && !common.json)
            if streams { ignoreBrokenPipeSignal() }
            let engine = common.engine
            let downloading = download.options
            let made = try await runReportingErrors { [job] in
                var job = try job ?? CompositionJob.load(timeline: timeline ?? "")
                if timeline != nil {
                    job.composition.options.overwrite = force
                    job.download = downloading
                }
                return try await engine.compose(job, progress: { bar?.show($0) })
            }
            let report = made.merge
            bar?.clear()
            if !common.quiet {
                report.warnings.forEach { writeToStandardError("warning: \($0)\n") }
            }
            if common.json {
                var summary = MergeSummary(report)
                summary.audioDownload = made.audioDownload
                printJSON(summary, toStandardError: streams)
            } else if !common.quiet {
                let say = { (line: String) in if streams { writeToStandardError(line + "\n") } else { print(line) } }
                if let fetched = made.audioDownload { say("soundtrack: " + describe(fetched).replacingFirstLine(with: fetched.url)) }
                say(describe(report))
                for (index, clip) in report.clips.enumerated() {
                    say("  clip \(index + 1) at \(clip.place.secondsText()) s: \(clip.source) from \(clip.range.lowerBound.secondsText()) to \(clip.range.upperBound.secondsText()) s, \(clip.reason)")
                }
            }
        }
    }
}
