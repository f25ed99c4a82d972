import NIOPosix

/// Runs blocking work (FFmpeg, hashing, file copies) on the runtime's bounded
/// thread pool, never on Swift's cooperative threads; Task cancellation
/// raises the flag the packet loop and FFmpeg's interrupt callback check, so
/// a cancelled call ends with `MediaMuxError.cancelled` naming its file.
/// Work queued behind a full pool waits its turn: a hundred concurrent calls
/// never start a hundred threads.
package func runBlocking<T: Sendable>(
    on pool: NIOThreadPool, _ body: @escaping @Sendable (CancellationFlag) throws -> T
) async throws -> T {
    try await runBlocking(on: pool, raising: CancellationFlag(), body)
}

/// The same, raising a flag that outlives the call (a frame stream's, checked
/// by every step of its decoding).
package func runBlocking<T: Sendable>(
    on pool: NIOThreadPool, raising flag: CancellationFlag, _ body: @escaping @Sendable (CancellationFlag) throws -> T
) async throws -> T {
    try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            // Not runIfActive: it answers a cancellation with CancellationError
            // before the work starts; here the work itself sees the flag and
            // says which file it was working on.
            pool.submit { state in
                switch state {
                case .active: continuation.resume(with: Result { try body(flag) })
                case .cancelled: continuation.resume(throwing: MediaMuxError.runtimeStopped)
                }
            }
        }
    } onCancel: {
        flag.raise()
    }
}

/// A public call's body with its errors typed: what `body` throws, as
/// `MediaMuxError(error, subject:)` makes it.
package func typedErrors<T>(subject: String, _ body: () async throws -> T) async throws(MediaMuxError) -> T {
    do {
        return try await body()
    } catch {
        throw MediaMuxError(error, subject: subject)
    }
}
