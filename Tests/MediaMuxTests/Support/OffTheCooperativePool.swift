import Foundation
import Testing

/// Runs each test case of a suite on threads kept for such suites (an
/// `OwnThreadExecutor` preferred by the test's task and every child task it
/// makes), not on Swift's cooperative threads.
///
/// For the suites whose tests block while they check: decoding every frame
/// of an output, hashing its packets, waiting for GStreamer or Chromium.
/// The cooperative pool has one thread per core, two on CI's runners. Under
/// the sanitizers such checks take minutes, and two of them held both
/// threads: every other test's continuations waited, and downloads and the
/// stress test ran past their 3-minute limits, all released together when
/// the composition suite ended (CI, Debian 13 under AddressSanitizer:
/// 8 timeouts, each test passing in seconds alone). The libraries' own
/// blocking work runs on NIO thread pools already; this keeps the tests'
/// from starving the code under test.
///
/// The threads are as many as the cores, shared by every such test, as the
/// cooperative pool was: with a thread for each test, a dozen decoders,
/// encoders and browsers ran at once on 2 cores, and Chromium, slowed past
/// its time budget, showed none of the pictures a test asked it for.
struct OffTheCooperativePool: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    /// A scope for each test case, none for a suite as a whole.
    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    /// Never stopped: the tests that prefer it run until the process ends.
    static let executor = OwnThreadExecutor(threads: ProcessInfo.processInfo.activeProcessorCount)

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await withTaskExecutorPreference(Self.executor) { try await function() }
    }
}

extension Trait where Self == OffTheCooperativePool {
    /// Each test case runs on threads kept for such tests: see `OffTheCooperativePool`.
    static var offTheCooperativePool: Self { OffTheCooperativePool() }
}

/// The trait does what it says: a test of a suite that carries it, and a
/// child task that test makes, run on the executor's threads.
@Suite(.offTheCooperativePool) struct OffTheCooperativePoolTests {
    @Test func aTestAndItsChildTasksRunOnTheExecutorsThreads() async {
        #expect(OwnThreadExecutor.currentThreadName() == OwnThreadExecutor.threadName)
        async let child = OwnThreadExecutor.currentThreadName()
        #expect(await child == OwnThreadExecutor.threadName)
    }
}

/// ...and a suite without it runs on Swift's threads.
@Suite struct OnTheCooperativePoolTests {
    @Test func aTestOfASuiteWithoutTheTraitRunsOnSwiftsThreads() async {
        #expect(OwnThreadExecutor.currentThreadName() != OwnThreadExecutor.threadName)
    }
}
