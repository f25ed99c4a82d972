import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `muxctl batch` as CI and Kubernetes run it: shards as separate processes
/// side by side, a shard killed and run again, failures in the summary and the
/// exit status, a bad manifest refused before any work.
struct BatchCommandTests {
    /// A manifest of `count` merges of a real phone-like clip with a real AAC
    /// soundtrack, each with a contact sheet; with `slow`, FLAC soundtracks
    /// (encoded) and preview clips too, so that a job takes long enough to be killed in.
    static func manifest(_ scratch: Scratch, count: Int, slow: Bool = false, failing: Set<Int> = []) throws -> String {
        let jobs = (0..<count).map { index in
            let video = failing.contains(index) ? MuxCtl.fixture("text_file.mp4") : MuxCtl.fixture("h264_bframes_aac.mp4")
            let audio = slow ? MuxCtl.fixture("flac_3s.flac") : MuxCtl.fixture("aac_7s.m4a")
            let preview = slow ? #"{"sheet": true, "clip": true}"# : #"{"sheet": true}"#
            return #"{"video": "\#(video)", "audio": "\#(audio)", "output": "out/job\#(index).mp4", "preview": \#(preview)}"#
        }
        let path = scratch.input("jobs.json")
        try Data("{\"jobs\": [\n\(jobs.joined(separator: ",\n"))\n]}".utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The jobs a `--json` run reports, by status.
    static func statuses(_ result: RunResult) -> [String: [Int]] {
        guard let object = jsonObject(result.stdout), let jobs = object["jobs"] as? [[String: Any]] else { return [:] }
        var byStatus: [String: [Int]] = [:]
        for job in jobs {
            if let status = job["status"] as? String, let index = number(job["index"]) { byStatus[status, default: []].append(Int(index)) }
        }
        return byStatus
    }

    @Test func shardProcessesSideBySideDoEveryJobOnce() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let manifest = try Self.manifest(scratch, count: 9)
        // Three machines of a Kubernetes Indexed Job: the same command, JOB_COMPLETION_INDEX 0, 1 and 2.
        let shards = try (0..<3).map { index in
            try MuxCtl.launch(["batch", manifest, "--shards", "3", "--jobs", "1", "--json"], environment: ["JOB_COMPLETION_INDEX": "\(index)"])
        }
        var results: [RunResult] = []
        for shard in shards { results.append(await shard.finish()) }
        var done: [Int] = []
        for (index, result) in results.enumerated() {
            #expect(result.exited && result.status == 0, "\(result)")
            let statuses = Self.statuses(result)
            #expect(statuses.keys.sorted() == ["done"], "\(result)")
            #expect((statuses["done"] ?? []).allSatisfy { $0 % 3 == index })
            done += statuses["done"] ?? []
        }
        #expect(done.sorted() == Array(0..<9))
        let listing = Scratch.list(scratch.input("out"))
        for index in 0..<9 {
            #expect(listing.contains("job\(index).mp4") && listing.contains("job\(index).sheet.png"))
            let probe = try await probeJSON(scratch.input("out/job\(index).mp4"))
            #expect(number(probe?["containerDuration"]).map { abs($0 - 4.0) < 0.001 } == true)
        }
        #expect(Scratch.partials(in: scratch.input("out")).allSatisfy { $0.hasSuffix(".mediamux-job") })

        // Run again on any machine: all complete, nothing redone.
        let again = try await MuxCtl.run(["batch", manifest, "--shard", "1/3", "--json"])
        #expect(again.status == 0 && Self.statuses(again) == ["skipped": [1, 4, 7]], "\(again)")
    }

    @Test func aKilledShardRunAgainCompletesTheSet() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let manifest = try Self.manifest(scratch, count: 8, slow: true)
        let other = try MuxCtl.launch(["batch", manifest, "--shards", "2", "--jobs", "1", "--json"], environment: ["JOB_COMPLETION_INDEX": "0"])
        let victim = try MuxCtl.launch(["batch", manifest, "--shards", "2", "--jobs", "1", "--json"], environment: ["JOB_COMPLETION_INDEX": "1"])
        // Preempted: killed outright once its first job is recorded, in the middle of its second.
        let deadline = Date().addingTimeInterval(60)
        while !fileExists(scratch.input("out/.job1.mp4.mediamux-job")) && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        try await Task.sleep(for: .milliseconds(150))
        victim.send(SIGKILL)
        let killed = await victim.finish()
        #expect(killed.killedBySignal, "\(killed)")
        let survivor = await other.finish()
        #expect(survivor.status == 0 && Self.statuses(survivor)["done"] == [0, 2, 4, 6], "\(survivor)")

        // The same shard started again: what the killed run finished is skipped, the rest done.
        let rerun = try await MuxCtl.run(["batch", manifest, "--shards", "2", "--json"], environment: ["JOB_COMPLETION_INDEX": "1"])
        #expect(rerun.status == 0, "\(rerun)")
        let statuses = Self.statuses(rerun)
        #expect(statuses["failed"] == nil)
        #expect(((statuses["done"] ?? []) + (statuses["skipped"] ?? [])).sorted() == [1, 3, 5, 7])
        // Job 1's merge was recorded before the kill: not done again.
        let jobs = jsonObject(rerun.stdout)?["jobs"] as? [[String: Any]]
        let first = (jobs?.first { number($0["index"]) == 1 }?["steps"] as? [[String: Any]])?.first
        #expect(first?["step"] as? String == "merge" && first?["outcome"] as? String == "skipped", "\(rerun.stdout)")
        // Every job's files exactly once, and nothing half-written left behind.
        let listing = Scratch.list(scratch.input("out"))
        for index in 0..<8 {
            #expect(["job\(index).mp4", "job\(index).sheet.png", "job\(index).preview.mp4"].allSatisfy(listing.contains), "\(listing)")
        }
        #expect(listing.filter { $0.hasSuffix(".partial") }.isEmpty, "\(listing)")
        #expect(listing.count == 8 * 4)
    }

