import ArgumentParser
import MediaMux
import MediaMuxBase
import MediaMuxCore
import MediaMuxDownload
import MediaMuxPreview

extension Orientation: ExpressibleByArgument {}
extension Fit: ExpressibleByArgument {}

/// A frame size as typed: 1920x1080.
struct FrameSize: ExpressibleByArgument {
    var size: VideoSize

    init?(argument: String) {
        guard let size = VideoSize(parsing: argument) else { return nil }
        self.size = size
    }
}
extension EndPolicy: ExpressibleByArgument {}

extension AudioOptions.Codec: ExpressibleByArgument {
    /// `automatic` is the default, not a value to type.
    public static var allValueStrings: [String] { ["copy", "aac"] }
}

/// A bit rate as typed: 192000, 192k or 0.192M.
struct BitRate: ExpressibleByArgument {
    var bitsPerSecond: Int

    init?(argument: String) {
        let text = argument.lowercased()
        let scale: Double = text.hasSuffix("k") ? 1_000 : text.hasSuffix("m") ? 1_000_000 : 1
        let number = scale == 1 ? text : String(text.dropLast())
        guard let value = Double(number), value.isFinite, value > 0, value * scale < 100_000_000 else { return nil }
        bitsPerSecond = Int((value * scale).rounded())
    }
}

extension MuxCtl {
    struct Merge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Merge the video of VIDEO with the audio of AUDIO into OUTPUT (\(MergePlan.Container.spokenExtensions())).",
            discussion: """
            The video is copied, shown as the camera recorded it: a portrait phone video stays portrait and \
            upright. --orientation landscape (or portrait) re-frames video of the other shape into such a frame \
            by encoding it (--fit, --size, --video-quality, --video-preset). The audio is copied too when \
            OUTPUT's container can carry its codec; otherwise (PCM in MP4, FLAC, Vorbis...) it is encoded AAC, \
            and the summary says why. \
            OUTPUT ends where the shorter input ends (--end changes that), to the millisecond, using edit \
            lists. The video's own audio is not copied. The video's metadata (where and when it was recorded, the camera) is kept \
            unless --no-metadata is given.
            """)

        @Argument(help: "The video file.") var video: String
        @Argument(help: "The audio file, or an http(s) URL to download it from.") var audio: String
        @Argument(help: "The file to write: \(MergePlan.Container.spokenExtensions()); - streams fragmented MP4 to standard output (the summary goes to standard error).")
        var output: String

        @Option(name: .customLong("video-stream"), help: "Which video stream of VIDEO, counting from 0.")
        var videoStream: Int?

        @Option(name: .customLong("audio-stream"), help: "Which audio stream of AUDIO, counting from 0.")
        var audioStream: Int?

        @Option(
            help: ArgumentHelp(
                "keep, landscape or portrait: as the video is shown, copied (the default); or in a landscape (portrait) frame, encoding video of the other shape into it.",
                valueName: "shape"))
        var orientation: Orientation?

        @OptionGroup var encoded: VideoFlags

        @Option(help: "Clockwise display rotation to write (0, 90, 180, 270), by copy, for a file whose recorded orientation is wrong; overrides --orientation.")
        var rotate: Int?

        @OptionGroup var written: OutputFlags

        /// `-`: the output is standard output.
        var streamsToStandardOutput: Bool { output == "-" }

        @OptionGroup var sound: SoundFlags

        @Option(help: ArgumentHelp("Also write thumbnails of the output's keyframes (PNG) into this folder, in the same pass.", valueName: "dir"))
        var preview: String?

        @Option(name: .customLong("preview-size"), help: "Longest side of the thumbnails in pixels.")
        var previewSize: Int = 320

        @Option(name: .customLong("preview-every"), help: ArgumentHelp("Seconds between thumbnails (default: about 12 over the output).", valueName: "seconds"))
        var previewEvery: Double?

        @OptionGroup var download: DownloadFlags
        @OptionGroup var common: CommonOptions

        func validate() throws {
            if let rotate, let problem = MergeOptions.rotationProblem(rotate) { throw ValidationError("--rotate \(problem)") }
            try written.validate(streaming: streamsToStandardOutput, example: "muxctl merge VIDEO AUDIO - | ffplay -")
            if let videoStream, videoStream < 0 { throw ValidationError("--video-stream must be 0 or more") }
            if let audioStream, audioStream < 0 { throw ValidationError("--audio-stream must be 0 or more") }
            if let problem = ThumbnailOptions.sizeProblem(previewSize) { throw ValidationError("--preview-size \(problem)") }
            if let previewEvery, !(previewEvery > 0 && previewEvery.isFinite) { throw ValidationError("--preview-every must be more than 0 seconds") }
            if preview == nil, previewEvery != nil { throw ValidationError("--preview-every needs --preview DIR") }
        }

        func run() async throws {
            let engine = common.engine
            var options = MergeOptions(
                videoStream: videoStream, audioStream: audioStream, orientation: orientation ?? MergeOptions().orientation,
                rotation: rotate, video: encoded.options)
            written.apply(to: &options, streaming: streamsToStandardOutput)
            sound.apply(to: &options)
            let streams = streamsToStandardOutput
            let job = MergeJob(
                video: video, audio: audio, output: streams ? .stream(.standardOutput) : .file(output), options: options,
                download: download.options,
                thumbnails: preview.map { _ in ThumbnailOptions(size: previewSize, every: previewEvery.map { MediaTime(seconds: $0) }) })
            let thumbnails = preview.map { ThumbnailWriter(folder: $0, overwrite: written.force) }
            var handler: (@Sendable (PreviewFrame) -> Void)?
            if let thumbnails { handler = { @Sendable frame in thumbnails.write(frame) } }
            let previewHandler = handler
            let bar = ProgressBar.forStandardError(enabled: !common.quiet && !common.json)
            // A reader of standard output that stops is the merge's error, not the process's end.
            if streams { ignoreBrokenPipeSignal() }
            let report = try await runReportingErrors {
                try thumbnails?.prepare()
                do {
                    return try await engine.merge(job, progress: { bar?.show($0) }, thumbnail: previewHandler)
                } catch {
                    // No output, so no thumbnails of it either.
                    thumbnails?.discard()
                    throw error
                }
            }
            bar?.clear()
            let warnings = report.warnings + (thumbnails?.failure.map { ["thumbnails stopped: \($0)"] } ?? [])
            if !common.quiet {
                warnings.forEach { writeToStandardError("warning: \($0)\n") }
            }
            let images = thumbnails?.written ?? []
            if common.json {
                var summary = MergeSummary(report.merge)
                summary.facts.warnings = warnings
                summary.audioDownload = report.audioDownload
                summary.preview = thumbnails.map { _ in PreviewSummary(images: images, kind: "thumbnails") }
                printJSON(summary, toStandardError: streams)
            } else if !common.quiet {
                // Standard output carries the merge itself when it streams.
                let say = { (line: String) in if streams { writeToStandardError(line + "\n") } else { print(line) } }
                if let fetched = report.audioDownload { say("audio: " + describe(fetched).replacingFirstLine(with: fetched.url)) }
                say(describe(report.merge))
                if let preview { say("  preview: \(images.count) thumbnails in \(preview)") }
            }
        }
    }
}

