@_exported import MediaMuxBase
@_exported import MediaMuxCore

/// Pictures of a video: frames decoded, scaled and turned upright as the
/// file is shown; images, contact sheets and short preview clips.
///
/// Every call throws `MediaMuxError` alone; each lists the codes it throws,
/// and any may also throw `.unexpected`, which is a defect to report.
///
/// Blocking work runs on a thread of `runtime.threadPool`, never on the
/// caller's task, and a `progress` handler runs on that same thread, between
/// two steps of the work: keep it short. The reports of one call come one
/// after another, never two at once, at most ten a second, never going back;
/// the last one (`done == total`, fraction 1) comes once the output is in
/// place. A call cancelled with its Task throws
/// `MediaMuxError.cancelled(path:)` naming its input and leaves nothing
/// half-written.
public struct PreviewEngine: RuntimeEngine {
    /// Where the blocking work runs and where FFmpeg's messages go.
    public var runtime: MediaRuntime

    /// An engine that works on `runtime`'s thread pool and logs to its logger.
    ///
    /// - Parameter runtime: Where the blocking work runs and where messages go;
    ///   by default NIO's shared blocking pool and no logging.
    public init(runtime: MediaRuntime = MediaRuntime()) {
        self.runtime = runtime
    }

    /// The frames of `path` that `options` selects, upright and scaled.
    /// Each frame is decoded on a pool thread when the loop asks for it;
    /// cancelling the consuming task stops decoding, and the loop throws
    /// `MediaMuxError.cancelled(path:)` naming `path`.
    ///
    /// Nothing is read until the first `next()`: a file that cannot be read,
    /// or options that do not fit the video, fail there.
    ///
    /// - Parameters:
    ///   - path: The video file.
    ///   - options: Which frames, at what size, in which pixel layout.
    /// - Returns: The frames, as an asynchronous sequence; see `PreviewFrames`
    ///   for what iterating it throws.
    public func frames(of path: String, options: FrameOptions = FrameOptions()) -> PreviewFrames {
        PreviewFrames(path: path, options: options, runtime: runtime)
    }

