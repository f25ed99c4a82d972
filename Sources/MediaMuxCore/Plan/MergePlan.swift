import MediaMuxBase
/// Everything a merge will do, decided before a byte is written. The remuxer
/// follows it without making decisions of its own.
public struct MergePlan: Sendable, Equatable {
    /// The output's container, from its file name: `.mp4` and `.m4v` are
    /// MP4, `.mov` is QuickTime.
    public enum Container: String, Sendable, CaseIterable {
        /// `mp4` for ISO MP4 (.mp4, .m4v), `mov` for QuickTime (.mov).
        case mp4, mov
        /// FFmpeg's muxer name.
        var muxer: String { rawValue }

        /// The file extensions that name it, lowercase, without dots.
        public var extensions: [String] {
            switch self {
            case .mp4: return ["mp4", "m4v"]
            case .mov: return ["mov"]
            }
        }

        /// Every extension an output may have.
        public static var allExtensions: [String] { allCases.flatMap(\.extensions) }

        /// The container a file extension names (any case), or nil.
        public init?(extension ext: String) {
            guard let named = Self.allCases.first(where: { $0.extensions.contains(ext.lowercased()) }) else { return nil }
            self = named
        }

        /// The extensions as a sentence says them: ".mp4, .m4v or .mov".
        public static func spokenExtensions(_ containers: [Container] = allCases) -> String {
            spokenList(containers.flatMap(\.extensions).map { "." + $0 }, "or")
        }
    }

    /// Where the moov box goes.
    public enum MovieHeaderPlacement: Sendable, Equatable, CustomStringConvertible {
        /// Reserved at the front with room for this many bytes, written there at the end: faststart in one pass.
        case reservedAtFront(bytes: Int)
        /// Written at the end, then moved to the front by a second pass (sample counts not known up front).
        case movedToFront
        /// Left at the end of the file.
        case atEnd
        /// Fragmented MP4: written first with no samples (a moov with
        /// mvex, the initialisation segment), the samples following in
        /// moof/mdat fragments, one from each video keyframe, or this long
        /// at the most. Written in one pass, never sought back to.
        case fragmented(longest: MediaTime)

        /// "at the front, in 4096 bytes reserved for it", "moved to the front",
        /// "at the end", "fragmented, 2.000 s at the most a fragment".
        public var description: String {
            switch self {
            case .reservedAtFront(let bytes): return "at the front, in \(bytes) bytes reserved for it"
            case .movedToFront: return "moved to the front"
            case .atEnd: return "at the end"
            case .fragmented(let longest): return "fragmented, \(longest.secondsText()) s at the most a fragment"
            }
        }
    }

    /// How a movie file's sample tables are made.
    public enum SampleTables: Sendable, Equatable, CustomStringConvertible {
        /// By FFmpeg's MP4 muxer, which keeps an entry of about 60 bytes for
        /// every sample it has written until it writes the tables at the end.
        case muxer
        /// From fragments: the muxer writes the samples in fragments of
        /// `longest` at the most, holding one at a time, and at the end each
        /// fragment's header becomes free space and its samples a chunk in
        /// the movie's tables (about 4 to 12 bytes a sample). Memory does not
        /// grow with the input. For a copy read from fragments, which
        /// reads in flat memory too.
        case fromFragments(longest: MediaTime)

        /// "by FFmpeg's muxer", "from fragments of 2.000 s at the most".
        public var description: String {
            switch self {
            case .muxer: return "by FFmpeg's muxer"
            case .fromFragments(let longest): return "from fragments of \(longest.secondsText()) s at the most"
            }
        }
    }

    /// What decided the end.
    public enum EndReason: String, Sendable {
        /// The video is the shorter input: the soundtrack is cut where it ends.
        case videoEndsFirst = "video ends first"
        /// The soundtrack is the shorter input, and the output ends with it.
        case audioEndsFirst = "audio ends first"
        /// Both inputs end at the same moment.
        case sameLength = "both end together"
        /// The whole video kept (`EndPolicy.video`); the soundtrack ends before it.
        case audioStopsEarly = "the whole video; the audio stops early"
        /// The whole video kept, the soundtrack repeated up to its end.
        case audioRepeated = "the whole video; the audio repeats to its end"
        /// The whole soundtrack kept (`EndPolicy.audio`), the video's last frame on screen until it ends.
        case lastFrameHeld = "the whole audio; the last video frame stays until it ends"
        /// A span of one file (a preview clip): it ends where the span asked for does, or where the video does before it.
        case spanAsked = "the span asked for"
        /// A composition with the clips' own sound: it ends where the last clip does.
        case clipsEnd = "the last clip ends"
    }

