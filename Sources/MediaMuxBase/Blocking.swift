import Dispatch

/// Runs blocking work (FFmpeg, hashing, file copies) on its own thread; Task cancellation raises the
/// flag the packet loop and FFmpeg's interrupt callback check.
package func runBlocking<T: Sendable>(_ body: @escaping @Sendable (CancellationFlag) throws -> T) async throws -> T {
    try await runBlocking(raising: CancellationFlag(), body)
}

/// The same, raising a flag that outlives the call (a frame stream's, checked
/// by every step of its decoding).
package func runBlocking<T: Sendable>(raising flag: CancellationFlag, _ body: @escaping @Sendable (CancellationFlag) throws -> T) async throws -> T {
    try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            // Blocking calls stay off Swift's cooperative threads.
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { try body(flag) })
            }
        }
    } onCancel: {
        flag.raise()
    }
}
