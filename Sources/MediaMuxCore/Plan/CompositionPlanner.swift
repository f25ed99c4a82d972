import MediaMuxBase

/// Pure: a composition's decisions, in two steps. `composedClips` checks
/// each clip's video and range before anything is read; the engine then
/// scans each clip's packets where it starts and ends (`CutScan`), and
/// `plan(_:clips:cuts:soundtrack:output:outputFacts:)` decides the rest:
/// where each cut lands, that the clips join by copy under one sample
/// entry, where each is placed, and the sound.
extension MergePlanner {
    /// One clip's video as the planner first sees it.
    package struct ComposedClip: Sendable {
        /// Its place in the composition, counting from 0.
        package var index: Int
        package var clip: Composition.Clip
        package var info: MediaInfo
        package var stream: StreamInfo
        /// Its video as a copy reads it, from its first frame (`track`).
        package var track: MergePlan.Track
        /// Where the clip asks to start and end, on that track's timeline.
        package var start: MediaTime
        package var end: MediaTime
        /// The clip ends before its video does: its end is scanned too.
        package var endsEarly: Bool { end < track.sourceEnd }
    }

    /// What the packets say where a clip starts, and where it ends when that is before its video's end.
    package struct ClipCuts: Sendable, Equatable {
        package var start: CutScan
        package var end: CutScan?
        /// Near the end of its video, when it plays to it: how its last packets are decoded.
        package var tail: CutScan?

        package init(start: CutScan, end: CutScan?, tail: CutScan? = nil) {
            self.start = start
            self.end = end
            self.tail = tail
        }
    }

    /// Each clip's video stream and its range, checked; every error names
    /// the clip. `infos` are the clips' files as probed, in order.
    package func composedClips(_ composition: Composition, infos: [MediaInfo]) throws -> [ComposedClip] {
        guard !composition.clips.isEmpty else {
            throw MediaMuxError.invalidOption(option: "Composition.clips", message: "a composition needs at least one clip")
        }
        if composition.options.orientation != .keep {
            throw MediaMuxError.invalidOption(option: "MergeOptions.orientation", message:
                "a composition keeps each clip's own orientation for now; re-framing clips is not made yet")
        }
        return try zip(composition.clips, infos).enumerated().map { index, pair in
            let (clip, info) = pair
            do {
                let stream = try Self.pick(.video, from: info, info.videoStreams, composition.options.videoStream)
                try Self.checkUnread(stream, of: info.path, yet: ("joined to other clips", "Composition.clips"))
                let track = try Self.track(stream, in: info, role: .video, keepsMetadata: composition.options.keepsMetadata)
                let length = track.sourceEnd
                let start = clip.start ?? .zero()
                let end = clip.end ?? length
                if start < .zero() {
                    throw MediaMuxError.invalidOption(option: "Composition.clips", message: "a clip cannot start before 0 s (\(start.secondsText()) s)")
                }
                guard start < length else {
                    throw MediaMuxError.invalidOption(option: "Composition.clips", message:
                        "the clip starts at \(start.secondsText()) s, at or after its video ends (\(length.secondsText()) s)")
                }
                guard end > start else {
                    throw MediaMuxError.invalidOption(option: "Composition.clips", message:
                        "the clip ends at \(end.secondsText()) s, not after it starts (\(start.secondsText()) s)")
                }
                guard end <= length else {
                    throw MediaMuxError.invalidOption(option: "Composition.clips", message:
                        "the clip ends at \(end.secondsText()) s, after its video does (\(length.secondsText()) s)")
                }
                return ComposedClip(index: index, clip: clip, info: info, stream: stream, track: track, start: start, end: end)
            } catch let error as MediaMuxError {
                throw error.inClip(index, file: clip.path)
            }
        }
    }

    /// Where a clip's cuts landed, and what fills it.
    struct LandedClip {
        var clip: ComposedClip
        var start: MediaTime
        var end: MediaTime
        /// What fills it, in order: stretches copied, and where a cut falls
        /// inside a GOP, the frames encoded there (or the whole clip encoded).
        var pieces: [Piece]
        /// Why the clip cannot be made as its pieces say (a frame-exact cut
        /// inside a GOP that only encoding every clip makes, a video that
        /// differs from the first clip's); nil when it can.
        var copyProblem: String?
        var length: MediaTime { end - start }
        /// Its pieces' reasons, in order.
        var reason: String { pieces.map(\.reason).joined(separator: "; ") }
        var encodesPart: Bool { pieces.contains { $0.encoded } }
    }