    /// A stretch of an output track's timeline and what fills it: a range
    /// of a source stream (copied or encoded) or the last frame held. A
    /// track's spans follow one another in order, with no gap: each starts
    /// where the one before ends (a copied span where the packets before it
    /// end, as their durations add up), and the last one ends at the track's end.
    public struct Span: Sendable, Equatable {
        /// What fills the span.
        public enum Decision: String, Sendable, Equatable {
            /// The source's packets, as they are.
            case copy
            /// The source's pictures or sound, decoded and encoded again (by the track's one encoder).
            case encode
            /// The picture before it, on screen until the span ends.
            case hold
            /// No sound, in an encoded audio track (its encoder is given silence).
            case silence
        }

        /// An input stream: the file, and the stream's index in it (as `StreamInfo.index` counts).
        public struct Source: Sendable, Equatable {
            public var path: String
            public var streamIndex: Int
            /// How it is read, for a stream other than its track's own (a
            /// later clip of a sequence); nil for the track's own stream,
            /// read as the track says.
            public var reading: Reading?

            public init(path: String, streamIndex: Int, reading: Reading? = nil) {
                self.path = path
                self.streamIndex = streamIndex
                self.reading = reading
            }
        }

        /// What reading a source stream takes: its file's facts, and the
        /// timeline the plan reads it on (as the fields of the same names of
        /// `Track` say for a track's own stream).
        public struct Reading: Sendable, Equatable {
            /// The stream's codec, FFmpeg's name.
            public var codec: String
            public var timestamps: Timestamps
            /// Where its presentation ends, on the timeline it is read on.
            public var end: MediaTime
            public var sampleCount: Int?
            public var missingSamples: Int?
            public var damagedFragment: String?
            public var isFragmented: Bool
            public var fragmentSamples: FragmentSamples?
            public var marksFirstRandomAccessPoint: Bool
            /// For a span that is encoded: its pictures' turn and size as
            /// shown, when they differ from those the track's encoding was
            /// made for (a clip of another shape or turn, fitted into the
            /// same frame); nil for the encoding's own.
            public var picture: SourcePicture?

            /// How `track` reads its own stream.
            public init(of track: Track) {
                codec = track.codec
                timestamps = track.timestamps
                end = track.sourceEnd + track.origin
                sampleCount = track.sampleCount
                missingSamples = track.missingSamples
                damagedFragment = track.damagedFragment
                isFragmented = track.isFragmented
                fragmentSamples = track.fragmentSamples
                marksFirstRandomAccessPoint = track.marksFirstRandomAccessPoint
            }
        }

        /// A source's pictures as the encoding turns and fits them.
        public struct SourcePicture: Sendable, Equatable {
            /// How the decoded pictures are turned upright.
            public var turn: PictureTurn
            /// Their size as shown, upright.
            public var shown: VideoSize

            public init(turn: PictureTurn, shown: VideoSize) {
                self.turn = turn
                self.shown = shown
            }
        }

        /// The input stream it takes from; nil for a held frame.
        public var source: Source?
        /// What of the source it presents, on the timeline it is read on
        /// (its file's times, with its edit list applied by the demuxer or,
        /// with `Timestamps.media`, left to MediaMux); nil for a held frame.
        public var sourceRange: Range<MediaTime>?
        /// Where it begins on the output's timeline.
        public var place: MediaTime
        /// How long it lasts on the output's timeline.
        public var duration: MediaTime
        public var decision: Decision
        /// Why, in words: "copied", the encoding's reason, "played again (2 of 3)".
        public var reason: String
        /// For a clip of a composition: what it takes of its file, and for a
        /// copied one how it joins the clips around it; nil otherwise.
        public var join: Join?

