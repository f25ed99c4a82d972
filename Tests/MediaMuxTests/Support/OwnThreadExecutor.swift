import Foundation

/// A task executor with a thread of its own. A task that prefers it resumes
/// as soon as it can run, even while Swift's cooperative threads are all
/// busy with other tests' blocking work (which can hold a waiting task back
/// for seconds).
final class OwnThreadExecutor: TaskExecutor, @unchecked Sendable {
    // `jobs` and `stopping` are guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopping = false

    init() {
        Thread { [self] in run() }.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.withLock {
            jobs.append(job)
            condition.signal()
        }
    }

    /// Ends the thread once the jobs given so far have run.
    func stop() {
        condition.withLock {
            stopping = true
            condition.signal()
        }
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            guard !jobs.isEmpty else {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