    /// A stretch of a clip, copied or encoded, on its video's timeline.
    /// `startLead`: how long before it is shown its first picture is
    /// decoded; `endLead`: for the picture after its last (the keyframe it
    /// ends at, or one more frame after the end of its video), how long
    /// before it would be. An encoded stretch has no B-frames: both zero.
    struct Piece {
        var range: Range<MediaTime>
        var encoded: Bool
        var startLead: MediaTime = .zero()
        var endLead: MediaTime = .zero()
        var reason: String
    }

    /// The plan of `composition`, from its clips as `composedClips` checked
    /// them and what their packets say at each cut. `soundtrack` is the
    /// soundtrack's file as probed, when the composition has one.
    package func plan(
        _ composition: Composition, clips: [ComposedClip], cuts: [ClipCuts], soundtrack: MediaInfo?, output: String,
        outputFacts: OutputFacts
    ) throws -> MergePlan {
        let options = composition.options
        let (container, fragmented) = try Self.outputShape(output, outputFacts: outputFacts, options: options)
        guard let first = clips.first, clips.count == cuts.count else {
            throw MediaMuxError.unexpected(path: output, detail: "internal error: a composition planned without its clips' cuts; please report it")
        }
        if options.rotation != nil {
            throw MediaMuxError.invalidOption(option: "MergeOptions.rotation", message: "a composition keeps each clip's own rotation; a rotation to write is not taken")
        }
        guard Self.standIn(for: first.stream) != nil || canStore(first.stream.codec, container) else {
            throw MediaMuxError.codecNotSupportedInContainer(codec: first.stream.codec, container: container.rawValue, path: output)
        }
        let decided = try decide(composition, clips: clips, cuts: cuts, container: container, output: output)
        let landed = decided.landed
        let encoding = decided.encoding
        var video = try videoTrack(of: landed, encoding: encoding, cutEncoding: decided.cutEncoding)
        let total = video.end

        // The sound: a soundtrack laid over the whole, as a merge lays one over a video, or the clips' own; none when
        // there is no soundtrack and no clip has sound.
        var audio: MergePlan.Track?
        var soundWarnings: [String] = []
        var end = total
        var endReason = MergePlan.EndReason.clipsEnd
        var leftOut: [MergePlan.LeftOut] = []
        var mix: MergePlan.Mix?
        if let soundtrack {
            let stream = try Self.pick(.audio, from: soundtrack, soundtrack.audioStreams, options.audioStream)
            try Self.checkUnread(stream, of: soundtrack.path)
            let placed = try Self.placeSoundtrack(
                Self.track(stream, in: soundtrack, role: .soundtrack, keepsMetadata: options.keepsMetadata), beside: video,
                options: options, output: output)
            var laid = placed.0
            let ending = placed.1
            if case .mixed(let level) = options.originalAudio {
                // The clips' own sound under the soundtrack: one track from the output's start to its end, silent where neither plays.
                var plain = options
                plain.audio = AudioOptions()
                if let original = try ownSound(of: landed, total: total, container: container, options: plain, output: output, role: .originalAudio) {
                    mix = MergePlan.Mix(original: original, level: level)
                    laid.sourceStart = .zero()
                    laid.end = ending.end
                } else {
                    soundWarnings.append("no clip has sound to mix under the soundtrack; the soundtrack plays alone")
                }
            }
            if let encoding = try audioEncoding(
                for: stream, in: container, options: options.audio, repeating: ending.loop != nil, mixingLevel: mix?.level, output: output) {
                try Self.checkUnread(stream, of: soundtrack.path, yet: ("encoded (\(encoding.reason))", "MergeOptions.audio"))
                try Self.check(fadesOf: encoding.effects, playing: laid.end - laid.sourceStart, path: soundtrack.path)
                laid = Self.encoded(laid, as: encoding)
            }
            laid.spans = Self.spans(of: laid, loop: ending.loop, reason: laid.encoding?.reason ?? "copied")
            audio = laid
            end = ending.end
            endReason = ending.reason
            leftOut = soundtrack.streams.filter { $0.index != stream.index }.map { Self.leftOut($0, in: soundtrack, soundtrackElsewhere: false) }
        } else {
            audio = try ownSound(of: landed, total: total, container: container, options: options, output: output)
            if audio == nil, options.audio != AudioOptions() {
                soundWarnings.append("no clip has sound and no soundtrack is given: the audio options have nothing to change")
            }
        }
        // The clips' own sound kept beside the soundtrack, as a merge keeps a video's: a second track, off until chosen,
        // copied where it can be, as it is (the soundtrack's level options are not its).
        var original: MergePlan.Track?
        if soundtrack != nil, options.originalAudio == .kept {
            var plain = options
            plain.audio = AudioOptions()
            if var kept = try ownSound(of: landed, total: total, container: container, options: plain, output: output, role: .originalAudio) {
                kept.end = min(kept.end, end)
                kept.spans = Self.cut(kept.spans, at: end)
                original = kept
            } else {
                soundWarnings.append("no clip has sound to keep beside the soundtrack; none is kept")
            }
        }
        // The clips' other streams, each file once: with a soundtrack their sound too; without, all but the first audio stream.
        var listed: Set<String> = []
        for clip in clips where listed.insert(clip.info.path).inserted {
            let own = soundtrack == nil || original != nil || mix != nil ? clip.info.audioStreams.first?.index : nil
            leftOut += clip.info.streams.filter { $0.index != clip.stream.index && $0.index != own }
                .map { Self.leftOut($0, in: clip.info, soundtrackElsewhere: soundtrack != nil) }
        }
        // The video as the end decides: cut short with a soundtrack that
        // ends first, or its last frame held until one that ends later.
        video.end = end
        video.spans = Self.cut(video.spans, at: end)
        if end > total {
            video.spans.append(MergePlan.Span(
                source: nil, sourceRange: nil, place: total, duration: end - total, decision: .hold,
                reason: "its last frame, on screen until the soundtrack ends"))
        }

        // A cut's frames are encoded with the quality and preset asked for.
        var unused = options.video
        if decided.cutEncoding != nil { (unused.quality, unused.preset) = (nil, nil) }
        let metadata = MetadataCarry.plan(video: first.info, keep: options.keepsMetadata)
        let rotation = encoding != nil
            ? RotationDecision(degrees: 0, reason: "upright: the pictures are turned as they are encoded")
            : RotationDecision(
                degrees: first.stream.rotation, reason: first.stream.rotation == 0 ? "upright as recorded" : "the clips' own display rotation, copied")
        return MergePlan(
            outputPath: output, container: container, overwrite: options.overwrite,
            tracks: [video] + (audio.map { [$0] } ?? []) + (original.map { [$0] } ?? []),
            mix: mix, end: end,
            endReason: endReason, rotation: rotation,
            movieHeader: fragmented ? .fragmented(longest: Self.longestFragment) : Self.movieHeader(
                faststart: options.faststart, video: video, audio: (audio.map { [$0] } ?? []) + (original.map { [$0] } ?? []),
                metadataBytes: first.info.metadataBytes + metadata.boxes.byteCount, end: end, inputBytes: outputFacts.inputBytes),
            // From fragments: FFmpeg's muxer would keep an entry for every sample of every clip.
            sampleTables: encoding == nil && !fragmented && container == .mp4 ? .fromFragments(longest: Self.longestFragment) : .muxer,
            movieTimescale: Self.movieTimescale, interleaveWindow: Self.interleaveWindow, metadata: metadata, leftOut: leftOut,
            warnings: [encoding == nil ? Self.unusedEncodingOptions(unused, copied: rotation) : nil].compactMap { $0 } + soundWarnings)
    }