    @Test func failuresAreSummarisedAndSetTheExitStatus() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let manifest = try Self.manifest(scratch, count: 3, failing: [1])
        let result = try await MuxCtl.run(["batch", manifest, "--jobs", "2"])
        #expect(result.exited && result.status == 3, "\(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("[") }.count == 3)
        #expect(lines.contains { $0.contains("FAILED jobs[1]") && $0.contains("text_file.mp4") })
        #expect(lines.contains { $0.hasPrefix("batch \(manifest): 3 jobs: 2 done, 0 complete already, 1 failed") })
        #expect(lines.contains { $0.hasPrefix("  jobs[1] \(scratch.input("out/job1.mp4")): merge: ") && $0.contains("text_file.mp4") })
        #expect(!result.looksLikeCrash)

        let json = try await MuxCtl.run(["batch", manifest, "--json"])
        #expect(json.status == 3)
        let object = try #require(jsonObject(json.stdout), "\(json)")
        #expect(number(object["failed"]) == 1 && number(object["skipped"]) == 2 && number(object["done"]) == 0)
        let jobs = try #require(object["jobs"] as? [[String: Any]])
        #expect(jobs[1]["errorKind"] as? String == "input")
        #expect((jobs[0]["merge"] as? [String: Any])?["seconds"].flatMap(number).map { abs($0 - 4) < 0.001 } == true)
    }

    @Test(arguments: [
        (#"{"jobs": [{"video": "v.mp4", "audio": "a.m4a", "output": "o.mp4", "fadeOut": "2s"}]}"#, "jobs[0].fadeOut: must be a number of seconds"),
        (#"{"jobs": [{"video": "v.mp4", "audio": "a.m4a"}]}"#, "jobs[0].output: is missing"),
        ("{", "is not JSON"),
    ])
    func aBadManifestIsRefusedBeforeAnyWork(text: String, message: String) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.input("jobs.json")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let result = try await MuxCtl.run(["batch", path], in: scratch.outputs)
        #expect(result.exited && result.status == 2, "\(result)")
        #expect(result.stderrLines.count == 1 && result.firstErrorLine.hasPrefix("error: \(path): ") && result.firstErrorLine.contains(message), "\(result)")
        #expect(scratch.outputFolder.isEmpty)
    }

    @Test func shardOptionsAreChecked() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let manifest = try Self.manifest(scratch, count: 1)
        let noIndex = try await MuxCtl.run(["batch", manifest, "--shards", "2"], environment: ["JOB_COMPLETION_INDEX": ""])
        #expect(noIndex.status == 2 && noIndex.firstErrorLine.contains("JOB_COMPLETION_INDEX"), "\(noIndex)")
        let outOfRange = try await MuxCtl.run(["batch", manifest, "--shard", "2/2"])
        #expect(outOfRange.status == 2 && outOfRange.firstErrorLine.contains("K from 0 to N-1"), "\(outOfRange)")
        let both = try await MuxCtl.run(["batch", manifest, "--shard", "0/2", "--shards", "2"])
        #expect(both.status == 64, "\(both)")
        #expect(!fileExists(scratch.input("out/job0.mp4")))
    }
}
