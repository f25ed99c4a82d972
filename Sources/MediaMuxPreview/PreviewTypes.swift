import MediaMuxBase
import MediaMuxCore
/// One decoded picture, upright and scaled, as plain bytes: Sendable, free of
/// FFmpeg types, ready for a player, an image encoder or a comparison.
public struct PreviewFrame: Sendable, Equatable {
    /// Where the frame is shown on the video's own timeline, whose zero is
    /// its first presented frame.
    public var time: MediaTime
    /// Pixels across, upright.
    public var width: Int
    /// Pixels down, upright.
    public var height: Int
    /// How each pixel's bytes are laid out.
    public var layout: PixelLayout
    /// Rows top to bottom, no padding: `width * layout.bytesPerPixel` bytes each.
    public var pixels: [UInt8]

    /// Bytes of one row of `pixels`.
    public var bytesPerRow: Int { width * layout.bytesPerPixel }

    /// A picture from its parts, for a caller's own frames (`writeImage`
    /// checks that `pixels` fills `height` rows of `bytesPerRow`).
    ///
    /// - Parameters:
    ///   - time: Where the frame is shown on the video's timeline.
    ///   - width: Pixels across.
    ///   - height: Pixels down.
    ///   - layout: RGB or RGBA.
    ///   - pixels: Rows top to bottom, no padding.
    public init(time: MediaTime, width: Int, height: Int, layout: PixelLayout, pixels: [UInt8]) {
        self.time = time
        self.width = width
        self.height = height
        self.layout = layout
        self.pixels = pixels
    }
}

/// How a frame's pixels are stored: 8 bits a component, components in order.
public enum PixelLayout: String, Sendable, Equatable {
    /// 8-bit red, green, blue.
    case rgb
    /// 8-bit red, green, blue, alpha (opaque).
    case rgba

    /// 3 for RGB, 4 for RGBA.
    public var bytesPerPixel: Int { self == .rgb ? 3 : 4 }
}

/// Which frames a frame stream yields. Times are on the video's own
/// timeline (0 is its first frame); literals are seconds: `.times([1.5, 3])`.
/// Every choice yields frames in time order.
public enum FrameSelection: Sendable, Equatable {
    /// Every decoded frame shown from `from` until `to` (the end of the video when nil).
    case all(from: MediaTime = 0, to: MediaTime? = nil)
    /// The frame shown at each step of `perSecond` frames a second, from `from` until `to`.
    case rate(perSecond: Double, from: MediaTime = 0, to: MediaTime? = nil)
    /// The frame shown at each of these times (sorted, repeats dropped).
    case times([MediaTime])
    /// `count` evenly spaced frames, each from the middle of its `1/count` of
    /// the video: at `(k + 0.5) * duration / count` seconds.
    case evenlySpaced(count: Int)
}

/// Which frames a preview call decodes, and how it hands them out.
public struct FrameOptions: Sendable, Equatable {
    /// Which frames: 12 evenly spaced unless told otherwise.
    public var selection: FrameSelection
    /// The longest side of the upright picture in pixels; nil keeps the display size.
    public var size: Int?
    /// RGB or RGBA.
    public var layout: PixelLayout
    /// Yield frames at the pace they would be shown (for a player), rather than as fast as they decode.
    public var paced: Bool
    /// Which video stream, by its index in the file (`StreamInfo.index`,
    /// which counts streams of every kind); nil is the first video stream.
    /// `MergeOptions.videoStream` counts video streams only.
    public var videoStream: Int?

    /// Frame options; every one has a default.
    ///
    /// - Parameters:
    ///   - selection: Which frames.
    ///   - size: The longest side of the upright picture, 1 to 8192 pixels;
    ///     nil keeps the display size.
    ///   - layout: RGB or RGBA.
    ///   - paced: Yield frames at the pace they would be shown.
    ///   - videoStream: The file's stream index of the video stream; nil for the first.
    public init(
        selection: FrameSelection = .evenlySpaced(count: 12), size: Int? = 320, layout: PixelLayout = .rgb,
        paced: Bool = false, videoStream: Int? = nil
    ) {
        self.selection = selection
        self.size = size
        self.layout = layout
        self.paced = paced
        self.videoStream = videoStream
    }
}