/// How video that is encoded is fitted and encoded: what merge (re-framing)
/// and compose (clips that cannot be copied) share.
struct VideoFlags: ParsableArguments {
    @Option(help: "blur, pad or crop: how an encoded picture fills its frame (blurred sides, black, or cut to cover it). Default: blur.")
    var fit: Fit?

    @Option(help: ArgumentHelp("The encoded frame, WxH (merge: 16:9 or 9:16 at the picture's short side; compose: the first clip's picture).", valueName: "WxH"))
    var size: FrameSize?

    @Option(name: .customLong("video-quality"), help: ArgumentHelp("The encoder's CRF for encoded video, 0-51, lower is better (default: 23 for H.264 and HEVC).", valueName: "crf"))
    var videoQuality: Int?

    @Option(name: .customLong("video-preset"), help: ArgumentHelp("The encoder's preset for encoded video (default: veryfast for H.264, superfast for HEVC).", valueName: "name"))
    var videoPreset: String?

    var options: VideoOptions {
        var options = VideoOptions(frameSize: size?.size, quality: videoQuality, preset: videoPreset)
        if let fit { options.fit = fit }
        return options
    }
}

/// How the output is written: what merge and compose share.
struct OutputFlags: ParsableArguments {
    @Flag(name: [.customShort("y"), .long], help: "Overwrite OUTPUT if it exists.")
    var force = false

    @Flag(name: .customLong("no-faststart"), help: "Leave the movie header at the end of the file.")
    var noFaststart = false

    @Flag(
        help: "Write fragmented MP4 (the CMAF and DASH layout): the movie header first, then a fragment from each video keyframe or every 2 s at most, in one pass; what - writes. MP4 only.")
    var fragmented = false

    @Flag(
        name: .customLong("no-metadata"),
        help: "Leave out the video's metadata (location, camera, software, creation time, titles), for sharing.")
    var noMetadata = false

    /// `streaming`: the output is `-`; `example` shows how to pipe it.
    func validate(streaming: Bool, example: String) throws {
        if fragmented || streaming, let problem = MergeOptions.fragmentedProblem(faststart: !noFaststart) {
            throw ValidationError("--no-faststart: \(problem)")
        }
        if streaming && standardOutputIsTerminal {
            throw ValidationError("standard output is a terminal: pipe it (\(example)) or name a file")
        }
    }

