import MediaMuxBase
import MediaMuxCore
/// Every decision of a preview job, made from probed facts before any frame
/// is decoded: which moments, which picture size, which turn. Pure: tested
/// without FFmpeg. The frame reader and the encoders only carry it out.
struct FramePlan: Equatable, Sendable {
    enum Moments: Equatable, Sendable {
        /// Every frame shown from `from` until `to` (seconds on the video's timeline).
        case every(from: Double, to: Double)
        /// The frame shown at each time, ascending.
        case at([Double])
    }

    var path: String
    var streamIndex: Int
    /// Where the video's first frame is shown on the file's timeline: time zero.
    var zero: MediaTime
    /// MP4/MOV: where the first frame is shown in the track's own
    /// composition time. Frames are then read with FFmpeg's edit-list
    /// handling off and placed by the sample table, as a merge copies them:
    /// FFmpeg 5.1 misplaces an edit that starts before the first sync sample.
    var mediaStart: MediaTime?
    /// How late FFmpeg's reader presents the frames: it raises the times of
    /// a fragmented MP4's samples by the most negative composition offset
    /// (5.1 to 7.1 alike), where a sample table lowers the decode times
    /// instead. Zero for anything else, and where the moov holds samples
    /// too, which FFmpeg times as a sample table says (the fragments'
    /// then stay late).
    var readerLateness: MediaTime = .zero()
    var moments: Moments
    /// How each frame is scaled and turned.
    var picture: PictureSize
    var layout: PixelLayout
    var paced: Bool
    /// The video's length on its own timeline.
    var duration: Double
    /// The most frames the job can yield (for numbering files).
    var mostFrames: Int

    /// Size of the frames handed out.
    var width: Int { picture.width }
    var height: Int { picture.height }

    var frameCount: Int? {
        if case .at(let times) = moments { return times.count }
        return nil
    }
}

/// How a job's pictures are made: scaled to `scaledWidth` x `scaledHeight`
/// in coded orientation, then turned (and mirrored) by `turn` into the upright
/// `width` x `height` handed out (the longest side at the size asked for, or
/// the display size).
public struct PictureSize: Equatable, Sendable {
    /// Pixels across, upright: the width handed out.
    public internal(set) var width: Int
    /// Pixels down, upright.
    public internal(set) var height: Int
    /// Pixels across as scaled, before the turn.
    public internal(set) var scaledWidth: Int
    /// Pixels down as scaled, before the turn.
    public internal(set) var scaledHeight: Int
    /// What shows the scaled picture upright: the core's turn, mirrors included.
    public internal(set) var turn: PictureTurn

    /// Sides never exceed this, whatever the source's pixel aspect says.
    static let largest = 16384

    /// Pictures `width` x `height` upright, made by `turn` from how they
    /// are scaled: for tests that fake a plan.
    ///
    /// - Parameters:
    ///   - width: Pixels across, upright.
    ///   - height: Pixels down, upright.
    ///   - turn: The turn (and mirror) from the scaled picture to the upright one.
    public init(width: Int, height: Int, turn: PictureTurn) {
        self.width = width
        self.height = height
        self.turn = turn
        (scaledWidth, scaledHeight) = turn.swapsSides ? (height, width) : (width, height)
    }

    /// `even` rounds both sides to even numbers, as 4:2:0 encoders need.
    init(codedWidth: Int, codedHeight: Int, aspect: PixelAspect, turn: PictureTurn, longest: Int?, height fixedHeight: Int? = nil, even: Bool = false) {
        // A source without a size (which the planners refuse first) counts as one pixel.
        self.turn = turn
        let codedWidth = max(codedWidth, 1)
        let codedHeight = max(codedHeight, 1)
        let displayWidth = Double(codedWidth) * aspect.ratio
        let turned = turn.swapsSides
        let (uprightWidth, uprightHeight) = turned ? (Double(codedHeight), displayWidth) : (displayWidth, Double(codedHeight))
        let factor: Double
        let fixedHeight = fixedHeight.map { even ? max(2, $0 / 2 * 2) : $0 }
        if let fixedHeight {
            factor = Double(fixedHeight) / uprightHeight
        } else if let longest {
            factor = Double(longest) / max(uprightWidth, uprightHeight)
        } else {
            factor = 1
        }
        func side(_ value: Double) -> Int {
            let bounded = min(max(value, 1), Double(Self.largest))
            if even { return max(2, Int((bounded / 2).rounded()) * 2) }
            return max(1, Int(bounded.rounded()))
        }
        width = side(uprightWidth * factor)
        height = fixedHeight ?? side(uprightHeight * factor)
        (scaledWidth, scaledHeight) = turned ? (height, width) : (width, height)
    }
}

