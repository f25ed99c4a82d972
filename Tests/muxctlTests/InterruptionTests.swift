import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SIGINT / SIGTERM during a merge: either the merge completed (exit 0, full
/// output) or it was stopped (exit 128+signal, no output, no temporary file).
@Suite("merge interrupted", Samples.required, .tags(.heavy), .skippedByTag)
struct InterruptionTests {
    /// The largest input pair (a 3.2 MB iPhone clip), so the remux itself takes a measurable time.
    static let video = Samples.path("iphone_hevc_rot90_bframes_editlist_nonsync_start.mp4")
    static let audio = MuxCtl.fixture("aac_7s.m4a")
    static let expectedDuration = 2.7722

    enum Signal: Int32, CaseIterable, CustomTestStringConvertible, Sendable {
        case interrupt = 2   // SIGINT
        case terminate = 15  // SIGTERM
        case kill = 9        // SIGKILL: no handler runs
        static var allCases: [Signal] { [.interrupt, .terminate] }
        var number: Int32 { rawValue }
        var testDescription: String { self == .interrupt ? "SIGINT" : self == .terminate ? "SIGTERM" : "SIGKILL" }
    }

    enum Outcome: String { case completed, cancelled, killedBeforeHandlers }

    /// Checks the invariants and says which of the allowed outcomes happened.
    @discardableResult
    static func expectAllowedOutcome(
        _ result: RunResult, signal: Signal, scratch: Scratch, output: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Outcome? {
        #expect(!result.timedOut, "hung after the signal: \(result)", sourceLocation: sourceLocation)
        #expect(!result.looksLikeCrash, "crashed: \(result)", sourceLocation: sourceLocation)
        #expect(Scratch.partials(in: scratch.outputs.path).isEmpty,
                "temporary file left behind: \(scratch.outputFolder)", sourceLocation: sourceLocation)
        if result.killedBySignal {
            // The signal landed before muxctl installed its handlers (process start-up):
            // the default action ends it, which is fine as long as nothing was written.
            #expect(result.status == signal.number, "killed by an unexpected signal: \(result)", sourceLocation: sourceLocation)
            #expect(scratch.outputFolder.isEmpty, "files left: \(scratch.outputFolder)", sourceLocation: sourceLocation)
            return .killedBeforeHandlers
        }
        if result.status == 0 {
            #expect(scratch.outputFolder == [URL(fileURLWithPath: output).lastPathComponent],
                    "\(scratch.outputFolder)", sourceLocation: sourceLocation)
            let probe = try await probeJSON(output, sourceLocation: sourceLocation)
            let duration = number(probe?["containerDuration"]) ?? -1
            #expect(abs(duration - expectedDuration) < 0.001, "incomplete output: \(duration) s", sourceLocation: sourceLocation)
            #expect((probe?["streams"] as? [Any])?.count == 2, sourceLocation: sourceLocation)
            return .completed
        }
        #expect(result.status == 128 + signal.number, "expected exit \(128 + signal.number): \(result)",
                sourceLocation: sourceLocation)
        #expect(scratch.outputFolder.isEmpty, "files left: \(scratch.outputFolder)", sourceLocation: sourceLocation)
        #expect(!fileExists(output), sourceLocation: sourceLocation)
        #expect(result.firstErrorLine.hasPrefix("error: "), "\(result)", sourceLocation: sourceLocation)
        #expect(result.firstErrorLine.contains("interrupted"), "\(result)", sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, "\(result)", sourceLocation: sourceLocation)
        return .cancelled
    }

    /// A signal right after launch, at staggered delays to cover start-up, probing,
    /// remuxing and the final rename.
    @Test("signal soon after launch", arguments: Signal.allCases, [0, 2, 5, 10, 20, 30, 40, 50, 60, 70, 80, 100, 130])
    func signalAfterDelay(_ signal: Signal, _ delayMilliseconds: Int) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("int.mp4")
        let running = try MuxCtl.launch(["merge", Self.video, Self.audio, output, "--quiet"])
        if delayMilliseconds > 0 { usleep(useconds_t(delayMilliseconds * 1000)) }
        running.send(signal.number)
        let result = await running.finish(timeout: 60)
        try await Self.expectAllowedOutcome(result, signal: signal, scratch: scratch, output: output)
    }

    /// The signal arrives while the output is being written, i.e. mid-merge.
    @Test("signal while the temporary file exists", arguments: Signal.allCases)
    func signalMidMerge(_ signal: Signal) async throws {
        var tally: [String: Int] = [:]
        for attempt in 0..<10 {
            let scratch = try Scratch()
            defer { scratch.remove() }
            let output = scratch.output("mid.mp4")
            let running = try MuxCtl.launch(["merge", Self.video, Self.audio, output, "--quiet"])
            var sawPartial = false
            let deadline = Date().addingTimeInterval(30)
            while running.isRunning && Date() < deadline {
                if Scratch.isWriting(in: scratch.outputs.path, pid: running.pid) {
                    sawPartial = true
                    // Vary the moment a little within the write.
                    if attempt % 3 != 0 { usleep(useconds_t(200 * (attempt % 3))) }
                    running.send(signal.number)
                    break
                }
                usleep(100)
            }
            let result = await running.finish(timeout: 60)
            if sawPartial {
                // Handlers are installed before any file is created.
                #expect(!result.killedBySignal, "signal during the write killed muxctl outright: \(result)")
            }
            let outcome = try await Self.expectAllowedOutcome(result, signal: signal, scratch: scratch, output: output)
            tally["\(sawPartial ? "mid-write" : "missed")/\(outcome?.rawValue ?? "?")", default: 0] += 1
        }
        print("[muxctlTests] \(signal.testDescription) mid-merge outcomes: \(tally.sorted { $0.key < $1.key })")
    }
}
