import MediaMuxBase
/// How far a merge has come.
public struct MergeProgress: Sendable, Equatable {
    /// 0...1.
    public var fraction: Double
    /// Output media time written so far.
    public var mediaSeconds: Double
    public var totalSeconds: Double
}

/// What a merge wrote.
public struct MergeReport: Sendable, Equatable {
    public struct Track: Sendable, Equatable {
        public var source: String
        public var streamIndex: Int
        public var codec: String
        /// The sample entry written (avc1, hvc1, mp4a, ...).
        public var codecTag: String?
        /// Where the track starts on the output timeline (an audio track may start late).
        public var start: MediaTime
        public var duration: MediaTime
        public var packets: Int
        public var bytes: Int
    }

    public var output: String
    /// The output's duration: the end of the shorter input.
    public var duration: MediaTime
    public var endReason: MergePlan.EndReason
    public var rotation: RotationDecision
    public var video: Track
    public var audio: Track
    public var fileBytes: Int
    public var elapsedSeconds: Double
    public var movieHeader: MergePlan.MovieHeaderPlacement
    /// What went wrong on the side without failing the merge (thumbnails).
    public var warnings: [String] = []
    /// The video's metadata kept in the output, by name (mdta keys such as
    /// com.apple.quicktime.location.ISO6709, user-data boxes such as ©xyz).
    public var keptMetadata: [String] = []
    /// Input streams not copied, each with its reason.
    public var leftOut: [MergePlan.LeftOut] = []
}
