import ArgumentParser
import MediaMux
import NIOPosix
import Logging

extension MuxCtl {
    struct Batch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the merges and previews a manifest lists, several at once, or one shard of them.",
            discussion: """
            MANIFEST is JSON: {"jobs": [{"video": ..., "audio": ... (a path or URL), "output": ..., <merge options>, \
            "preview": {"sheet": true, "clip": true}}, {"input": ..., "preview": {...}}]}; the merge options take \
            the names of muxctl merge's flags in camelCase (loopAudio, audioOffset, fadeIn...). The whole manifest \
            is checked before any work. A re-run skips what an earlier run completed from the same inputs and \
            options (recorded in a hidden .NAME.mediamux-job file beside each job's output), so a stopped run is \
            simply run again. One job's failure does not stop the others. Exit status: 0 when every job is done \
            or complete, 3 when some failed, 2 for a bad manifest or option.
            """)

        @Argument(help: "The manifest (JSON).") var manifest: String

        @Option(help: ArgumentHelp("Jobs at once (default: the number of cores).", valueName: "n"))
        var jobs: Int?

        @Option(help: ArgumentHelp("Take only shard K of N (K from 0): every N-th job, starting at job K.", valueName: "K/N"))
        var shard: String?

        @Option(
            help: ArgumentHelp(
                "Split the jobs into N shards and take the one $JOB_COMPLETION_INDEX names, as a Kubernetes Indexed Job sets it.",
                valueName: "n"))
        var shards: Int?

        @Option(help: ArgumentHelp("Also write an HTML report (index.html, with every job's contact sheet and preview clip) into this folder.", valueName: "dir"))
        var report: String?

        @Flag(help: "Do every job again, even where an earlier run completed it.")
        var redo = false

        @OptionGroup var download: DownloadFlags
        @OptionGroup var common: CommonOptions

        func validate() throws {
            if let jobs, jobs < 1 || jobs > 256 { throw ValidationError("--jobs must be between 1 and 256") }
            if shard != nil && shards != nil { throw ValidationError("--shard and --shards are two ways to choose a shard; give one") }
            if let shards, shards < 1 { throw ValidationError("--shards must be 1 or more") }
            if download.sha256 != nil { throw ValidationError("--sha256 checks a single download; it cannot go with a batch") }
        }

        /// The shard to run, from --shard or from --shards and the environment.
        func chosenShard() throws(MediaMuxError) -> BatchShard {
            if let shard { return try BatchShard(parsing: shard) }
            guard let shards else { return .whole }
            guard let text = environmentValue("JOB_COMPLETION_INDEX") else {
                throw MediaMuxError.invalidOption(option: "--shards", message: "--shards \(shards) takes the shard from $JOB_COMPLETION_INDEX, which is not set")
            }
            guard let index = Int(text) else {
                throw MediaMuxError.invalidOption(option: "--shards", message: "$JOB_COMPLETION_INDEX must be a whole number, not \"\(text)\"")
            }
            return try BatchShard(index: index, count: shards)
        }

        func run() async throws {
            let concurrency = jobs ?? BatchOptions.cores
            let pool = NIOThreadPool(numberOfThreads: concurrency)
            pool.start()
            defer { pool.shutdownGracefully { _ in } }
            // With a job for every core, each decoder keeps to one thread.
            let engine = common.engine(threadPool: pool, decodingThreads: concurrency >= BatchOptions.cores ? 1 : 0)
            let options = BatchOptions(jobs: concurrency, redo: redo, download: download.options)
            let quiet = common.quiet || common.json
            let printer = BatchPrinter(live: ProgressBar.forStandardError(enabled: !quiet), printsJobs: !quiet)
            let reportFolder = report
            let (outcome, page) = try await runReportingErrors { [manifest] in
                let loaded = try BatchManifest.load(manifest)
                let shard = try chosenShard()
                var plan = loaded
                if let reportFolder { plan = try BatchReportPage.addingPreviews(to: loaded, folder: reportFolder) }
                let outcome = try await engine.runBatch(plan, shard: shard, options: options, progress: printer.show)
                var page: String?
                if let reportFolder { page = try await BatchReportPage.write(outcome, to: reportFolder) }
                return (outcome, page)
            }
            printer.finish()
            if common.json {
                var summary = BatchSummary(outcome)
                summary.report = page
                printJSON(summary)
            } else if !common.quiet {
                print(describe(outcome))
                if let page { print("report: \(page)") }
            } else {
                for job in outcome.jobs where job.status == .failed {
                    printToStandardError("error: jobs[\(job.index)] \(job.name): \(job.error?.description ?? "failed")")
                }
            }
            if outcome.count(.failed) > 0 { throw ExitCode(3) }
        }
    }
}