    func apply(to options: inout MergeOptions, streaming: Bool) {
        options.overwrite = force
        options.faststart = !noFaststart
        options.layout = fragmented || streaming ? .fragmented : .movie
        options.keepsMetadata = !noMetadata
    }
}

/// The sound's options: what merge and compose share.
struct SoundFlags: ParsableArguments {
    @Option(
        name: .customLong("audio-codec"),
        help: "copy or aac: copy the audio as it is (an error if OUTPUT cannot carry it), or encode AAC. Default: copy when possible.")
    var audioCodec: AudioOptions.Codec?

    @Option(
        name: .customLong("audio-bitrate"),
        help: ArgumentHelp("AAC bit rate, e.g. 192k or 192000 (default: 96k a channel, 64k a channel beyond stereo). Implies encoding.", valueName: "rate"))
    var audioBitrate: BitRate?

    @Option(name: .customLong("sample-rate"), help: ArgumentHelp("Encode the audio at this rate in Hz (8000-96000).", valueName: "hz"))
    var sampleRate: Int?

    @Option(help: ArgumentHelp("Encode the audio with this many channels (1-6 or 8), down- or upmixed.", valueName: "n"))
    var channels: Int?

    @Option(
        help: ArgumentHelp(
            "shortest, video or audio: end OUTPUT where the shorter input ends, where the video ends (the audio stops early or, with --loop-audio, repeats), or where the audio ends (the last video frame stays on screen).",
            valueName: "input"))
    var end: EndPolicy = .shortest

    @Flag(name: .customLong("loop-audio"), help: "Repeat a shorter audio until the video ends.")
    var loopAudio = false

    @Option(
        name: .customLong("audio-offset"), parsing: .unconditional,
        help: ArgumentHelp("Start the audio this many seconds later, or skip this many seconds of its beginning when negative (-2.5).", valueName: "seconds"))
    var audioOffset: Double?

    @Flag(
        name: .customLong("keep-original-audio"),
        help: "Keep the video's own audio as a second audio track, off until a player chooses it.")
    var keepOriginalAudio = false

    @Option(
        name: .customLong("mix-original"), parsing: .unconditional,
        help: ArgumentHelp("Mix the video's own audio under the audio at this level in dB (0 as it is, -12 quieter), into one track. Implies encoding.", valueName: "db"))
    var mixOriginal: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp("Change the audio's level by this many dB (-6 halves it). Implies encoding.", valueName: "db"))
    var volume: Double?

    @Option(name: .customLong("fade-in"), help: ArgumentHelp("Fade the audio in over this many seconds. Implies encoding.", valueName: "seconds"))
    var fadeIn: Double?

    @Option(name: .customLong("fade-out"), help: ArgumentHelp("Fade the audio out over this many seconds before it ends. Implies encoding.", valueName: "seconds"))
    var fadeOut: Double?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Bring the audio to this integrated loudness (EBU R128), e.g. -16: measured first, then one gain, true peaks kept under -1 dBTP. Implies encoding.",
            valueName: "lufs"))
    var loudness: Double?


    func validate() throws {
        if let audioOffset, !(audioOffset.isFinite && abs(audioOffset) < 1e9) { throw ValidationError("--audio-offset must be a number of seconds") }
        for (name, value) in [("--volume", volume), ("--fade-in", fadeIn), ("--fade-out", fadeOut), ("--loudness", loudness)] {
            if let value, !value.isFinite { throw ValidationError("\(name) must be a number") }
        }
        if let fadeIn, fadeIn < 0 { throw ValidationError("--fade-in must be 0 seconds or more") }
        if let fadeOut, fadeOut < 0 { throw ValidationError("--fade-out must be 0 seconds or more") }
        if let mixOriginal, !mixOriginal.isFinite { throw ValidationError("--mix-original must be a number of dB") }
        if OriginalAudio(keeping: keepOriginalAudio, mixingAt: mixOriginal) == nil {
            throw ValidationError("--keep-original-audio and --mix-original are two ways to use the video's own audio; choose one")
        }
        if loopAudio && end == .audio { throw ValidationError("--loop-audio repeats the audio up to the video's end; it cannot go with --end audio") }
    }

    func apply(to options: inout MergeOptions) {
        options.end = end
        options.audio = AudioOptions(
            codec: audioCodec ?? .automatic, bitRate: audioBitrate?.bitsPerSecond, sampleRate: sampleRate, channels: channels,
            offset: MediaTime(seconds: audioOffset ?? 0), loops: loopAudio, volume: volume ?? 0,
            fadeIn: MediaTime(seconds: fadeIn ?? 0), fadeOut: MediaTime(seconds: fadeOut ?? 0), loudness: loudness)
        options.originalAudio = OriginalAudio(keeping: keepOriginalAudio, mixingAt: mixOriginal) ?? .replaced
    }
}

