import MediaMuxBase
import MediaMuxCore
import MediaMuxPreview

/// What a batch did, job by job, in the manifest's order.
public struct BatchReport: Sendable, Equatable {
    /// The manifest's path.
    public var manifest: String
    /// The shard that was run (`.whole` for all of the jobs).
    public var shard: BatchShard
    /// The shard's jobs, each done, skipped as complete, or failed.
    public var jobs: [BatchJobReport]
    /// The whole run's wall time.
    public var elapsed: Duration

    /// A report of `jobs`, the part `shard` of `manifest`, run in `elapsed`.
    ///
    /// - Parameters:
    ///   - manifest: The manifest's path.
    ///   - shard: The shard that was run.
    ///   - jobs: Each job's report, in the manifest's order.
    ///   - elapsed: The whole run's wall time.
    public init(manifest: String, shard: BatchShard, jobs: [BatchJobReport], elapsed: Duration) {
        self.manifest = manifest
        self.shard = shard
        self.jobs = jobs
        self.elapsed = elapsed
    }

    /// How many jobs ended with `status`.
    ///
    /// - Parameter status: Done, skipped or failed.
    public func count(_ status: BatchJobReport.Status) -> Int {
        jobs.count { $0.status == status }
    }
}

/// One job's outcome, with the facts of what it made: from this run, or
/// from the record of the run that made them when it was skipped.
public struct BatchJobReport: Sendable, Equatable {
    /// How a job ended.
    public enum Status: String, Sendable, Equatable, Codable {
        /// At least one step was done in this run, and none failed.
        case done
        /// Every step was complete already.
        case skipped
        /// A step failed; ``BatchJobReport/error`` says how.
        case failed
    }

    /// The steps of a job, in the order they run.
    public enum Step: String, Sendable, Equatable, Codable {
        /// The merge of a merge job.
        case merge
        /// Its contact sheet.
        case sheet
        /// Its preview clip.
        case clip
    }

    /// What became of one step, and why it was done when it was.
    public struct StepOutcome: Sendable, Equatable {
        /// What became of a step.
        public enum Outcome: String, Sendable, Equatable, Codable {
            /// Made in this run.
            case done
            /// Complete already, as the record says and its output shows.
            case skipped
            /// Tried, and it failed; `reason` says why.
            case failed
            /// Not tried, because the merge before it failed.
            case notRun
        }
        /// The step.
        public var step: Step
        /// What became of it.
        public var outcome: Outcome
        /// Why it was done ("not done before", "video.mp4 changed"), or why it failed.
        public var reason: String?
    }

    /// The job as the manifest gives it.
    public var job: BatchJob
    /// How the job ended.
    public var status: Status
    /// Each of its steps, in order.
    public var steps: [StepOutcome]
    /// The merge's facts, when it was done now or before.
    public var merge: MergeFacts?
    /// The contact sheet's facts, when it was drawn now or before.
    public var sheet: ImageFacts?
    /// The preview clip's facts, when it was made now or before.
    public var clip: ClipFacts?
    /// The first failure.
    public var error: MediaMuxError?
    /// The merge's warnings, and those of the soundtrack's download.
    public var warnings: [String]
    /// This run's time on the job (no more than checking it, when skipped).
    public var elapsed: Duration

    /// The job's position in the manifest.
    public var index: Int { job.index }
}

extension MergeFacts {
    /// The facts of a batch job's merge, worded for a manifest's fields.
    init(batch report: MergeReport) {
        self.init(report) { rotation in
            rotation.reason + (rotation.reframedBy.map { "; orientation \($0.rawValue) re-frames it (encodes)" } ?? "")
        }
    }
}

/// How far a batch has come; handed out each time a job starts or ends.
public struct BatchProgress: Sendable, Equatable {
    /// The shard's jobs.
    public var total: Int
    /// Jobs ended: done, skipped or failed.
    public var finished: Int
    /// Jobs that failed, of those ended.
    public var failed: Int
    /// Jobs skipped as complete, of those ended.
    public var skipped: Int
    /// Jobs under way.
    public var running: Int
    /// At the pace of the jobs done so far; nil until one is.
    public var remaining: Duration?
    /// The job that just ended, if that is what this report is about.
    public var ended: BatchJobReport?

    /// A progress report; for tests.
    ///
    /// - Parameters:
    ///   - total: The shard's jobs.
    ///   - finished: Jobs ended.
    ///   - failed: Jobs failed, of those ended.
    ///   - skipped: Jobs skipped as complete, of those ended.
    ///   - running: Jobs under way.
    ///   - remaining: The time left, when known.
    ///   - ended: The job that just ended.
    public init(
        total: Int, finished: Int, failed: Int = 0, skipped: Int = 0, running: Int = 0, remaining: Duration? = nil,
        ended: BatchJobReport? = nil
    ) {
        self.total = total
        self.finished = finished
        self.failed = failed
        self.skipped = skipped
        self.running = running
        self.remaining = remaining
        self.ended = ended
    }
}

extension BatchProgress: WorkProgress {
    /// The jobs ended over the shard's jobs (1 for a shard with none).
    public var completed: Double? { total > 0 ? Double(finished) / Double(total) : 1 }

    /// "5 of 20 jobs ended (1 failed, 2 skipped), 2 running".
    public var description: String {
        let counts = [failed > 0 ? "\(failed) failed" : nil, skipped > 0 ? "\(skipped) skipped" : nil].compactMap { $0 }
        return "\(finished) of \(total) jobs ended" + (counts.isEmpty ? "" : " (\(counts.joined(separator: ", ")))")
            + (running > 0 ? ", \(running) running" : "")
    }
}
