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

    /// The name its thread carries, for a test to see where it runs.
    static let threadName = "own-executor"

    init() {
        Thread { [self] in
            // Named through the kernel, by the thread itself: Foundation's
            // `Thread.current.name` on Linux names the thread only once
            // `start()` has recorded it, which the new thread can outrun (it
            // kept its creator's name under ThreadSanitizer), and Glibc's
            // `pthread_setname_np` is not visible to Swift.
            try? Self.threadName.write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            run()
        }.start()
    }

    /// The name of the thread this is called on, as the kernel has it
    /// (Foundation's `Thread.current` is not for async code).
    static func currentThreadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .newlines)
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
