/// Which of a manifest's jobs one machine of many takes: those whose index,
/// divided by `count`, leaves `index`. Shards 0 to count-1 together take
/// every job exactly once, each a near-even share, whatever the jobs are; K
/// counts from 0 as Kubernetes' `JOB_COMPLETION_INDEX` does.
public struct BatchShard: Sendable, Equatable {
    public let index: Int
    public let count: Int

    /// All of the jobs.
    public static let whole = BatchShard(unchecked: 0, of: 1)

    public init(index: Int, count: Int) throws(MediaMuxError) {
        guard count >= 1, index >= 0, index < count else {
            throw MediaMuxError.invalidOption("the shard must be K/N with N at least 1 and K from 0 to N-1, not \(index)/\(count)")
        }
        self.init(unchecked: index, of: count)
    }

    private init(unchecked index: Int, of count: Int) {
        self.index = index
        self.count = count
    }

    /// "K/N", as typed.
    public init(parsing text: String) throws(MediaMuxError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else {
            throw MediaMuxError.invalidOption("the shard must be K/N, such as 0/4, not \"\(text)\"")
        }
        try self.init(index: index, count: count)
    }

    public func includes(_ job: BatchJob) -> Bool {
        job.index % count == index
    }

    public func jobs(of manifest: BatchManifest) -> [BatchJob] {
        manifest.jobs.filter(includes)
    }
}
