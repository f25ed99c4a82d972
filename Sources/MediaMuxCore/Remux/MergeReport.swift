import MediaMuxBase
/// How far a merge has come.
public struct MergeProgress: Sendable, Equatable {
    /// 0...1: `written` over `total`.
    public var fraction: Double
    /// The output's media time written so far.
    public var written: MediaTime
    /// The output's duration.
    public var total: MediaTime
    /// Video re-framed: the frames encoded so far; nil when the video is copied.
    public var framesEncoded: Int?
    /// Video re-framed: the frames its source has, as its container says; nil when unknown or copied.
    public var framesPlanned: Int?

    /// Progress from the media time written; `fraction` follows.
    ///
    /// - Parameters:
    ///   - written: The output's media time written so far (a negative time counts as zero).
    ///   - total: The output's duration; a fraction of 1 when it is zero.
    ///   - framesEncoded: Video re-framed: the frames encoded so far.
    ///   - framesPlanned: Video re-framed: the frames its source has.
    public init(written: MediaTime, total: MediaTime, framesEncoded: Int? = nil, framesPlanned: Int? = nil) {
        self.written = max(written, .zero())
        self.total = total
        self.framesEncoded = framesEncoded
        self.framesPlanned = framesPlanned
        fraction = total.value > 0 ? min(max(written.seconds / total.seconds, 0), 1) : 1
    }
}

extension MergeProgress: WorkProgress {
    /// `fraction`.
    public var completed: Double? { fraction }

    /// "3.200 of 10.000 s", with "(96 of 300 frames encoded)" while re-framing.
    public var description: String {
        var text = "\(written.secondsText()) of \(total.secondsText()) s"
        if let framesEncoded {
            text += " (\(framesEncoded)\(framesPlanned.map { " of \($0)" } ?? "") frames encoded)"
        }
        return text
    }
}

/// What a merge wrote.
public struct MergeReport: Sendable, Equatable {
    /// One track of the output, as written.
    public struct Track: Sendable, Equatable {
        /// The input file the track comes from.
        public var source: String
        /// The stream's index in that file.
        public var streamIndex: Int
        /// The codec written, FFmpeg's name ("h264", "aac").
        public var codec: String
        /// The sample entry written (avc1, hvc1, mp4a, ...).
        public var codecTag: String?
        /// Where the track starts on the output timeline (an audio track may start late).
        public var start: MediaTime
        /// How long the track plays in the output.
        public var duration: MediaTime
        /// Packets (samples) written.
        public var packets: Int
        /// Bytes of media written for the track.
        public var bytes: Int
        /// nil when the packets were copied; otherwise how they were encoded and why.
        public var encoding: AudioEncoding?
        /// Video: nil when copied; how it was re-framed and encoded.
        public var reframing: VideoEncoding?
        /// Video of a composition copied but for the frames at cuts inside
        /// GOPs: how those were encoded (the clips' reasons say which).
        public var cutEncoding: CutEncoding?
        /// How many times the source plays: more than once for a looped soundtrack.
        public var plays: Int = 1
        /// How long the video's last frame stays on screen past the video's own end.
        public var heldLastFrame: MediaTime = .zero()
        /// Packets of the source that could not be decoded, passed over with
        /// silence in their place (a soundtrack that is encoded; the warnings say more).
        public var damagedPackets = 0
        /// The soundtrack's loudness as measured and the gain that brought it to the target.
        public var loudness: LoudnessAdjustment?

        /// A track as a merge reports it; for tests and callers' own reports.
        ///
        /// - Parameters:
        ///   - source: The input file.
        ///   - streamIndex: The stream's index in that file.
        ///   - codec: The codec written.
        ///   - codecTag: The sample entry written.
        ///   - start: Where the track starts on the output timeline.
        ///   - duration: How long it plays.
        ///   - packets: Packets written.
        ///   - bytes: Bytes of media written.
        ///   - encoding: How it was encoded; nil when copied.
        public init(
            source: String, streamIndex: Int, codec: String, codecTag: String?, start: MediaTime, duration: MediaTime,
            packets: Int, bytes: Int, encoding: AudioEncoding? = nil
        ) {
            self.source = source
            self.streamIndex = streamIndex
            self.codec = codec
            self.codecTag = codecTag
            self.start = start
            self.duration = duration
            self.packets = packets
            self.bytes = bytes
            self.encoding = encoding
        }
    }