func describe(_ report: MergeReport) -> String {
    func track(_ name: String, _ track: MergeReport.Track) -> String {
        let tag = track.codecTag.flatMap { $0 == track.codec ? nil : " (\($0))" } ?? ""
        let start = track.start.seconds > 0 ? ", starts at \(track.start.secondsText()) s" : ""
        var how = "copied from \(track.source)"
        if let encoding = track.encoding {
            how = "transcoded from \(track.source): \(encoding.summary)"
        } else if let reframing = track.reframing {
            how = "encoded from \(track.source): \(reframing.summary)"
        } else if let cut = track.cutEncoding {
            how += ", the frames at cuts inside GOPs encoded: \(cut.summary)"
        }
        // A composition's clips are listed below, each with how it was made.
        var extra = track.plays > 1 && report.clips.isEmpty ? ", played \(track.plays) times" : ""
        if track.heldLastFrame.value > 0 { extra += ", last frame held \(track.heldLastFrame.secondsText()) s" }
        if let loudness = track.loudness {
            extra += ", loudness \(fixedPoint(loudness.measured, decimals: 1)) LUFS, gain \(loudness.gain >= 0 ? "+" : "")\(fixedPoint(loudness.gain, decimals: 1)) dB"
            if loudness.limited { extra += ", peaks limited" }
        }
        return "  \(name) \(track.codec)\(tag): \(track.packets) packets, \(track.duration.secondsText()) s\(start)\(extra), \(how)"
    }
    return ([
        "wrote \(report.output): \(report.duration.secondsText()) s, \(formatBytes(report.fileBytes))"
            + (report.layout == .fragmented ? ", fragmented MP4" : ""),
        track("video", report.video),
        report.audio.map { track("audio", $0) } ?? "  audio: none (no clip has sound, and no soundtrack was given)",
    ] + (report.originalAudio.map { [track("original audio", $0) + "; a second track, off until chosen"] } ?? []) + [
        "  end: \(report.endReason.rawValue); rotation \(report.rotation.degrees)° (\(describeRotationReason(report.rotation)))",
        "  metadata: " + (report.keptMetadata.isEmpty ? "none kept" : "kept " + report.keptMetadata.joined(separator: ", ")),
    ] + report.leftOut.map { "  not copied: \($0.what), stream \($0.streamIndex) of \($0.path): \(describeLeftOutReason($0))" } + [
        "  done in \(fixedPoint(report.elapsed.seconds, decimals: 2)) s",
    ]).joined(separator: "\n")
}


/// A hidden file beside `path` for intermediate data, removed afterwards.
extension String {
    func replacingFirstLine(with line: String) -> String {
        guard let newline = firstIndex(of: "\n") else { return line }
        return line + self[newline...]
    }
}

/// Writes the thumbnails a merge hands out. An existing thumbnail is
/// refused before the merge starts (unless --force); a write that fails
/// later stops the thumbnails with a warning, since the merge itself is fine;
/// a merge that fails takes its thumbnails with it.
final class ThumbnailWriter: Sendable {
    let folder: String
    let overwrite: Bool
    private let state = Locked<(written: [WrittenImage], failure: String?, madeFolder: Bool)>(([], nil, false))

    init(folder: String, overwrite: Bool) {
        self.folder = folder
        self.overwrite = overwrite
    }

    func prepare() throws {
        let existed = isFolder(folder)
        try prepareFolder(folder)
        state.withLock { $0.madeFolder = !existed }
        if !overwrite, let taken = listFolder(folder).first(where: { $0.hasPrefix("frame-") && $0.hasSuffix(".png") }) {
            throw MediaMuxError.outputExists(path: folder + "/" + taken)
        }
    }

    func write(_ frame: PreviewFrame) {
        let number = state.withLock { $0.failure == nil ? $0.written.count + 1 : nil }
        guard let number else { return }
        let path = folder + "/" + frameFileName(number: number, of: 9999, time: frame.time, format: .png)
        do {
            let image = try PreviewEngine().writeImage(frame, to: path, format: .png, overwrite: overwrite)
            state.withLock { $0.written.append(image) }
        } catch {
            let message = error.description
            state.withLock { $0.failure = $0.failure ?? message }
        }
    }

    var written: [WrittenImage] { state.withLock { $0.written } }
    var failure: String? { state.withLock { $0.failure } }

    /// Removes what was written (and the folder, if this made it).
    func discard() {
        let (written, madeFolder) = state.withLock { ($0.written, $0.madeFolder) }
        for image in written { removeFile(image.path) }
        if madeFolder { removeFolder(folder) }
    }
}
