import MediaMuxBase
import MediaMuxCore
import MediaMuxDownload
import MediaMuxPreview

/// How a batch runs.
public struct BatchOptions: Sendable, Equatable {
    /// Jobs at once. Their blocking work runs on the engine's thread pool,
    /// which bounds the threads; give the engine a pool of at least this
    /// many threads for them all to run at once.
    public var jobs: Int
    /// Do every step again, whatever the records say.
    public var redo: Bool
    /// For soundtracks given as URLs: each is downloaded once per batch.
    public var download: DownloadOptions

    /// Options for a batch.
    ///
    /// - Parameters:
    ///   - jobs: Jobs at once, 1 or more (default: the cores).
    ///   - redo: Do every step again, whatever the records say.
    ///   - download: How soundtracks given as URLs are downloaded.
    public init(jobs: Int = BatchOptions.cores, redo: Bool = false, download: DownloadOptions = DownloadOptions()) {
        self.jobs = jobs
        self.redo = redo
        self.download = download
    }

    /// This machine's processors online.
    public static var cores: Int { processorCount }
}

extension MuxEngine {
    /// Runs the jobs of `manifest` that `shard` takes, `options.jobs` at a
    /// time, and returns what became of each. One job's failure does not stop
    /// the others: it is in its `BatchJobReport`.
    ///
    /// Each job merges (when it is a merge job), then makes its contact sheet
    /// and preview clip (when asked). A step is skipped when the record beside
    /// the job's outputs says an earlier run made it from the same inputs
    /// (same size and modification time; a URL's body by its SHA-256), the
    /// same entry of the manifest and the same MediaMux version, and its
    /// output still is as that run left it; otherwise its outputs are
    /// replaced. Records are written after each step, so a run that is killed
    /// loses at most the steps it was running. A URL several jobs share is
    /// downloaded once.
    ///
    /// - Parameters:
    ///   - manifest: The jobs, as `BatchManifest.load` read them.
    ///   - shard: Which of them to run (default: all).
    ///   - options: How many at once, whether to redo complete steps, how to download.
    ///   - progress: Called each time a job starts or ends, never two at once,
    ///     on the thread that started or ended it: keep it short.
    /// - Returns: Every job of the shard, in the manifest's order, done, skipped or failed.
    /// - Throws: `MediaMuxError.cancelled(path:)` naming the manifest when the
    ///   Task is cancelled, once the running jobs have stopped (each leaves no
    ///   temporary file behind); `invalidOption` when `options.jobs` is less than 1.
    public func runBatch(
        _ manifest: BatchManifest, shard: BatchShard = .whole, options: BatchOptions = BatchOptions(),
        progress: (@Sendable (BatchProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> BatchReport {
        guard options.jobs >= 1 else { throw MediaMuxError.invalidOption(option: "BatchOptions.jobs", message: "a batch runs at least 1 job at a time, not \(options.jobs)") }
        let clock = ContinuousClock()
        let start = clock.now
        let jobs = shard.jobs(of: manifest)
        TemporaryOutput.removeLeftovers(of: jobs.flatMap { $0.writes + [BatchRecord.path(for: $0)] })
        let downloads = SharedDownloads(engine: self, options: options.download, scratchBeside: jobs.first?.writes.first ?? manifest.path)
        defer { downloads.removeScratch() }
        let tally = BatchTally(total: jobs.count, start: start, progress: progress)
        var reports: [BatchJobReport] = []
        await withTaskCancellationHandler {
            await withTaskGroup(of: BatchJobReport.self) { group in
                var next = 0
                func startNext() {
                    let job = jobs[next]
                    next += 1
                    tally.started()
                    group.addTask { await self.run(job, redo: options.redo, downloads: downloads) }
                }
                while next < min(options.jobs, jobs.count) { startNext() }
                for await report in group {
                    reports.append(report)
                    tally.ended(report)
                    if next < jobs.count && !Task.isCancelled { startNext() }
                }
            }
        } onCancel: {
            downloads.cancelAll()
        }
        if Task.isCancelled { throw MediaMuxError.cancelled(path: manifest.path) }
        return BatchReport(
            manifest: manifest.path, shard: shard, jobs: reports.sorted { $0.index < $1.index }, elapsed: clock.now - start)
    }

    /// A batch as one asynchronous sequence: a progress event each time a
    /// job starts or ends, then the report, as `runBatch(_:shard:options:progress:)`
    /// gives them. The batch starts when iteration starts; leaving the loop
    /// early cancels it: the running jobs stop and leave nothing half-made
    /// (the jobs already done keep their outputs and records).
    ///
    /// - Parameters:
    ///   - manifest: The jobs, as `BatchManifest.load` read them.
    ///   - shard: Which of them to run (default: all).
    ///   - options: How many at once, whether to redo complete steps, how to download.
    /// - Returns: The events; iterating them throws what `runBatch` throws.
    public func events(
        for manifest: BatchManifest, shard: BatchShard = .whole, options: BatchOptions = BatchOptions()
    ) -> ProgressEvents<BatchProgress, BatchReport> {
        ProgressEvents(subject: manifest.path) { progress throws(MediaMuxError) in
            try await runBatch(manifest, shard: shard, options: options, progress: progress)
        }
    }

    /// One job's steps, in order; never throws: what fails is in the report.
    private func run(_ job: BatchJob, redo: Bool, downloads: SharedDownloads) async -> BatchJobReport {
        // The job's messages, FFmpeg's lines included, say which job they are about.
        var logger = merging.runtime.logger
        logger[metadataKey: "job"] = "\(job.index)"
        let engine = logging(to: logger)
        let clock = ContinuousClock()
        let start = clock.now
        var report = BatchJobReport(job: job, status: .skipped, steps: [], warnings: [], elapsed: .zero)
        var record = BatchRecord.load(for: job)
        let steps = JobSteps(job: job, redo: redo)
        do {
            // The manifest names the outputs; their folders are made as needed.
            for folder in Set(job.writes.map { folderPart(of: $0) }) { try makeFolders(folder) }
        } catch {
            // Charged to the job's first step.
            if case .preview = job.work { report.fail(job.sheet != nil ? .sheet : .clip, error) } else { report.fail(.merge, error) }
            report.elapsed = clock.now - start
            return report
        }

        // The job's own output, a merge's or a composition's: its inputs
        // (the soundtrack last, downloaded when it is a URL), and how it is made.
        let made: (inputs: [String], audio: String?, output: String, make: @Sendable (String?) async throws(MediaMuxError) -> MergeReport)?
        switch job.work {
        case .merge(let video, let audio, let output, var options):
            options.overwrite = true
            made = ([video], audio, output, { [options] audioPath throws(MediaMuxError) in
                try await engine.merging.merge(video: video, audio: audioPath ?? audio, output: output, options: options)
            })
        case .compose(var composition, let output):
            composition.options.overwrite = true
            made = (composition.clips.map(\.path), composition.soundtrack, output, { [composition] audioPath throws(MediaMuxError) in
                var composition = composition
                composition.soundtrack = audioPath
                return try await engine.merging.compose(composition, output: .file(output))
            })
        case .preview:
            made = nil
        }
        if let made {
            do {
                var stamps = made.inputs.map { FileStamp.of($0) ?? FileStamp(name: $0, bytes: -1) }
                var audioPath: String?
                if let audio = made.audio {
                    let (path, stamp, fetched) = try await downloads.resolve(audio)
                    report.warnings += fetched?.warnings ?? []
                    audioPath = path
                    stamps.append(stamp)
                }
                let key = steps.key(job.settings.work, inputs: stamps)
                switch steps.decide(.merge, key: key, record: record, output: made.output) {
                case .skip:
                    report.merge = record.steps[.merge]?.merge
                    report.steps.append(.init(step: .merge, outcome: .skipped))
                case .run(let reason):
                    let facts = MergeFacts(batch: try await made.make(audioPath))
                    report.merge = facts
                    try steps.made(.merge, key: key, output: made.output, in: &record) { $0.merge = facts }
                    report.steps.append(.init(step: .merge, outcome: .done, reason: reason))
                }
                report.warnings += report.merge?.warnings ?? []
            } catch {
                // The record stays as it was: a step it holds that no longer
                // matches is redone next time anyway, and one that still does
                // (a download that failed before anything was decided) stays valid.
                report.fail(.merge, error)
                for step in [BatchJobReport.Step.sheet, .clip] where step == .sheet ? job.sheet != nil : job.clip != nil {
                    report.steps.append(.init(step: step, outcome: .notRun))
                }
                report.elapsed = clock.now - start
                return report
            }
        }

        let source = job.previewSource
        let sourceStamp = FileStamp.of(source) ?? FileStamp(name: source, bytes: -1)
        if let sheet = job.sheet {
            await preview(
                .sheet, settings: job.settings.sheet, source: sourceStamp, output: sheet.path, recorded: \.image, reported: \.sheet,
                steps: steps, record: &record, report: &report
            ) {
                ImageFacts(try await engine.previews.contactSheet(of: source, output: sheet.path, options: sheet.options, overwrite: true))
            }
        }
        if let clip = job.clip {
            await preview(
                .clip, settings: job.settings.clip, source: sourceStamp, output: clip.path, recorded: \.clip, reported: \.clip,
                steps: steps, record: &record, report: &report
            ) {
                ClipFacts(try await engine.previews.previewClip(PreviewClipJob(input: source, output: clip.path, options: clip.options, overwrite: true)))
            }
        }
        if report.status != .failed, report.steps.contains(where: { $0.outcome == .done }) { report.status = .done }
        report.elapsed = clock.now - start
        return report
    }

    /// A preview step (the sheet or the clip) of a job: skipped when the
    /// record says it is complete, else made, recorded at once and reported;
    /// a failure is reported and leaves the record as it was.
    private func preview<Facts: Sendable>(
        _ step: BatchJobReport.Step, settings: String, source: FileStamp, output: String,
        recorded: WritableKeyPath<BatchRecord.Step, Facts?>, reported: WritableKeyPath<BatchJobReport, Facts?>,
        steps: JobSteps, record: inout BatchRecord, report: inout BatchJobReport,
        make: () async throws -> Facts
    ) async {
        let key = steps.key(settings, inputs: [source])
        do {
            switch steps.decide(step, key: key, record: record, output: output) {
            case .skip:
                report[keyPath: reported] = record.steps[step]?[keyPath: recorded]
                report.steps.append(.init(step: step, outcome: .skipped))
            case .run(let reason):
                let facts = try await make()
                report[keyPath: reported] = facts
                try steps.made(step, key: key, output: output, in: &record) { $0[keyPath: recorded] = facts }
                report.steps.append(.init(step: step, outcome: .done, reason: reason))
            }
        } catch {
            report.fail(step, error)
        }
    }
}

extension BatchRecord {
    /// Steps by name.
    fileprivate subscript(step: BatchJobReport.Step) -> Step? {
        get { steps[step.rawValue] }
        set { steps[step.rawValue] = newValue }
    }
}

extension Dictionary where Key == String, Value == BatchRecord.Step {
    fileprivate subscript(step: BatchJobReport.Step) -> Value? {
        get { self[step.rawValue] }
        set { self[step.rawValue] = newValue }
    }
}

extension BatchJobReport {
    init(job: BatchJob, status: Status, steps: [StepOutcome], warnings: [String], elapsed: Duration) {
        self.job = job
        self.status = status
        self.steps = steps
        self.warnings = warnings
        self.elapsed = elapsed
    }

    fileprivate mutating func fail(_ step: Step, _ error: any Error) {
        let error = error as? MediaMuxError ?? MediaMuxError(error, subject: job.previewSource)
        steps.append(StepOutcome(step: step, outcome: .failed, reason: error.description))
        if status != .failed { self.error = error }
        status = .failed
    }
}

/// The keys and decisions of one job's steps.
private struct JobSteps {
    let job: BatchJob
    let redo: Bool

    func key(_ settings: String, inputs: [FileStamp]) -> StepKey {
        StepKey(version: MuxEngine.version, settings: settings, inputs: inputs)
    }

    func decide(_ step: BatchJobReport.Step, key: StepKey, record: BatchRecord, output: String) -> StepDecision {
        StepDecision.decide(wanted: key, recorded: record.steps[step], output: FileStamp.of(output), force: redo)
    }

    /// Records a step as made, at once: a kill after this loses nothing of it.
    func made(
        _ step: BatchJobReport.Step, key: StepKey, output: String, in record: inout BatchRecord,
        facts: (inout BatchRecord.Step) -> Void
    ) throws(MediaMuxError) {
        guard let stamp = FileStamp.of(output) else { throw MediaMuxError.fileNotFound(path: output) }
        var entry = BatchRecord.Step(key: key, output: stamp)
        facts(&entry)
        record.steps[step] = entry
        try record.store(for: job)
    }
}

/// Downloads each URL of a batch once, however many jobs share it; the
/// jobs that come later wait for the first one's download.
private final class SharedDownloads: Sendable {
    private let engine: MuxEngine
    private let options: DownloadOptions
    /// Without the cache, downloads go to hidden files beside this path,
    /// removed when the batch ends.
    private let scratchBeside: String
    private let started = Locked<(tasks: [String: Task<DownloadResult, any Error>], scratch: [String])>(([:], []))

    init(engine: MuxEngine, options: DownloadOptions, scratchBeside: String) {
        self.engine = engine
        self.options = options
        self.scratchBeside = scratchBeside
    }

    /// The file to read for `audio` (itself, when it is a path), its stamp,
    /// and the download that fetched it.
    func resolve(_ audio: String) async throws(MediaMuxError) -> (String, FileStamp, DownloadResult?) {
        guard DownloadEngine.looksLikeURL(audio) else {
            return (audio, FileStamp.of(audio) ?? FileStamp(name: audio, bytes: -1), nil)
        }
        let task = started.withLock { state in
            if let running = state.tasks[audio] { return running }
            var scratch: String?
            if !options.useCache {
                scratch = TemporaryOutput(finalPath: scratchBeside).path + ".audio"
                state.scratch.append(scratch!)
            }
            let task = Task { [engine, options] () async throws -> DownloadResult in
                try DownloadEngine.checkURL(audio)
                if let scratch {
                    var once = options
                    once.keepsPartialForResume = false
                    return try await engine.download(audio, to: scratch, overwrite: true, options: once)
                }
                return try await engine.download(audio, options: options)
            }
            state.tasks[audio] = task
            return task
        }
        do {
            // The download runs in its own Task, shared by the jobs that
            // need it: one job's cancellation does not end it for the others
            // (the batch's own cancellation does, see cancelAll).
            let fetched = try await task.value
            try Task.checkCancellation()
            return (fetched.path, FileStamp(name: audio, bytes: fetched.bytes, sha256: fetched.sha256), fetched)
        } catch {
            throw MediaMuxError(error, subject: audio)
        }
    }

    /// Stops every download: the batch is cancelled, and jobs waiting for
    /// one must not wait for it to finish.
    func cancelAll() {
        started.withLock { Array($0.tasks.values) }.forEach { $0.cancel() }
    }

    func removeScratch() {
        cancelAll()
        for path in started.withLock({ $0.scratch }) { removeFile(path) }
    }
}

/// Counts jobs as they start and end, and tells `progress`.
private final class BatchTally: Sendable {
    private let progress: (@Sendable (BatchProgress) -> Void)?
    private let start: ContinuousClock.Instant
    private let state: Locked<BatchProgress>
    /// Jobs that did work (not skipped) and when the first began, for the time left.
    private let pace = Locked<(worked: Int, since: ContinuousClock.Instant?)>((0, nil))

    init(total: Int, start: ContinuousClock.Instant, progress: (@Sendable (BatchProgress) -> Void)?) {
        self.progress = progress
        self.start = start
        state = Locked(BatchProgress(total: total, finished: 0, failed: 0, skipped: 0, running: 0))
    }

    func started() {
        report { $0.running += 1; $0.ended = nil }
    }

    func ended(_ job: BatchJobReport) {
        report { state in
            state.running -= 1
            state.finished += 1
            if job.status == .failed { state.failed += 1 }
            if job.status == .skipped { state.skipped += 1 }
            state.ended = job
            let elapsed = ContinuousClock.now - start
            // Skipped jobs take no time; the pace is that of the others.
            let worked = state.finished - state.skipped
            let left = state.total - state.finished
            state.remaining = left == 0 ? .zero : worked == 0 ? nil : elapsed / worked * left
        }
    }

    private func report(_ change: (inout BatchProgress) -> Void) {
        // Under the lock, so that reports never overlap or go out of order.
        state.withLock { state in
            change(&state)
            progress?(state)
        }
    }
}
