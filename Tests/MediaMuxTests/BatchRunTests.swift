import Foundation
import TestSupport
import Testing
@testable import MediaMux
@testable import MediaMuxBase

/// A batch run end to end on real files: jobs done side by side, one failure
/// that stops no other, a re-run that skips exactly what is complete and
/// redoes what changed, a URL shared by several jobs downloaded once, and
/// what a killed run left behind cleaned up.
struct BatchRunTests {
    static func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    static func modified(_ path: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }

    static func outcomes(_ report: BatchReport) -> [String] {
        report.jobs.map { job in job.steps.map { "\($0.step.rawValue) \($0.outcome.rawValue)" }.joined(separator: ", ") }
    }

    /// The width and height a PNG's IHDR says.
    static func pngSize(_ path: String) -> (Int, Int)? {
        guard let data = FileManager.default.contents(atPath: path), data.count > 24,
              data.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { return nil }
        let bytes = [UInt8](data[16..<24])
        func big(_ slice: ArraySlice<UInt8>) -> Int { slice.reduce(0) { $0 << 8 | Int($1) } }
        return (big(bytes[0..<4]), big(bytes[4..<8]))
    }

    /// A manifest of `count` merges of `video` with `audio` (a path or URL)
    /// into out/0.mp4, out/1.mp4..., each entry ending with `extra` fields.
    static func merges(
        in folder: TemporaryFolder, count: Int, video: String = Fixtures.path("h264_bframes_aac.mp4"), audio: String, extra: String = ""
    ) throws -> BatchManifest {
        let jobs = (0..<count).map { "{\"video\": \"\(video)\", \"audio\": \"\(audio)\", \"output\": \"out/\($0).mp4\"\(extra)}" }
        try write("{\"jobs\": [\(jobs.joined(separator: ","))]}", to: folder.path("jobs.json"))
        return try BatchManifest.load(folder.path("jobs.json"))
    }