        /// A clip of a composition in the track. A copied one starts
        /// exactly where the plan places it (the sum of the lengths of the
        /// clips before it), its decode times lowered by `decodeLowering`,
        /// chosen so that its first packet is decoded where the packet after
        /// the clip before it would have been: decode times rise across every
        /// join as they do within a clip. What it decodes after its first
        /// keyframe but would show before it (an open GOP's leading
        /// pictures) is not copied.
        public struct Join: Sendable, Equatable {
            /// How much earlier than its own its packets are decoded (zero
            /// for a clip that is encoded).
            public var decodeLowering: MediaTime
            /// What it takes of its file's video, on that video's timeline
            /// (its first frame shown at zero): where its cuts landed.
            public var clipRange: Range<MediaTime>
            /// The clip's place in the composition, counting from 0: a clip
            /// whose cut falls inside a GOP has a span for each piece.
            public var clip: Int

            public init(decodeLowering: MediaTime, clipRange: Range<MediaTime>, clip: Int = 0) {
                self.decodeLowering = decodeLowering
                self.clipRange = clipRange
                self.clip = clip
            }
        }

        public init(source: Source?, sourceRange: Range<MediaTime>?, place: MediaTime, duration: MediaTime, decision: Decision, reason: String) {
            self.source = source
            self.sourceRange = sourceRange
            self.place = place
            self.duration = duration
            self.decision = decision
            self.reason = reason
        }

        /// Where it ends on the output's timeline.
        public var end: MediaTime { place + duration }
    }

    /// One output track: its role, which input stream it comes from, where
    /// it sits on the output's timeline (its spans), and how its packets are made.
    public struct Track: Sendable, Equatable {
        /// What a track is for in the output.
        public enum Role: String, Sendable, Equatable, CaseIterable {
            /// The picture.
            case video
            /// The sound laid over the picture (a preview clip's: the file's own).
            case soundtrack
            /// The video file's own sound, kept beside the soundtrack (disabled).
            case originalAudio = "original audio"

            /// "video" or "audio": the kind of stream it is, as messages name it.
            public var kind: MediaMuxError.StreamKind { self == .video ? .video : .audio }
        }

