#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MediaMux

func printJSON<T: Encodable>(_ value: T, toStandardError: Bool = false) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    guard let data = try? encoder.encode(value) else { return }
    let text = String(decoding: data, as: UTF8.self)
    if toStandardError { writeToStandardError(text + "\n") } else { print(text) }
}

/// `muxctl merge --json`: the library's `MergeFacts`, worded for muxctl's
/// flags, with the soundtrack's download and the thumbnails beside them.
struct MergeSummary: Encodable {
    var facts: MergeFacts
    var audioDownload: DownloadResult?
    var preview: PreviewSummary?

    init(_ report: MergeReport) {
        facts = MergeFacts(report, rotationReason: describeRotationReason, leftOutReason: describeLeftOutReason)
    }

    private enum Extra: String, CodingKey { case audioDownload, preview }

    func encode(to encoder: any Encoder) throws {
        try facts.encode(to: encoder)
        var extra = encoder.container(keyedBy: Extra.self)
        try extra.encodeIfPresent(audioDownload, forKey: .audioDownload)
        try extra.encodeIfPresent(preview, forKey: .preview)
    }
}

struct ProbeSummary: Encodable {
    struct Stream: Encodable {
        var index: Int
        var kind: String
        var codec: String
        var codecTag: String?
        /// Set for a codec this FFmpeg cannot name: its code, what it is, and that it cannot be read.
        var unreadableCodec: String?
        var profile: String?
        var start: Double?
        var end: Double?
        var duration: Double?
        var timing: String
        var packets: Int?
        /// A fragmented file cut short: samples declared but not in the file.
        var missingSamples: Int?
        /// A fragmented file whose fragment headers break off: where and why.
        var damagedFragment: String?
        var width: Int?
        var height: Int?
        var rotation: Int?
        var frameRate: Double?
        var sampleRate: Int?
        var channels: Int?
        var priming: Int?
        var language: String?
        var coverArt: Bool
    }
    var path: String
    var format: String
    var containerDuration: Double?
    var streams: [Stream]

    init(_ info: MediaInfo) {
        path = info.path
        format = info.format
        containerDuration = info.containerDuration?.seconds
        streams = info.streams.map { s in
            Stream(index: s.index, kind: s.kind.rawValue, codec: s.codec, codecTag: s.codecTag, unreadableCodec: s.unreadableCodec, profile: s.profile,
                   start: s.start?.seconds, end: s.end?.seconds, duration: s.duration?.seconds, timing: s.timing.rawValue,
                   packets: s.packetCount, missingSamples: s.missingSamples, damagedFragment: s.damagedFragment, width: s.width, height: s.height, rotation: s.kind == .video ? s.rotation : nil,
                   frameRate: s.frameRate, sampleRate: s.sampleRate, channels: s.channels, priming: s.priming,
                   language: s.language, coverArt: s.isAttachedPicture)
        }
    }
}

/// `muxctl batch --json`: the batch, then each job of the shard.
struct BatchSummary: Encodable {
    struct Job: Encodable {
        struct Step: Encodable {
            var step: String
            var outcome: String
            var reason: String?
        }
        var index: Int
        var status: String
        /// The files the job writes.
        var writes: [String]
        var steps: [Step]
        var merge: MergeFacts?
        var sheet: ImageFacts?
        var clip: ClipFacts?
        var error: String?
        /// input, output, option, network, ffmpeg, cancelled or unexpected.
        var errorKind: String?
        /// The error's `MediaMuxError.Code` name (`notMedia`, `outputExists`).
        var errorCode: String?
        /// The option an `invalidOption` error is about (`jobs[2].rotate`).
        var errorOption: String?
        var warnings: [String]
        var elapsedSeconds: Double
    }
    var manifest: String
    var shard: String
    var done: Int
    var skipped: Int
    var failed: Int
    var elapsedSeconds: Double
    var jobs: [Job]
    /// The HTML report's index.html, with --report.
    var report: String?

    init(_ report: BatchReport) {
        manifest = report.manifest
        shard = "\(report.shard.index)/\(report.shard.count)"
        done = report.count(.done)
        skipped = report.count(.skipped)
        failed = report.count(.failed)
        elapsedSeconds = report.elapsed.seconds
        jobs = report.jobs.map { job in
            Job(index: job.index, status: job.status.rawValue, writes: job.job.writes,
                steps: job.steps.map { Job.Step(step: $0.step.rawValue, outcome: $0.outcome.rawValue, reason: $0.reason) },
                merge: job.merge, sheet: job.sheet, clip: job.clip, error: job.error?.description,
                errorKind: job.error?.kind.rawValue, errorCode: job.error?.code.name, errorOption: job.error?.option, warnings: job.warnings, elapsedSeconds: job.elapsed.seconds)
        }
    }
}
