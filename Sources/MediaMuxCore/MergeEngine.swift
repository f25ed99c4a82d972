@_exported import MediaMuxBase
import Logging
public import SystemPackage

/// Probing, planning and merging by stream copy, with the soundtrack
/// encoded AAC when it cannot be copied: the core, with no pictures decoded
/// and no network.
///
/// - Threads: FFmpeg's calls block, so all work runs on the runtime's thread
///   pool, never on the caller's task. A `progress` callback runs on the pool
///   thread doing the merge, at most ten times a second and never two at
///   once for one call, the last with `fraction` 1; keep it short.
/// - Errors: every call throws `MediaMuxError` alone; each call lists the
///   cases it throws. Any call may also throw `.unexpected`, which is a
///   defect to report.
/// - Cancellation: cancelling the calling Task stops the work at the next
///   packet (or FFmpeg's next read) and the call throws
///   `MediaMuxError.cancelled(path:)`, leaving no output and no temporary file.
public struct MergeEngine: RuntimeEngine {
    /// Where the blocking work runs and where warnings and FFmpeg's messages go.
    public var runtime: MediaRuntime

    /// An engine that works on `runtime`'s thread pool and logs to its logger.
    ///
    /// - Parameter runtime: Where the blocking work runs and where messages go;
    ///   by default NIO's shared blocking pool and no logging.
    public init(runtime: MediaRuntime = MediaRuntime()) {
        self.runtime = runtime
    }

    /// What MediaMux sees in a media file: its container, its streams, and
    /// where each stream's presentation starts and ends.
    ///
    /// MP4 and MOV files are read from their sample tables and edit lists;
    /// containers without an exact index (Matroska, MP3, Ogg, WAV) by reading
    /// every packet, which takes longer.
    ///
    /// - Parameter path: The media file.
    /// - Returns: The file's facts, free of FFmpeg types.
    /// - Throws: `MediaMuxError`: `.fileNotFound`, `.notAFile` or `.unreadable`
    ///   when the file cannot be opened; `.notMedia` when it is empty or no
    ///   format MediaMux reads recognises it; `.damaged` when its container
    ///   cannot be read through; `.ffmpeg` when an FFmpeg call fails;
    ///   `.cancelled` when the Task is cancelled; `.runtimeStopped` when the
    ///   runtime's thread pool has shut down.
    public func probe(_ path: String) async throws(MediaMuxError) -> MediaInfo {
        try await typedErrors(subject: path) {
            try await runFFmpeg(runtime) { flag in try Prober(cancellation: flag).probe(path: path) }
        }
    }

    /// What MediaMux sees in a media file, named by a `FilePath`; see `probe(_:)`.
    ///
    /// - Parameter path: The media file.
    /// - Returns: The file's facts.
    /// - Throws: `MediaMuxError`, as `probe(_:)` with a `String` path does.
    public func probe(_ path: FilePath) async throws(MediaMuxError) -> MediaInfo {
        try await probe(path.string)
    }

    /// Every decision a merge would make, without writing anything: which
    /// streams, where the output ends and why, the rotation and why, whether
    /// the soundtrack is copied or encoded, where the movie header goes.
    /// `execute(_:progress:)` carries the plan out.
    ///
    /// - Parameters:
    ///   - video: The file whose video stream is copied.
    ///   - audio: The file whose audio stream becomes the soundtrack.
    ///   - output: The file to write: .mp4, .m4v or .mov.
    ///   - options: Everything beyond the three paths.
    /// - Returns: The plan.
    /// - Throws: `MediaMuxError`: what `probe(_:)` throws, for either input;
    ///   for the output, `.unsupportedOutputExtension` (not .mp4, .m4v or
    ///   .mov), `.outputNotWritable` (a folder), `.outputDirectoryMissing`,
    ///   and `.outputExists` unless `options.overwrite`; for the streams,
    ///   `.noStream`, `.streamIndexOutOfRange`, `.unknownDuration`,
    ///   `.damaged` (a video without a picture size, a soundtrack that starts
    ///   after the video ends) and `.codecNotSupportedInContainer` (a video
    ///   codec the container cannot hold, or a soundtrack that must be
    ///   copied but cannot be); `.invalidOption` for an output that is one
    ///   of the inputs, a rotation other than 0, 90, 180 or 270, and audio
    ///   options out of range or contradicting each other (see
    ///   `AudioOptions` and `OriginalAudio`).
    public func plan(
        video: String, audio: String, output: String, options: MergeOptions = MergeOptions()
    ) async throws(MediaMuxError) -> MergePlan {
        try await plan(video: video, audio: audio, output: .file(output), options: options)
    }

