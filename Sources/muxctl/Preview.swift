import ArgumentParser
import MediaMux

extension ImageFormat: ExpressibleByArgument {}

extension MuxCtl {
    struct Preview: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write preview frames, a contact sheet or a short preview clip of a video.",
            discussion: """
            Exactly one of --out, --sheet and --clip. Frames are upright (the display rotation is applied) \
            and keep the display aspect ratio. A frame "at T" is the one shown at T seconds, counting from \
            the video's first frame.
              muxctl preview in.mp4 --out frames/ [--frames N | --at 1.5,3 | --every 2] [--size 320] [--format png|jpeg]
              muxctl preview in.mp4 --sheet sheet.png [--frames 12] [--columns 4]
              muxctl preview in.mp4 --clip clip.mp4 [--start 0] [--seconds 5] [--height 360]
            """)

        @Argument(help: "The video file.") var input: String

        @Option(help: ArgumentHelp("Folder for the frames (made if missing).", valueName: "dir")) var out: String?
        @Option(help: ArgumentHelp("Write a contact sheet to this .png file.", valueName: "file.png")) var sheet: String?
        @Option(help: ArgumentHelp("Write an H.264 + AAC preview clip to this .mp4 file.", valueName: "file.mp4")) var clip: String?

        @Option(help: "Evenly spaced frames (default 12).") var frames: Int?
        @Option(help: ArgumentHelp("Frames at these times in seconds, comma-separated.", valueName: "t1,t2,...")) var at: String?
        @Option(help: ArgumentHelp("A frame every this many seconds.", valueName: "seconds")) var every: Double?
        @Option(help: "Longest side of each frame (or sheet tile) in pixels (default 320).") var size: Int?
        @Option(help: "Image format of the frames: png or jpeg (default png).") var format: ImageFormat?
        @Option(help: "Columns of the contact sheet (default: about as many as rows).") var columns: Int?

        @Option(help: "Clip: where it starts, in seconds (default 0).") var start: Double?
        @Option(help: "Clip: its length in seconds (default 5).") var seconds: Double?
        @Option(help: "Clip: picture height in pixels, the width following the aspect ratio (default 360).") var height: Int?

        @Flag(name: [.customShort("y"), .long], help: "Overwrite files that exist.") var force = false
        @OptionGroup var common: CommonOptions

        func validate() throws {
            let targets = [out, sheet, clip].compactMap { $0 }
            guard targets.count == 1 else { throw ValidationError("give exactly one of --out, --sheet and --clip") }
            let choices = [frames != nil, at != nil, every != nil].filter { $0 }.count
            if choices > 1 { throw ValidationError("give at most one of --frames, --at and --every") }
            if clip != nil, choices > 0 || columns != nil {
                throw ValidationError("--frames, --at, --every and --columns do not apply to --clip")
            }
            if sheet != nil, at != nil || every != nil { throw ValidationError("a contact sheet takes --frames, not --at or --every") }
            if sheet == nil, columns != nil { throw ValidationError("--columns applies to --sheet only") }
            if out == nil, format != nil { throw ValidationError("--format applies to --out only (a sheet is PNG, a clip MP4)") }
            if clip != nil, size != nil { throw ValidationError("--size does not apply to --clip; use --height") }
            if clip == nil, start != nil || seconds != nil || height != nil {
                throw ValidationError("--start, --seconds and --height apply to --clip only")
            }
            if let frames, frames < 1 { throw ValidationError("--frames must be 1 or more") }
            if let every, !(every > 0 && every.isFinite) { throw ValidationError("--every must be more than 0 seconds") }
            if let size, let problem = ThumbnailOptions.sizeProblem(size) { throw ValidationError("--size \(problem)") }
            if let start, !(start >= 0 && start.isFinite) { throw ValidationError("--start must be 0 or more") }
            if let seconds, !(seconds > 0 && seconds.isFinite) { throw ValidationError("--seconds must be more than 0") }
            if let height, height < 2 || height > 4320 { throw ValidationError("--height must be between 2 and 4320") }
            _ = try times()
        }

        private func times() throws -> [Double]? {
            guard let at else { return nil }
            let parts = at.split(separator: ",", omittingEmptySubsequences: false)
            return try parts.map { part in
                let text = part.trimmingSpaces
                guard let value = Double(text), value.isFinite, value >= 0 else {
                    throw ValidationError("--at takes times in seconds separated by commas; '\(text)' is not one")
                }
                return value
            }
        }

        func run() async throws {
            let engine = common.engine
            let bar = ProgressBar.forStandardError(enabled: !common.quiet && !common.json)
            let show: @Sendable (PreviewProgress, String) -> Void = { progress, what in
                bar?.update(fraction: progress.fraction, detail: "\(what): \(progress)")
            }
            let summary: PreviewSummary
            if let clip {
                let options = PreviewClipOptions(
                    start: MediaTime(seconds: start ?? 0), duration: MediaTime(seconds: seconds ?? 5), height: height ?? 360)
                let report = try await runReportingErrors { [input, force] in
                    let job = PreviewClipJob(input: input, output: clip, options: options, overwrite: force)
                    return try await engine.previews.previewClip(job) { show($0, "encoding") }
                }
                summary = PreviewSummary(clip: report)
            } else if let sheet {
                let options = ContactSheetOptions(frames: frames ?? 12, columns: columns, tileSize: size ?? 320)
                let image = try await runReportingErrors { [input, force] in
                    try await engine.previews.contactSheet(of: input, output: sheet, options: options, overwrite: force) { show($0, "drawing") }
                }
                summary = PreviewSummary(images: [image], kind: "sheet")
            } else {
                let selection: FrameSelection
                if let times = try times() {
                    selection = .times(times.map { MediaTime(seconds: $0) })
                } else if let every {
                    selection = .rate(perSecond: 1 / every)
                } else {
                    selection = .evenlySpaced(count: frames ?? 12)
                }
                let options = FrameOptions(selection: selection, size: size ?? 320)
                let format = self.format ?? .png
                let images = try await runReportingErrors { [input, out, force] in
                    try await engine.previews.writeFrames(of: input, into: out ?? ".", options: options, format: format, overwrite: force) { show($0, "writing") }
                }
                summary = PreviewSummary(images: images, kind: "frames")
            }
            bar?.clear()
            if common.json {
                printJSON(summary)
            } else if !common.quiet {
                print(summary.text)
            }
        }
    }
}