        /// What the track is for.
        public var role: Role
        /// The input file.
        public var path: String
        /// The stream's index in the input file (as `StreamInfo.index` counts).
        public var streamIndex: Int
        /// The codec written, FFmpeg's name: the source's, or "aac" when encoded.
        public var codec: String
        /// The sample-entry fourcc to write, when the muxer's own choice would be wrong (HEVC: `hvc1`).
        public var codecTag: String?
        /// The time base the copy works in: the input stream's, or for audio
        /// one fine enough to place every sample (milliseconds are not).
        public var timeBase: MediaTime
        /// Subtracted from the input's timestamps to put the track on the output timeline.
        public var origin: MediaTime
        /// Where the input track starts and ends, on the output timeline.
        public var sourceStart: MediaTime
        /// Where the input track's own presentation ends, on the output timeline.
        public var sourceEnd: MediaTime
        /// Where the track's presentation ends on the output timeline: the
        /// output's end, or before it for a soundtrack that stops early. A
        /// video track whose end lies past `sourceEnd` holds its last frame.
        public var end: MediaTime
        /// The track's timeline, in order: what fills it from its first
        /// sample to `end` (the source once, each play of a loop, a held last frame).
        public var spans: [Span] = []
        /// When the source's beginning is skipped (a negative offset): packets
        /// that end this long or more before the output's zero are dropped,
        /// and the rest before it only prime the decoder (the edit list hides
        /// them). For a video read from a later start (a preview clip's
        /// span), what decodes the frame on screen there is kept: the packets
        /// from the keyframe shown at or before it. Either way the reader
        /// seeks past a long skipped part where the container allows. Nil
        /// keeps every packet before the zero, as the source's edit list hides them.
        public var leadIn: MediaTime?
        /// Samples in the input track (an upper bound for what is copied).
        public var sampleCount: Int?
        /// Samples the input declares but does not hold (a fragmented MP4
        /// cut short): left out, and the report says so.
        public var missingSamples: Int?
        /// Fragments past a damaged fragment header (see
        /// `StreamInfo.damagedFragment`): left out, and the report says so.
        public var damagedFragment: String?
        /// The input's samples are in movie fragments, which its copy reads
        /// as it reaches them (up to a damaged one, if any).
        public var isFragmented = false
        /// The input's samples all lie in movie fragments (`StreamInfo.fragmentSamples`).
        public var fragmentSamples: FragmentSamples?
        /// Codec configuration and tags the output's sample description and track header carry.
        public var headerBytes: Int
        /// Shorten the last sample to end exactly at the end (audio), rather
        /// than keep whole frames and hide the rest with the edit list (video).
        public var trimsLastSample: Bool
        /// Where the packets' times come from.
        public var timestamps: Timestamps = .demuxer
        /// Mark the first copied sample as a sync sample when its bitstream
        /// starts there (an H.264 IDR, an HEVC IRAP picture) but the source's
        /// sync table leaves it out, so that players can start decoding at it.
        public var marksFirstRandomAccessPoint = false
        /// The source's sample-entry boxes the output's sample entry gets.
        public var sampleEntry: SampleEntryCarry?
        /// For a codec this FFmpeg has no name for, copied from an MP4/MOV
        /// source: the codec FFmpeg's muxer is told the packets are (it
        /// takes them as they are, and writes a sample entry of its own,
        /// which the source's whole entry then replaces). Nil otherwise.
        public var standIn: String?
        /// The source's track-level boxes the output's track gets.
        public var trackBoxes: TrackBoxCarry?
        /// Audio: nil when the packets are copied; otherwise how they are decoded and encoded.
        public var encoding: AudioEncoding?
        /// Video: nil when the packets are copied; otherwise how the frames
        /// are turned, fitted into another frame and encoded.
        public var reframing: VideoEncoding?

        /// Video copied but for the partial GOPs at a composition's
        /// frame-exact cuts (its `.encode` spans): how those are encoded to
        /// decode under the copy's one sample entry. Nil otherwise.
        public var cutEncoding: CutEncoding?

        /// The input's packets are written as they are: neither encoded nor re-framed.
        public var isCopied: Bool { encoding == nil && reframing == nil }

        /// How many times the source plays on the track: its spans that take from it.
        public var plays: Int { spans.filter { $0.source != nil }.count }

        /// The fragments a track reads its packets from itself, rather than
        /// through FFmpeg's reader, whose index grows with every sample and
        /// which presents the frames of a negative composition offset late:
        /// a copied track, or a video decoded to be re-framed, whose samples
        /// all lie in movie fragments (an encoded soundtrack is read by its
        /// own decoder). Nil otherwise.
        public var readsOwnFragments: FragmentSamples? { encoding == nil ? fragmentSamples : nil }

        /// Players play the track unless told otherwise; false for the kept original audio.
        public var isEnabled = true

        /// At most how many samples the output track gets: the source's, once
        /// for each play of a loop copied, and each later clip's source's.
        /// Nil when unknown, or past what any count could be (a damaged
        /// table declaring billions, looped).
        var writtenSampleBound: Int? {
            guard let sampleCount else { return nil }
            guard encoding == nil, plays > 0 else { return sampleCount }
            var bound = 0
            for source in spans.compactMap(\.source) {
                guard let count = source.reading.map({ $0.sampleCount }) ?? sampleCount else { return nil }
                let (sum, overflow) = bound.addingReportingOverflow(count)
                guard !overflow else { return nil }
                bound = sum
            }
            return bound
        }
    }

    /// An input stream the output leaves out, and why.
    public struct LeftOut: Sendable, Equatable {
        /// The input file that has the stream.
        public var path: String
        /// The stream's index in that file.
        public var streamIndex: Int
        /// "audio aac", "data mebx", "video mjpeg (cover art)"...
        public var what: String
        /// Why it is not copied: "cover art is not copied", "the soundtrack
        /// replaces the video's own audio"...
        public var reason: String
        /// Could be copied instead of the stream chosen (the merge options' stream index).
        public var choosable: Bool
    }