extension BatchJobReport {
    /// "merge done, sheet skipped".
    var stepsText: String {
        steps.map { "\($0.step.rawValue) \($0.outcome == .notRun ? "not run" : $0.outcome.rawValue)" }.joined(separator: ", ")
    }
}

/// Prints a line as each job ends and keeps a live status line on a terminal.
final class BatchPrinter: Sendable {
    private let live: ProgressBar?
    private let printsJobs: Bool

    init(live: ProgressBar?, printsJobs: Bool) {
        self.live = live
        self.printsJobs = printsJobs
    }

    var show: @Sendable (BatchProgress) -> Void {
        { [self] progress in self.update(progress) }
    }

    private func update(_ progress: BatchProgress) {
        let status = "\(progress.running) running, \(progress.failed) failed" + (progress.remaining.flatMap { $0 > .zero ? ", about \(clockText($0)) left" : nil } ?? "")
        if let job = progress.ended, printsJobs {
            live?.clear()
            let width = String(progress.total).count
            let count = String(repeating: " ", count: width - String(progress.finished).count) + "\(progress.finished)/\(progress.total)"
            var line = "[\(count)] \(job.status == .failed ? "FAILED" : job.status.rawValue) jobs[\(job.index)] \(job.name)"
            if job.status == .failed, let error = job.error {
                line += ": \(error.description)"
            } else {
                line += " (\(job.stepsText); \(fixedPoint(job.elapsed.seconds, decimals: 2)) s)"
            }
            print(line + " - " + status)
        }
        let fraction = progress.total == 0 ? 1 : Double(progress.finished) / Double(progress.total)
        live?.update(fraction: fraction, detail: "\(progress.finished)/\(progress.total) jobs, " + status, force: true)
    }

    func finish() { live?.clear() }
}

/// 75 s -> "1:15".
func clockText(_ duration: Duration) -> String {
    let seconds = Int(duration.seconds.rounded(.up))
    return seconds >= 3600
        ? "\(seconds / 3600):" + twoDigits((seconds / 60) % 60) + ":" + twoDigits(seconds % 60)
        : "\(seconds / 60):" + twoDigits(seconds % 60)
}

private func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

func describe(_ report: BatchReport) -> String {
    let shard = report.shard == .whole ? "" : " (shard \(report.shard.index)/\(report.shard.count))"
    var lines = [
        "batch \(report.manifest)\(shard): \(report.jobs.count) jobs: \(report.count(.done)) done, "
            + "\(report.count(.skipped)) complete already, \(report.count(.failed)) failed, in \(fixedPoint(report.elapsed.seconds, decimals: 2)) s",
    ]
    let failed = report.jobs.filter { $0.status == .failed }
    if !failed.isEmpty {
        lines.append("failed:")
        for job in failed {
            let step = job.steps.first { $0.outcome == .failed }?.step.rawValue ?? "job"
            lines.append("  jobs[\(job.index)] \(job.name): \(step): \(job.error?.description ?? "failed")")
        }
    }
    for job in report.jobs {
        job.warnings.forEach { lines.append("  warning: jobs[\(job.index)] \($0)") }
    }
    return lines.joined(separator: "\n")
}