/// The image files preview calls write, through libavcodec's encoders.
public enum ImageFormat: String, Sendable, Equatable, CaseIterable {
    /// `png` for PNG (lossless, RGB or RGBA), `jpeg` for JPEG (quality as
    /// `ffmpeg -q:v 3` gives it).
    case png, jpeg

    /// "png" or "jpg", for file names.
    public var fileExtension: String { self == .png ? "png" : "jpg" }
}

/// A file MediaMux wrote, for reports.
public struct WrittenImage: Sendable, Equatable {
    /// Where it was written.
    public var path: String
    /// The frame's time (for a contact sheet: nil).
    public var time: MediaTime?
    /// Pixels across.
    public var width: Int
    /// Pixels down.
    public var height: Int
    /// The file's size in bytes.
    public var bytes: Int
    /// What the caller should know about it: a contact sheet of a video with
    /// fewer frames than tiles asked for has a tile per frame, and says so.
    public var warnings: [String] = []

    /// An image as a preview call reports it; for tests.
    ///
    /// - Parameters:
    ///   - path: Where it was written.
    ///   - time: The frame's time; nil for a contact sheet.
    ///   - width: Pixels across.
    ///   - height: Pixels down.
    ///   - bytes: The file's size.
    public init(path: String, time: MediaTime?, width: Int, height: Int, bytes: Int) {
        self.path = path
        self.time = time
        self.width = width
        self.height = height
        self.bytes = bytes
    }
}

/// How a contact sheet looks: how many frames, in how many columns, how large.
public struct ContactSheetOptions: Sendable, Equatable {
    /// Frames on the sheet, evenly spaced from the first.
    public var frames: Int
    /// Columns of the grid; nil picks about as many columns as rows, wider than tall.
    public var columns: Int?
    /// The longest side of each picture on the sheet.
    public var tileSize: Int

    /// Sheet options.
    ///
    /// - Parameters:
    ///   - frames: Frames on the sheet, 1 to 1000.
    ///   - columns: Columns, 1 to 100; nil picks about as many as rows.
    ///   - tileSize: The longest side of each picture, 1 to 8192 pixels.
    public init(frames: Int = 12, columns: Int? = nil, tileSize: Int = 320) {
        self.frames = frames
        self.columns = columns
        self.tileSize = tileSize
    }
}

/// What a preview clip shows and how it is encoded.
public struct PreviewClipOptions: Sendable, Equatable {
    /// Where the clip begins on the video's timeline.
    public var start: MediaTime
    /// Length of the clip (shorter when the input ends first).
    public var duration: MediaTime
    /// Height of the upright picture; the width follows the display aspect ratio (rounded to even).
    public var height: Int
    /// libx264's preset.
    public var preset: String
    /// libx264's constant rate factor.
    public var crf: Int
    /// The AAC bit rate of the clip's sound, in bits per second.
    public var audioBitRate: Int

    /// Clip options; every one has a default.
    ///
    /// - Parameters:
    ///   - start: Where the clip begins, 0 or later and before the video's end.
    ///   - duration: How long it lasts; more than zero.
    ///   - height: The picture's height, 2 to 4320 pixels.
    ///   - preset: libx264's preset ("ultrafast", "fast", "slow"...); one it does
    ///     not know makes the clip fail with `.ffmpeg`.
    ///   - crf: libx264's constant rate factor, 0 to 51 (lower is better).
    ///   - audioBitRate: The sound's AAC bit rate in bits per second.
    public init(
        start: MediaTime = 0, duration: MediaTime = 5, height: Int = 360, preset: String = "fast", crf: Int = 23,
        audioBitRate: Int = 128_000
    ) {
        self.start = start
        self.duration = duration
        self.height = height
        self.preset = preset
        self.crf = crf
        self.audioBitRate = audioBitRate
    }
}