    /// Where every clip's cuts land and what fills each: copied, the
    /// partial GOPs at frame-exact cuts encoded where the first clip's video
    /// allows it (`cutEncoding(for:options:)`); otherwise, when a clip
    /// cannot be made so, every clip encoded to one format.
    func decide(
        _ composition: Composition, clips: [ComposedClip], cuts: [ClipCuts], container: MergePlan.Container, output: String
    ) throws -> (landed: [LandedClip], encoding: VideoEncoding?, cutEncoding: CutEncoding?) {
        let options = composition.options
        let first = clips[0]
        let partial = cutEncoding(for: first, options: options.video)
        var refusal: String?
        if case .failure(let refused) = partial { refusal = refused.reason }
        var landed: [LandedClip] = []
        for (clip, cut) in zip(clips, cuts) {
            do {
                var clipLanded = try Self.land(clip, cuts: cut, mode: composition.cut, partialGOPsRefused: refusal)
                if clip.index > 0, let problem = Self.joinProblem(clip, to: first) { clipLanded.copyProblem = problem }
                landed.append(clipLanded)
            } catch let error as MediaMuxError {
                throw error.inClip(clip.index, file: clip.clip.path)
            }
        }
        if let refused = landed.first(where: { $0.copyProblem != nil }), let problem = refused.copyProblem {
            guard composition.cut == .exact else {
                throw MediaMuxError.invalidOption(option: "Composition.cut", message:
                    "\(problem); keyframe cuts copy only, and clips are joined by copy only when they agree").inClip(refused.clip.index, file: refused.clip.clip.path)
            }
            let why = "clips[\(refused.clip.index)] \(problem)"
            let encoding = try compositionEncoding(of: landed, because: why, options: options, container: container, output: output)
            for i in landed.indices {
                let reason = landed[i].clip.index == refused.clip.index ? "encoded: \(problem)" : "encoded with the others, to one sample entry: \(why)"
                landed[i].pieces = [Piece(range: landed[i].start..<landed[i].end, encoded: true, reason: reason)]
            }
            return (landed, encoding, nil)
        }
        guard landed.contains(where: \.encodesPart), case .success(let cutEncoding) = partial else { return (landed, nil, nil) }
        try Self.checkEncoderOptions(options.video, output: output)
        return (landed, nil, cutEncoding)
    }

