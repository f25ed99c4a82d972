import ArgumentParser
import Dispatch
import MediaMux
import MediaMuxBase
import Synchronization

/// Exit statuses: 1 for a problem with the inputs, 2 for one with the output
/// or options, 130/143 when interrupted by SIGINT/SIGTERM.
enum ExitStatus {
    static func code(for error: MediaMuxError) -> Int32 {
        // By the error's kind alone, as Errors.md tells programs to choose.
        switch error.kind {
        case .output, .option:
            return 2
        case .cancelled:
            return SignalWatcher.received.map { 128 + $0 } ?? 130
        case .input, .network, .ffmpeg, .unexpected:
            return 1
        }
    }
}

/// Runs the library call with SIGINT/SIGTERM turned into Task cancellation,
/// and turns its errors into one `error:` line and an exit status: this is the
/// only place where library errors meet the terminal.
func runReportingErrors<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
    // Signals are caught before the work starts, so that none can kill the
    // process while a temporary output exists.
    let pending = PendingCancellation()
    // Past a file-size limit a write fails, reported as a full disk is,
    // instead of SIGXFSZ killing the process with its temporary file in place.
    ignoreFileSizeLimitSignal()
    let watcher = SignalWatcher { pending.cancel() }
    defer { watcher.stop() }
    let task = Task { try await body() }
    pending.attach(task)
    do {
        return try await task.value
    } catch let error as MediaMuxError {
        ProgressBar.clearLine()
        var message = "error: \(error.description)"
        if let hint = error.hint { message += "\nhint: \(hint)" }
        printToStandardError(message)
        throw ExitCode(ExitStatus.code(for: error))
    } catch is CancellationError {
        throw ExitCode(SignalWatcher.received.map { 128 + $0 } ?? 130)
    }
}

/// Cancels a task that may not exist yet when the signal comes.
final class PendingCancellation: Sendable {
    private let state = Locked<(cancelTask: (@Sendable () -> Void)?, cancelled: Bool)>((nil, false))

    func attach<T: Sendable>(_ task: Task<T, any Error>) {
        let cancelledAlready = state.withLock { state in
            state.cancelTask = { task.cancel() }
            return state.cancelled
        }
        if cancelledAlready { task.cancel() }
    }

    func cancel() {
        let cancelTask = state.withLock { state in
            state.cancelled = true
            return state.cancelTask
        }
        cancelTask?()
    }
}

/// Turns SIGINT and SIGTERM into a callback instead of process death, so the
/// library can remove its temporary file before exiting.
final class SignalWatcher {
    private static let lastSignal = Atomic<Int32>(0)
    static var received: Int32? {
        let number = lastSignal.load(ordering: .relaxed)
        return number == 0 ? nil : number
    }
    private let sources: [DispatchSourceSignal]

    init(onSignal: @escaping @Sendable () -> Void) {
        sources = stopSignals.map { number in
            ignoreSignal(number)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                SignalWatcher.lastSignal.store(number, ordering: .relaxed)
                onSignal()
            }
            source.resume()
            return source
        }
    }

    /// Stops watching. The signals stay ignored for the moments the process
    /// has left (printing its report): restoring the default would let a
    /// signal that raced the end of the work kill a process whose output is
    /// already complete, with a signal's exit status.
    func stop() {
        sources.forEach { $0.cancel() }
    }
}

func printToStandardError(_ message: String) {
    writeToStandardError(message + "\n")
}

/// A one-line progress bar on stderr, drawn only when stderr is a terminal.
final class ProgressBar: Sendable {
    /// The percentage last drawn; updated from the library's worker thread.
    private let lastDrawn = Locked(-1)

    static func forStandardError(enabled: Bool) -> ProgressBar? {
        enabled && standardErrorIsTerminal ? ProgressBar() : nil
    }

    /// Redraws when the percentage changes, or always with `force` (when the detail says more).
    func update(fraction: Double, detail: String, force: Bool = false) {
        let percent = Int((fraction * 100).rounded(.down))
        let changed = lastDrawn.withLock { last in
            defer { last = percent }
            return force || last != percent
        }
        guard changed else { return }
        let width = 30
        let filled = Int(Double(width) * fraction)
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        writeToStandardError("\r[\(bar)] \(percent)% \(detail)\u{1B}[K")
    }

    /// Draws any report: its share done (0 while unknown) and its own line.
    func show(_ progress: some WorkProgress) {
        update(fraction: progress.completed ?? 0, detail: progress.description)
    }

    func clear() { Self.clearLine() }

    static func clearLine() {
        if standardErrorIsTerminal { writeToStandardError("\r\u{1B}[K") }
    }
}



/// The names in a folder (hidden ones included), sorted; empty when unreadable.
func listFolder(_ path: String) -> [String] {
    folderNames(path).sorted()
}
