extension MuxEngine {
    /// The frames of `path` that `options` selects, upright and scaled.
    public func frames(of path: String, options: FrameOptions = FrameOptions()) -> PreviewFrames {
        previews.frames(of: path, options: options)
    }

    /// Writes the selected frames of `path` as images into `folder`; see `PreviewEngine.writeFrames`.
    public func writeFrames(
        of path: String, into folder: String, options: FrameOptions = FrameOptions(), format: ImageFormat = .png,
        overwrite: Bool = false, progress: (@Sendable (PreviewProgress) -> Void)? = nil
    ) async throws -> [WrittenImage] {
        try await previews.writeFrames(of: path, into: folder, options: options, format: format, overwrite: overwrite, progress: progress)
    }

    /// A contact sheet of `path` as one PNG; see `PreviewEngine.contactSheet`.
    public func contactSheet(
        of path: String, output: String, options: ContactSheetOptions = ContactSheetOptions(),
        overwrite: Bool = false, progress: (@Sendable (PreviewProgress) -> Void)? = nil
    ) async throws -> WrittenImage {
        try await previews.contactSheet(of: path, output: output, options: options, overwrite: overwrite, progress: progress)
    }

    /// Encodes one frame as PNG or JPEG and writes it to `path`; see `PreviewEngine.writeImage`.
    public func writeImage(_ frame: PreviewFrame, to path: String, format: ImageFormat = .png, overwrite: Bool = false) throws -> WrittenImage {
        try previews.writeImage(frame, to: path, format: format, overwrite: overwrite)
    }

    /// A short H.264 + AAC preview MP4 of `path`; see `PreviewEngine.previewClip`.
    public func previewClip(
        of path: String, output: String, options: PreviewClipOptions = PreviewClipOptions(),
        overwrite: Bool = false, progress: (@Sendable (PreviewProgress) -> Void)? = nil
    ) async throws -> PreviewClipReport {
        try await previews.previewClip(of: path, output: output, options: options, overwrite: overwrite, progress: progress)
    }
}
