import Testing

/// Runs each test case of a suite on a thread of its own (an
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
struct OffTheCooperativePool: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    /// A scope for each test case, none for a suite as a whole.
    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let executor = OwnThreadExecutor()
        defer { executor.stop() }
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == OffTheCooperativePool {
    /// Each test case runs on a thread of its own: see `OffTheCooperativePool`.
    static var offTheCooperativePool: Self { OffTheCooperativePool() }
}

/// The trait does what it says: a test of a suite that carries it, and a
/// child task that test makes, run on the executor's thread.
@Suite(.offTheCooperativePool) struct OffTheCooperativePoolTests {
    @Test func aTestAndItsChildTasksRunOnAThreadOfTheirOwn() async {
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