/// What `muxctl preview` wrote, for --json and for the plain summary.
/// What `muxctl preview` wrote, as `--json` prints it: the library's facts
/// of each image or of the clip, as a batch records them.
struct PreviewSummary: Encodable {
    var kind: String
    var images: [ImageFacts]?
    var clip: ClipFacts?

    init(images: [WrittenImage], kind: String) {
        self.kind = kind
        self.images = images.map(ImageFacts.init)
    }

    init(clip report: PreviewClipReport) {
        kind = "clip"
        clip = ClipFacts(report)
    }

    var text: String {
        if let clip {
            return "wrote \(clip.path): \(clip.width)x\(clip.height), \(fixedPoint(clip.duration, decimals: 3)) s from "
                + "\(fixedPoint(clip.start, decimals: 3)) s, \(clip.videoFrames) frames, "
                + (clip.hasAudio ? "with audio" : "no audio") + ", \(formatBytes(clip.bytes))"
        }
        return (images ?? []).map { image in
            let time = image.time.map { " at \(fixedPoint($0, decimals: 3)) s" } ?? ""
            return "wrote \(image.path): \(image.width)x\(image.height)\(time), \(formatBytes(image.bytes))"
                + (image.warnings ?? []).map { "\nwarning: \($0)" }.joined()
        }.joined(separator: "\n")
    }
}

extension Substring {
    var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
