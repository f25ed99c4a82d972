import MediaMuxBase
import MediaMuxCore
/// One decoded picture, upright and scaled, as plain bytes: Sendable, free of
/// FFmpeg types, ready for a player, an image encoder or a comparison.
public struct PreviewFrame: Sendable, Equatable {
    /// Where the frame is shown on the video's own timeline, whose zero is
    /// its first presented frame.
    public var time: MediaTime
    public var width: Int
    public var height: Int
    public var layout: PixelLayout
    /// Rows top to bottom, no padding: `width * layout.bytesPerPixel` bytes each.
    public var pixels: [UInt8]

    public var bytesPerRow: Int { width * layout.bytesPerPixel }

    public init(time: MediaTime, width: Int, height: Int, layout: PixelLayout, pixels: [UInt8]) {
        self.time = time
        self.width = width
        self.height = height
        self.layout = layout
        self.pixels = pixels
    }
}

public enum PixelLayout: String, Sendable, Equatable {
    /// 8-bit red, green, blue.
    case rgb
    /// 8-bit red, green, blue, alpha (opaque).
    case rgba

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

public struct FrameOptions: Sendable, Equatable {
    public var selection: FrameSelection
    /// The longest side of the upright picture in pixels; nil keeps the display size.
    public var size: Int?
    public var layout: PixelLayout
    /// Yield frames at the pace they would be shown (for a player), rather than as fast as they decode.
    public var paced: Bool
    /// Which video stream; nil is the first.
    public var videoStream: Int?

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

public enum ImageFormat: String, Sendable, Equatable, CaseIterable {
    case png, jpeg

    public var fileExtension: String { self == .png ? "png" : "jpg" }
}

/// A file MediaMux wrote, for reports.
public struct WrittenImage: Sendable, Equatable {
    public var path: String
    /// The frame's time (for a contact sheet: nil).
    public var time: MediaTime?
    public var width: Int
    public var height: Int
    public var bytes: Int

    public init(path: String, time: MediaTime?, width: Int, height: Int, bytes: Int) {
        self.path = path
        self.time = time
        self.width = width
        self.height = height
        self.bytes = bytes
    }
}

public struct ContactSheetOptions: Sendable, Equatable {
    /// Frames on the sheet, evenly spaced from the first.
    public var frames: Int
    /// Columns of the grid; nil picks about as many columns as rows, wider than tall.
    public var columns: Int?
    /// The longest side of each picture on the sheet.
    public var tileSize: Int

    public init(frames: Int = 12, columns: Int? = nil, tileSize: Int = 320) {
        self.frames = frames
        self.columns = columns
        self.tileSize = tileSize
    }
}

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
    public var audioBitRate: Int

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

/// What `previewClip` wrote: the span of the input it shows, its picture
/// size, its frames and whether it has sound.
public struct PreviewClipReport: Sendable, Equatable {
    public var output: String
    public var start: MediaTime
    public var duration: MediaTime
    public var width: Int
    public var height: Int
    public var videoFrames: Int
    public var hasAudio: Bool
    public var bytes: Int

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
    /// times, a rate, evenly spaced frames, a contact sheet); for every frame
    /// of a range and for a clip, known only at the last report.
    public var total: Int?
    /// How much is done, from 0 to 1: `done` of `total` when the total is
    /// known, else the part of the range's (or clip's) time covered.
    public var fraction: Double

    public init(done: Int, total: Int?, fraction: Double) {
        self.done = done
        self.total = total
        self.fraction = fraction
    }
}