struct PreviewPlanner {
    static let largestSide = 8192
    static let mostFrames = 100_000

    /// The video stream a job works on, and its length.
    static func videoStream(of info: MediaInfo, index: Int?) throws -> (stream: StreamInfo, duration: Double) {
        let candidates = info.videoStreams
        let stream: StreamInfo
        if let index {
            guard let chosen = candidates.first(where: { $0.index == index }) else {
                throw MediaMuxError.streamIndexOutOfRange(kind: .video, index: index, available: candidates.count, path: info.path)
            }
            stream = chosen
        } else {
            guard let first = candidates.first else { throw MediaMuxError.noStream(kind: .video, path: info.path) }
            stream = first
        }
        guard let width = stream.width, let height = stream.height, width > 0, height > 0 else {
            throw MediaMuxError.damaged(path: info.path, detail: "the video stream has no picture size")
        }
        guard let duration = stream.duration, duration.seconds > 0 else {
            throw MediaMuxError.unknownDuration(kind: .video, path: info.path)
        }
        return (stream, duration.seconds)
    }

    static func framePlan(_ info: MediaInfo, options: FrameOptions) throws -> FramePlan {
        let (stream, duration) = try videoStream(of: info, index: options.videoStream)
        if let size = options.size, let problem = ThumbnailOptions.sizeProblem(size) { throw MediaMuxError.invalidOption(option: "FrameOptions.size", message: "size \(problem)") }
        let moments = try self.moments(options.selection, duration: duration, path: info.path)
        let size = PictureSize(
            codedWidth: stream.width ?? 0, codedHeight: stream.height ?? 0, aspect: stream.pixelAspect,
            turn: stream.uprightTurn, longest: options.size)
        return framePlan(info.path, stream, duration: duration, moments: moments, size: size, layout: options.layout, paced: options.paced)
    }

    private static func framePlan(
        _ path: String, _ stream: StreamInfo, duration: Double, moments: FramePlan.Moments, size: PictureSize,
        layout: PixelLayout, paced: Bool
    ) -> FramePlan {
        // Frame files are numbered with enough digits for the most there can be.
        let most: Int
        switch moments {
        case .at(let times): most = times.count
        case .every(let from, let to): most = stream.packetCount ?? Int(min((to - from) * 1000, 1e12))
        }
        return FramePlan(
            path: path, streamIndex: stream.index, zero: stream.origin + (stream.start ?? .zero()),
            mediaStart: stream.mediaTimeline?.start,
            readerLateness: stream.fragmentSamples.flatMap {
                $0.tableSamples == 0 ? MediaTime(ticks: $0.presentationLead, of: stream.timeBase) : nil
            } ?? .zero(),
            moments: moments, picture: size, layout: layout, paced: paced, duration: duration, mostFrames: max(most, 1))
    }

    /// The moments a selection names, checked against the video's length.
    /// Times become seconds here, once: a `MediaTime` is never NaN, but may
    /// be negative or far past any video.
    /// `option` names the option that holds the selection, for its errors.
    static func moments(
        _ selection: FrameSelection, duration: Double, path: String, option: String = "FrameOptions.selection"
    ) throws -> FramePlan.Moments {
        func checkRange(_ from: MediaTime, _ to: MediaTime?) throws -> (from: Double, to: Double) {
            let start = from.seconds
            guard start >= 0 else { throw MediaMuxError.invalidOption(option: option, message: "a start time must be 0 or more seconds, not \(start)") }
            guard start < duration else { throw pastTheEnd(start, duration: duration, path: path, option: option) }
            let end = min(to?.seconds ?? duration, duration)
            guard end > start else {
                throw MediaMuxError.invalidOption(option: option, message: "the end time must come after the start time (\(start) s)")
            }
            return (start, end)
        }
        switch selection {
        case .all(let from, let to):
            let range = try checkRange(from, to)
            return .every(from: range.from, to: range.to)
        case .rate(let perSecond, let from, let to):
            guard perSecond.isFinite, perSecond > 0, perSecond <= 1000 else {
                throw MediaMuxError.invalidOption(option: "FrameOptions.selection", message: "a frame rate must be above 0 and at most 1000 a second, not \(perSecond)")
            }
            let (start, end) = try checkRange(from, to)
            let exactSteps = ((end - start) * perSecond).rounded(.up)
            guard exactSteps <= Double(mostFrames) else { throw tooMany(Int(min(exactSteps, 1e15))) }
            let steps = Int(exactSteps)
            return .at((0..<steps).map { start + Double($0) / perSecond }.filter { $0 < end })
        case .times(let times):
            guard !times.isEmpty else { throw MediaMuxError.invalidOption(option: "FrameOptions.selection", message: "no times given") }
            guard times.count <= mostFrames else { throw tooMany(times.count) }
            let seconds = times.map(\.seconds)
            for time in seconds {
                guard time >= 0 else { throw MediaMuxError.invalidOption(option: "FrameOptions.selection", message: "a time must be 0 or more seconds, not \(time)") }
                guard time < duration else { throw pastTheEnd(time, duration: duration, path: path, option: option) }
            }
            return .at(Array(Set(seconds)).sorted())
        case .evenlySpaced(let count):
            guard count >= 1 else { throw MediaMuxError.invalidOption(option: "FrameOptions.selection", message: "the number of frames must be at least 1, not \(count)") }
            guard count <= mostFrames else { throw tooMany(count) }
            // Each frame stands for the middle of its share of the video,
            // which keeps fades at the very start and end off the sheet.
            let step = duration / Double(count)
            return .at((0..<count).map { (Double($0) + 0.5) * step })
        }
    }

