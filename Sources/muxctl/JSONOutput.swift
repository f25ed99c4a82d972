#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MediaMux

func printJSON<T: Encodable>(_ value: T) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    guard let data = try? encoder.encode(value) else { return }
    print(String(decoding: data, as: UTF8.self))
}

struct MergeSummary: Encodable {
    struct Track: Encodable {
        var source: String
        var stream: Int
        var codec: String
        var codecTag: String?
        var start: Double
        var duration: Double
        var packets: Int
        var bytes: Int
        /// Absent when copied.
        var transcoded: Transcoded?
        /// Video: how it was re-framed and encoded (absent when copied).
        var reframed: Reframed?
        /// Audio: how many times the soundtrack plays (absent when once).
        var plays: Int?
        /// Video: seconds its last frame stays past its end (absent when none).
        var heldLastFrame: Double?
        /// Packets that could not be decoded and were skipped (absent when none).
        var damagedPackets: Int?
        /// Audio brought to a loudness: as measured, and the gain applied.
        var loudness: Loudness?
    }
    struct Loudness: Encodable {
        var measuredLUFS: Double
        var truePeakDBTP: Double?
        var gainDB: Double
        var limited: Bool
    }
    struct Transcoded: Encodable {
        var from: String
        var to: String
        var bitRate: Int
        var sampleRate: Int
        var channels: Int
        var reason: String
        /// "flac -> aac 192 kb/s (MP4 cannot carry FLAC)".
        var summary: String
    }
    struct Reframed: Encodable {
        var from: String
        var to: String
        var encoder: String
        /// "1920x1080".
        var frame: String
        var fit: String
        var bitDepth: Int
        var quality: Int
        var preset: String
        var reason: String
        var notes: [String]
        var summary: String
        /// libavfilter's graph, input [in0].
        var filterGraph: String
    }
    var output: String
    var duration: Double
    var durationExact: String
    var video: Track
    var audio: Track
    /// The video's own audio, kept as a second track (disabled); absent when left out.
    var originalAudio: Track?
    var rotation: Int
    var rotationReason: String
    /// What decided the end ("video ends first", "the whole video; the audio repeats to its end").
    var trim: String
    var fileBytes: Int
    var elapsedSeconds: Double
    var faststart: Bool
    var audioDownload: DownloadResult?
    var preview: PreviewSummary?
    var keptMetadata: [String]
    var notCopied: [LeftOut]
    /// What went wrong without failing the merge.
    var warnings: [String]

    struct LeftOut: Encodable {
        var source: String
        var stream: Int
        var what: String
        var reason: String
    }

    init(_ report: MergeReport) {
        func track(_ t: MergeReport.Track) -> Track {
            Track(source: t.source, stream: t.streamIndex, codec: t.codec, codecTag: t.codecTag, start: t.start.seconds,
                  duration: t.duration.seconds, packets: t.packets, bytes: t.bytes,
                  transcoded: t.encoding.map {
                      Transcoded(from: $0.sourceCodec, to: $0.codec, bitRate: $0.bitRate, sampleRate: $0.sampleRate,
                                 channels: $0.channels, reason: $0.reason, summary: $0.summary)
                  },
                  reframed: t.reframing.map {
                      Reframed(from: $0.sourceCodec, to: $0.codec, encoder: $0.encoder, frame: $0.frame.description, fit: $0.fit.rawValue,
                               bitDepth: $0.bitDepth, quality: $0.quality, preset: $0.preset, reason: $0.reason, notes: $0.notes, summary: $0.summary,
                               filterGraph: $0.filterGraph)
                  },
                  plays: t.plays > 1 ? t.plays : nil,
                  heldLastFrame: t.heldLastFrame.value > 0 ? t.heldLastFrame.seconds : nil,
                  damagedPackets: t.damagedPackets > 0 ? t.damagedPackets : nil,
                  loudness: t.loudness.map {
                      Loudness(measuredLUFS: $0.measured, truePeakDBTP: $0.truePeak.isFinite ? $0.truePeak : nil, gainDB: $0.gain, limited: $0.limited)
                  })
        }
        output = report.output
        duration = report.duration.seconds
        durationExact = report.duration.description
        video = track(report.video)
        audio = track(report.audio)
        originalAudio = report.originalAudio.map(track)
        rotation = report.rotation.degrees
        rotationReason = describeRotationReason(report.rotation)
        trim = report.endReason.rawValue
        fileBytes = report.fileBytes
        elapsedSeconds = report.elapsed.seconds
        if case .atEnd = report.movieHeader { faststart = false } else { faststart = true }
        keptMetadata = report.keptMetadata
        warnings = report.warnings
        notCopied = report.leftOut.map { LeftOut(source: $0.path, stream: $0.streamIndex, what: $0.what, reason: describeLeftOutReason($0)) }
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
        var merge: BatchMergeFacts?
        var sheet: BatchImageFacts?
        var clip: BatchClipFacts?
        var error: String?
        /// input, output, option, network, ffmpeg, cancelled or unexpected.
        var errorKind: String?
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
                errorKind: job.error?.kind.rawValue, warnings: job.warnings, elapsedSeconds: job.elapsed.seconds)
        }
    }
}
