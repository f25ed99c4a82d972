import MediaMuxBase
/// Which way up the merged video should be shown.
public enum Orientation: String, Sendable, CaseIterable {
    /// Show it landscape (or square): fix portrait-shown phone video.
    case landscape
    /// Show it portrait (or square).
    case portrait
    /// Write the source's own rotation.
    case keep
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
}

/// What a merge should do beyond its three paths.
public struct MergeOptions: Sendable, Equatable {
    /// Which video stream of the video file: 0 is the first video stream (cover art not counted).
    public var videoStream: Int?
    /// Which audio stream of the audio file: 0 is the first audio stream.
    public var audioStream: Int?
    /// Which way up the output is shown: the rule that decides the display
    /// rotation written (the pixels are never touched).
    public var orientation: Orientation
    /// A clockwise display rotation (0, 90, 180, 270) that overrides `orientation`.
    public var rotation: Int?
    /// Replace an existing output file.
    public var overwrite: Bool
    /// Put the movie header before the media data, so playback can start before the whole file arrives.
    public var faststart: Bool
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
    ///   - orientation: Which way up the output is shown; landscape unless told otherwise.
    ///   - rotation: A clockwise rotation (0, 90, 180 or 270) that overrides
    ///     `orientation`; any other value makes the merge fail with `.invalidOption`.
    ///   - overwrite: Replace an existing output instead of failing with `.outputExists`.
    ///   - faststart: Put the movie header first, for playback that starts
    ///     before the whole file arrives.
    ///   - keepsMetadata: Keep the video's metadata (location included); false drops it.
    ///   - end: Where the output ends; where the shorter input ends unless told otherwise.
    ///   - audio: How the soundtrack is copied or encoded, placed and levelled.
    ///   - originalAudio: What becomes of the video's own audio; left out unless told otherwise.
    public init(
        videoStream: Int? = nil, audioStream: Int? = nil, orientation: Orientation = .landscape,
        rotation: Int? = nil, overwrite: Bool = false, faststart: Bool = true,
        keepsMetadata: Bool = true, end: EndPolicy = .shortest, audio: AudioOptions = AudioOptions(),
        originalAudio: OriginalAudio = .replaced
    ) {
        self.videoStream = videoStream
        self.audioStream = audioStream
        self.orientation = orientation
        self.rotation = rotation
        self.overwrite = overwrite
        self.faststart = faststart
        self.keepsMetadata = keepsMetadata
        self.end = end
        self.audio = audio
        self.originalAudio = originalAudio
    }
}
