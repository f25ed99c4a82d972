/// Previews as `PreviewEngine` makes them, on this engine's runtime. Each
/// call throws `MediaMuxError` alone; `progress` runs on the pool thread
/// doing the work, one report at a time, ending with fraction 1 once the
/// output is in place; a call cancelled with its Task throws
/// `MediaMuxError.cancelled(path:)` naming its input and leaves nothing
/// half-written.
extension MuxEngine {
    /// The frames of `path` that `options` selects, upright and scaled; see `PreviewEngine.frames`.
    public func frames(of path: String, options: FrameOptions = FrameOptions()) -> PreviewFrames {
        previews.frames(of: path, options: options)
    }

    /// Writes the selected frames of `path` as images into `folder`; see `PreviewEngine.writeFrames`.
    public func writeFrames(
        of path: String, into folder: String, options: FrameOptions = FrameOptions(), format: ImageFormat = .png,
        overwrite: Bool = false, progress: (@Sendable (PreviewProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> [WrittenImage] {
        try await previews.writeFrames(of: path, into: folder, options: options, format: format, overwrite: overwrite, progress: progress)
    }

    /// `writeFrames` as progress events, then the images; see `PreviewEngine.writeFramesEvents`.
    public func writeFramesEvents(
        of path: String, into folder: String, options: FrameOptions = FrameOptions(), format: ImageFormat = .png,
        overwrite: Bool = false
    ) -> ProgressEvents<PreviewProgress, [WrittenImage]> {
        previews.writeFramesEvents(of: path, into: folder, options: options, format: format, overwrite: overwrite)
    }

    /// A contact sheet of `path` as one PNG; see `PreviewEngine.contactSheet`.
    public func contactSheet(
        of path: String, output: String, options: ContactSheetOptions = ContactSheetOptions(),
        overwrite: Bool = false, progress: (@Sendable (PreviewProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> WrittenImage {
        try await previews.contactSheet(of: path, output: output, options: options, overwrite: overwrite, progress: progress)
    }

    /// Encodes one frame as PNG or JPEG and writes it to `path`, on the
    /// calling thread; see `PreviewEngine.writeImage`.
    public func writeImage(
        _ frame: PreviewFrame, to path: String, format: ImageFormat = .png, overwrite: Bool = false
    ) throws(MediaMuxError) -> WrittenImage {
        try previews.writeImage(frame, to: path, format: format, overwrite: overwrite)
    }

    /// A short H.264 + AAC preview MP4 of `path`; see `PreviewEngine.previewClip`.
    public func previewClip(
        of path: String, output: String, options: PreviewClipOptions = PreviewClipOptions(),
        overwrite: Bool = false, progress: (@Sendable (PreviewProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> PreviewClipReport {
        try await previews.previewClip(of: path, output: output, options: options, overwrite: overwrite, progress: progress)
    }

    /// `previewClip` as progress events, then its report; breaking out of
    /// the loop cancels it and leaves no file. See `PreviewEngine.previewClipEvents`.
    public func previewClipEvents(
        of path: String, output: String, options: PreviewClipOptions = PreviewClipOptions(), overwrite: Bool = false
    ) -> ProgressEvents<PreviewProgress, PreviewClipReport> {
        previews.previewClipEvents(of: path, output: output, options: options, overwrite: overwrite)
    }
}
