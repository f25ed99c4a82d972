import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SIGINT and SIGTERM during a download, a preview clip and a batch (a merge
/// is InterruptionTests'): muxctl stops, exits 130 or 143, and leaves no
/// temporary file. A download keeps what it received in the cache, on
/// purpose: that is what the next download of the URL resumes from.
@Suite("signals")
struct SignalTests {
    typealias Signal = InterruptionTests.Signal

    /// Sends `signal` to `running` from a thread of its own as soon as
    /// `ready()` holds (polled every 2 ms), so a loaded suite's busy
    /// cooperative threads cannot delay it. True when it was sent.
    static func send(_ signal: Signal, to running: RunningMuxCtl, when ready: @escaping @Sendable () -> Bool) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let deadline = Date().addingTimeInterval(60)
                while running.isRunning && Date() < deadline {
                    if ready() {
                        running.send(signal.number)
                        continuation.resume(returning: true)
                        return
                    }
                    usleep(2_000)
                }
                continuation.resume(returning: false)
            }
        }
    }

    static func expectInterrupted(_ result: RunResult, by signal: Signal, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!result.timedOut && !result.looksLikeCrash, "\(result)", sourceLocation: sourceLocation)
        #expect(result.exited && result.status == 128 + signal.number, "\(result)", sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, "\(result)", sourceLocation: sourceLocation)
    }

    static func nonEmptyFile(in folder: String, endingWith suffix: String) -> Bool {
        Scratch.list(folder).contains { name in
            var status = stat()
            return name.hasSuffix(suffix) && stat(folder + "/" + name, &status) == 0 && status.st_size > 0
        }
    }

    /// Interrupted while the body arrives (20 KiB/s): nothing at `-o`, no
    /// finished entry in the cache, only the resumable partial; the next
    /// download completes it.
    @Test(arguments: Signal.allCases)
    func aDownload(_ signal: Signal) async throws {
        guard let setup = try DownloadCommandTests.setUp() else { return }
        defer { setup.remove() }
        setup.server.slow = true
        let output = setup.scratch.output("song.m4a")
        let running = try MuxCtl.launch(["download", setup.url, "-o", output, "--cache-dir", setup.cache])
        let cache = setup.cache
        let sent = await Self.send(signal, to: running) { Self.nonEmptyFile(in: cache, endingWith: ".partial") }
        let result = await running.finish(timeout: 60)
        #expect(sent, "the transfer never started: \(result)")
        Self.expectInterrupted(result, by: signal)
        #expect(result.firstErrorLine.contains("interrupted"), "\(result)")
        #expect(setup.scratch.outputFolder.isEmpty, "\(setup.scratch.outputFolder)")
        let kept = Scratch.list(cache).filter { !$0.hasSuffix(".partial") && !$0.hasSuffix(".partial.json") && !$0.hasSuffix(".lock") }
        #expect(kept.isEmpty, "a finished entry from an interrupted transfer: \(kept)")

        setup.server.slow = false
        let again = try await MuxCtl.run(["download", setup.url, "-o", output, "--cache-dir", setup.cache])
        #expect(again.status == 0, "\(again)")
        #expect(fileBytes(output) == setup.audio)
        #expect(Scratch.list(cache).filter { $0.hasSuffix(".partial") }.isEmpty, "\(Scratch.list(cache))")
    }

    /// Interrupted while the clip is encoded: no clip, no temporary file.
    @Test(arguments: Signal.allCases)
    func aPreviewClip(_ signal: Signal) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("clip.mp4")
        let running = try MuxCtl.launch(["preview", MuxCtl.fixture("h264_bframes_aac.mp4"), "--clip", output, "--seconds", "4", "--height", "480"])
        let folder = scratch.outputs.path
        let pid = running.pid
        let sent = await Self.send(signal, to: running) { Scratch.isWriting(in: folder, pid: pid) }
        let result = await running.finish(timeout: 60)
        #expect(Scratch.partials(in: folder).isEmpty, "temporary file left: \(scratch.outputFolder)")
        print("[muxctlTests] \(signal.testDescription) during a preview clip: \(sent && result.status != 0 ? "stopped" : "finished first")")
        if sent && result.status != 0 {
            Self.expectInterrupted(result, by: signal)
            #expect(result.firstErrorLine.contains("interrupted"), "\(result)")
            #expect(scratch.outputFolder.isEmpty, "\(scratch.outputFolder)")
        } else {
            // The clip was finished before the signal was seen: it is whole.
            #expect(result.status == 0, "\(result)")
            #expect(scratch.outputFolder == ["clip.mp4"], "\(scratch.outputFolder)")
            let probe = try await probeJSON(output)
            #expect((number(probe?["containerDuration"]) ?? 0) > 3.9, "\(String(describing: probe))")
        }
    }

    /// Killed with SIGKILL while the output is written (a re-framed video,
    /// encoding for a while): nothing is left in its folder. The output has
    /// no name until it is complete (Linux's O_TMPFILE), so no handler is
    /// needed to clean up after a signal that allows none.
    @Test func aMergeKilledLeavesNothing() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let folder = scratch.outputs.path
        let running = try MuxCtl.launch([
            "merge", MuxCtl.fixture("phone_portrait_h264_aac.mp4"), MuxCtl.fixture("aac_7s.m4a"), scratch.output("wide.mp4"),
            "--orientation", "landscape", "--video-preset", "slow", "--quiet",
        ])
        let pid = running.pid
        let sent = await Self.send(.kill, to: running) { Scratch.isWriting(in: folder, pid: pid) }
        let result = await running.finish(timeout: 60)
        #expect(sent, "the output was never open: \(result)")
        #expect(result.killedBySignal && result.status == 9, "\(result)")
        #expect(scratch.outputFolder.isEmpty, "left behind: \(scratch.outputFolder)")
    }

    /// Interrupted once its first merge is recorded, while later jobs run:
    /// no temporary file; what was finished stays finished, and the same
    /// command run again completes the rest.
    @Test(arguments: Signal.allCases)
    func aBatch(_ signal: Signal) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let manifest = try BatchCommandTests.manifest(scratch, count: 4, slow: true)
        let running = try MuxCtl.launch(["batch", manifest, "--jobs", "2", "--json"])
        let out = scratch.input("out")
        let sent = await Self.send(signal, to: running) { FileManager.default.fileExists(atPath: out + "/.job0.mp4.mediamux-job") }
        let result = await running.finish(timeout: 120)
        #expect(sent, "no job was ever recorded: \(result)")
        #expect(!result.timedOut && !result.looksLikeCrash, "\(result)")
        #expect(result.exited && result.status == 128 + signal.number, "\(result)")
        #expect(Scratch.list(out).filter { $0.hasSuffix(".partial") }.isEmpty, "\(Scratch.list(out))")

        let rerun = try await MuxCtl.run(["batch", manifest, "--json"])
        #expect(rerun.status == 0, "\(rerun)")
        let statuses = BatchCommandTests.statuses(rerun)
        #expect(((statuses["done"] ?? []) + (statuses["skipped"] ?? [])).sorted() == [0, 1, 2, 3], "\(rerun.stdout)")
        let listing = Scratch.list(out)
        for index in 0..<4 {
            #expect(["job\(index).mp4", "job\(index).sheet.png", "job\(index).preview.mp4"].allSatisfy(listing.contains), "\(listing)")
        }
        #expect(listing.filter { $0.hasSuffix(".partial") }.isEmpty, "\(listing)")
    }
}
