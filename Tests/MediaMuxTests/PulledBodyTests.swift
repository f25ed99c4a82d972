import Foundation
import NIOCore
import NIOPosix
import Synchronization
import TestSupport
import Testing
@testable import MediaMux
@testable import MediaMuxCore

/// A merge as a body its consumer pulls (`MuxEngine.body(for:)`): the same
/// bytes as the fragmented file, made only as they are pulled, on a pool
/// thread that is given back while the consumer waits; errors before the
/// first byte thrown by the call, after it by the sequence; a dropped body
/// closes its files.
@Suite(Samples.required)
struct PulledBodyTests {
    /// 3.2 MB of real phone video: a body of several megabytes, more than a pull makes ahead.
    static let video = Samples.path("iphone_hevc_rot90_bframes_editlist_nonsync_start.mp4")
    static let audio = Fixtures.path("aac_7s.m4a")

    static func job(_ video: String = video, name: String = "response") -> MergeJob {
        MergeJob(video: video, audio: audio, output: .stream(.body(named: name)))
    }

    /// The same merge written as a fragmented file, as `muxctl merge --fragmented` writes it.
    static func fragmentedFile(_ video: String = video, in folder: TemporaryFolder) async throws -> [UInt8] {
        let path = folder.path("fragmented.mp4")
        _ = try await MuxEngine().merge(video: video, audio: audio, output: path, options: MergeOptions(layout: .fragmented))
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static func pull(_ iterator: inout MergeBody.Iterator) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        while let chunk = try await iterator.next() { bytes += chunk.readableBytesView }
        return bytes
    }