    /// The composition's video: the first clip's track in a time base every
    /// clip's ticks fall on, a span for each piece of each clip, the clips
    /// end to end. Decode times meet at each join: the packet after a
    /// piece's last is decoded where the next piece's first is (`endLead`
    /// against `startLead`), each piece's own decode times kept, lowered
    /// alike so that none is decoded after it is shown.
    func videoTrack(of landed: [LandedClip], encoding: VideoEncoding?, cutEncoding: CutEncoding?) throws -> MergePlan.Track {
        var landed = landed
        var timescale = landed[0].clip.track.timeBase.timescale
        for clip in landed.dropFirst() { timescale = commonScale(timescale, clip.clip.track.timeBase.timescale) }
        guard timescale <= Int64(Int32.max),
              landed.allSatisfy({ $0.clip.track.timeBase.value == 1 && timescale % $0.clip.track.timeBase.timescale == 0 })
        else {
            throw MediaMuxError.invalidOption(option: "Composition.clips", message:
                "the clips' video time bases (\(landed.map { $0.clip.track.timeBase.description }.joined(separator: ", "))) have no common tick to join them on")
        }
        for i in landed.indices { landed[i].clip.track = Self.ticking(landed[i].clip.track, in: timescale) }
        let total = landed.reduce(MediaTime.zero()) { $0 + $1.length }
        var video = try Self.trimmed(landed[0].clip.track, from: landed[0].start, length: landed[0].length)
        if let encoding { video = Self.reframed(video, as: encoding) }
        if let cutEncoding {
            // The entry's avcC is written with the cuts' parameter sets beside the source's.
            video.cutEncoding = cutEncoding
            video.sampleEntry = video.sampleEntry?.leaving(SampleEntryCarry.configurationTypes)
        }
        video.sourceEnd = total
        video.end = total
        let pieces = landed.enumerated().flatMap { index, clip in clip.pieces.map { (index, $0) } }
        var lowering = [MediaTime.zero()]
        for (before, piece) in zip(pieces, pieces.dropFirst()) {
            lowering.append(lowering[lowering.count - 1] + before.1.endLead - piece.1.startLead)
        }
        let least = lowering.min() ?? .zero()
        var clipPlaces: [MediaTime] = []
        var place = MediaTime.zero()
        for clip in landed {
            clipPlaces.append(place)
            place = place + clip.length
        }
        video.spans = zip(pieces, lowering).map { indexed, lowered in
            let (index, piece) = indexed
            let clip = landed[index]
            let track = clip.clip.track
            var reading: MergePlan.Span.Reading? = clip.clip.index == 0 ? nil : .init(of: track)
            if encoding != nil, let shown = clip.clip.stream.displaySize {
                // The encoding turns and fits each clip's pictures as they are.
                reading?.picture = .init(turn: clip.clip.stream.uprightTurn, shown: shown)
            }
            var span = MergePlan.Span(
                source: .init(path: track.path, streamIndex: track.streamIndex, reading: reading),
                sourceRange: (track.origin + piece.range.lowerBound)..<(track.origin + piece.range.upperBound),
                place: clipPlaces[index] + (piece.range.lowerBound - clip.start), duration: piece.range.upperBound - piece.range.lowerBound,
                decision: piece.encoded ? .encode : .copy, reason: piece.reason)
            // The clip's place in the track, for the report; a copy also joins by it.
            span.join = .init(decodeLowering: encoding == nil ? lowered - least : .zero(), clipRange: clip.start..<clip.end, clip: clip.clip.index)
            return span
        }
        return video
    }

