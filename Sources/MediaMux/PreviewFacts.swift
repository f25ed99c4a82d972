import MediaMuxBase
import MediaMuxCore
import MediaMuxPreview

/// An image a preview wrote (a frame, a thumbnail, a contact sheet), as
/// `muxctl preview --json` prints it and a batch records it.
public struct ImageFacts: Sendable, Equatable, Codable {
    /// The file.
    public var path: String
    /// The time of the frame it shows, in seconds; nil for a contact sheet.
    public var time: Double?
    /// Its width in pixels.
    public var width: Int
    /// Its height in pixels.
    public var height: Int
    /// Its size on disk.
    public var bytes: Int
    /// What the caller should know about it (a contact sheet with fewer
    /// tiles than asked for, the video having fewer frames); nil when nothing.
    public var warnings: [String]?

    /// The facts of `image`.
    ///
    /// - Parameter image: The image as written.
    public init(_ image: WrittenImage) {
        path = image.path
        time = image.time?.seconds
        width = image.width
        height = image.height
        bytes = image.bytes
        warnings = image.warnings.isEmpty ? nil : image.warnings
    }
}

/// A preview clip, as `muxctl preview --json` prints it and a batch records it.
public struct ClipFacts: Sendable, Equatable, Codable {
    /// The MP4.
    public var path: String
    /// Where in the source it starts, in seconds.
    public var start: Double
    /// How long it plays, in seconds.
    public var duration: Double
    /// Its picture's width in pixels.
    public var width: Int
    /// Its picture's height in pixels.
    public var height: Int
    /// The video frames it holds.
    public var videoFrames: Int
    /// Whether it has sound (false when its source had none).
    public var hasAudio: Bool
    /// Its size on disk.
    public var bytes: Int

    /// The facts of `clip`.
    ///
    /// - Parameter clip: The preview clip's report.
    public init(_ clip: PreviewClipReport) {
        path = clip.output
        start = clip.start.seconds
        duration = clip.duration.seconds
        width = clip.width
        height = clip.height
        videoFrames = clip.videoFrames
        hasAudio = clip.hasAudio
        bytes = clip.bytes
    }
}

/// The facts of a contact sheet a batch wrote: now ``ImageFacts``.
@available(*, deprecated, renamed: "ImageFacts")
public typealias BatchImageFacts = ImageFacts

/// The facts of a preview clip a batch wrote: now ``ClipFacts``.
@available(*, deprecated, renamed: "ClipFacts")
public typealias BatchClipFacts = ClipFacts
