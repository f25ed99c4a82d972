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

    /// The jobs a run's lines say it did ("[2/3] done jobs[4] ...").
    static func doneJobs(_ result: RunResult) -> [Int] {
        result.stdout.matches(of: /\] done jobs\[(\d+)\]/).compactMap { Int($0.output.1) }
    }

    /// Checks that the shards' runs together did every job of the manifest
    /// exactly once, each merge 4 s long, and made each shard's report.
    static func checkUnion(_ results: [RunResult], jobs: Int, folder: String, reports: [String]) async throws {
        var done: [Int] = []
        for result in results {
            #expect(result.exited && result.status == 0, "\(result)")
            done += doneJobs(result)
        }
        #expect(done.sorted() == Array(0..<jobs), "\(results)")
        let listing = Scratch.list(folder + "/out")
        for index in 0..<jobs {
            #expect(listing.contains("job\(index).mp4") && listing.contains("job\(index).sheet.png"), "\(listing)")
            let probe = try await probeJSON(folder + "/out/job\(index).mp4")
            #expect(number(probe?["containerDuration"]).map { abs($0 - 4.0) < 0.001 } == true)
        }
        #expect(listing.filter { $0.hasSuffix(".partial") }.isEmpty, "\(listing)")
        for report in reports { #expect(fileExists(report + "/index.html"), "\(report)") }
    }

    /// deploy/kubernetes/muxctl-batch.yaml's args, run as written by as many
    /// processes side by side as its `completions`, each with JOB_COMPLETION_INDEX
    /// set as Kubernetes sets it and `$(JOB_COMPLETION_INDEX)` expanded as
    /// Kubernetes expands it; /shared is a scratch folder.
    @Test func theKubernetesIndexedJobRunsAsWritten() async throws {
        let yaml = try String(contentsOf: MuxCtl.packageRoot.appendingPathComponent("deploy/kubernetes/muxctl-batch.yaml"), encoding: .utf8)
        let argsLine = try #require(yaml.firstMatch(of: /\n\s*args: (\[.*\])\n/)?.output.1)
        let args = try #require(try JSONSerialization.jsonObject(with: Data(argsLine.utf8)) as? [String])
        let completions = try #require(yaml.firstMatch(of: /completions: (\d+)/).flatMap { Int($0.output.1) })
        #expect(completions == 4 && args.first == "batch")

        let scratch = try Scratch()
        defer { scratch.remove() }
        let shared = scratch.root.path
        let manifest = try Self.manifest(scratch, count: 9)
        try FileManager.default.moveItem(atPath: manifest, toPath: shared + "/jobs.json")
        let pods = try (0..<completions).map { index in
            let expanded = args.map {
                $0.replacingOccurrences(of: "/shared", with: shared).replacingOccurrences(of: "$(JOB_COMPLETION_INDEX)", with: "\(index)")
            }
            return try MuxCtl.launch(expanded, environment: ["JOB_COMPLETION_INDEX": "\(index)", "MUXCTL_CACHE_DIR": shared + "/cache"])
        }
        var results: [RunResult] = []
        for pod in pods { results.append(await pod.finish()) }
        for (index, result) in results.enumerated() {
            #expect(Self.doneJobs(result).allSatisfy { $0 % completions == index }, "\(result)")
        }
        try await Self.checkUnion(results, jobs: 9, folder: shared, reports: (0..<completions).map { shared + "/report/shard-\($0)" })

        // A pod started again: everything of its shard is complete, nothing is redone.
        let again = try await MuxCtl.run(
            ["batch", shared + "/jobs.json", "--shards", "\(completions)", "--json"], environment: ["JOB_COMPLETION_INDEX": "1"])
        #expect(again.status == 0 && Self.statuses(again) == ["skipped": [1, 5]], "\(again)")
    }

    /// deploy/github-actions/muxctl-batch.yml's `muxctl batch` step, run as
    /// written for each value of its matrix, in a checkout-like folder.
    @Test func theGitHubActionsMatrixRunsAsWritten() async throws {
        let workflow = try String(contentsOf: MuxCtl.packageRoot.appendingPathComponent("deploy/github-actions/muxctl-batch.yml"), encoding: .utf8)
        let command = try #require(workflow.firstMatch(of: /run: (muxctl batch [^\n]*)\n/)?.output.1)
        let matrix = try #require(workflow.firstMatch(of: /shard: \[([0-9, ]+)\]/)?.output.1)
        let shards = matrix.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        #expect(shards == [0, 1, 2, 3])

        let scratch = try Scratch()
        defer { scratch.remove() }
        let checkout = scratch.root
        try FileManager.default.createDirectory(at: checkout.appendingPathComponent("media"), withIntermediateDirectories: true)
        let manifest = try Self.manifest(scratch, count: 6)
        try FileManager.default.moveItem(atPath: manifest, toPath: checkout.path + "/media/jobs.json")
        var runners: [RunningMuxCtl] = []
        for shard in shards {
            let words = command.replacingOccurrences(of: "${{ matrix.shard }}", with: "\(shard)").split(separator: " ").map(String.init)
            #expect(words.first == "muxctl")
            runners.append(try MuxCtl.launch(Array(words.dropFirst()), in: checkout))
        }
        var results: [RunResult] = []
        for runner in runners { results.append(await runner.finish()) }
        try await Self.checkUnion(results, jobs: 6, folder: checkout.path + "/media", reports: shards.map { checkout.path + "/report-\($0)" })
    }

    @Test func aKilledShardRunAgainCompletesTheSet() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let manifest = try Self.manifest(scratch, count: 8, slow: true)
        let other = try MuxCtl.launch(["batch", manifest, "--shards", "2", "--jobs", "1", "--json"], environment: ["JOB_COMPLETION_INDEX": "0"])
        let victim = try MuxCtl.launch(["batch", manifest, "--shards", "2", "--jobs", "1", "--json"], environment: ["JOB_COMPLETION_INDEX": "1"])
        // Preempted: killed outright 150 ms after its first merge is recorded, while
        // it makes that job's previews. Watched from a thread of its own: the
        // suite's other tests may keep Swift's cooperative threads busy for
        // seconds, and the kill must not wait for them.
        let record = scratch.input("out/.job1.mp4.mediamux-job")
        let pid = victim.pid
        Thread.detachNewThread {
            let deadline = Date().addingTimeInterval(120)
            while !FileManager.default.fileExists(atPath: record) && Date() < deadline { usleep(5_000) }
            usleep(150_000)
            kill(pid, SIGKILL)
        }
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
        #expect(jobs[1]["errorCode"] as? String == "notMedia" && jobs[1]["errorOption"] == nil, "\(jobs[1])")
        #expect((jobs[0]["merge"] as? [String: Any])?["duration"].flatMap(number).map { abs($0 - 4) < 0.001 } == true)
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