    /// How every clip is encoded when one cannot be copied: as the first
    /// clip's video would be re-framed into its own shape (its codec where
    /// MediaMux encodes it, its picture size as shown or the options' frame,
    /// upright), each clip's pictures turned upright and fitted into that
    /// frame as `options.video.fit` says (a portrait clip in a landscape
    /// composition: blurred sides by default).
    func compositionEncoding(
        of landed: [LandedClip], because why: String, options: MergeOptions, container: MergePlan.Container, output: String
    ) throws -> VideoEncoding {
        let first = landed[0].clip
        guard let shown = first.stream.displaySize else {
            throw MediaMuxError.damaged(path: first.info.path, detail: "the video stream has no picture size")
        }
        for clip in landed.dropFirst() where clip.clip.stream.displaySize == nil {
            throw MediaMuxError.damaged(path: clip.clip.info.path, detail: "the video stream has no picture size")
                .inClip(clip.clip.index, file: clip.clip.clip.path)
        }
        let frame = options.video.frameSize
            ?? VideoSize(width: max(Self.smallestFrameSide, shown.width / 2 * 2), height: max(Self.smallestFrameSide, shown.height / 2 * 2))
        let encoding = try videoEncoding(
            first.stream, shown: shown, frame: frame, options: options.video, reason: "the clips encoded to one format: \(why)", output: output)
        guard canStore(encoding.codec, container) else {
            throw MediaMuxError.codecNotSupportedInContainer(codec: encoding.codec, container: container.rawValue, path: output)
        }
        return encoding
    }