    /// The same for any output: a file, or a stream (planned as fragmented
    /// MP4, as `merge(video:audio:to:options:progress:)` and
    /// `body(video:audio:name:options:progress:)` carry it out).
    ///
    /// - Throws: `MediaMuxError`, as `plan(video:audio:output:options:)`
    ///   does; for a stream, none of the output file's errors.
    public func plan(
        video: String, audio: String, output: MergeOutput, options: MergeOptions = MergeOptions()
    ) async throws(MediaMuxError) -> MergePlan {
        try await plan(.merge(video: video, audio: audio, options: options), output: output)
    }

    /// The plan of a merge or a composition into `output`.
    package func plan(_ source: PlanSource, output: MergeOutput) async throws(MediaMuxError) -> MergePlan {
        let isStream: Bool
        if case .stream = output { isStream = true } else { isStream = false }
        return try await typedErrors(subject: output.name) {
            try await runFFmpeg(runtime) { flag in
                try source.plan(output: output.name, isStream: isStream, flag: flag).plan
            }
        }
    }

    /// Merges the first video stream of `video` with the first audio stream of
    /// `audio` into `output` by stream copy (the audio encoded AAC where the
    /// output cannot carry it, or as `options.audio` asks), ending where the
    /// shorter one ends.
    /// The output appears under its name only once it is complete.
    ///
    /// - Parameters:
    ///   - video: The file whose video stream is copied.
    ///   - audio: The file whose audio stream becomes the soundtrack.
    ///   - output: The file to write: .mp4, .m4v or .mov. It is written to a
    ///     file with no name in its folder (a hidden one where the file
    ///     system has none) and named when complete.
    ///   - options: Everything beyond the three paths.
    ///   - progress: Called with how far the merge has come, on the pool
    ///     thread doing it, at most ten times a second, the last time with
    ///     `fraction` 1.
    /// - Returns: What was written.
    /// - Throws: `MediaMuxError`: what `probe(_:)` throws, for either input;
    ///   for the output, `.unsupportedOutputExtension` (not .mp4, .m4v or
    ///   .mov), `.outputNotWritable` (a folder), `.outputDirectoryMissing`,
    ///   and `.outputExists` unless `options.overwrite`; for the streams,
    ///   `.noStream`, `.streamIndexOutOfRange`, `.unknownDuration`,
    ///   `.damaged` (a video without a picture size, a soundtrack that starts
    ///   after the video ends) and `.codecNotSupportedInContainer` (a video
    ///   codec the container cannot hold, or a soundtrack that must be
    ///   copied but cannot be); `.invalidOption` for an output that is one
    ///   of the inputs, a rotation other than 0, 90, 180 or 270, and audio
    ///   options out of range or contradicting each other (see
    ///   `AudioOptions` and `OriginalAudio`).
    ///   While writing: `.damaged` when an input's packets cannot be read
    ///   (or a file changed since it was probed), `.ffmpeg` when the muxer or
    ///   the audio encoder fails, `.outputNotWritable` when the output cannot
    ///   be written or moved into place, `.outputExists` when a file
    ///   appeared under its name meanwhile (without `overwrite`),
    ///   `.invalidOption` when a soundtrack to bring to a loudness is silent;
    ///   `.cancelled` when the Task is cancelled; `.runtimeStopped` when the
    ///   runtime's thread pool has shut down.
    public func merge(
        video: String, audio: String, output: String, options: MergeOptions = MergeOptions(),
        progress: (@Sendable (MergeProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> MergeReport {
        try await merge(video: video, audio: audio, output: output, options: options, progress: progress, observing: { _, _ in nil })
    }

    /// Merges as `merge(video:audio:output:options:progress:)` does, as
    /// fragmented MP4 streamed as it is made (see `OutputLayout.fragmented`):
    /// into a Swift server's response, or standard output. Nothing is
    /// written to disk, and the merge holds one fragment at a time.
    ///
    /// ```swift
    /// let stream = MergeStream(name: "response") { chunk in try await body.write(chunk) }
    /// let report = try await engine.merge(video: video, audio: audio, to: stream)
    /// ```
    ///
    /// - Parameters:
    ///   - video: The file whose video stream is copied.
    ///   - audio: The file whose audio stream becomes the soundtrack.
    ///   - stream: Where the bytes go.
    ///   - options: Everything beyond the inputs; `layout` and `faststart`
    ///     do not apply (a stream is always fragmented, its header first).
    ///   - progress: Called with how far the merge has come, on the pool thread doing it.
    /// - Returns: What was written; `fileBytes` counts the bytes streamed.
    /// - Throws: `MediaMuxError`, as `merge(video:audio:output:options:progress:)`
    ///   does, less the output file's errors; `.outputNotWritable` naming
    ///   the stream when its writer throws or standard output's reader
    ///   stops reading. What was streamed before an error is not a whole file.
    public func merge(
        video: String, audio: String, to stream: MergeStream, options: MergeOptions = MergeOptions(),
        progress: (@Sendable (MergeProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> MergeReport {
        try await merge(video: video, audio: audio, output: .stream(stream), options: options, progress: progress, observing: { _, _ in nil })
    }

    /// The merge of `video` and `audio` as `merge(video:audio:to:options:progress:)`
    /// makes it, as a body its consumer pulls (a server's response body):
    /// planned, its inputs opened and its header made before this returns,
    /// so that every error that can be known before the first byte is
    /// thrown here, before a response is begun. See `MergeBody`.
    ///
    /// ```swift
    /// let body = try await engine.body(video: video, audio: audio, name: "response")
    /// return Response(status: .ok, body: ResponseBody(asyncSequence: body))
    /// ```
    ///
    /// - Parameters:
    ///   - video: The file whose video stream is copied.
    ///   - audio: The file whose audio stream becomes the soundtrack.
    ///   - name: The body as errors and the report name it ("response").
    ///   - options: Everything beyond the inputs; `layout` and `faststart`
    ///     do not apply (a body is always fragmented, its header first).
    ///   - progress: Called with how far the merge has come, on the pool
    ///     thread advancing it.
    /// - Returns: The body, whose `plan` says every decision.
    /// - Throws: `MediaMuxError`: what `plan(video:audio:output:options:)`
    ///   throws, less the output file's errors; `.damaged` for an input that
    ///   cannot be opened as planned or has no packet; `.ffmpeg` when the
    ///   muxer or an encoder refuses the streams; `.cancelled`;
    ///   `.runtimeStopped`. The sequence throws the errors found later (see `MergeBody`).
    public func body(
        video: String, audio: String, name: String, options: MergeOptions = MergeOptions(),
        progress: (@Sendable (MergeProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> MergeBody {
        try await body(video: video, audio: audio, name: name, options: options, progress: progress, cleanup: nil)
    }

    /// The same, with work to do once the body has ended or is dropped
    /// (removing a soundtrack downloaded for it alone).
    package func body(
        video: String, audio: String, name: String, options: MergeOptions,
        progress: (@Sendable (MergeProgress) -> Void)?, cleanup: (@Sendable () -> Void)?,
        observing: @escaping @Sendable (MergePlan, StreamInfo) throws -> PacketObserving? = { _, _ in nil }
    ) async throws(MediaMuxError) -> MergeBody {
        try await body(
            .merge(video: video, audio: audio, options: options), name: name, progress: progress, cleanup: cleanup, observing: observing)
    }

    /// The body of a merge or a composition; see `body(video:audio:name:options:progress:)`.
    package func body(
        _ source: PlanSource, name: String,
        progress: (@Sendable (MergeProgress) -> Void)?, cleanup: (@Sendable () -> Void)?,
        observing: @escaping @Sendable (MergePlan, StreamInfo) throws -> PacketObserving? = { _, _ in nil }
    ) async throws(MediaMuxError) -> MergeBody {
        let runtime = runtime
        let flag = CancellationFlag()
        do {
            let merge = try await typedErrors(subject: name) {
                try await runFFmpeg(runtime, raising: flag) { flag in
                    let (plan, stream) = try source.plan(output: name, isStream: true, flag: flag)
                    let observer = try stream.flatMap { try observing(plan, $0) }
                    let chunks = ChunkQueue(name: name)
                    let remuxer = Remuxer(plan: plan, destination: .stream(chunks), cancellation: flag, progress: progress, observing: observer)
                    try remuxer.start()
                    return PulledMerge(plan: plan, remuxer: remuxer, chunks: chunks, runtime: runtime, flag: flag, cleanup: cleanup)
                }
            }
            return MergeBody(merge: merge)
        } catch {
            cleanup?()
            throw error
        }
    }

    /// The same, with an observer of the video packets copied, made from the
    /// plan and the video's probed facts (nil for none).
    package func merge(
        video: String, audio: String, output: String, options: MergeOptions,
        progress: (@Sendable (MergeProgress) -> Void)?,
        observing: @escaping @Sendable (MergePlan, StreamInfo) throws -> PacketObserving?
    ) async throws(MediaMuxError) -> MergeReport {
        try await merge(video: video, audio: audio, output: .file(output), options: options, progress: progress, observing: observing)
    }

    package func merge(
        video: String, audio: String, output: MergeOutput, options: MergeOptions,
        progress: (@Sendable (MergeProgress) -> Void)?,
        observing: @escaping @Sendable (MergePlan, StreamInfo) throws -> PacketObserving?
    ) async throws(MediaMuxError) -> MergeReport {
        try await run(.merge(video: video, audio: audio, options: options), output: output, progress: progress, observing: observing)
    }

    /// Plans and carries out a merge or a composition into a file or a stream.
    package func run(
        _ source: PlanSource, output: MergeOutput, progress: (@Sendable (MergeProgress) -> Void)?,
        observing: @escaping @Sendable (MergePlan, StreamInfo) throws -> PacketObserving?
    ) async throws(MediaMuxError) -> MergeReport {
        let runtime = runtime
        return try await typedErrors(subject: output.name) {
            @Sendable func run(_ destination: MergeDestination, flag: CancellationFlag) throws -> MergeReport {
                let (plan, stream) = try source.plan(output: output.name, isStream: destination.isStream, flag: flag)
                let observer = try stream.flatMap { try observing(plan, $0) }
                let execution = try Remuxer(plan: plan, destination: destination, cancellation: flag, progress: progress, observing: observer).run()
                return MergeReport(plan: plan, execution: execution)
            }
            switch output {
            case .file:
                return try await runFFmpeg(runtime) { flag in try run(.file, flag: flag) }
            case .stream(let stream):
                switch stream.target {
                case .standardOutput:
                    return try await runFFmpeg(runtime) { flag in try run(.stream(DescriptorSink.standardOutput()), flag: flag) }
                case .writer(let write):
                    let body = try await body(source, name: stream.name, progress: progress, cleanup: nil, observing: observing)
                    return try await MergeStream.drain(body, name: stream.name, into: write)
                case .pulled:
                    throw MediaMuxError.invalidOption(
                        option: "output", message: "\(stream.name) is a body to pull: MuxEngine.body(for:) makes it, not a merge that writes")
                }
            }
        }.logged(to: runtime.logger)
    }

    /// Carries out an existing plan, as `plan(video:audio:output:options:)`
    /// made it (or as a caller edited it). The plan names its inputs'
    /// streams by index: a file that changed since it was planned fails
    /// with `.damaged` rather than copying the wrong stream.
    ///
    /// - Parameters:
    ///   - plan: The decisions to carry out.
    ///   - progress: Called with how far the merge has come, on the pool
    ///     thread doing it, at most ten times a second.
    /// - Returns: What was written.
    /// - Throws: `MediaMuxError`: `.fileNotFound`, `.notAFile`, `.unreadable`,
    ///   `.notMedia` or `.damaged` for an input that cannot be opened as
    ///   planned;
    ///   then, while writing, `.damaged` when an input's packets cannot be read
    ///   (or a file changed since it was probed), `.ffmpeg` when the muxer or
    ///   the audio encoder fails, `.outputNotWritable` when the output cannot
    ///   be written or moved into place, `.outputExists` when a file
    ///   appeared under its name meanwhile (without `overwrite`),
    ///   `.invalidOption` when a soundtrack to bring to a loudness is silent;
    ///   `.cancelled` when the Task is cancelled; `.runtimeStopped` when the
    ///   runtime's thread pool has shut down.
    public func execute(
        _ plan: MergePlan, progress: (@Sendable (MergeProgress) -> Void)? = nil
    ) async throws(MediaMuxError) -> MergeReport {
        try await typedErrors(subject: plan.outputPath) {
            try await runFFmpeg(runtime) { flag in
                MergeReport(plan: plan, execution: try Remuxer(plan: plan, cancellation: flag, progress: progress).run())
            }
        }.logged(to: runtime.logger)
    }
}

extension MergeReport {
    /// Logs the report's warnings, which the caller also gets in it.
    func logged(to logger: Logger) -> MergeReport {
        for warning in warnings { logger.warning("\(warning)", metadata: ["output": "\(output)"]) }
        logger.debug("merged", metadata: ["output": "\(output)", "seconds": "\(duration.secondsText())"])
        return self
    }
}
