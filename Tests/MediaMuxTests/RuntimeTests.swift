import AsyncHTTPClient
import Foundation
import Logging
import NIOPosix
import Testing
import TestSupport
@testable import MediaMux
@testable import MediaMuxCore

/// What a caller gives MediaMux to run on: its own thread pool, logger and
/// HTTP client, and the errors it gets back.
@Suite("runtime")
struct RuntimeTests {
    /// A LogHandler that keeps what it is given.
    final class Recorder: Sendable {
        struct Entry: Sendable {
            var level: Logger.Level
            var message: String
            var source: String?
            /// The logger's metadata and the line's, as strings.
            var metadata: [String: String] = [:]
        }
        private let entries = Locked<[Entry]>([])
        var all: [Entry] { entries.withLock { $0 } }

        func logger(level: Logger.Level = .info) -> Logger {
            var logger = Logger(label: "test", factory: { _ in Handler(recorder: self) })
            logger.logLevel = level
            return logger
        }

        struct Handler: LogHandler {
            let recorder: Recorder
            var metadata: Logger.Metadata = [:]
            var logLevel: Logger.Level = .trace
            subscript(metadataKey key: String) -> Logger.Metadata.Value? {
                get { metadata[key] }
                set { metadata[key] = newValue }
            }
            func log(event: LogEvent) {
                let source = event.metadata?["source"].map { "\($0)" }
                let all = metadata.merging(event.metadata ?? [:]) { $1 }.mapValues { "\($0)" }
                recorder.entries.withLock {
                    $0.append(Entry(level: event.level, message: "\(event.message)", source: source, metadata: all))
                }
            }
        }
    }

    /// FFmpeg's complaints about a file reach the caller's logger at their
    /// levels; the default runtime's logger discards them.
    @Test(Samples.required) func ffmpegMessagesGoToTheCallersLogger() async throws {
        let recorder = Recorder()
        let engine = MergeEngine(runtime: MediaRuntime(logger: recorder.logger()))
        _ = try? await engine.probe(Samples.path("fuzz_two_moov_no_mdat_bad_timescale.mp4"))
        let fromFFmpeg = recorder.all.filter { $0.source == "ffmpeg" }
        #expect(fromFFmpeg.contains { $0.level == .error && $0.message.contains("mdhd time scale") }, "\(fromFFmpeg.map(\.message))")
        #expect(fromFFmpeg.contains { $0.level == .warning && $0.message.contains("duplicated MOOV") }, "\(fromFFmpeg.map(\.message))")

        // A logger at .error gets the error and not the warning.
        let quieter = Recorder()
        _ = try? await MergeEngine(runtime: MediaRuntime(logger: quieter.logger(level: .error)))
            .probe(Samples.path("fuzz_two_moov_no_mdat_bad_timescale.mp4"))
        #expect(quieter.all.contains { $0.message.contains("mdhd time scale") })
        #expect(!quieter.all.contains { $0.message.contains("duplicated MOOV") })
    }

    /// A logger given for one job (a request's, with its id) gets that job's
    /// FFmpeg lines with its metadata and the object that wrote them; the
    /// engine's own logger gets none of them.
    @Test(Samples.required) func aJobsLoggerGetsItsFFmpegLines() async throws {
        let engineLog = Recorder()
        let requestLog = Recorder()
        let engine = MuxEngine(runtime: MediaRuntime(logger: engineLog.logger()))
        var logger = requestLog.logger()
        logger[metadataKey: "request"] = "42"
        _ = try? await engine.logging(to: logger).probe(Samples.path("fuzz_two_moov_no_mdat_bad_timescale.mp4"))
        let lines = requestLog.all.filter { $0.source == "ffmpeg" }
        #expect(lines.contains { $0.message.contains("mdhd time scale") }, "\(lines.map(\.message))")
        #expect(lines.allSatisfy { $0.metadata["request"] == "42" && $0.metadata["ffmpeg.object"]?.contains("mov") == true }, "\(lines.map(\.metadata))")
        #expect(engineLog.all.isEmpty, "\(engineLog.all.map(\.message))")
    }