    /// Writes the selected frames of `path` as images into `folder` (made if
    /// missing), named `frame-NN-S.mmms.png` in time order. A failure removes
    /// the images this call wrote; an existing file is kept unless `overwrite`.
    ///
    /// `progress` counts images written; it runs on the pool thread doing
    /// the work, one report at a time. Cancelling the Task throws
    /// `MediaMuxError.cancelled(path:)` naming `path`, and removes the
    /// images this call wrote (and the folder, if this call made it).
    ///
    /// - Parameters:
    ///   - path: The video file.
    ///   - folder: Where the images go; made if missing (its parent must exist).
    ///   - options: Which frames, at what size.
    ///   - format: PNG or JPEG.
    ///   - overwrite: Replace images already there instead of failing.
    ///   - progress: Called with the images written so far.
    /// - Returns: The images written, in time order.
    /// - Throws: `MediaMuxError`:
    ///   `.fileNotFound`, `.notAFile`, `.unreadable`, `.notMedia` or
    ///   `.damaged` when `path` cannot be read as media; `.noStream` when it
    ///   has no video stream; `.streamIndexOutOfRange` when
    ///   `options.videoStream` names none; `.unknownDuration` when the
    ///   video's length is not known; `.invalidOption` for a size outside
    ///   1-8192, a time before zero or past the end, or a selection of no
    ///   frames or more than 100,000; `.outputDirectoryMissing` when the
    ///   folder's parent does not exist, `.outputNotWritable` when the folder
    ///   is a file or an image cannot be written, `.outputExists` for an
    ///   image already there without `overwrite`; `.ffmpeg` when decoding,
    ///   scaling or encoding fails; `.cancelled` naming `path`;
    ///   `.runtimeStopped` when the runtime's thread pool has shut down.
    public func writeFrames(
        of path: String, into folder: String, options: FrameOptions = FrameOptions(), format: ImageFormat = .png,
        overwrite: Bool = false, progress: (@Sendable (PreviewProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> [WrittenImage] {
        try await work(on: path) { flag in
            let info = try Prober(cancellation: flag).probe(path: path)
            let plan = try PreviewPlanner.framePlan(info, options: options)
            let madeFolder = try prepareFolder(folder)
            let encoder = ImageEncoder(format: format)
            var written: [WrittenImage] = []
            var reporter = ProgressReporter(progress)
            do {
                let reader = try FrameReader(plan: plan, threads: runtime.decodingThreads, cancellation: flag)
                while let frame = try reader.next() {
                    let name = frameFileName(number: written.count + 1, of: plan.mostFrames, time: frame.time, format: format)
                    written.append(try store(frame, encoder: encoder, to: folder + "/" + name, overwrite: overwrite))
                    reporter.report(
                        done: written.count, total: plan.frameCount,
                        fraction: plan.fraction(done: written.count, lastShownAt: frame.time))
                }
            } catch {
                for image in written { removeFile(image.path) }
                if madeFolder { removeFolder(folder) }
                throw error
            }
            reporter.finish(done: written.count)
            return written
        }
    }

    /// A contact sheet of `path`: `options.frames` evenly spaced frames in a
    /// grid, each labelled with its time, as one PNG, written beside `output`
    /// and moved into place when complete.
    ///
    /// `progress` counts frames drawn; it runs on the pool thread doing the
    /// work, one report at a time. Cancelling the Task throws
    /// `MediaMuxError.cancelled(path:)` naming `path`; no sheet is written.
    ///
    /// - Parameters:
    ///   - path: The video file.
    ///   - output: The sheet to write; its name must end in .png.
    ///   - options: How many frames, in how many columns, at what size.
    ///   - overwrite: Replace an existing sheet instead of failing.
    ///   - progress: Called with the frames drawn so far.
    /// - Returns: The sheet written, its size in pixels and bytes.
    /// - Throws: `MediaMuxError`: `.invalidOption` for a name not ending in
    ///   .png, 0 or more than 1000 frames, 0 or more than 100 columns, a tile
    ///   size outside 1-8192, or a sheet larger than 16384 pixels a side or
    ///   50 million in all; `.outputDirectoryMissing`, `.outputNotWritable`
    ///   (the output is a folder, or cannot be written) or `.outputExists`
    ///   (without `overwrite`) for the output;
    ///   `.fileNotFound`, `.notAFile`, `.unreadable`, `.notMedia` or
    ///   `.damaged` when `path` cannot be read as media; `.noStream` when it
    ///   has no video stream; `.unknownDuration` when the video's length is
    ///   not known; `.ffmpeg` when decoding, scaling or encoding fails;
    ///   `.cancelled` naming `path`; `.runtimeStopped` when the runtime's
    ///   thread pool has shut down.
    public func contactSheet(
        of path: String, output: String, options: ContactSheetOptions = ContactSheetOptions(),
        overwrite: Bool = false, progress: (@Sendable (PreviewProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> WrittenImage {
        try await work(on: path) { flag in
            try checkImageOutput(output, extensions: ["png"], overwrite: overwrite)
            let info = try Prober(cancellation: flag).probe(path: path)
            let plan = try PreviewPlanner.sheetPlan(info, output: output, options: options)
            let reader = try FrameReader(plan: plan.frames, threads: runtime.decodingThreads, cancellation: flag)
            var drawing = SheetDrawing(layout: plan.layout)
            var reporter = ProgressReporter(progress)
            var done = 0
            while let frame = try reader.next() {
                drawing.add(frame)
                done += 1
                reporter.report(done: done, total: plan.frames.frameCount, fraction: plan.frames.fraction(done: done, lastShownAt: frame.time))
            }
            let sheet = drawing.canvas.frame
            let bytes = try ImageEncoder(format: .png).encode(sheet, path: output)
            // A cancellation while the PNG was encoded still leaves no sheet.
            if flag.isRaised { throw MediaMuxError.cancelled(path: path) }
            let size = try TemporaryOutput.write(bytes, to: output, overwrite: overwrite)
            reporter.finish(done: done)
            var image = WrittenImage(path: output, time: nil, width: sheet.width, height: sheet.height, bytes: size)
            image.warnings = plan.warnings
            for warning in plan.warnings { runtime.logger.warning("\(warning)", metadata: ["output": "\(output)"]) }
            return image
        }
    }
}

extension PreviewEngine {
    /// Encodes one frame as PNG or JPEG and writes it to `path`, which shows
    /// up only complete; an existing file is kept unless `overwrite`. Runs on
    /// the calling thread: it encodes one picture, and reads no file.
    ///
    /// - Parameters:
    ///   - frame: The picture, as a frame stream or a merge's thumbnails hand
    ///     it out, or made by the caller.
    ///   - path: The image file to write.
    ///   - format: PNG or JPEG; the name is not checked against it.
    ///   - overwrite: Replace an existing file instead of failing.
    /// - Returns: The image written, its size in pixels and bytes.
    /// - Throws: `MediaMuxError`: `.invalidOption` for a frame whose sides are
    ///   not 1 to 16384 pixels or whose pixels do not fill it; `.ffmpeg` when
    ///   this FFmpeg has no such encoder or encoding fails; `.outputExists`
    ///   for an existing file without `overwrite`; `.outputNotWritable` when
    ///   the file cannot be written (its folder missing included).
    public func writeImage(
        _ frame: PreviewFrame, to path: String, format: ImageFormat = .png, overwrite: Bool = false
    ) throws(MediaMuxError) -> WrittenImage {
        do {
            return try store(frame, encoder: ImageEncoder(format: format), to: path, overwrite: overwrite)
        } catch {
            throw MediaMuxError(error, subject: path)
        }
    }

    /// Blocking FFmpeg work of a public call about `path` on the runtime's
    /// pool, with what it throws typed (a cancellation names `path`).
    private func work<T: Sendable>(
        on path: String, _ body: @escaping @Sendable (CancellationFlag) throws -> T
    ) async throws(MediaMuxError) -> T {
        try await typedErrors(subject: path) { try await runFFmpeg(runtime, body) }
    }
}

/// The name `writeFrames` gives frame `number` (from 1) of `count`:
/// `frame-01-2.500s.png`, numbered with enough digits to sort in time order.
package func frameFileName(number: Int, of count: Int?, time: MediaTime, format: ImageFormat) -> String {
    let digits = max(2, String(count ?? 1000).count)
    let text = String(number)
    return "frame-" + String(repeating: "0", count: max(0, digits - text.count)) + text
        + "-" + time.secondsText() + "s." + format.fileExtension
}

private func store(_ frame: PreviewFrame, encoder: ImageEncoder, to target: String, overwrite: Bool) throws -> WrittenImage {
    let size = try TemporaryOutput.write(encoder.encode(frame, path: target), to: target, overwrite: overwrite)
    return WrittenImage(path: target, time: frame.time, width: frame.width, height: frame.height, bytes: size)
}

/// Checks an output file's name and place before any work starts.
func checkImageOutput(_ output: String, extensions: [String], overwrite: Bool) throws {
    let name = namePart(of: output)
    let ext = name.split(separator: ".", omittingEmptySubsequences: false).count > 1
        ? String(name.split(separator: ".").last ?? "").lowercased() : ""
    guard extensions.contains(ext) else {
        throw MediaMuxError.invalidOption(option: "output", message: "\(output): the file name must end in ." + extensions.joined(separator: " or ."))
    }
    guard fileStatus(folderPart(of: output))?.isFolder == true else {
        throw MediaMuxError.outputDirectoryMissing(path: output)
    }
    if let status = fileStatus(output) {
        if status.isFolder { throw MediaMuxError.outputNotWritable(path: output, reason: "it is a folder") }
        if !overwrite { throw MediaMuxError.outputExists(path: output) }
    }
}

extension PreviewEngine {
    /// Runs a preview clip job: a short H.264 + AAC MP4 of `job.input`
    /// (libx264, `job.options.preset`), upright, scaled to
    /// `job.options.height`, faststart; written beside `job.output` and moved
    /// into place when complete. The one clip entry: the other forms go through it.
    ///
    /// `progress` counts frames encoded, its fraction the part of the clip's
    /// time encoded (how many frames there are is known at the end); it runs
    /// on the pool thread doing the work, one report at a time. Cancelling
    /// the Task throws `MediaMuxError.cancelled(path:)` naming `job.input`, and
    /// leaves neither the clip nor its temporary file.
    ///
    /// - Parameters:
    ///   - job: The video, the clip to write and how.
    ///   - progress: Called with the frames encoded so far.
    /// - Returns: What was written: the span shown, the picture size, the
    ///   frames, whether it has sound.
    /// - Throws: `MediaMuxError`: `.invalidOption` for a name not ending in
    ///   .mp4, .m4v or .mov, a duration of zero or less, a height outside
    ///   2-4320, a crf outside 0-51, or a start before zero or past the end;
    ///   `.outputDirectoryMissing`, `.outputNotWritable` or `.outputExists`
    ///   (without `job.overwrite`) for the output;
    ///   `.fileNotFound`, `.notAFile`, `.unreadable`, `.notMedia` or
    ///   `.damaged` when `job.input` cannot be read as media; `.noStream` when it
    ///   has no video stream; `.unknownDuration` when the video's length is
    ///   not known; `.damaged` when no picture can be decoded in the span;
    ///   `.ffmpeg` when this FFmpeg lacks libx264 or decoding or encoding
    ///   fails; `.cancelled` naming `job.input`; `.runtimeStopped` when the
    ///   runtime's thread pool has shut down.
    public func previewClip(
        _ job: PreviewClipJob, progress: (@Sendable (PreviewProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> PreviewClipReport {
        try await work(on: job.input) { flag in
            try checkImageOutput(job.output, extensions: MergePlan.Container.allExtensions, overwrite: job.overwrite)
            let info = try Prober(cancellation: flag).probe(path: job.input)
            let plan = try PreviewPlanner.clipPlan(info, output: job.output, options: job.options, overwrite: job.overwrite)
            return try ClipWriter(plan: plan, cancellation: flag, progress: progress).run()
        }
    }

    /// A preview clip of `path`: a thin wrapper over `previewClip(_:progress:)`
    /// with `PreviewClipJob(input:output:options:overwrite:)`.
    ///
    /// - Parameters:
    ///   - path: The video file.
    ///   - output: The clip to write: .mp4, .m4v or .mov.
    ///   - options: Where the clip starts, how long it lasts, its height and encoding.
    ///   - overwrite: Replace an existing clip instead of failing.
    ///   - progress: Called with the frames encoded so far.
    /// - Returns: What was written.
    /// - Throws: `MediaMuxError`, as `previewClip(_:progress:)` does.
    public func previewClip(
        of path: String, output: String, options: PreviewClipOptions = PreviewClipOptions(),
        overwrite: Bool = false, progress: (@Sendable (PreviewProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> PreviewClipReport {
        try await previewClip(PreviewClipJob(input: path, output: output, options: options, overwrite: overwrite), progress: progress)
    }

    /// A preview clip job as an asynchronous sequence: its progress, then
    /// its report as the last event; a failure is thrown from the loop. The
    /// clip is made when iteration starts. Ending the loop early (a `break`,
    /// or cancelling the iterating task) cancels it: no clip and no
    /// temporary file stay behind.
    ///
    /// - Parameter job: The video, the clip to write and how.
    /// - Returns: The events; iterating them throws what `previewClip(_:progress:)` throws.
    public func events(for job: PreviewClipJob) -> ProgressEvents<PreviewProgress, PreviewClipReport> {
        ProgressEvents(subject: job.input) { progress throws(MediaMuxError) in
            try await previewClip(job, progress: progress)
        }
    }

    /// `writeFrames` as an asynchronous sequence: its progress, then the
    /// images written as the last event. Ending the loop early cancels it,
    /// which removes the images it wrote.
    ///
    /// - Parameters:
    ///   - path: The video file.
    ///   - folder: Where the images go; made if missing.
    ///   - options: Which frames, at what size.
    ///   - format: PNG or JPEG.
    ///   - overwrite: Replace images already there instead of failing.
    /// - Returns: The events; iterating them throws what
    ///   `writeFrames(of:into:options:format:overwrite:progress:)` throws.
    public func writeFramesEvents(
        of path: String, into folder: String, options: FrameOptions = FrameOptions(), format: ImageFormat = .png,
        overwrite: Bool = false
    ) -> ProgressEvents<PreviewProgress, [WrittenImage]> {
        ProgressEvents(subject: path) { progress throws(MediaMuxError) in
            try await writeFrames(of: path, into: folder, options: options, format: format, overwrite: overwrite, progress: progress)
        }
    }
}
