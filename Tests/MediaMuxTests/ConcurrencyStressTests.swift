import Foundation
import MediaMux
import TestSupport
import Testing

/// Sixteen pieces of work at once in one process: 8 merges, 4 downloads and
/// 4 frame streams, half of each cancelled midway. The rest give exactly what
/// they give when run alone; the cancelled ones end as cancelled and leave
/// no temporary file.
@Suite(.tags(.heavy), .skippedByTag) struct ConcurrencyStressTests {
    /// Cancels a task that may not have been stored yet when asked to.
    final class CancelOnce: Sendable {
        private let state = Locked<(task: Task<Outcome, Never>?, asked: Bool)>((nil, false))

        func attach(_ task: Task<Outcome, Never>) {
            let asked = state.withLock { state in
                state.task = task
                return state.asked
            }
            if asked { task.cancel() }
        }

        func cancel() {
            let task = state.withLock { state -> Task<Outcome, Never>? in
                defer { state.asked = true }
                return state.asked ? nil : state.task
            }
            task?.cancel()
        }
    }

    enum Outcome: Sendable, Equatable {
        /// What the work made: a merged file's or a download's bytes, frames' pixels.
        case finished([UInt8])
        case cancelled
        case failed(String)
    }

    static func outcome(_ body: () async throws -> [UInt8]) async -> Outcome {
        do {
            return .finished(try await body())
        } catch let error as MediaMuxError where error.kind == .cancelled {
            return .cancelled
        } catch is CancellationError {
            return .cancelled
        } catch {
            return .failed("\(error)")
        }
    }

    static func read(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static let video = Fixtures.path("h264_bframes_aac.mp4")
    /// Copied (AAC) for even merges, encoded to AAC (FLAC) for odd ones, which are the cancelled ones.
    static func audio(_ index: Int) -> String { Fixtures.path(index % 2 == 0 ? "aac_7s.m4a" : "flac_3s.flac") }
    static let songs = ["aac_2s.m4a", "aac_7s.m4a", "aac_chirp_1.5s.m4a", "alac_2s.m4a"]
    static let frameSources = ["h264_bframes_aac.mp4", "h264_rot90.mp4", "hevc_hdr10_entry_boxes.mp4", "h264_frame_index.mp4"]
    static let frameOptions = FrameOptions(selection: .evenlySpaced(count: 6), size: 96)

    static func frames(_ engine: MuxEngine, _ path: String, cancelAfterFirst: Bool) async throws -> [UInt8] {
        var pixels: [UInt8] = []
        for try await frame in engine.previews.frames(of: path, options: frameOptions) {
            pixels += frame.pixels
            if cancelAfterFirst { withUnsafeCurrentTask { $0?.cancel() } }
        }
        try Task.checkCancellation()
        return pixels
    }

    @Test(.timeLimit(.minutes(3)))
    func sixteenAtOnceHalfCancelled() async throws {
        let engine = MuxEngine()
        let folder = try TemporaryFolder()
        let merges = folder.path("merges"), downloads = folder.path("downloads"), cache = folder.path("cache")
        for path in [merges, downloads] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        let server = try await TestHTTPServer.start()
        defer { Task { try? await server.stop() } }
        var songBytes: [[UInt8]] = []
        for (index, name) in Self.songs.enumerated() {
            let bytes = try Self.read(Fixtures.path(name))
            songBytes.append(bytes)
            server.serve("/song\(index).m4a", body: bytes, etag: "\"s\(index)\"")
            // 1 KiB every 10 ms: long enough to be cancelled in.
            server.inject("/song\(index).m4a", [.paced(bytes: 1024, seconds: 0.01)])
        }

        // Each merge and frame stream alone first: what the concurrent ones must match.
        var expectedMerges: [[UInt8]] = []
        for kind in 0..<2 {
            let reference = folder.path("reference\(kind).mp4")
            _ = try await engine.merge(video: Self.video, audio: Self.audio(kind), output: reference)
            expectedMerges.append(try Self.read(reference))
            unlink(reference)
        }
        var expectedFrames: [[UInt8]] = []
        for name in Self.frameSources {
            expectedFrames.append(try await Self.frames(engine, Fixtures.path(name), cancelAfterFirst: false))
        }

        var tasks: [(name: String, cancelled: Bool, expected: [UInt8], task: Task<Outcome, Never>)] = []
        for index in 0..<8 {
            let cancels = index % 2 == 1
            let canceller = CancelOnce()
            let output = merges + "/merged\(index).mp4"
            let audio = Self.audio(index)
            let task = Task {
                await Self.outcome {
                    _ = try await engine.merge(video: Self.video, audio: audio, output: output, progress: { progress in
                        if cancels, case .merging(let step) = progress, step.fraction > 0.1 { canceller.cancel() }
                    })
                    return try Self.read(output)
                }
            }
            canceller.attach(task)
            tasks.append(("merge \(index)", cancels, expectedMerges[index % 2], task))
        }
        for index in 0..<4 {
            let cancels = index % 2 == 1
            let canceller = CancelOnce()
            let url = server.url("/song\(index).m4a")
            let destination = downloads + "/song\(index).m4a"
            let options = DownloadOptions(cacheDirectory: cache)
            let task = Task {
                await Self.outcome {
                    _ = try await engine.download(url, to: destination, options: options, progress: { progress in
                        if cancels && progress.bytesReceived > 0 { canceller.cancel() }
                    })
                    return try Self.read(destination)
                }
            }
            canceller.attach(task)
            tasks.append(("download \(index)", cancels, songBytes[index], task))
        }
        for (index, name) in Self.frameSources.enumerated() {
            let cancels = index % 2 == 1
            let path = Fixtures.path(name)
            let task = Task { await Self.outcome { try await Self.frames(engine, path, cancelAfterFirst: cancels) } }
            tasks.append(("frames of \(name)", cancels, expectedFrames[index], task))
        }

        var cancelledSeen = 0
        for (name, cancelled, expected, task) in tasks {
            switch await task.value {
            case .finished(let bytes):
                // A cancelled one may have finished first; what it made is then whole.
                #expect(bytes == expected, "\(name): differs from the same work done alone")
            case .cancelled:
                #expect(cancelled, "\(name) ended as cancelled without being cancelled")
                cancelledSeen += 1
            case .failed(let problem):
                Issue.record("\(name) failed: \(problem)")
            }
        }
        // The cancelled downloads (paced) and frame streams (cancelled by
        // themselves) always end as cancelled; a cancelled merge, a few tens
        // of milliseconds of work on an idle machine, may finish before its
        // first progress report, and is then checked as finished work.
        #expect(cancelledSeen >= 4, "only \(cancelledSeen) of the 8 cancelled ended as cancelled")

        // Outputs of finished work only: no temporary file, nothing half-written.
        for (folderPath, prefix) in [(merges, "merged"), (downloads, "song")] {
            for name in (try FileManager.default.contentsOfDirectory(atPath: folderPath)) {
                #expect(name.hasPrefix(prefix) && !name.hasPrefix("."), "left in \(folderPath): \(name)")
            }
        }
        // The cache keeps cancelled transfers' bytes to resume from: each a true start of its song.
        for name in (try FileManager.default.contentsOfDirectory(atPath: cache)) where name.hasSuffix(".partial") {
            let bytes = try Self.read(cache + "/" + name)
            #expect(songBytes.contains { $0.starts(with: bytes) }, "\(name) is no song's beginning")
        }
    }
}