    /// The file written.
    public var output: String
    /// The output's duration, as the end policy decided.
    public var duration: MediaTime
    /// What decided where the output ends.
    public var endReason: MergePlan.EndReason
    /// The display rotation written, and why.
    public var rotation: RotationDecision
    /// The video track, copied.
    public var video: Track
    /// The soundtrack: copied, or encoded as its `encoding` says. A merge
    /// always has one; nil for a composition without sound (no soundtrack,
    /// and no clip with sound of its own).
    public var audio: Track?
    /// The video's own audio, kept as a second audio track that players leave off until chosen.
    public var originalAudio: Track?
    /// The output file's size in bytes.
    public var fileBytes: Int
    /// How long the merge took.
    public var elapsed: Duration
    /// Where the movie header went, and whether that took a second pass.
    public var movieHeader: MergePlan.MovieHeaderPlacement
    /// One movie, or fragmented MP4 (from `movieHeader`).
    public var layout: OutputLayout {
        if case .fragmented = movieHeader { return .fragmented }
        return .movie
    }
    /// What went wrong on the side without failing the merge (thumbnails).
    public var warnings: [String] = []
    /// The video's metadata kept in the output, by name (mdta keys such as
    /// com.apple.quicktime.location.ISO6709, user-data boxes such as ©xyz).
    public var keptMetadata: [String] = []
    /// Input streams not copied, each with its reason.
    public var leftOut: [MergePlan.LeftOut] = []
    /// A composition's clips in the order they play, each with where it was
    /// placed and how it was cut; empty for a merge.
    public var clips: [Clip] = []

    /// One clip of a composition, as its plan made it.
    public struct Clip: Sendable, Equatable {
        /// The clip's file.
        public var source: String
        /// Where the clip starts on the output's timeline, and how long it plays.
        public var place: MediaTime
        public var duration: MediaTime
        /// Where it was taken from on its file's video timeline (its first frame shown at zero).
        public var range: Range<MediaTime>
        /// How it was made, and where its cuts landed: "copied; start moved
        /// back to the keyframe at 2.000 s (asked 2.300 s)".
        public var reason: String
    }

    /// A report as a merge makes it; for tests and callers' own reports.
    ///
    /// - Parameters:
    ///   - output: The file written.
    ///   - duration: The output's duration.
    ///   - endReason: What decided the end.
    ///   - rotation: The rotation written, and why.
    ///   - video: The video track.
    ///   - audio: The soundtrack; nil for a composition without sound.
    ///   - fileBytes: The output's size in bytes.
    ///   - elapsed: How long the merge took.
    ///   - movieHeader: Where the movie header went.
    ///   - warnings: What went wrong on the side.
    ///   - keptMetadata: The metadata kept, by name.
    ///   - leftOut: The input streams not copied.
    public init(
        output: String, duration: MediaTime, endReason: MergePlan.EndReason, rotation: RotationDecision,
        video: Track, audio: Track?, fileBytes: Int, elapsed: Duration, movieHeader: MergePlan.MovieHeaderPlacement,
        warnings: [String] = [], keptMetadata: [String] = [], leftOut: [MergePlan.LeftOut] = []
    ) {
        self.output = output
        self.duration = duration
        self.endReason = endReason
        self.rotation = rotation
        self.video = video
        self.audio = audio
        self.fileBytes = fileBytes
        self.elapsed = elapsed
        self.movieHeader = movieHeader
        self.warnings = warnings
        self.keptMetadata = keptMetadata
        self.leftOut = leftOut
    }
}

extension MergeReport {
    /// A merge's report: its plan's decisions beside what the executor wrote.
    init(plan: MergePlan, execution: PlanExecution) {
        self.init(
            output: plan.outputPath, duration: plan.end, endReason: plan.endReason, rotation: plan.rotation,
            video: execution.tracks[plan.index(of: .video)], audio: plan.audio.map { _ in execution.tracks[plan.index(of: .soundtrack)] },
            fileBytes: execution.fileBytes, elapsed: execution.elapsed, movieHeader: plan.movieHeader, warnings: execution.warnings,
            keptMetadata: plan.metadata.kept, leftOut: plan.leftOut)
        originalAudio = plan.originalAudio.map { _ in execution.tracks[plan.index(of: .originalAudio)] }
        clips = plan.clips
    }
}
