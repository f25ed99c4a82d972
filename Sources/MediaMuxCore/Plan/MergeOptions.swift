import MediaMuxBase
/// Which shape the merged video is shown in. Whatever the choice, the
/// picture is upright: a display matrix can only turn a picture, so a
/// portrait picture in a landscape frame (or the reverse) is encoded.
public enum Orientation: String, Sendable, CaseIterable {
    /// As the source is shown, copied: its own display rotation (mirrors
    /// included), so players show the video as the camera recorded it. The default.
    case keep
    /// Landscape: landscape and square video is copied as it is shown;
    /// portrait video is encoded into a landscape frame (see `VideoOptions`).
    case landscape
    /// Portrait: portrait video is copied as it is shown; landscape and square
    /// video is encoded into a portrait frame, for vertical-video platforms.
    case portrait
}

/// How a picture of one shape fills a frame of the other when the video is re-framed.
public enum Fit: String, Sendable, CaseIterable {
    /// The picture whole, centred; the sides show the same picture scaled to
    /// cover the frame, blurred and darkened, as phone apps fill them. The default.
    case blur
    /// The picture whole, centred, on black.
    case pad
    /// The picture covers the frame; what lies outside it is cut off.
    case crop
}

/// How video that is re-framed is encoded. Video that is copied does not use
/// these: set for it, they are named in the plan's and the report's warnings.
public struct VideoOptions: Sendable, Equatable {
    /// How the picture fills the frame.
    public var fit: Fit
    /// The frame; nil for 16:9 (9:16 in portrait) with its short side the
    /// picture's short side as shown. Both sides even, the shape the orientation asks for.
    public var frameSize: VideoSize?
    /// The encoder's constant rate factor (x264's and x265's CRF, 0-51,
    /// lower is better); nil for MediaMux's choice, visually lossless.
    public var quality: Int?
    /// The encoder's preset, in its own terms ("veryfast", "medium", "slow"...);
    /// nil for MediaMux's choice.
    public var preset: String?

    /// Options for re-framed video; every one has a default.
    ///
    /// - Parameters:
    ///   - fit: How the picture fills the frame; blurred sides unless told otherwise.
    ///   - frameSize: The frame; nil for 16:9 (9:16) at the picture's short side.
    ///   - quality: The encoder's CRF; nil for MediaMux's choice.
    ///   - preset: The encoder's preset; nil for MediaMux's choice.
    public init(fit: Fit = .blur, frameSize: VideoSize? = nil, quality: Int? = nil, preset: String? = nil) {
        self.fit = fit
        self.frameSize = frameSize
        self.quality = quality
        self.preset = preset
    }
}

/// Where the output ends.
public enum EndPolicy: String, Sendable, CaseIterable {
    /// Where the shorter input ends: nothing plays without the other.
    case shortest
    /// Where the video ends: a shorter soundtrack stops early, or repeats
    /// with `AudioOptions.loops`.
    case video
    /// Where the soundtrack ends: a shorter video's last frame stays on
    /// screen until then (by its duration and the edit list, not re-encoded).
    case audio
}

/// What becomes of the video's own sound.
public enum OriginalAudio: Sendable, Equatable {
    /// Left out: the soundtrack takes its place.
    case replaced
    /// Kept as a second audio track, disabled: players offer it as an
    /// alternative to the soundtrack (copied where the container carries it).
    case kept
    /// Mixed with the soundtrack into one track, at this level in dB (0 as it
    /// is, -12 well under the soundtrack). The soundtrack is encoded, and the
    /// track plays from the output's start to its end.
    case mixed(level: Double)

    /// The choice two separate settings make (keep it; mix it in at a
    /// level), as muxctl's flags and a batch manifest's fields give it; nil
    /// when both are set, since they are two ways to use the same audio.
    public init?(keeping: Bool, mixingAt level: Double?) {
        switch (keeping, level) {
        case (true, .some): return nil
        case (_, .some(let level)): self = .mixed(level: level)
        case (true, nil): self = .kept
        case (false, nil): self = .replaced
        }
    }
}

/// How the output's samples are laid out.
public enum OutputLayout: String, Sendable, CaseIterable {
    /// One movie: every sample described in the movie header (placed as
    /// `MergeOptions.faststart` says). What every player reads. The default.
    case movie
    /// Fragmented MP4 in the layout CMAF and DASH use: an initialisation segment (a moov
    /// with mvex and no samples), then moof/mdat fragments, one from each
    /// video keyframe or at most about 2 s. Written in one pass without
    /// seeking, so it can be streamed as it is made (Media Source
    /// Extensions, DASH, HLS fMP4). MP4 only.
    case fragmented
}

