import MediaMux
import MediaMuxBase
import MediaMuxContainers
import MediaMuxCore
import MediaMuxPreview

/// Everything MediaMux does with a file a user hands it, run over one input:
/// the box reader, probing, planning, a merge with the input as the video
/// and one with it as the soundtrack, the first again as fragmented MP4
/// streamed to a writer, and decoding frames. Both the fuzzer
/// (`mediamux-fuzz` built with `-sanitize=fuzzer`) and the test suite (over
/// the committed corpus) run it.
///
/// A crash or a hang is the fuzzer's to see. What this checks is the
/// rest of the contract a caller relies on:
/// - every failure is a `MediaMuxError` that names one of the files of the
///   call, says what is wrong in the user's terms (not FFmpeg's text alone,
///   not `.unexpected`), and leaves nothing in the output folder;
/// - every merge that succeeds wrote an MP4 MediaMux can probe again, with
///   both streams (a streamed one, once its bytes are in a file);
/// - every decoded frame holds the pixels its size says.
package struct FuzzExercise: Sendable {
    /// One broken promise: which step, and what it did.
    package struct Violation: Sendable, Equatable, CustomStringConvertible {
        package var step: String
        package var problem: String
        package var description: String { "\(step): \(problem)" }
    }

    /// The folder the input and the outputs are written to; nothing else may be in it.
    package let folder: String
    /// A well-formed video, merged with the input as its soundtrack.
    package let video: String
    /// A well-formed soundtrack, merged with the input as its video.
    package let audio: String
    private let engine: MuxEngine

    package var input: String { folder + "/input" }
    private var output: String { folder + "/merged.mp4" }

    /// - Parameters:
    ///   - folder: An empty folder of the exercise's own (made if missing).
    ///   - video: A well-formed video file outside `folder`.
    ///   - audio: A well-formed soundtrack outside `folder`.
    package init(folder: String, video: String, audio: String, runtime: MediaRuntime = MediaRuntime()) {
        self.folder = folder
        self.video = video
        self.audio = audio
        engine = MuxEngine(runtime: runtime)
        _ = makeFolder(folder)
    }

    /// Runs every step over `bytes`; empty when every promise held.
    package func run(_ bytes: [UInt8]) async -> [Violation] {
        var found: [Violation] = []
        guard writeInput(bytes) else {
            return [Violation(step: "setup", problem: "cannot write \(input)")]
        }
        defer { removeFile(input) }
        found += readBoxes()
        found += await probe()
        found += await merge(step: "merge as video", video: input, audio: audio)
        found += await merge(step: "merge as soundtrack", video: video, audio: input)
        found += await streamedMerge()
        found += await decode(step: "frames evenly spaced", FrameSelection.evenlySpaced(count: 3))
        found += await decode(step: "frames from the start", FrameSelection.all(from: 0, to: 0.2))
        return found
    }

    // MARK: - Steps

    /// The box reader MediaMux uses on MP4 and MOV files (movie header facts,
    /// metadata): any thrown error is an answer; only a crash is not.
    private func readBoxes() -> [Violation] {
        guard let facts = try? MovieHeaderFacts(path: input) else { return [] }
        var found: [Violation] = []
        for (id, track) in facts.tracks where track.duration < 0 && track.hasEditList == false {
            found.append(Violation(step: "box reader", problem: "track \(id) has a negative duration \(track.duration) without edits"))
        }
        return found
    }

    private func probe() async -> [Violation] {
        do {
            let info = try await engine.probe(input)
            guard info.path == input else {
                return [Violation(step: "probe", problem: "the facts name \(info.path), not the input")]
            }
            return []
        } catch {
            return judge(error, step: "probe", subjects: [input])
        }
    }

    private func merge(step: String, video: String, audio: String) async -> [Violation] {
        var options = MergeOptions()
        options.overwrite = true
        do {
            _ = try await engine.merge(video: video, audio: audio, output: output, options: options)
        } catch {
            return judge(error, step: step, subjects: [video, audio, output]) + leftovers(step: step)
        }
        return await checkOutput(step: step)
    }

    /// The input as the video, merged as fragmented MP4 into a body pulled
    /// to its end; written to a file, its bytes must probe with both streams.
    private func streamedMerge() async -> [Violation] {
        let step = "merge as video, streamed"
        let name = "the fuzz stream"
        var bytes: [UInt8] = []
        do {
            for try await chunk in try await engine.merging.body(video: input, audio: audio, name: name) {
                bytes += chunk.readableBytesView
            }
        } catch {
            return judge(error, step: step, subjects: [input, audio, name]) + leftovers(step: step)
        }
        guard writeOutput(bytes) else { return [Violation(step: step, problem: "cannot write \(output)")] }
        return await checkOutput(step: step)
    }

    /// A merge's output must probe with both streams, and be all it left; it is removed after.
    private func checkOutput(step: String) async -> [Violation] {
        defer { removeFile(output) }
        do {
            let written = try await engine.probe(output)
            if written.video == nil || written.audio == nil {
                return [Violation(step: step, problem: "the merged file lacks a stream: \(written.streams.map(\.kind))")]
            }
        } catch {
            return [Violation(step: step, problem: "the merged file cannot be probed: \(error)")]
        }
        return leftovers(step: step, allowing: ["merged.mp4"])
    }

    private func decode(step: String, _ selection: FrameSelection) async -> [Violation] {
        var found: [Violation] = []
        do {
            for try await frame in engine.previews.frames(of: input, options: FrameOptions(selection: selection, size: 64)) {
                if frame.width < 1 || frame.height < 1 || frame.pixels.count != frame.bytesPerRow * frame.height {
                    found.append(Violation(step: step, problem: "a \(frame.width)x\(frame.height) frame holds \(frame.pixels.count) bytes"))
                }
            }
        } catch {
            found += judge(error, step: step, subjects: [input])
        }
        return found
    }

    // MARK: - The contract

    /// A failure must name one of `subjects`, say what is wrong in words of
    /// MediaMux's own, and be one a caller can act on.
    private func judge(_ error: MediaMuxError, step: String, subjects: [String]) -> [Violation] {
        let message = error.description
        guard let subject = error.subject, subjects.contains(subject) else {
            return [Violation(step: step, problem: "the error names none of the call's files: \(message)")]
        }
        guard message.hasPrefix(subject + ": ") else {
            return [Violation(step: step, problem: "the message does not start with the file: \(message)")]
        }
        switch error.kind {
        case .unexpected:
            return [Violation(step: step, problem: "an unexpected failure: \(message)")]
        case .ffmpeg:
            return [Violation(step: step, problem: "FFmpeg's words alone, not what is wrong with the file: \(message)")]
        case .cancelled, .network:
            return [Violation(step: step, problem: "a failure no file can cause: \(message)")]
        case .input, .output, .option:
            return []
        }
    }

    /// A failed call leaves the folder as it found it: the input alone (and
    /// `allowing`), no temporary file, no partial output.
    private func leftovers(step: String, allowing: Set<String> = []) -> [Violation] {
        let left = Set(folderNames(folder)).subtracting(["input"]).subtracting(allowing)
        guard !left.isEmpty else { return [] }
        for name in left { removeFile(folder + "/" + name) }
        return [Violation(step: step, problem: "left behind \(left.sorted())")]
    }

    private func writeInput(_ bytes: [UInt8]) -> Bool { writeWholeFile(input, bytes) }

    private func writeOutput(_ bytes: [UInt8]) -> Bool { writeWholeFile(output, bytes) }
}