    /// The most pixels a contact sheet may have (about 150 MB of RGB while drawn).
    static let largestSheet = 50_000_000

    /// A contact sheet: its frames, grid and labels, checked for size before any decoding.
    static func sheetPlan(
        _ info: MediaInfo, output: String, options: ContactSheetOptions
    ) throws -> (frames: FramePlan, layout: SheetLayout, warnings: [String]) {
        _ = try sheetColumns(frames: options.frames, columns: options.columns)
        // A video with fewer frames than tiles asked for gets a tile for each
        // of its frames, not some frames twice, and the caller is told.
        let (stream, _) = try videoStream(of: info, index: nil)
        let count = min(options.frames, max(1, stream.packetCount ?? options.frames))
        let warnings = count < options.frames
            ? ["\(info.path): the video has \(count) frame\(count == 1 ? "" : "s"), so the sheet shows \(count), not the \(options.frames) asked for"] : []
        let grid = try sheetColumns(frames: count, columns: options.columns)
        let frames = try framePlan(info, options: FrameOptions(selection: .evenlySpaced(count: count), size: options.tileSize))
        // Labels at double size on large tiles, when the longest one fits a tile.
        let scale = frames.width >= 200 ? 2 : 1
        let widest = sheetLabel(frames.duration)
        let fits = PixelFont.width(of: widest, scale: scale) + 4 * scale <= frames.width
            && (PixelFont.height + 4) * scale <= frames.height
        let layout = SheetLayout(
            columns: grid.columns, rows: grid.rows, tileWidth: frames.width, tileHeight: frames.height, labelScale: fits ? scale : nil)
        guard layout.width <= PictureSize.largest, layout.height <= PictureSize.largest, layout.width * layout.height <= largestSheet else {
            throw MediaMuxError.invalidOption(option: "ContactSheetOptions.frames", message:
                "\(output): a contact sheet of \(count) frames at \(options.tileSize) px would be \(layout.width)x\(layout.height) pixels; "
                    + "use fewer frames or a smaller size")
        }
        return (frames, layout, warnings)
    }

    /// The grid of a contact sheet: about as many columns as rows, one more
    /// column than rows when they cannot be equal.
    static func sheetColumns(frames: Int, columns: Int?) throws -> (columns: Int, rows: Int) {
        guard frames >= 1, frames <= 1000 else {
            throw MediaMuxError.invalidOption(option: "ContactSheetOptions.frames", message: "a contact sheet holds 1 to 1000 frames, not \(frames)")
        }
        if let columns, columns < 1 || columns > 100 {
            throw MediaMuxError.invalidOption(option: "ContactSheetOptions.columns", message: "a contact sheet has 1 to 100 columns, not \(columns)")
        }
        var chosen = columns ?? 1
        if columns == nil { while chosen * chosen < frames { chosen += 1 } }
        chosen = min(chosen, frames)
        return (chosen, (frames + chosen - 1) / chosen)
    }

    private static func pastTheEnd(_ time: Double, duration: Double, path: String, option: String) -> MediaMuxError {
        .invalidOption(option: option, message: "\(path): \(fixedPoint(time, decimals: 3)) s is past the end of the video (\(fixedPoint(duration, decimals: 3)) s)")
    }