    /// A streamed merge, whose copied AAC track FFmpeg's muxer warns about
    /// ("codec frame size is not set"), logs nothing at warning: the line
    /// is there, at debug.
    @Test func aStreamedMergeWarnsOfNothing() async throws {
        let recorder = Recorder()
        let engine = MuxEngine(runtime: MediaRuntime(logger: recorder.logger(level: .trace)))
        let job = MergeJob(video: Fixtures.path("h264_bframes_aac.mp4"), audio: Fixtures.path("aac_7s.m4a"), output: .stream(.body(named: "response")))
        for try await _ in try await engine.body(for: job) {}
        #expect(recorder.all.contains { $0.level == .debug && $0.message.contains("codec frame size is not set") }, "\(recorder.all.map(\.message))")
        #expect(!recorder.all.contains { $0.level >= .warning }, "\(recorder.all.filter { $0.level >= .warning }.map(\.message))")
    }

    /// Damage MediaMux handles (a video frame that does not decode, left
    /// out of a re-framed video) is one warning naming the file and what
    /// was skipped; none of FFmpeg's own complaints about it ("Invalid NAL
    /// unit size") reaches the caller's logger above debug. (The decoder
    /// complains on its frame threads, which carry no logger; MP4 inputs
    /// are read without the demuxer's parser, which complained on the
    /// caller's thread.)
    @Test func handledDamageIsOneWarning() async throws {
        let folder = try TemporaryFolder()
        let damaged = try Fixtures.withADamagedLastFrame(in: folder)
        let recorder = Recorder()
        let engine = MuxEngine(runtime: MediaRuntime(logger: recorder.logger(level: .trace)))
        _ = try await engine.merge(
            video: damaged, audio: Fixtures.path("aac_7s.m4a"), output: folder.path("o.mp4"), options: MergeOptions(orientation: .portrait))
        let warnings = recorder.all.filter { $0.level >= .warning }
        #expect(warnings.map(\.message) == ["\(damaged): 1 damaged video frame could not be decoded and was left out"])
        #expect(!recorder.all.contains { $0.message.contains("Invalid NAL unit size") && $0.level > .debug })
    }

    /// A merge's warnings come back in its report and go to the logger too.
    @Test func mergeWarningsAreLogged() async throws {
        let folder = try TemporaryFolder()
        let recorder = Recorder()
        // HDR10 boxes, amve, clap and more in the sample entry.
        let video = Fixtures.path("hevc_hdr10_entry_boxes.mp4")
        let engine = MuxEngine(runtime: MediaRuntime(logger: recorder.logger()))
        // Room for the movie header FFmpeg writes, not for the boxes carried
        // into it after: it moves to the end, with a warning.
        var bare = try await engine.plan(video: video, audio: Fixtures.path("aac_2s.m4a"), output: folder.path("bare.mp4"))
        bare.video.sampleEntry = nil
        bare.audio!.sampleEntry = nil
        bare.metadata = MetadataCarry.plan(video: try await engine.probe(video), keep: false)
        _ = try await engine.execute(bare)
        let bareMovie = try #require(try MP4File(path: folder.path("bare.mp4")).topLevelBoxes(ofType: "moov").first)
        var plan = try await engine.plan(video: video, audio: Fixtures.path("aac_2s.m4a"), output: folder.path("out.mp4"))
        plan.movieHeader = .reservedAtFront(bytes: Int(bareMovie.size) + 8)
        let report = try await engine.execute(plan)
        #expect(!report.warnings.isEmpty)
        #expect(report.warnings.allSatisfy { warning in recorder.all.contains { $0.level == .warning && $0.message == warning } })
    }