/// What a merge should do beyond its three paths.
public struct MergeOptions: Sendable, Equatable {
    /// Which video stream of the video file: 0 is the first video stream (cover art not counted).
    public var videoStream: Int?
    /// Which audio stream of the audio file: 0 is the first audio stream.
    public var audioStream: Int?
    /// Which shape the output is shown in: the source's (copied), or landscape
    /// or portrait, encoding video of the other shape into such a frame.
    public var orientation: Orientation
    /// A clockwise display rotation (0, 90, 180, 270) to write, by copy,
    /// for a file whose recorded orientation is wrong; overrides `orientation`.
    public var rotation: Int?

    /// What is wrong with `degrees` as a `rotation`, in words that follow
    /// the setting's name ("must be 0, 90, 180 or 270"); nil when nothing.
    public static func rotationProblem(_ degrees: Int) -> String? {
        [0, 90, 180, 270].contains(degrees) ? nil : "must be 0, 90, 180 or 270, not \(degrees)"
    }

    /// How video that is re-framed is fitted and encoded.
    public var video: VideoOptions
    /// Replace an existing output file.
    public var overwrite: Bool
    /// Put the movie header before the media data, so playback can start before the whole file arrives.
    public var faststart: Bool
    /// One movie, or fragments (whose movie header always comes first).
    public var layout: OutputLayout

    /// What is wrong with a `faststart` setting for fragmented output, in
    /// words that follow the setting's name; nil when nothing.
    public static func fragmentedProblem(faststart: Bool) -> String? {
        faststart ? nil : "fragmented output always puts its movie header first; it cannot be turned off"
    }
    /// Keep the video's metadata: where and when it was recorded, the camera
    /// and its software, titles. False drops all of it, location included,
    /// for sharing a file with others.
    public var keepsMetadata: Bool
    /// Where the output ends.
    public var end: EndPolicy
    /// Copy or encode the soundtrack, where it starts, and how to encode it.
    public var audio: AudioOptions
    /// What becomes of the video's own audio.
    public var originalAudio: OriginalAudio

    /// Options for a merge; every one has a default, so give only what differs.
    ///
    /// - Parameters:
    ///   - videoStream: Which video stream of the video file, counting video
    ///     streams from 0 (cover art not counted); nil for the first.
    ///   - audioStream: Which audio stream of the audio file, counting audio
    ///     streams from 0; nil for the first.
    ///   - orientation: Which shape the output is shown in; the source's, copied, unless told otherwise.
    ///   - rotation: A clockwise rotation (0, 90, 180 or 270) written by copy,
    ///     overriding `orientation`; any other value makes the merge fail with `.invalidOption`.
    ///   - video: How video that is re-framed is fitted and encoded.
    ///   - overwrite: Replace an existing output instead of failing with `.outputExists`.
    ///   - faststart: Put the movie header first, for playback that starts
    ///     before the whole file arrives.
    ///   - layout: One movie, or fragmented MP4; a merge to a stream is always fragmented.
    ///   - keepsMetadata: Keep the video's metadata (location included); false drops it.
    ///   - end: Where the output ends; where the shorter input ends unless told otherwise.
    ///   - audio: How the soundtrack is copied or encoded, placed and levelled.
    ///   - originalAudio: What becomes of the video's own audio; left out unless told otherwise.
    public init(
        videoStream: Int? = nil, audioStream: Int? = nil, orientation: Orientation = .keep,
        rotation: Int? = nil, video: VideoOptions = VideoOptions(), overwrite: Bool = false, faststart: Bool = true,
        layout: OutputLayout = .movie, keepsMetadata: Bool = true, end: EndPolicy = .shortest, audio: AudioOptions = AudioOptions(),
        originalAudio: OriginalAudio = .replaced
    ) {
        self.videoStream = videoStream
        self.audioStream = audioStream
        self.orientation = orientation
        self.rotation = rotation
        self.video = video
        self.overwrite = overwrite
        self.faststart = faststart
        self.layout = layout
        self.keepsMetadata = keepsMetadata
        self.end = end
        self.audio = audio
        self.originalAudio = originalAudio
    }
}
