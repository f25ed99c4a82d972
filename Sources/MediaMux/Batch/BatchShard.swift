/// Which of a manifest's jobs one machine of many takes: those whose index,
/// divided by `count`, leaves `index`. Shards 0 to count-1 together take
/// every job exactly once, each a near-even share, whatever the jobs are; K
/// counts from 0 as Kubernetes' `JOB_COMPLETION_INDEX` does.
public struct BatchShard: Sendable, Equatable {
    /// K: which shard, from 0.
    public let index: Int
    /// N: how many shards the jobs are split into.
    public let count: Int

    /// All of the jobs.
    public static let whole = BatchShard(unchecked: 0, of: 1)

    /// Shard `index` of `count`.
    ///
    /// - Parameters:
    ///   - index: K, from 0 to `count` - 1.
    ///   - count: N, 1 or more.
    /// - Throws: `invalidOption` when K or N is out of range.
    public init(index: Int, count: Int) throws(MediaMuxError) {
        guard count >= 1, index >= 0, index < count else {
            throw MediaMuxError.invalidOption(option: "shard", message: "the shard must be K/N with N at least 1 and K from 0 to N-1, not \(index)/\(count)")
        }
        self.init(unchecked: index, of: count)
    }

    private init(unchecked index: Int, of count: Int) {
        self.index = index
        self.count = count
    }

    /// A shard as typed: "K/N", such as "0/4".
    ///
    /// - Parameter text: K and N, separated by a slash.
    /// - Throws: `invalidOption` when the text is not K/N or K or N is out of range.
    public init(parsing text: String) throws(MediaMuxError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else {
            throw MediaMuxError.invalidOption(option: "shard", message: "the shard must be K/N, such as 0/4, not \"\(text)\"")
        }
        try self.init(index: index, count: count)
    }

    /// Whether this shard takes `job`: its index leaves K when divided by N.
    ///
    /// - Parameter job: A job of the manifest.
    public func includes(_ job: BatchJob) -> Bool {
        job.index % count == index
    }

    /// The jobs of `manifest` this shard takes, in the manifest's order.
    ///
    /// - Parameter manifest: The whole manifest, as every shard reads it.
    public func jobs(of manifest: BatchManifest) -> [BatchJob] {
        manifest.jobs.filter(includes)
    }
}