    private static func tooMany(_ count: Int) -> MediaMuxError {
        .invalidOption(option: "FrameOptions.selection", message: "\(count) frames asked for; the most is \(mostFrames)")
    }
}

/// Everything a preview clip decides: the span, the picture, the sound,
/// and the plan of tracks the core's executor carries out.
struct ClipPlan: Equatable, Sendable {
    /// Where the clip starts on the video's timeline.
    var start: MediaTime
    /// One span of the video, scaled to even sides, turned upright by the
    /// core's rule (mirrors included) and encoded H.264 in 8-bit BT.709;
    /// one of its sound, AAC, where it plays during the span.
    var merge: MergePlan
    /// The frames the span holds at the video's average frame rate, for
    /// the progress; nil when the rate is not known.
    var expectedFrames: Int?
}

extension PreviewPlanner {
    /// Sample rates FFmpeg's AAC encoder takes.
    static let aacRates = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]

    static func clipPlan(_ info: MediaInfo, output: String, options: PreviewClipOptions, overwrite: Bool) throws -> ClipPlan {
        let (stream, duration) = try videoStream(of: info, index: nil)
        guard options.duration > .zero() else {
            throw MediaMuxError.invalidOption(option: "PreviewClipOptions.duration", message: "a clip must be longer than 0 seconds, not \(options.duration.seconds)")
        }
        guard (2...4320).contains(options.height) else {
            throw MediaMuxError.invalidOption(option: "PreviewClipOptions.height", message: "a clip's height must be between 2 and 4320 pixels, not \(options.height)")
        }
        guard (0...51).contains(options.crf) else { throw MediaMuxError.invalidOption(option: "PreviewClipOptions.crf", message: "crf must be between 0 and 51, not \(options.crf)") }
        let moments = try self.moments(.all(from: options.start, to: options.start + options.duration), duration: duration, path: info.path, option: "PreviewClipOptions.start")
        guard case .every(let start, let end) = moments, let videoDuration = stream.duration else {
            throw MediaMuxError.unexpected(path: info.path, detail: "a clip's span planned as single moments")
        }
        let clipEnd = min(options.start + options.duration, videoDuration)
        let size = PictureSize(
            codedWidth: stream.width ?? 0, codedHeight: stream.height ?? 0, aspect: stream.pixelAspect,
            turn: stream.uprightTurn, longest: nil, height: options.height, even: true)
        let frames = framePlan(info.path, stream, duration: duration, moments: moments, size: size, layout: .rgb, paced: false)
        // The first audio stream comes along when it plays during the clip, as
        // stereo (or mono) AAC at its own rate where AAC has it. Times of both
        // tracks are measured from the video's first frame.
        let audio = info.audioStreams.first.flatMap { track -> (index: Int, encoding: AudioEncoding)? in
            // Sound whose place is not known (a damaged header's) is left out, as is sound that does not play during the clip.
            guard let rate = track.sampleRate, rate > 0, let channels = track.channels, channels > 0,
                  let first = track.start, let last = track.end, last > first else { return nil }
            let playsFrom = (track.origin + first - frames.zero).seconds
            let playsUntil = (track.origin + last - frames.zero).seconds
            guard playsFrom < end, playsUntil > start else { return nil }
            let encoding = AudioEncoding(
                codec: "aac", sourceCodec: track.codec, bitRate: options.audioBitRate, sampleRate: aacRates.contains(rate) ? rate : 48000,
                channels: min(channels, 2), sourceSampleRate: rate, sourceChannels: channels, reason: "a preview clip's sound")
            return (track.index, encoding)
        }
        let frame = VideoSize(width: frames.width, height: frames.height)
        let video = VideoEncoding(
            codec: "h264", encoder: "libx264", sourceCodec: stream.codec, frame: frame, picture: frame, fit: .pad,
            turn: stream.uprightTurn, bitDepth: 8, quality: options.crf, preset: options.preset, colour: .bt709, reason: "a preview clip", notes: [])
        let clip = MergePlanner.Clip(
            output: output, overwrite: overwrite, videoStream: stream.index, start: options.start, end: clipEnd, video: video,
            sound: audio.map { .init(streamIndex: $0.index, encoding: $0.encoding) })
        let expected = stream.frameRate.flatMap { rate in
            rate > 0 && rate.isFinite ? max(1, Int(((clipEnd - options.start).seconds * rate).rounded())) : nil
        }
        return ClipPlan(
            start: options.start, merge: try MergePlanner.clipPlan(clip, of: info), expectedFrames: expected)
    }
}