    /// `body` with a test server serving aac_7s.m4a at /song.m4a, stopped afterwards.
    static func withSongServer(_ body: (TestHTTPServer, String) async throws -> Void) async throws {
        let server = try await TestHTTPServer.start()
        do {
            server.serve("/song.m4a", body: try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixtures.path("aac_7s.m4a")))))
            try await body(server, server.url("/song.m4a"))
        } catch {
            try? await server.stop()
            throw error
        }
        try await server.stop()
    }

    func manifest(in folder: TemporaryFolder, fadeOut: Double = 1) throws -> BatchManifest {
        try Self.write("""
            {"jobs": [
              {"video": "\(Fixtures.path("h264_bframes_aac.mp4"))", "audio": "song.m4a", "output": "out/a.mp4", "preview": {"sheet": true}},
              {"video": "\(Fixtures.path("h264_rot90.mp4"))", "audio": "\(Fixtures.path("flac_3s.flac"))", "output": "out/b.mp4", "fadeOut": \(fadeOut)},
              {"video": "\(Fixtures.path("text_file.mp4"))", "audio": "song.m4a", "output": "out/c.mp4"},
              {"input": "\(Fixtures.path("h264_rot270.mp4"))", "preview": {"sheet": "out/d.png", "clip": "out/d.mp4"}}
            ]}
            """, to: folder.path("jobs.json"))
        return try BatchManifest.load(folder.path("jobs.json"))
    }

    @Test func runsSkipsCompleteStepsAndRedoesChangedOnes() async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.copyItem(atPath: Fixtures.path("aac_7s.m4a"), toPath: folder.path("song.m4a"))
        let engine = MuxEngine()
        let first = try await engine.runBatch(try manifest(in: folder), options: BatchOptions(jobs: 2))

        #expect(first.jobs.map(\.status) == [.done, .done, .failed, .done])
        #expect(Self.outcomes(first) == ["merge done, sheet done", "merge done", "merge failed", "sheet done, clip done"])
        let failure = try #require(first.jobs[2].error)
        #expect(failure.kind == .input && failure.description.contains("text_file.mp4"))
        // The outputs, read by the tests' own box reader.
        let a = try MP4File(path: folder.path("out/a.mp4"))
        #expect(abs(Double(a.movieDuration) / Double(a.movieTimescale) - 4.0) < 0.001 && a.tracks.count == 2)
        let b = try MP4File(path: folder.path("out/b.mp4"))
        #expect(abs(Double(b.movieDuration) / Double(b.movieTimescale) - 3.0) < 0.001)
        #expect(first.jobs[1].merge?.audio!.how.hasPrefix("transcoded: flac -> aac") == true)
        let sheet = try #require(first.jobs[0].sheet)
        #expect(sheet.path == folder.path("out/a.sheet.png"))
        #expect(Self.pngSize(sheet.path).map { [$0.0, $0.1] } == [sheet.width, sheet.height])
        #expect(try MP4File(path: folder.path("out/d.mp4")).tracks.count == 1)
        // Records for what was made; none for the job that made nothing; no temporary file.
        let listing = try FileManager.default.contentsOfDirectory(atPath: folder.path("out")).sorted()
        #expect(listing == [".a.mp4.mediamux-job", ".b.mp4.mediamux-job", ".d.png.mediamux-job",
                            "a.mp4", "a.sheet.png", "b.mp4", "d.mp4", "d.png"])

        // Again: everything complete is skipped, with the facts of the run that made it, and nothing is touched.
        let files = ["a.mp4", "a.sheet.png", "b.mp4", "d.mp4", "d.png"].map { folder.path("out/" + $0) }
        let times = files.map(Self.modified)
        let second = try await engine.runBatch(try manifest(in: folder), options: BatchOptions(jobs: 2))
        #expect(second.jobs.map(\.status) == [.skipped, .skipped, .failed, .skipped])
        #expect(second.jobs[0].merge == first.jobs[0].merge && second.jobs[0].sheet == first.jobs[0].sheet)
        #expect(second.jobs[3].clip == first.jobs[3].clip)
        #expect(files.map(Self.modified) == times)

        // A soundtrack changed since: its merge is redone, and so is the sheet of that output.
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(60)], ofItemAtPath: folder.path("song.m4a"))
        // A preview removed: made again alone.
        try FileManager.default.removeItem(atPath: folder.path("out/d.png"))
        let third = try await engine.runBatch(try manifest(in: folder))
        #expect(Self.outcomes(third) == ["merge done, sheet done", "merge skipped", "merge failed", "sheet done, clip skipped"])
        #expect(third.jobs[0].steps[0].reason == folder.path("song.m4a") + " changed")
        #expect(third.jobs[3].steps[0].reason == "its output is missing")

        // A job's entry changed: that job alone is redone.
        let fourth = try await engine.runBatch(try manifest(in: folder, fadeOut: 2))
        #expect(Self.outcomes(fourth) == ["merge skipped, sheet skipped", "merge done", "merge failed", "sheet skipped, clip skipped"])
        #expect(fourth.jobs[1].steps[0].reason == "its entry in the manifest changed")

        // An output changed by someone else is not taken as complete.
        try Data("not a movie".utf8).write(to: URL(fileURLWithPath: folder.path("out/b.mp4")))
        let fifth = try await engine.runBatch(try manifest(in: folder, fadeOut: 2), options: BatchOptions(redo: false))
        #expect(fifth.jobs[1].steps[0].reason == "its output changed since")
        #expect(try MP4File(path: folder.path("out/b.mp4")).tracks.count == 2)

        // Asked to redo: every step, whatever the records say.
        let sixth = try await engine.runBatch(try manifest(in: folder, fadeOut: 2), options: BatchOptions(redo: true))
        #expect(sixth.jobs.map(\.status) == [.done, .done, .failed, .done])
    }

    @Test func shardsSplitTheWork() async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.copyItem(atPath: Fixtures.path("aac_7s.m4a"), toPath: folder.path("song.m4a"))
        let manifest = try manifest(in: folder)
        let shard = try BatchShard(index: 1, count: 2)
        let report = try await MuxEngine().runBatch(manifest, shard: shard)
        #expect(report.jobs.map(\.index) == [1, 3])
        #expect(!FileManager.default.fileExists(atPath: folder.path("out/a.mp4")))
        #expect(FileManager.default.fileExists(atPath: folder.path("out/b.mp4")))
    }

    @Test func leftoversOfAKilledRunAreRemoved() async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.copyItem(atPath: Fixtures.path("aac_7s.m4a"), toPath: folder.path("song.m4a"))
        try FileManager.default.createDirectory(atPath: folder.path("out"), withIntermediateDirectories: true)
        // What a kill -9 during a merge, a sheet and a record's update leaves; and another program's file.
        let leftovers = [".a.mp4.mediamux-k3j2.partial", ".a.sheet.png.mediamux-99.partial", "..a.mp4.mediamux-job.mediamux-x1.partial"]
        for name in leftovers + [".other.mp4.mediamux-7.partial"] { try Self.write("part", to: folder.path("out/" + name)) }
        let report = try await MuxEngine().runBatch(try manifest(in: folder), shard: try BatchShard(index: 0, count: 2))
        #expect(report.jobs.map(\.status) == [.done, .failed])
        let listing = try FileManager.default.contentsOfDirectory(atPath: folder.path("out"))
        #expect(leftovers.allSatisfy { !listing.contains($0) })
        #expect(listing.contains(".other.mp4.mediamux-7.partial"))
    }

    @Test(.tags(.network), .skippedByTag) func aURLSharedByJobsIsDownloadedOnce() async throws {
        try await Self.withSongServer { server, url in
            let folder = try TemporaryFolder()
            let manifest = try Self.merges(in: folder, count: 4, audio: url)
            var options = BatchOptions(jobs: 4)
            options.download.cacheDirectory = folder.path("cache")
            let first = try await MuxEngine().runBatch(manifest, options: options)
            #expect(first.jobs.map(\.status) == [.done, .done, .done, .done], "\(first.jobs.map { $0.error?.description ?? "" })")
            #expect(server.requests("/song.m4a").count == 1)
            // The merges copied the downloaded soundtrack's packets.
            let source = try MP4File(path: Fixtures.path("aac_7s.m4a"))
            let merged = try MP4File(path: folder.path("out/2.mp4"))
            let sourceAudio = try #require(source.tracks.first { $0.isAudio })
            let mergedAudio = try #require(merged.tracks.first { $0.isAudio })
            #expect(try mergedAudio.sampleData(10) == sourceAudio.sampleData(10))

            // Again: the URL is revalidated once (unchanged, so no body), and every job is complete.
            let second = try await MuxEngine().runBatch(manifest, options: options)
            #expect(second.jobs.map(\.status) == [.skipped, .skipped, .skipped, .skipped])
            let requests = server.requests("/song.m4a")
            #expect(requests.count == 2 && requests[1].status == 304 && requests[1].bodyBytesSent == 0)

            // Changed on the server: every merge of it is redone.
            server.serve("/song.m4a", body: [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("aac_2s.m4a")))), etag: "\"v2\"")
            let third = try await MuxEngine().runBatch(manifest, options: options)
            #expect(third.jobs.map(\.status) == [.done, .done, .done, .done])
            #expect(third.jobs[0].steps[0].reason == url + " changed")
            #expect(server.requests("/song.m4a").count == 3)
        }
    }

    /// Jobs waiting on a shared download that stalls: cancelling the batch
    /// ends the download too, instead of waiting the stall out.
    @Test(.tags(.network), .skippedByTag) func cancellingDoesNotWaitForASharedDownload() async throws {
        try await Self.withSongServer { server, url in
            let folder = try TemporaryFolder()
            server.inject("/song.m4a", [.stallAfter(bytes: 4096, seconds: 60)])
            let manifest = try Self.merges(in: folder, count: 3, audio: url)
            var options = BatchOptions(jobs: 3)
            options.download.cacheDirectory = folder.path("cache")
            options.download.idleTimeout = .seconds(120)
            let clock = ContinuousClock()
            let task = Task { try await MuxEngine().runBatch(manifest, options: options) }
            while server.requests("/song.m4a").first.map({ $0.bodyBytesSent < 4096 }) ?? true {
                try await Task.sleep(for: .milliseconds(10))
            }
            let cancelled = clock.now
            task.cancel()
            let result = await task.result
            guard case .failure(let error) = result else {
                Issue.record("the batch was not cancelled")
                return
            }
            #expect((error as? MediaMuxError) == .cancelled(path: folder.path("jobs.json")))
            // Ended by the cancellation, not by the 60-second stall (a hang check, not a timing).
            #expect(clock.now - cancelled < .seconds(30))
            #expect(server.requests("/song.m4a").count == 1)
            #expect(!FileManager.default.fileExists(atPath: folder.path("out/0.mp4")))
        }
    }

    @Test func cancellingStopsTheBatchAndLeavesNoTemporaryFile() async throws {
        let folder = try TemporaryFolder()
        let manifest = try Self.merges(in: folder, count: 12, audio: Fixtures.path("flac_3s.flac"), extra: ", \"preview\": {\"clip\": true}")
        // Cancelled from the progress handler as the first job ends, on the
        // batch's own thread: not later, whatever keeps this test's task waiting.
        let handle = Locked<(task: Task<BatchReport, any Error>?, ended: Bool)>((nil, false))
        let task = Task {
            try await MuxEngine().runBatch(manifest, options: BatchOptions(jobs: 2)) { progress in
                if progress.ended != nil {
                    handle.withLock { state in
                        state.ended = true
                        state.task?.cancel()
                    }
                }
            }
        }
        handle.withLock { state in
            state.task = task
            if state.ended { task.cancel() }
        }
        let result = await task.result
        guard case .failure(let error) = result else {
            Issue.record("the batch was not cancelled")
            return
        }
        #expect((error as? MediaMuxError) == .cancelled(path: folder.path("jobs.json")))
        let listing = try FileManager.default.contentsOfDirectory(atPath: folder.path("out"))
        #expect(!listing.contains { $0.hasSuffix(".partial") }, "\(listing)")
        #expect(listing.filter { $0.hasSuffix(".preview.mp4") }.count < 12)
        // What finished is recorded, and a re-run completes the rest.
        let rerun = try await MuxEngine().runBatch(manifest, options: BatchOptions(jobs: 2))
        #expect(rerun.jobs.allSatisfy { $0.status != .failed })
        #expect(rerun.jobs.contains { $0.status == .skipped } || rerun.jobs.contains { $0.steps.contains { $0.outcome == .skipped } })
    }

    @Test func decisionsAndTheirReasons() {
        let input = FileStamp(name: "/v.mp4", bytes: 10, modified: 1)
        let key = StepKey(version: "1.0", settings: "{}", inputs: [input])
        let output = FileStamp(name: "/o.mp4", bytes: 20, modified: 2)
        let recorded = BatchRecord.Step(key: key, output: output)
        #expect(StepDecision.decide(wanted: key, recorded: recorded, output: output, force: false) == .skip)
        #expect(StepDecision.decide(wanted: key, recorded: recorded, output: output, force: true) == .run(reason: "asked to redo"))
        #expect(StepDecision.decide(wanted: key, recorded: nil, output: output, force: false) == .run(reason: "not done before"))
        #expect(StepDecision.decide(wanted: key, recorded: recorded, output: nil, force: false) == .run(reason: "its output is missing"))
        var touched = output
        touched.modified = 3
        #expect(StepDecision.decide(wanted: key, recorded: recorded, output: touched, force: false) == .run(reason: "its output changed since"))
        var newer = key
        newer.version = "1.1"
        #expect(StepDecision.decide(wanted: newer, recorded: recorded, output: output, force: false) == .run(reason: "made by MediaMux 1.0"))
        var edited = key
        edited.settings = "{\"fadeIn\":1}"
        #expect(StepDecision.decide(wanted: edited, recorded: recorded, output: output, force: false) == .run(reason: "its entry in the manifest changed"))
        var changed = key
        changed.inputs = [FileStamp(name: "/v.mp4", bytes: 11, modified: 1)]
        #expect(StepDecision.decide(wanted: changed, recorded: recorded, output: output, force: false) == .run(reason: "/v.mp4 changed"))
    }

    @Test func theSameEntryWordedDifferentlyIsTheSameWork() throws {
        let one = try BatchManifest.parse(Data(#"{"jobs": [{"video": "v.mp4", "audio": "a.m4a", "output": "o.mp4", "fadeIn": 1.0, "end": "video"}]}"#.utf8), path: "j.json")
        let two = try BatchManifest.parse(Data(#"{"jobs":[{ "end":"video","fadeIn":1,"output":"o.mp4","audio":"a.m4a","video":"v.mp4"}]}"#.utf8), path: "j.json")
        #expect(one.jobs[0].settings == two.jobs[0].settings)
        let three = try BatchManifest.parse(Data(#"{"jobs": [{"video": "v.mp4", "audio": "a.m4a", "output": "o.mp4", "fadeIn": 1.5, "end": "video"}]}"#.utf8), path: "j.json")
        #expect(one.jobs[0].settings != three.jobs[0].settings)
    }
}