    /// Where a track's packet times come from.
    public enum Timestamps: Sendable, Equatable {
        /// As the demuxer hands them out, with the source's edit list applied by it.
        case demuxer
        /// The media's own decode and composition times (the edit list left
        /// to `origin` and the plan), decode times lowered by `decodeShift`
        /// ticks so that no sample is presented before it is decoded. The
        /// presentation times, and so every frame's moment, stay as they are.
        case media(decodeShift: Int64)
    }

    /// The file to write.
    public var outputPath: String
    /// The output's container, from its name.
    public var container: Container
    /// Replace an existing output.
    public var overwrite: Bool
    /// The output's tracks, in the order they are written: the video, the
    /// soundtrack, and the video's own audio where it is kept.
    public internal(set) var tracks: [Track]
    /// The video's own audio mixed into the soundtrack (which is then encoded).
    public var mix: Mix?

    /// The video's own audio under the soundtrack, in one track.
    public struct Mix: Sendable, Equatable {
        /// Where it plays, placed as the video is.
        public var original: Track
        /// Its level in the mix, in dB.
        public var level: Double
    }
    /// The output's presentation end, as the end policy decides.
    public var end: MediaTime
    /// What decided `end`.
    public var endReason: EndReason
    /// The display rotation written, and why.
    public var rotation: RotationDecision
    /// Where the movie header goes.
    public var movieHeader: MovieHeaderPlacement
    /// How a movie's sample tables are made.
    public var sampleTables: SampleTables = .muxer
    /// Timescale of the movie header and edit lists.
    public var movieTimescale: Int64
    /// Media time of one interleaving chunk: the remuxer alternates tracks every this long.
    public var interleaveWindow: MediaTime
    /// The movie-level metadata written.
    public var metadata: MetadataCarry
    /// Every input stream not copied.
    public var leftOut: [LeftOut]
    /// What the caller asked for that the merge will not do, and why (video
    /// encoding options for video that is copied); the report repeats them.
    public var warnings: [String] = []

    /// A composition's clips, from its video's spans; empty for a merge.
    public var clips: [MergeReport.Clip] {
        guard let video = track(.video) else { return [] }
        var clips: [(index: Int, clip: MergeReport.Clip)] = []
        for span in video.spans {
            guard let join = span.join, let source = span.source else { continue }
            if let last = clips.last, last.index == join.clip {
                // A later piece of the same clip.
                clips[clips.count - 1].clip.duration = span.end - last.clip.place
                clips[clips.count - 1].clip.reason += "; " + span.reason
            } else {
                clips.append((join.clip, MergeReport.Clip(
                    source: source.path, place: span.place, duration: span.duration, range: join.clipRange, reason: span.reason)))
            }
        }
        return clips.map(\.clip)
    }

    /// The track with `role`, if the output has one.
    public func track(_ role: Track.Role) -> Track? { tracks.first { $0.role == role } }

    /// The video track: a merge always has one.
    public internal(set) var video: Track {
        get { tracks[index(of: .video)] }
        set { tracks[index(of: .video)] = newValue }
    }
    /// The soundtrack: a merge always has one; nil for a composition
    /// without sound (no soundtrack, and no clip with sound of its own) and
    /// for a preview clip of a video without sound.
    public internal(set) var audio: Track? {
        get { track(.soundtrack) }
        set {
            guard let at = tracks.firstIndex(where: { $0.role == .soundtrack }) else {
                if let newValue { tracks.insert(newValue, at: min(1, tracks.count)) }
                return
            }
            if let newValue { tracks[at] = newValue } else { tracks.remove(at: at) }
        }
    }
    /// The video's own audio, kept as a second audio track, disabled; nil when it is not kept.
    public var originalAudio: Track? { track(.originalAudio) }

    /// The place of the track with `role` among `tracks`, as the muxer numbers its streams.
    package func index(of role: Track.Role) -> Int {
        // Plans come from the planner alone, which gives every plan a video; a role asked for is one the plan has.
        tracks.firstIndex { $0.role == role } ?? tracks.startIndex
    }
}
