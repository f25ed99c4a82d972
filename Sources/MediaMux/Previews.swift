/// Previews as `PreviewEngine` makes them, on this engine's runtime. Each
/// call throws `MediaMuxError` alone; `progress` runs on the pool thread
/// doing the work, one report at a time, ending with fraction 1 once the
/// output is in place; a call cancelled with its Task throws
/// `MediaMuxError.cancelled(path:)` naming its input and leaves nothing
/// half-written.
extension MuxEngine {
    /// The frames of `path` that `options` selects, upright and scaled; see `PreviewEngine.frames`.
    ///
    /// - Parameters:
    ///   - path: The video file.
    ///   - options: Which frames, at what size, in which pixel layout.
    /// - Returns: The frames, decoded one per `next()`; iterating throws as
    ///   `PreviewFrames.Iterator.next()` says.
    public func frames(of path: String, options: FrameOptions = FrameOptions()) -> PreviewFrames {
        previews.frames(of: path, options: options)
    }

    /// Writes the selected frames of `path` as images into `folder`; see `PreviewEngine.writeFrames`.
    ///
    /// - Parameters:
    ///   - path: The video file.
    ///   - folder: Where the images go; made if missing (its parent must exist).
    ///   - options: Which frames, at what size.
    ///   - format: PNG or JPEG.
    ///   - overwrite: Replace images already there instead of failing.
    ///   - progress: Called with the images written so far.
    /// - Returns: The images written, in time order.
    /// - Throws: `MediaMuxError`, as `PreviewEngine.writeFrames` does: input
    ///   errors for `path`, `.noStream`, `.streamIndexOutOfRange`,
    ///   `.unknownDuration`, `.invalidOption` for the options,
    ///   `.outputDirectoryMissing`, `.outputNotWritable`, `.outputExists`,
    ///   `.ffmpeg`, `.cancelled` and `.runtimeStopped`.
    public func writeFrames(
        of path: String, into folder: String, options: FrameOptions = FrameOptions(), format: ImageFormat = .png,
        overwrite: Bool = false, progress: (@Sendable (PreviewProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> [WrittenImage] {
        try await previews.writeFrames(of: path, into: folder, options: options, format: format, overwrite: overwrite, progress: progress)
    }

    /// `writeFrames` as progress events, then the images; see `PreviewEngine.writeFramesEvents`.
    ///
    /// - Parameters:
    ///   - path: The video file.
    ///   - folder: Where the images go; made if missing.
    ///   - options: Which frames, at what size.
    ///   - format: PNG or JPEG.
    ///   - overwrite: Replace images already there instead of failing.
    /// - Returns: The events; iterating them throws what `writeFrames` throws.
    public func writeFramesEvents(
        of path: String, into folder: String, options: FrameOptions = FrameOptions(), format: ImageFormat = .png,
        overwrite: Bool = false
    ) -> ProgressEvents<PreviewProgress, [WrittenImage]> {
        previews.writeFramesEvents(of: path, into: folder, options: options, format: format, overwrite: overwrite)
    }

    /// A contact sheet of `path` as one PNG; see `PreviewEngine.contactSheet`.
    ///
    /// - Parameters:
    ///   - path: The video file.
    ///   - output: The sheet to write; its name must end in .png.
    ///   - options: How many frames, in how many columns, at what size.
    ///   - overwrite: Replace an existing sheet instead of failing.
    ///   - progress: Called with the frames drawn so far.
    /// - Returns: The sheet written.
    /// - Throws: `MediaMuxError`, as `PreviewEngine.contactSheet` does:
    ///   `.invalidOption` for the name or the options, output errors, input
    ///   errors for `path`, `.noStream`, `.unknownDuration`, `.ffmpeg`,
    ///   `.cancelled` and `.runtimeStopped`.
    public func contactSheet(
        of path: String, output: String, options: ContactSheetOptions = ContactSheetOptions(),
        overwrite: Bool = false, progress: (@Sendable (PreviewProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> WrittenImage {
        try await previews.contactSheet(of: path, output: output, options: options, overwrite: overwrite, progress: progress)
    }

    /// Encodes one frame as PNG or JPEG and writes it to `path`, on the
    /// calling thread; see `PreviewEngine.writeImage`.
    ///
    /// - Parameters:
    ///   - frame: The picture.
    ///   - path: The image file to write.
    ///   - format: PNG or JPEG.
    ///   - overwrite: Replace an existing file instead of failing.
    /// - Returns: The image written.
    /// - Throws: `MediaMuxError`: `.invalidOption` for a frame whose sides are
    ///   not 1 to 16384 pixels or whose pixels do not fill it; `.ffmpeg` when
    ///   encoding fails; `.outputExists` without `overwrite`;
    ///   `.outputNotWritable` when the file cannot be written.
    public func writeImage(
        _ frame: PreviewFrame, to path: String, format: ImageFormat = .png, overwrite: Bool = false
    ) throws(MediaMuxError) -> WrittenImage {
        try previews.writeImage(frame, to: path, format: format, overwrite: overwrite)
    }

    /// A short H.264 + AAC preview MP4 of `path`; see `PreviewEngine.previewClip`.
    ///
    /// - Parameters:
    ///   - path: The video file.
    ///   - output: The clip to write; its name must end in .mp4, .m4v or .mov.
    ///   - options: Where the clip starts, how long it lasts, its height and encoding.
    ///   - overwrite: Replace an existing clip instead of failing.
    ///   - progress: Called with the frames encoded so far.
    /// - Returns: What was written.
    /// - Throws: `MediaMuxError`, as `PreviewEngine.previewClip` does:
    ///   `.invalidOption` for the name or the options, output errors, input
    ///   errors for `path`, `.noStream`, `.unknownDuration`, `.ffmpeg` (also
    ///   for an FFmpeg without libx264), `.cancelled` and `.runtimeStopped`.
    public func previewClip(
        of path: String, output: String, options: PreviewClipOptions = PreviewClipOptions(),
        overwrite: Bool = false, progress: (@Sendable (PreviewProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> PreviewClipReport {
        try await previews.previewClip(of: path, output: output, options: options, overwrite: overwrite, progress: progress)
    }

    /// `previewClip` as progress events, then its report; breaking out of
    /// the loop cancels it and leaves no file. See `PreviewEngine.previewClipEvents`.
    ///
    /// - Parameters:
    ///   - path: The video file.
    ///   - output: The clip to write: .mp4, .m4v or .mov.
    ///   - options: Where the clip starts, how long it lasts, its height and encoding.
    ///   - overwrite: Replace an existing clip instead of failing.
    /// - Returns: The events; iterating them throws what `previewClip` throws.
    public func previewClipEvents(
        of path: String, output: String, options: PreviewClipOptions = PreviewClipOptions(), overwrite: Bool = false
    ) -> ProgressEvents<PreviewProgress, PreviewClipReport> {
        previews.previewClipEvents(of: path, output: output, options: options, overwrite: overwrite)
    }
}
