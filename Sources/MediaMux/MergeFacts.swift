import MediaMuxBase
public import MediaMuxCore

/// A merge's report as JSON takes it, the one form `muxctl merge --json`
/// prints and a batch records for each job (so that a skipped job still
/// shows it): times in seconds, codecs by name, every decision with its
/// reason in words.
public struct MergeFacts: Sendable, Equatable, Codable {
    public struct Track: Sendable, Equatable, Codable {
        public var source: String
        public var stream: Int
        public var codec: String
        public var codecTag: String?
        public var start: Double
        public var duration: Double
        public var packets: Int
        public var bytes: Int
        /// Absent when copied.
        public var transcoded: Transcoded?
        /// Video: how it was re-framed and encoded (absent when copied).
        public var reframed: Reframed?
        /// Video of a composition copied but for the frames at cuts inside
        /// GOPs: how those were encoded (absent otherwise; the clips' reasons say which).
        public var cutsEncoded: CutsEncoded?
        /// Audio: how many times the soundtrack plays (absent when once).
        public var plays: Int?
        /// Video: seconds its last frame stays past its end (absent when none).
        public var heldLastFrame: Double?
        /// Packets that could not be decoded and were skipped (absent when none).
        public var damagedPackets: Int?
        /// Audio brought to a loudness: as measured, and the gain applied.
        public var loudness: Loudness?

        /// How the track was made, in words: "copied", "transcoded: flac ->
        /// aac 192 kb/s (...)" or "re-framed: ...".
        public var how: String {
            transcoded.map { "transcoded: " + $0.summary } ?? reframed.map { "re-framed: " + $0.summary }
                ?? cutsEncoded.map { "copied, the frames at cuts inside GOPs encoded: " + $0.summary } ?? "copied"
        }
    }
    public struct CutsEncoded: Sendable, Equatable, Codable {
        public var encoder: String
        public var profile: String
        /// "h264" or "hevc".
        public var codec: String
        /// The id the encoded frames' picture parameter set takes beside the source's in the avcC or hvcC.
        public var parameterSetID: Int
        public var quality: Int
        public var preset: String
        public var summary: String
    }
    public struct Loudness: Sendable, Equatable, Codable {
        public var measuredLUFS: Double
        public var truePeakDBTP: Double?
        public var gainDB: Double
        public var limited: Bool
    }
    public struct Transcoded: Sendable, Equatable, Codable {
        public var from: String
        public var to: String
        public var bitRate: Int
        public var sampleRate: Int
        public var channels: Int
        public var reason: String
        /// "flac -> aac 192 kb/s (MP4 cannot carry FLAC)".
        public var summary: String
    }
    public struct Reframed: Sendable, Equatable, Codable {
        public var from: String
        public var to: String
        public var encoder: String
        /// "1920x1080".
        public var frame: String
        public var fit: String
        public var bitDepth: Int
        public var quality: Int
        public var preset: String
        public var reason: String
        public var notes: [String]
        public var summary: String
        /// libavfilter's graph, input [in0].
        public var filterGraph: String
    }
    public var output: String
    public var duration: Double
    public var durationExact: String
    public var video: Track
    /// The soundtrack; absent for a composition without sound.
    public var audio: Track?
    /// The video's own audio, kept as a second track (disabled); absent when left out.
    public var originalAudio: Track?
    public var rotation: Int
    public var rotationReason: String
    /// What decided the end ("video ends first", "the whole video; the audio repeats to its end").
    public var trim: String
    public var fileBytes: Int
    public var elapsedSeconds: Double
    public var faststart: Bool
    /// "movie", or "fragmented" for fragmented MP4.
    public var layout: String
    public var keptMetadata: [String]
    public var notCopied: [LeftOut]
    /// What went wrong without failing the merge.
    public var warnings: [String]
    /// A composition's clips in the order they play; absent for a merge.
    public var clips: [Clip]?

    /// One clip of a composition: its file, what of its video it took
    /// (seconds on that video's timeline), where it plays in the output, and how it was made.
    public struct Clip: Sendable, Equatable, Codable {
        public var source: String
        public var from: Double
        public var to: Double
        public var start: Double
        public var duration: Double
        public var reason: String
    }

    public struct LeftOut: Sendable, Equatable, Codable {
        public var source: String
        public var stream: Int
        public var what: String
        public var reason: String
    }

    /// The facts of `report`. The reasons for the rotation and for each
    /// stream left out are worded by the caller, who knows what the choices
    /// are called there (muxctl's flags, a manifest's fields).
    ///
    /// - Parameters:
    ///   - report: The merge's report.
    ///   - rotationReason: Why the rotation was written, in words.
    ///   - leftOutReason: Why a stream was not copied, in words.
    public init(
        _ report: MergeReport, rotationReason: (RotationDecision) -> String,
        leftOutReason: (MergePlan.LeftOut) -> String = { $0.reason }
    ) {
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
                  cutsEncoded: t.cutEncoding.map {
                      CutsEncoded(encoder: $0.encoder, profile: $0.profile, codec: $0.codec, parameterSetID: $0.parameterSets.picture, quality: $0.quality, preset: $0.preset,
                                  summary: $0.summary)
                  },
                  plays: t.plays > 1 && report.clips.isEmpty ? t.plays : nil,
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
        audio = report.audio.map(track)
        originalAudio = report.originalAudio.map(track)
        rotation = report.rotation.degrees
        self.rotationReason = rotationReason(report.rotation)
        trim = report.endReason.rawValue
        fileBytes = report.fileBytes
        elapsedSeconds = report.elapsed.seconds
        if case .atEnd = report.movieHeader { faststart = false } else { faststart = true }
        layout = report.layout.rawValue
        keptMetadata = report.keptMetadata
        warnings = report.warnings
        notCopied = report.leftOut.map { LeftOut(source: $0.path, stream: $0.streamIndex, what: $0.what, reason: leftOutReason($0)) }
        clips = report.clips.isEmpty ? nil : report.clips.map {
            Clip(source: $0.source, from: $0.range.lowerBound.seconds, to: $0.range.upperBound.seconds, start: $0.place.seconds,
                 duration: $0.duration.seconds, reason: $0.reason)
        }
    }
}