    /// Three bodies on an engine whose pool has one thread, each pulled once
    /// and then left waiting: a small merge on the same engine still runs
    /// (a merge that held its thread while its consumer waited would stop
    /// it for good), the waiting bodies make nothing meanwhile, and pulled
    /// to their ends they are the fragmented file's bytes.
    @Test func aWaitingConsumerHoldsNoThread() async throws {
        let folder = try TemporaryFolder()
        let expected = try await Self.fragmentedFile(in: folder)
        #expect(expected.count > 3 * PulledMerge.readyAhead, "\(expected.count) bytes")
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        let engine = MuxEngine(runtime: MediaRuntime(threadPool: pool))
        let reports = Mutex<[Int]>([0, 0, 0])
        var iterators: [MergeBody.Iterator] = []
        var bodies: [MergeBody] = []
        var firsts: [[UInt8]] = []
        for index in 0..<3 {
            let body = try await engine.body(for: Self.job()) { _ in reports.withLock { $0[index] += 1 } }
            var iterator = body.makeAsyncIterator()
            let first = try #require(try await iterator.next())
            firsts.append(Array(first.readableBytesView))
            iterators.append(iterator)
            bodies.append(body)
        }
        let seen = reports.withLock { $0 }

        let small = folder.path("small.mp4")
        let finished = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                _ = try await engine.merge(video: Fixtures.path("h264_bframes_aac.mp4"), audio: Self.audio, output: small)
                return true
            }
            group.addTask {
                // Generous: the merge takes a fraction of a second; one held thread would stop it for good.
                try await Task.sleep(for: .seconds(120))
                return false
            }
            let first = try await group.next() ?? false
            group.cancelAll()
            return first
        }
        #expect(finished, "a merge on the engine did not run while three bodies waited for their consumers")
        #expect(reports.withLock { $0 } == seen, "a body advanced while nobody pulled it")

        for index in 0..<3 {
            let rest = try await Self.pull(&iterators[index])
            #expect(firsts[index] + rest == expected, "body \(index): \(firsts[index].count + rest.count) bytes, the file has \(expected.count)")
            let report = try #require(bodies[index].report)
            #expect(report.fileBytes == expected.count && report.output == "response")
        }
        try await pool.shutdownGracefully()
    }

    /// What a server sees, scaled to a test: 32 clients reading at 50 kB/s
    /// and 8 reading as fast as they can, on an engine with two pool
    /// threads. A small merge started once all 40 are streaming finishes
    /// while every slow client is still reading (each needs over a minute
    /// for its body), and every body is the fragmented file's bytes. The
    /// full-size figures (the 452 MB merge, memory per open stream) are
    /// Benchmarks/served.sh's.
    @Test func slowClientsDoNotHoldUpANewRequest() async throws {
        let folder = try TemporaryFolder()
        let expected = try await Self.fragmentedFile(in: folder)
        let pool = NIOThreadPool(numberOfThreads: 2)
        pool.start()
        let engine = MuxEngine(runtime: MediaRuntime(threadPool: pool))
        final class Tally: Sendable {
            let streaming = Atomic<Int>(0)
            let smallDone = Atomic<Bool>(false)
            let slowEndedFirst = Atomic<Int>(0)
        }
        let tally = Tally()
        let bytesPerSecond = 50_000.0
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                let slow = index < 32
                group.addTask {
                    let body = try await engine.body(for: Self.job(name: "client \(index)"))
                    var bytes: [UInt8] = []
                    var counted = false
                    for try await chunk in body {
                        bytes += chunk.readableBytesView
                        if !counted {
                            counted = true
                            tally.streaming.add(1, ordering: .relaxed)
                        }
                        // Paced until the small merge is done; then the rest at once, to check it.
                        if slow && !tally.smallDone.load(ordering: .relaxed) {
                            try await Task.sleep(for: .seconds(Double(chunk.readableBytes) / bytesPerSecond))
                        }
                    }
                    if slow && !tally.smallDone.load(ordering: .relaxed) { tally.slowEndedFirst.add(1, ordering: .relaxed) }
                    #expect(bytes == expected, "client \(index): \(bytes.count) bytes, the file has \(expected.count)")
                }
            }
            while tally.streaming.load(ordering: .relaxed) < 40 { try await Task.sleep(for: .milliseconds(10)) }
            let small = try await engine.merge(video: Fixtures.path("h264_bframes_aac.mp4"), audio: Self.audio, output: folder.path("small.mp4"))
            tally.smallDone.store(true, ordering: .relaxed)
            #expect(tally.slowEndedFirst.load(ordering: .relaxed) == 0, "slow clients finished before the small merge")
            #expect(small.fileBytes > 0)
            try await group.waitForAll()
        }
        try await pool.shutdownGracefully()
    }

    /// Errors that can be known before the first byte come from the call
    /// that makes the body, before a server has begun its response.
    @Test func errorsBeforeTheFirstByteComeFromTheCall() async throws {
        let engine = MuxEngine()
        let missing = "/nonexistent/clip.mp4"
        await #expect(throws: MediaMuxError.fileNotFound(path: missing)) {
            _ = try await engine.body(for: Self.job(missing))
        }
        await #expect {
            _ = try await engine.body(for: MergeJob(video: Self.video, audio: Self.audio, output: "out.mp4"))
        } throws: { error in
            (error as? MediaMuxError)?.code == .invalidOption && (error as? MediaMuxError)?.option == "output"
        }
        // A body is pulled, not written: a merge that writes refuses it.
        await #expect {
            _ = try await engine.merge(Self.job())
        } throws: { error in
            (error as? MediaMuxError)?.code == .invalidOption
        }
        // A body's plan is there before its first byte.
        let body = try await engine.body(for: Self.job())
        #expect(body.plan.container == .mp4 && body.plan.tracks.count == 2)
        #expect(body.report == nil)
    }

    /// `plan` takes any job: a stream's plan is the one its body carries
    /// out (fragmented, with no output file to check), a file's fails on
    /// the file's own errors, before anything is written.
    @Test func aJobIsPlannedWhateverItsOutput() async throws {
        let folder = try TemporaryFolder()
        let engine = MuxEngine()
        let planned = try await engine.plan(Self.job())
        guard case .fragmented = planned.movieHeader else {
            Issue.record("a stream planned as \(planned.movieHeader)")
            return
        }
        let body = try await engine.body(for: Self.job())
        #expect(planned == body.plan)
        let taken = folder.path("taken.mp4")
        FileManager.default.createFile(atPath: taken, contents: Data([1]))
        await #expect(throws: MediaMuxError.outputExists(path: taken)) {
            _ = try await engine.plan(MergeJob(video: Self.video, audio: Self.audio, output: taken))
        }
        var fromURL = MergeJob(video: Self.video, audio: "http://127.0.0.1:9/song.m4a", output: .stream(.body(named: "response")))
        fromURL.download.useCache = false
        await #expect {
            _ = try await engine.plan(fromURL)
        } throws: { error in
            (error as? MediaMuxError)?.option == "DownloadOptions.useCache"
        }
        #expect(folder.contents == ["taken.mp4"])
    }

    /// A file cut short after its header opens and plans well; the damage
    /// found further on is thrown from the sequence, after the bytes before
    /// it: never a body that just ends short.
    @Test func damageFoundMidFileIsThrownFromTheSequence() async throws {
        let folder = try TemporaryFolder()
        let whole = folder.path("whole.mp4")
        // The movie header at the front, so that the file cut short still opens.
        _ = try await MuxEngine().merge(video: Self.video, audio: Self.audio, output: whole, options: MergeOptions(faststart: true))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        let cut = folder.path("cut.mp4")
        try bytes.prefix(bytes.count * 6 / 10).write(to: URL(fileURLWithPath: cut))

        let body = try await MuxEngine().body(for: Self.job(cut))
        var iterator = body.makeAsyncIterator()
        var received = 0
        do {
            while let chunk = try await iterator.next() { received += chunk.readableBytes }
            Issue.record("the body of a file cut short ended without an error, after \(received) bytes")
        } catch {
            guard case .damaged(let path, _) = error.failure else {
                Issue.record("\(error)")
                return
            }
            #expect(path == cut)
            #expect(received > 0, "the damage was found before the first byte")
        }
        #expect(try await iterator.next() == nil, "the body went on after its error")
        #expect(body.report == nil)
    }

    /// Cancelling the pulling task fails its pull with `.cancelled` naming
    /// the body, and the body ends there.
    @Test func cancellingThePullCancelsTheMerge() async throws {
        let body = try await MuxEngine().body(for: Self.job())
        let task = Task {
            var iterator = body.makeAsyncIterator()
            withUnsafeCurrentTask { $0?.cancel() }
            return try await Self.pull(&iterator)
        }
        await #expect(throws: MediaMuxError.cancelled(path: "response")) { _ = try await task.value }
        var iterator = body.makeAsyncIterator()
        #expect(try await iterator.next() == nil)
    }

    /// The open files of the process that are `path`.
    static func descriptors(of path: String) -> Int {
        let folder = "/proc/self/fd"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return entries.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + $0)) == path }.count
    }

    /// A body dropped half-read closes its inputs: the consumer that goes
    /// away (a client disconnecting) leaves nothing open.
    @Test func aDroppedBodyClosesItsFiles() async throws {
        let folder = try TemporaryFolder()
        // A copy of the video of this test's own, so that no other test's files are counted.
        let video = folder.path("clip.mp4")
        try FileManager.default.copyItem(atPath: Self.video, toPath: video)
        #expect(Self.descriptors(of: video) == 0)
        do {
            let body = try await MuxEngine().body(for: Self.job(video))
            var iterator = body.makeAsyncIterator()
            _ = try await iterator.next()
            #expect(Self.descriptors(of: video) > 0, "the merge has its input open")
        }
        // The pool thread lets go of its last pull's work a moment after the pull has returned.
        for _ in 0..<1000 where Self.descriptors(of: video) > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(Self.descriptors(of: video) == 0, "a dropped body left its input open")
    }
}