    /// Blocking work runs on the pool the caller gives: eight previews at
    /// once on a two-thread pool all finish, on no more than two threads.
    @Test func blockingWorkRunsOnTheCallersPool() async throws {
        let pool = NIOThreadPool(numberOfThreads: 2)
        pool.start()
        defer { pool.shutdownGracefully { _ in } }
        let engine = MuxEngine(runtime: MediaRuntime(threadPool: pool))
        let threads = ThreadSet()
        let folder = try TemporaryFolder()
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<8 {
                let into = folder.path("frames-\(index)")
                group.addTask {
                    let images = try await engine.previews.writeFrames(
                        of: Fixtures.path("h264_frame_index.mp4"), into: into,
                        options: FrameOptions(selection: .evenlySpaced(count: 3), size: 64)
                    ) { _ in threads.insertCurrent() }
                    return images.count
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(counts == Array(repeating: 3, count: 8))
        let used = threads.all
        #expect(!used.isEmpty && used.count <= 2, "\(used.count) threads")
    }

    /// Work given to a pool that has shut down fails with an error, not a hang.
    @Test func aStoppedPoolIsAnError() async throws {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        try await pool.shutdownGracefully()
        let engine = MergeEngine(runtime: MediaRuntime(threadPool: pool))
        await #expect(throws: MediaMuxError.runtimeStopped) {
            _ = try await engine.probe(Fixtures.path("aac_2s.m4a"))
        }
    }

    /// Downloads go through the caller's HTTP client, which stays usable after.
    @Test(.tags(.network), .skippedByTag) func downloadsUseTheCallersHTTPClient() async throws {
        let folder = try TemporaryFolder()
        try await TestHTTPServer.withClient { server, client in
            let song = Array(FileManager.default.contents(atPath: Fixtures.path("aac_2s.m4a")) ?? Data())
            server.serve("/song.m4a", body: song)
            let engine = MuxEngine(httpClient: client)
            for name in ["a.m4a", "b.m4a"] {
                let result = try await engine.download(
                    server.url("/song.m4a"), to: folder.path(name), options: DownloadOptions(cacheDirectory: folder.path("cache"), useCache: false))
                #expect(result.bytes == Int64(song.count))
            }
        }
    }

    /// Errors say what kind they are and what they concern; their
    /// localizedDescription is the one-line message.
    @Test func errorsHaveKindsSubjectsAndMessages() async throws {
        let missing = Fixtures.path("no_such_file.mp4")
        do {
            _ = try await MergeEngine().probe(missing)
            Issue.record("probing a missing file succeeded")
        } catch {
            #expect(error.kind == .input)
            #expect(error.subject == missing)
            #expect(error.localizedDescription == "\(missing): no such file")
            #expect((error as any Error).localizedDescription == "\(missing): no such file")
        }
        #expect(MediaMuxError.http(status: 503, url: "http://127.0.0.1/a").kind == .network)
        #expect(MediaMuxError.outputExists(path: "o.mp4").kind == .output)
        let option = MediaMuxError.invalidOption(option: "MergeOptions.rotation", message: "x")
        #expect(option.kind == .option && option.subject == nil && option.option == "MergeOptions.rotation" && option.code == .invalidOption)
        #expect(MediaMuxError.cancelled(path: "o.mp4").kind == .cancelled)
        let ffmpeg = MediaMuxError.ffmpeg(operation: "decoding", path: "a.mp4", code: -12, message: "out of memory")
        #expect(ffmpeg.kind == .ffmpeg && ffmpeg.ffmpegCode == -12)
    }
}

private final class ThreadSet: Sendable {
    private let ids = Locked<Set<UInt>>([])
    var all: Set<UInt> { ids.withLock { $0 } }
    func insertCurrent() { _ = ids.withLock { $0.insert(currentThreadID()) } }
}

private func currentThreadID() -> UInt {
    #if os(Linux)
    return UInt(pthread_self())
    #else
    return UInt(bitPattern: pthread_self())
    #endif
}
