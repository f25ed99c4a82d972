import MediaMuxBase
import MediaMuxCore
import MediaMuxPreview

/// What a batch did, job by job, in the manifest's order.
public struct BatchReport: Sendable, Equatable {
    public var manifest: String
    public var shard: BatchShard
    /// The shard's jobs, each done, skipped as complete, or failed.
    public var jobs: [BatchJobReport]
    public var elapsed: Duration

    public init(manifest: String, shard: BatchShard, jobs: [BatchJobReport], elapsed: Duration) {
        self.manifest = manifest
        self.shard = shard
        self.jobs = jobs
        self.elapsed = elapsed
    }

    public func count(_ status: BatchJobReport.Status) -> Int {
        jobs.count { $0.status == status }
    }
}

/// One job's outcome, with the facts of what it made: from this run, or
/// from the record of the run that made them when it was skipped.
public struct BatchJobReport: Sendable, Equatable {
    public enum Status: String, Sendable, Equatable, Codable {
        /// At least one step was done in this run, and none failed.
        case done
        /// Every step was complete already.
        case skipped
        case failed
    }

    public enum Step: String, Sendable, Equatable, Codable {
        case merge, sheet, clip
    }

    /// What became of one step, and why it was done when it was.
    public struct StepOutcome: Sendable, Equatable {
        public enum Outcome: String, Sendable, Equatable, Codable {
            case done, skipped, failed
            /// Not tried, because the merge before it failed.
            case notRun
        }
        public var step: Step
        public var outcome: Outcome
        /// Why it was done ("not done before", "video.mp4 changed"), or why it failed.
        public var reason: String?
    }

    public var job: BatchJob
    public var status: Status
    public var steps: [StepOutcome]
    public var merge: BatchMergeFacts?
    public var sheet: BatchImageFacts?
    public var clip: BatchClipFacts?
    /// The first failure.
    public var error: MediaMuxError?
    /// The merge's warnings, and those of the soundtrack's download.
    public var warnings: [String]
    /// This run's time on the job (no more than checking it, when skipped).
    public var elapsed: Duration

    public var index: Int { job.index }
}

/// A merge's outcome as a batch keeps it: what a report page or a summary
/// shows, recorded so that a skipped job still shows it.
public struct BatchMergeFacts: Sendable, Equatable, Codable {
    public struct Track: Sendable, Equatable, Codable {
        public var codec: String
        public var seconds: Double
        /// "copied", or what transcoding did ("flac -> aac 192 kb/s (MP4 cannot carry FLAC)").
        public var how: String
    }
    public var output: String
    public var seconds: Double
    public var bytes: Int
    public var video: Track
    public var audio: Track
    public var originalAudio: Track?
    /// Clockwise degrees written, and why.
    public var rotation: Int
    public var rotationReason: String
    /// What decided the end.
    public var end: String
    public var warnings: [String]

    public init(_ report: MergeReport) {
        func track(_ track: MergeReport.Track) -> Track {
            Track(codec: track.codec, seconds: track.duration.seconds, how: track.encoding.map { "transcoded: " + $0.summary } ?? "copied")
        }
        output = report.output
        seconds = report.duration.seconds
        bytes = report.fileBytes
        video = track(report.video)
        audio = track(report.audio)
        originalAudio = report.originalAudio.map(track)
        rotation = report.rotation.degrees
        rotationReason = report.rotation.reason
        end = report.endReason.rawValue
        warnings = report.warnings
    }
}

/// A contact sheet a batch wrote.
public struct BatchImageFacts: Sendable, Equatable, Codable {
    public var path: String
    public var width: Int
    public var height: Int
    public var bytes: Int

    public init(_ image: WrittenImage) {
        path = image.path
        width = image.width
        height = image.height
        bytes = image.bytes
    }
}

/// A preview clip a batch wrote.
public struct BatchClipFacts: Sendable, Equatable, Codable {
    public var path: String
    public var seconds: Double
    public var width: Int
    public var height: Int
    public var bytes: Int
    public var hasAudio: Bool

    public init(_ clip: PreviewClipReport) {
        path = clip.output
        seconds = clip.duration.seconds
        width = clip.width
        height = clip.height
        bytes = clip.bytes
        hasAudio = clip.hasAudio
    }
}

/// How far a batch has come; handed out each time a job starts or ends.
public struct BatchProgress: Sendable, Equatable {
    /// The shard's jobs.
    public var total: Int
    /// Jobs ended: done, skipped or failed.
    public var finished: Int
    public var failed: Int
    public var skipped: Int
    public var running: Int
    /// At the pace of the jobs done so far; nil until one is.
    public var remaining: Duration?
    /// The job that just ended, if that is what this report is about.
    public var ended: BatchJobReport?
}