    /// Where a clip's cuts land and what fills it, or why it cannot be
    /// made by copy. With `.keyframe` each cut moves to a keyframe and the
    /// clip is copied. With `.exact` it starts with the frame on screen at
    /// its start and ends with the last shown before its end; where a cut
    /// falls inside a GOP, the frames a copy cannot give are encoded (unless
    /// `partialGOPsRefused` says why they cannot be, which makes that the
    /// clip's `copyProblem`):
    /// - at the start, those up to the next keyframe, where the copy begins
    ///   (the whole clip when no IDR keyframe follows before its end);
    /// - at the end, those from the last keyframe, unless the frames shown
    ///   before the end are decoded before every frame shown after it (no
    ///   B-frame among them waits for a later one): then they are copied.
    static func land(_ clip: ComposedClip, cuts: ClipCuts, mode: Composition.Cut, partialGOPsRefused: String? = nil) throws -> LandedClip {
        let start = cuts.start
        let end = cuts.end
        var startNotes: [String] = []
        var endNotes: [String] = []
        let landedStart: MediaTime
        let landedEnd: MediaTime
        switch mode {
        case .keyframe:
            if start.keyframe >= .zero() {
                landedStart = start.keyframe
                if landedStart != clip.start { startNotes.append("start moved back to the keyframe at \(landedStart.secondsText()) s (asked \(clip.start.secondsText()) s)") }
            } else {
                // Before zero lies what the file's edit list hides, which a clip in a sequence cannot hide: the next keyframe.
                guard let next = start.nextKeyframe, next < (end?.nextKeyframe ?? clip.track.sourceEnd) || end == nil else {
                    throw MediaMuxError.invalidOption(option: "Composition.cut", message:
                        "its video starts \(start.framesBefore) frames after its keyframe at \(start.keyframe.secondsText()) s, which its file hides, and has no keyframe after it to start a copy at; cut it exactly (Composition.Cut.exact)")
                }
                landedStart = next
                startNotes.append("start moved forward to the keyframe at \(next.secondsText()) s (asked \(clip.start.secondsText()) s): the frames before it follow a keyframe its file hides")
            }
            if let end {
                guard end.leadingPictures == 0 else {
                    throw MediaMuxError.invalidOption(option: "Composition.cut", message:
                        "the keyframe at \((end.nextKeyframe ?? end.time).secondsText()) s opens a GOP whose first \(end.leadingPictures) frames are shown before it; a copy cannot end there")
                }
                landedEnd = end.nextKeyframe ?? clip.track.sourceEnd
                if landedEnd != clip.end { endNotes.append("end moved to \(end.nextKeyframe == nil ? "the end of its video" : "the keyframe") at \(landedEnd.secondsText()) s (asked \(clip.end.secondsText()) s)") }
            } else {
                landedEnd = clip.track.sourceEnd
            }
        case .exact:
            landedStart = start.frameStart
            if landedStart != clip.start { startNotes.append("starts with the frame shown from \(landedStart.secondsText()) s") }
            landedEnd = end.map { $0.frameAtOrAfter ?? clip.track.sourceEnd } ?? clip.track.sourceEnd
            if end != nil, landedEnd != clip.end { endNotes.append("ends with the frame shown until \(landedEnd.secondsText()) s") }
        }
        guard landedEnd > landedStart else {
            throw MediaMuxError.invalidOption(option: "Composition.clips", message:
                "the clip from \(clip.start.secondsText()) s to \(clip.end.secondsText()) s holds no frame")
        }
        func plural(_ count: Int) -> String { "\(count) frame\(count == 1 ? "" : "s")" }
        var landed = LandedClip(clip: clip, start: landedStart, end: landedEnd, pieces: [])

        // The start: a copy begins at a keyframe; after the first clip, at one a decoder restarts at.
        var startProblem: String?
        if mode == .exact, start.framesBefore > 0 || start.frameStart != start.keyframe {
            startProblem = "its start at \(clip.start.secondsText()) s falls \(plural(start.framesBefore)) after the keyframe at \(start.keyframe.secondsText()) s"
        } else if clip.index > 0, !(landedStart == start.keyframe ? start.keyframeJoins : start.nextKeyframeJoins) {
            startProblem = "its keyframe at \(landedStart.secondsText()) s is not an IDR picture, where a copy could begin a clip after another"
        }
        var copyFrom = landedStart
        var startLead = landedStart == start.keyframe ? start.keyframeLead : start.nextKeyframeLead ?? start.keyframeLead
        var head: Piece?
        var whole: String?
        if startProblem != nil, mode == .exact {
            // The next keyframe's leading pictures, shown before it, are encoded with the frames before it, and left out of the copy.
            if let next = start.nextKeyframe, next < landedEnd, start.nextKeyframeJoins {
                head = Piece(
                    range: landedStart..<next, encoded: true,
                    reason: "start re-encoded: \(plural(start.framesToNextKeyframe)) before the keyframe at \(next.secondsText()) s")
                copyFrom = next
                startLead = start.nextKeyframeLead ?? .zero()
            } else {
                whole = "no IDR keyframe to copy from follows before its end"
            }
        }

        // The end: a copy ends at a keyframe, at its video's end, or after frames decoded before any shown later.
        var endProblem: String?
        var copyTo = landedEnd
        var endLead = MediaTime.zero()
        var tail: Piece?
        if mode == .keyframe, let end, end.nextKeyframe != nil {
            endLead = end.nextKeyframeLead ?? .zero()
        } else if mode == .exact, let end, let frame = end.frameAtOrAfter {
            if frame == end.nextKeyframe, end.leadingPictures == 0, let lead = end.nextKeyframeLead {
                endLead = lead
            } else if let decoded = end.decodedAfterShown {
                endLead = landedEnd - decoded
            } else {
                endProblem = frame == end.nextKeyframe
                    ? "its end at \(clip.end.secondsText()) s is a keyframe whose \(plural(end.leadingPictures)) shown before it \(end.leadingPictures == 1 ? "is" : "are") decoded after it"
                    : "its end at \(clip.end.secondsText()) s falls inside a GOP (the next keyframe is at \((end.nextKeyframe ?? clip.track.sourceEnd).secondsText()) s)"
                // The copy ends where the last keyframe's group begins (its leading pictures first): the rest is encoded.
                let groupStart = end.keyframeGroupStart
                if whole == nil, groupStart > copyFrom, end.keyframeJoins {
                    let from = groupStart == end.keyframe
                        ? "the keyframe at \(end.keyframe.secondsText()) s" : "\(groupStart.secondsText()) s (the keyframe at \(end.keyframe.secondsText()) s and the frames shown before it)"
                    tail = Piece(range: groupStart..<landedEnd, encoded: true, reason: "end re-encoded: \(plural(end.framesFromKeyframeGroup)) from \(from)")
                    copyTo = groupStart
                    // The packet after the copy's last is the keyframe: where it is decoded, before the group's start.
                    endLead = groupStart - (end.keyframe - end.keyframeLead)
                } else if whole == nil {
                    whole = "the GOP it ends in begins where its copy would"
                }
            }
        } else if let decodeEnd = (cuts.tail ?? end)?.decodeEnd {
            // Played to the end of its video: the next picture, were there one, decoded where the last packet's decoding ends.
            endLead = landedEnd - decodeEnd
        }

        let problems = [startProblem, endProblem].compactMap { $0 }
        if let problem = problems.first, mode == .keyframe || partialGOPsRefused != nil {
            landed.copyProblem = problem + (partialGOPsRefused.map { " (\($0))" } ?? "")
        }
        if let whole {
            landed.pieces = [Piece(range: landedStart..<landedEnd, encoded: true, reason: "encoded whole: " + (problems + [whole]).joined(separator: "; "))]
        } else {
            let copied = head != nil || tail != nil ? "copied from \(copyFrom.secondsText()) s to \(copyTo.secondsText()) s" : "copied"
            landed.pieces = (head.map { [$0] } ?? [])
                + [Piece(range: copyFrom..<copyTo, encoded: false, startLead: startLead, endLead: endLead, reason: copied)]
                + (tail.map { [$0] } ?? [])
        }
        landed.pieces[0].reason += startNotes.map { "; " + $0 }.joined()
        landed.pieces[landed.pieces.count - 1].reason += endNotes.map { "; " + $0 }.joined()
        return landed
    }

