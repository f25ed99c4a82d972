import MediaMuxBase
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a file was when a step read or wrote it: its size and modification
/// time, or for a downloaded URL the SHA-256 of its body. A file that still
/// has the same stamp is taken to be unchanged, as make and rsync take it.
struct FileStamp: Codable, Equatable, Sendable {
    /// The path, or the URL.
    var name: String
    var bytes: Int64
    /// Nanoseconds since 1970; nil for a URL.
    var modified: Int64?
    /// A URL's body; nil for a file.
    var sha256: String?

    /// The file as it is now; nil when it is not a readable regular file.
    static func of(_ path: String) -> FileStamp? {
        guard let status = fileStatus(path), status.isRegularFile else { return nil }
        return FileStamp(name: path, bytes: status.size, modified: status.modified)
    }
}

/// What one step of a job (the merge, the contact sheet, the preview clip)
/// was made from: MediaMux's version, the job's entry as the manifest words
/// it, and the stamps of the files (and URLs) it read.
struct StepKey: Codable, Equatable, Sendable {
    var version: String
    var settings: String
    var inputs: [FileStamp]
}

/// The record of a job's completed steps, kept as a hidden JSON file beside
/// the first file the job writes (`out/.a.mp4.mediamux-job`). A re-run
/// skips a step whose key is unchanged and whose output still has the
/// stamp recorded, so a preempted machine can simply run its shard again.
struct BatchRecord: Codable, Equatable, Sendable {
    // 2: a clip's facts say `duration` (and `start`, `videoFrames`), no longer `seconds`.
    static let format = 2

    struct Step: Codable, Equatable, Sendable {
        var key: StepKey
        var output: FileStamp
        var merge: MergeFacts?
        var image: ImageFacts?
        var clip: ClipFacts?
    }

    var format = BatchRecord.format
    var steps: [String: Step] = [:]

    static func path(for job: BatchJob) -> String {
        let first = job.writes.first ?? job.previewSource
        return folderPart(of: first) + "/." + namePart(of: first) + ".mediamux-job"
    }

    /// The record beside the job's outputs; an empty one when there is none
    /// or it cannot be read (then every step is done again).
    static func load(for job: BatchJob) -> BatchRecord {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path(for: job))),
              let record = try? JSONDecoder().decode(BatchRecord.self, from: data), record.format == format
        else { return BatchRecord() }
        return record
    }

    /// Replaces the record in one step (written beside it, then renamed), so
    /// that a kill leaves the old record or the new one, never half of one.
    func store(for job: BatchJob) throws(MediaMuxError) {
        let path = Self.path(for: job)
        if steps.isEmpty {
            // Nothing is complete: no record at all.
            removeFile(path)
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else {
            throw MediaMuxError.unexpected(path: path, detail: "the batch record could not be encoded")
        }
        do {
            _ = try TemporaryOutput.write([UInt8](data), to: path, overwrite: true)
        } catch {
            throw MediaMuxError(error, subject: path)
        }
    }
}

/// Whether a step must be done, decided from its key, what the record says
/// and its output as it is now: pure, so every reason can be tested alone.
enum StepDecision: Equatable, Sendable {
    case skip
    case run(reason: String)

    static func decide(wanted: StepKey, recorded: BatchRecord.Step?, output: FileStamp?, force: Bool) -> StepDecision {
        if force { return .run(reason: "asked to redo") }
        guard let recorded else { return .run(reason: "not done before") }
        guard let output else { return .run(reason: "its output is missing") }
        if recorded.output != output { return .run(reason: "its output changed since") }
        if recorded.key.version != wanted.version { return .run(reason: "made by MediaMux \(recorded.key.version)") }
        if recorded.key.settings != wanted.settings { return .run(reason: "its entry in the manifest changed") }
        for input in wanted.inputs where !recorded.key.inputs.contains(input) {
            return .run(reason: "\(input.name) changed")
        }
        if recorded.key.inputs.count != wanted.inputs.count { return .run(reason: "its inputs changed") }
        return .skip
    }
}
