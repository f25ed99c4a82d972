import NIOConcurrencyHelpers

/// A value only one thread at a time may read or change: MediaMux's lock,
/// with the standard library `Mutex`'s rules (the value goes in and out only
/// as `sending`, so it need not be Sendable itself).
///
/// Not `Mutex` itself: on Linux that locks with futex calls ThreadSanitizer
/// does not see, so every access it guards is reported as a race (a
/// two-thread `Mutex<[UInt: Int]>` program shows it with Swift 6.3). This one
/// locks a pthread mutex (NIOLock), which ThreadSanitizer understands, so its
/// reports stay worth reading.
package final class Locked<Value: ~Copyable>: @unchecked Sendable {
    private let lock = NIOLock()
    private var value: Value

    package init(_ value: consuming sending Value) {
        self.value = value
    }

    /// Runs `body` with the value, holding the lock; what `body` throws is thrown.
    package func withLock<Result: ~Copyable, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