    /// The rule by which a clip joins the first by copy: the track keeps
    /// the first clip's one sample entry, so the later clip's must say the
    /// same. The same codec and entry type, picture size and shape, display
    /// rotation, and decoder configuration (avcC, hvcC...) byte for byte,
    /// and the same colour boxes (colr, mdcv, clli) and pixel aspect (pasp)
    /// where the entries have them; what describes the file rather than the
    /// pictures (btrt's bit rates) may differ. Nil when it joins; otherwise what differs.
    static func joinProblem(_ clip: ComposedClip, to first: ComposedClip) -> String? {
        let a = first.stream
        let b = clip.stream
        func differs(_ what: String) -> String { "its \(what) differs from the first clip's (\(first.info.path))" }
        guard a.codec == b.codec else { return differs("video codec (\(b.codec), not \(a.codec))") }
        guard a.sampleEntry?.type == b.sampleEntry?.type else { return differs("sample entry (\(b.sampleEntry?.type ?? "none"), not \(a.sampleEntry?.type ?? "none"))") }
        guard a.width == b.width, a.height == b.height else {
            return differs("picture size (\(b.width ?? 0)x\(b.height ?? 0), not \(a.width ?? 0)x\(a.height ?? 0))")
        }
        guard a.rotation == b.rotation, a.hasUnusualMatrix == b.hasUnusualMatrix else { return differs("display rotation (\(b.rotation)°, not \(a.rotation)°)") }
        guard a.configuration == b.configuration else { return differs("decoder configuration (its parameter sets)") }
        let compared: Set<String> = ["colr", "mdcv", "clli", "pasp", "dvcC", "dvvC", "dvwC"]
        func boxes(_ stream: StreamInfo) -> [String: [UInt8]] {
            var found: [String: [UInt8]] = [:]
            for child in stream.sampleEntry?.children ?? [] where compared.contains(child.type) { found[child.type] = child.bytes }
            return found
        }
        let (boxesA, boxesB) = (boxes(a), boxes(b))
        for type in compared.sorted() where boxesA[type] != boxesB[type] { return differs("\(type) box") }
        return nil
    }

    /// A copied video track read in a finer time base, `timescale` (a
    /// multiple of its own): its media timeline's decode shift counted in the new ticks.
    static func ticking(_ track: MergePlan.Track, in timescale: Int64) -> MergePlan.Track {
        guard track.timeBase.timescale != timescale, track.timeBase.value == 1 else { return track }
        var finer = track
        let factor = timescale / track.timeBase.timescale
        finer.timeBase = MediaTime(value: 1, timescale: timescale)
        if case .media(let shift) = track.timestamps {
            let (scaled, overflow) = shift.multipliedReportingOverflow(by: factor)
            finer.timestamps = .media(decodeShift: overflow ? .max : scaled)
        }
        return finer
    }