/// One preview clip, everything it needs in one value: the video, the clip
/// to write and how. Run it with `PreviewEngine.previewClip(_:progress:)`,
/// or as a stream of events with `PreviewEngine.events(for:)`.
public struct PreviewClipJob: Sendable, Equatable {
    /// The video file: its first video stream, and its first audio stream when it plays during the clip.
    public var input: String
    /// The clip to write: .mp4, .m4v or .mov.
    public var output: String
    /// Where the clip starts, how long it lasts, its height and encoding.
    public var options: PreviewClipOptions
    /// Replace an existing clip instead of failing.
    public var overwrite: Bool

    /// A preview clip job.
    ///
    /// - Parameters:
    ///   - input: The video file.
    ///   - output: The clip to write: .mp4, .m4v or .mov.
    ///   - options: Where the clip starts, how long it lasts, its height and encoding.
    ///   - overwrite: Replace an existing clip instead of failing.
    public init(input: String, output: String, options: PreviewClipOptions = PreviewClipOptions(), overwrite: Bool = false) {
        self.input = input
        self.output = output
        self.options = options
        self.overwrite = overwrite
    }
}

/// What `previewClip` wrote: the span of the input it shows, its picture
/// size, its frames and whether it has sound.
public struct PreviewClipReport: Sendable, Equatable {
    /// The clip written.
    public var output: String
    /// Where the clip begins on the input's timeline.
    public var start: MediaTime
    /// How long the clip lasts.
    public var duration: MediaTime
    /// Pixels across.
    public var width: Int
    /// Pixels down.
    public var height: Int
    /// Video frames encoded.
    public var videoFrames: Int
    /// Whether the clip has sound (the input's audio plays during the span).
    public var hasAudio: Bool
    /// The clip's size in bytes.
    public var bytes: Int

    /// A report as `previewClip` makes it; for tests.
    ///
    /// - Parameters:
    ///   - output: The clip written.
    ///   - start: Where it begins on the input's timeline.
    ///   - duration: How long it lasts.
    ///   - width: Pixels across.
    ///   - height: Pixels down.
    ///   - videoFrames: Frames encoded.
    ///   - hasAudio: Whether it has sound.
    ///   - bytes: Its size in bytes.
    public init(
        output: String, start: MediaTime, duration: MediaTime, width: Int, height: Int, videoFrames: Int, hasAudio: Bool,
        bytes: Int
    ) {
        self.output = output
        self.start = start
        self.duration = duration
        self.width = width
        self.height = height
        self.videoFrames = videoFrames
        self.hasAudio = hasAudio
        self.bytes = bytes
    }
}

/// Progress of a preview job. Reports of one call never go backwards; the
/// last one, once the output is complete, has `done == total` and
/// `fraction` 1.
public struct PreviewProgress: Sendable, Equatable {
    /// Frames done so far: images written, tiles drawn, frames encoded.
    public var done: Int
    /// The frames the call makes in all, when known before it starts (given
    /// times, a rate, evenly spaced frames, a contact sheet); for a clip,
    /// until its last report, an estimate (`totalIsEstimate`): the frames its
    /// span holds at the video's average frame rate, exact for a constant
    /// rate, never fewer than `done`; for every frame of a range, known
    /// only at the last report.
    public var total: Int?
    /// True while `total` is a clip's estimate; the last report has the count made.
    public var totalIsEstimate = false
    /// How much is done, from 0 to 1: `done` of `total` when the total is
    /// known, else the part of the range's (or clip's) time covered.
    public var fraction: Double

    /// A progress report; for tests.
    ///
    /// - Parameters:
    ///   - done: Frames done so far.
    ///   - total: Frames in all, when known.
    ///   - fraction: How much is done, from 0 to 1.
    public init(done: Int, total: Int?, fraction: Double) {
        self.done = done
        self.total = total
        self.fraction = fraction
    }
}

extension PreviewProgress: WorkProgress {
    /// `fraction`.
    public var completed: Double? { fraction }

    /// "3 of 12 frames", "3 of about 12 frames" while the total is an
    /// estimate, or "3 frames" while it is not known.
    public var description: String {
        total.map { "\(done) of \(totalIsEstimate ? "about " : "")\($0) frames" } ?? "\(done) frames"
    }
}