    /// Spans cut at `end`: those past it left out, the one across it shortened.
    static func cut(_ spans: [MergePlan.Span], at end: MediaTime) -> [MergePlan.Span] {
        spans.compactMap { span in
            guard span.place < end else { return nil }
            var cut = span
            if span.end > end { cut.duration = end - span.place }
            return cut
        }
    }

    /// The clips' own sound as the composition's audio: one clip's copied
    /// as a merge would copy it (or encoded where it must be), several
    /// decoded and encoded as one track, each clip's from its start to its
    /// end, silence where a clip has none; nil when no clip has sound.
    func ownSound(
        of clips: [LandedClip], total: MediaTime, container: MergePlan.Container, options: MergeOptions, output: String,
        role: MergePlan.Track.Role = .soundtrack
    ) throws -> MergePlan.Track? {
        guard var audio = try ownSoundTrack(of: clips, total: total, container: container, options: options, output: output, role: role) else {
            return nil
        }
        audio.isEnabled = role != .originalAudio
        return audio
    }

    private func ownSoundTrack(
        of clips: [LandedClip], total: MediaTime, container: MergePlan.Container, options: MergeOptions, output: String,
        role: MergePlan.Track.Role
    ) throws -> MergePlan.Track? {
        // A clip's sound, when it plays during the clip: on the file's timeline, the clip lies after its video's start.
        func sound(of clip: LandedClip) -> StreamInfo? {
            guard let stream = clip.clip.info.audioStreams.first, let start = stream.start, let end = stream.end else { return nil }
            let videoStart = clip.clip.stream.start ?? .zero()
            return end > videoStart + clip.start && start < videoStart + clip.end ? stream : nil
        }
        let sounding = clips.compactMap { clip in sound(of: clip).map { (clip, $0) } }
        guard let (firstClip, firstStream) = sounding.first else { return nil }
        func placed(_ clip: LandedClip, _ stream: StreamInfo) throws -> MergePlan.Track {
            do {
                try Self.checkUnread(stream, of: clip.clip.info.path)
                var track = try Self.track(stream, in: clip.clip.info, role: role, keepsMetadata: options.keepsMetadata)
                // As the clip's video is placed: its file's time at the clip's start is zero.
                let videoStart = clip.clip.stream.start ?? .zero()
                track = try Self.offset(track, by: .zero() - videoStart - clip.start, path: clip.clip.info.path)
                return track
            } catch let error as MediaMuxError {
                throw error.inClip(clip.clip.index, file: clip.clip.clip.path)
            }
        }
        var audio = try placed(firstClip, firstStream)
        if clips.count == 1 {
            audio.end = min(audio.sourceEnd, total)
            guard audio.sourceStart < audio.end else {
                throw MediaMuxError.invalidOption(option: "Composition.clips", message:
                    "\(firstClip.clip.info.path): its sound starts at \(audio.sourceStart.secondsText()) s, after the clip ends; give a soundtrack")
            }
            if let encoding = try audioEncoding(for: firstStream, in: container, options: options.audio, output: output) {
                try Self.check(fadesOf: encoding.effects, playing: audio.end - audio.sourceStart, path: firstClip.clip.info.path)
                audio = Self.encoded(audio, as: encoding)
            }
            audio.spans = Self.spans(of: audio, reason: audio.encoding?.reason ?? "copied")
            return audio
        }
        guard let encoding = try audioEncoding(
            for: firstStream, in: container, options: options.audio, joining: clips.count, output: output)
        else {
            throw MediaMuxError.unexpected(path: output, detail: "internal error: the sound of several clips planned as a copy; please report it")
        }
        try Self.check(fadesOf: encoding.effects, playing: total, path: output)
        audio.sourceStart = .zero()
        audio.end = total
        audio = Self.encoded(audio, as: encoding)
        var place = MediaTime.zero()
        var spans: [MergePlan.Span] = []
        for clip in clips {
            defer { place = place + clip.length }
            guard let stream = sound(of: clip) else { continue }
            let track = try placed(clip, stream)
            // The source's time at the clip's start, on the timeline it is read on.
            spans.append(MergePlan.Span(
                source: .init(path: track.path, streamIndex: track.streamIndex), sourceRange: track.origin..<(track.origin + clip.length),
                place: place, duration: clip.length, decision: .encode, reason: encoding.reason))
        }
        audio.spans = spans
        return audio
    }
}
