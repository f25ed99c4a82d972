import MediaMuxBase
/// Pure: every decision of a merge, from probed facts and options.
package struct MergePlanner: Sendable {
    /// Answers whether the output container can hold a codec (FFmpeg's muxer knows).
    package var canStore: @Sendable (_ codec: String, _ container: MergePlan.Container) -> Bool
    /// Answers whether this FFmpeg has an encoder, by name ("libx264").
    package var hasEncoder: @Sendable (_ name: String) -> Bool

    package init(
        canStore: @escaping @Sendable (String, MergePlan.Container) -> Bool, hasEncoder: @escaping @Sendable (String) -> Bool
    ) {
        self.canStore = canStore
        self.hasEncoder = hasEncoder
    }

    package static let movieTimescale: Int64 = 90_000
    package static let interleaveWindow = MediaTime(value: 1, timescale: 2)
    /// A fragment starts at every video keyframe, and after this at the
    /// latest: long enough for a few moof boxes a minute, short enough for
    /// a stream's reader to start soon and for the muxer to hold little.
    package static let longestFragment = MediaTime(value: 2, timescale: 1)

    package func plan(
        video videoInfo: MediaInfo, audio audioInfo: MediaInfo, output: String,
        outputFacts: OutputFacts, options: MergeOptions
    ) throws -> MergePlan {
        let (container, fragmented) = try Self.outputShape(output, outputFacts: outputFacts, options: options)
        let videoStream = try Self.pick(.video, from: videoInfo, videoInfo.videoStreams, options.videoStream)
        // MP4 needs the picture size in the track; a sample entry without one is damaged.
        guard (videoStream.width ?? 0) > 0, (videoStream.height ?? 0) > 0 else {
            throw MediaMuxError.damaged(path: videoInfo.path, detail: "the video stream has no picture size")
        }
        let audioStream = try Self.pick(.audio, from: audioInfo, audioInfo.audioStreams, options.audioStream)
        try Self.checkUnread(videoStream, of: videoInfo.path)
        try Self.checkUnread(audioStream, of: audioInfo.path)
        let (rotation, videoEncoding) = try videoFraming(videoStream, in: videoInfo, container: container, options: options, output: output)
        if videoEncoding != nil { try Self.checkUnread(videoStream, of: videoInfo.path, yet: ("re-framed", "MergeOptions.orientation")) }
        guard videoEncoding != nil || Self.standIn(for: videoStream) != nil || canStore(videoStream.codec, container) else {
            throw MediaMuxError.codecNotSupportedInContainer(codec: videoStream.codec, container: container.rawValue, path: output)
        }
        var video = try Self.track(videoStream, in: videoInfo, role: .video, keepsMetadata: options.keepsMetadata)
        if let videoEncoding { video = Self.reframed(video, as: videoEncoding) }
        var (audio, ending) = try Self.placeSoundtrack(
            Self.track(audioStream, in: audioInfo, role: .soundtrack, keepsMetadata: options.keepsMetadata), beside: video,
            options: options, output: output)
        let end = ending.end
        video.end = end
        // The video's own audio: kept beside the soundtrack, or mixed into it.
        let placedOriginal = try placedOriginalAudio(
            options.originalAudio, of: videoInfo, videoStart: videoStream.start ?? .zero(), end: end,
            keepsMetadata: options.keepsMetadata, output: output)
        var mix: MergePlan.Mix?
        if case .mixed(let level) = options.originalAudio, let placedOriginal {
            try Self.checkUnread(placedOriginal.stream, of: videoInfo.path, yet: ("mixed into the soundtrack", "MergeOptions.originalAudio"))
            mix = MergePlan.Mix(original: placedOriginal.track, level: level)
            // One track from the output's start to its end, silent where neither plays.
            audio.sourceStart = .zero()
            audio.end = end
        }
        let encoding = try audioEncoding(
            for: audioStream, in: container, options: options.audio, repeating: ending.loop != nil, mixingLevel: mix?.level,
            output: output)
        if let encoding {
            try Self.checkUnread(audioStream, of: audioInfo.path, yet: ("encoded (\(encoding.reason))", "MergeOptions.audio"))
            try Self.check(fadesOf: encoding.effects, playing: audio.end - audio.sourceStart, path: audioInfo.path)
            audio = Self.encoded(audio, as: encoding)
        }
        var original: MergePlan.Track?
        if options.originalAudio == .kept, let placedOriginal {
            original = try keptTrack(placedOriginal, in: container, output: output)
        }
        video.spans = Self.spans(of: video, reason: videoEncoding?.reason ?? "copied")
        audio.spans = Self.spans(of: audio, loop: ending.loop, reason: audio.encoding?.reason ?? "copied")
        if let kept = original { original?.spans = Self.spans(of: kept, reason: kept.encoding?.reason ?? "copied") }

        let metadata = MetadataCarry.plan(video: videoInfo, keep: options.keepsMetadata)
        return MergePlan(
            outputPath: output,
            container: container,
            overwrite: options.overwrite,
            tracks: [video, audio] + (original.map { [$0] } ?? []),
            mix: mix,
            end: end,
            endReason: ending.reason,
            rotation: rotation,
            movieHeader: fragmented ? .fragmented(longest: Self.longestFragment) : Self.movieHeader(
                faststart: options.faststart, video: video, audio: [audio] + (original.map { [$0] } ?? []),
                metadataBytes: videoInfo.metadataBytes + metadata.boxes.byteCount, end: end, inputBytes: outputFacts.inputBytes),
            sampleTables: Self.sampleTables(fragmented: fragmented, container: container, video: video),
            movieTimescale: Self.movieTimescale,
            interleaveWindow: Self.interleaveWindow,
            metadata: metadata,
            leftOut: Self.leftOut(of: videoInfo, copying: videoStream.index, of: audioInfo, copying: audioStream.index)
                .filter { !($0.path == videoInfo.path && $0.streamIndex == placedOriginal?.track.streamIndex) },
            warnings: [videoEncoding == nil ? Self.unusedEncodingOptions(options.video, copied: rotation) : nil].compactMap { $0 })
    }

    /// The output's container and whether it is fragmented, once the
    /// output and the options that shape it are checked: a folder, a
    /// fragmented or streamed output that is not MP4, a rotation out of
    /// range, an output that is an input, a missing folder, an existing file.
    static func outputShape(
        _ output: String, outputFacts: OutputFacts, options: MergeOptions
    ) throws -> (container: MergePlan.Container, fragmented: Bool) {
        if !outputFacts.isStream, outputFacts.isFolder || output.hasSuffix("/") {
            throw MediaMuxError.outputNotWritable(path: output, reason: "it is a folder; give a file name ending in \(MergePlan.Container.spokenExtensions())")
        }
        // A stream cannot be sought back to: only fragments can be written to it.
        let fragmented = outputFacts.isStream || options.layout == .fragmented
        let container = outputFacts.isStream ? .mp4 : try Self.container(for: output)
        if fragmented, container != .mp4 {
            throw MediaMuxError.invalidOption(option: "MergeOptions.layout", message: "\(output): fragmented output is MP4; name the output \(MergePlan.Container.spokenExtensions([.mp4]))")
        }
        if fragmented, let problem = MergeOptions.fragmentedProblem(faststart: options.faststart) {
            throw MediaMuxError.invalidOption(option: "MergeOptions.faststart", message: "faststart: \(problem)")
        }
        if let rotation = options.rotation, let problem = MergeOptions.rotationProblem(rotation) {
            throw MediaMuxError.invalidOption(option: "MergeOptions.rotation", message: "the rotation \(problem)")
        }
        if outputFacts.isSameFileAsAnInput {
            throw MediaMuxError.invalidOption(option: "output", message: "\(output): is one of the inputs; choose another output path")
        }
        guard outputFacts.folderExists else { throw MediaMuxError.outputDirectoryMissing(path: output) }
        if outputFacts.exists && !options.overwrite { throw MediaMuxError.outputExists(path: output) }
        return (container, fragmented)
    }

    /// A codec this FFmpeg has no name for is never decoded. From an MP4 or
    /// MOV source it is copied unread: its sample entry tells players all
    /// they need, and the muxer takes its packets as a stand-in codec's.
    /// Anywhere else (Matroska) nothing would describe it in the output.
    /// `need` says what the merge would do beyond a copy.
    /// `option` names the option that asks for it.
    static func checkUnread(_ stream: StreamInfo, of path: String, yet need: (what: String, option: String)? = nil) throws {
        guard let unreadable = stream.unreadableCodec else { return }
        let what = "its \(stream.kind.rawValue) stream is \(unreadable)"
        if let need {
            // What was asked of it is the problem, not the file.
            throw MediaMuxError.invalidOption(option: need.option, message: "\(path): \(what); it can be copied as it is, but not \(need.what)")
        }
        guard standIn(for: stream) != nil else {
            throw MediaMuxError.notMedia(path: path, detail: "\(what); only an MP4 or MOV source's can be copied unread")
        }
    }

    /// The codec FFmpeg's muxer is told an unread stream's packets are: one
    /// whose packets it writes as they come, whatever they hold, in MP4 and
    /// MOV alike, and at any sample rate (MP2, where MP3 is refused below 16
    /// kHz). Nil for a stream FFmpeg reads, or one without an MP4/MOV sample
    /// entry to copy.
    static func standIn(for stream: StreamInfo) -> String? {
        guard stream.unreadableCodec != nil, stream.sampleEntry != nil else { return nil }
        switch stream.kind {
        case .video: return "mpeg4"
        case .audio: return "mp2"
        default: return nil
        }
    }

    /// Every stream of the inputs besides the two copied, with the reason.
    static func leftOut(of video: MediaInfo, copying videoIndex: Int, of audio: MediaInfo, copying audioIndex: Int) -> [MergePlan.LeftOut] {
        let sameFile = video.path == audio.path
        var result = video.streams
            .filter { $0.index != videoIndex && !(sameFile && $0.index == audioIndex) }
            .map { leftOut($0, in: video, soundtrackElsewhere: !sameFile) }
        if !sameFile {
            result += audio.streams.filter { $0.index != audioIndex }.map { leftOut($0, in: audio, soundtrackElsewhere: false) }
        }
        return result
    }

    /// One stream not copied, with the reason: `soundtrackElsewhere` when
    /// the sound comes from another file, which replaces this file's own.
    static func leftOut(_ stream: StreamInfo, in info: MediaInfo, soundtrackElsewhere: Bool) -> MergePlan.LeftOut {
        let reason: String
        switch (stream.kind, stream.codecTag) {
        case (.video, _) where stream.isAttachedPicture: reason = "cover art is not copied"
        case (.video, _): reason = "only one video stream is copied"
        case (.audio, _) where soundtrackElsewhere: reason = "the soundtrack replaces the video's own audio"
        case (.audio, _): reason = "only one audio stream is copied"
        case (.subtitle, _): reason = "subtitles are not copied"
        case (.data, "tmcd"): reason = "timecode is not copied"
        case (.data, "mebx"): reason = "timed metadata is not copied"
        default: reason = "\(stream.kind.rawValue) streams are not copied"
        }
        let tag = stream.codecTag.map { stream.codec == "none" ? $0 : "\(stream.codec) (\($0))" } ?? stream.codec
        let choosable = !stream.isAttachedPicture && !(soundtrackElsewhere && stream.kind == .audio) && (stream.kind == .video || stream.kind == .audio)
        return MergePlan.LeftOut(
            path: info.path, streamIndex: stream.index, what: "\(stream.kind.rawValue) \(tag)", reason: reason,
            choosable: choosable)
    }

    static func container(for output: String) throws -> MergePlan.Container {
        let name = namePart(of: output)
        let ext = name.contains(".") ? String(name.split(separator: ".").last ?? "").lowercased() : ""
        guard let container = MergePlan.Container(extension: ext) else {
            throw MediaMuxError.unsupportedOutputExtension(path: output, extension: ext, accepted: MergePlan.Container.allExtensions)
        }
        return container
    }

    static func pick(
        _ kind: MediaMuxError.StreamKind, from info: MediaInfo, _ candidates: [StreamInfo], _ wanted: Int?
    ) throws -> StreamInfo {
        guard !candidates.isEmpty else { throw MediaMuxError.noStream(kind: kind, path: info.path) }
        let index = wanted ?? 0
        guard candidates.indices.contains(index) else {
            throw MediaMuxError.streamIndexOutOfRange(kind: kind, index: index, available: candidates.count, path: info.path)
        }
        return candidates[index]
    }

    static func track(
        _ stream: StreamInfo, in info: MediaInfo, role: MergePlan.Track.Role, keepsMetadata: Bool
    ) throws -> MergePlan.Track {
        let kind = role.kind
        guard var start = stream.start, var end = stream.end, end > start else {
            throw MediaMuxError.unknownDuration(kind: kind, path: info.path)
        }
        // What every muxer needs and a damaged header may lack.
        if kind == .audio, (stream.sampleRate ?? 0) <= 0 || (stream.channels ?? 0) <= 0 {
            throw MediaMuxError.damaged(
                path: info.path, detail: "its audio stream says \(stream.channels ?? 0) channels at \(stream.sampleRate ?? 0) Hz")
        }
        if kind == .video, (stream.width ?? 0) <= 0 || (stream.height ?? 0) <= 0 {
            throw MediaMuxError.damaged(
                path: info.path, detail: "its video stream says its pictures are \(stream.width ?? 0)x\(stream.height ?? 0)")
        }
        // Without parameter sets FFmpeg's muxer makes the avcC or hvcC of the
        // first packet's bytes: a sample entry nothing can decode by, and a
        // movie header larger than any room reserved for it.
        if kind == .video, let name = Self.parameterSetCodecs[stream.codec], stream.configuration?.isEmpty == true {
            throw MediaMuxError.damaged(
                path: info.path, detail: "its \(name) video has no decoder configuration (no parameter sets)")
        }
        var origin = stream.origin
        var sampleCount = stream.packetCount
        var timestamps = MergePlan.Timestamps.demuxer
        if kind == .video, let media = stream.mediaTimeline {
            // The sample table's own times: exact where FFmpeg's edit-list
            // handling is not, and every sample copied however deep its
            // composition offset. Leading empty edits count as `start`, as below.
            origin = media.start - start
            sampleCount = media.sampleCount ?? sampleCount
            timestamps = .media(decodeShift: media.presentationLead)
        }
        // The video's first frame is shown at zero. A late start in its file only
        // placed it against that file's own audio, which a merge does not copy.
        if kind == .video, start > .zero() {
            origin = origin + start
            end = end - start
            start = .zero()
        }
        var track = MergePlan.Track(
            role: role,
            path: info.path,
            streamIndex: stream.index,
            codec: stream.codec,
            // Apple's players refuse HEVC tagged hev1, which FFmpeg picks by default.
            codecTag: stream.codec == "hevc" ? "hvc1" : nil,
            timeBase: kind == .audio ? Self.sampleExactTimeBase(stream) : stream.timeBase,
            origin: origin,
            sourceStart: max(start, .zero()),
            sourceEnd: end,
            end: end,
            sampleCount: sampleCount,
            headerBytes: stream.headerBytes,
            // Audio frames can end mid-frame (players trim them); a video frame keeps its references instead.
            trimsLastSample: kind == .audio)
        track.timestamps = timestamps
        track.missingSamples = stream.missingSamples
        track.damagedFragment = stream.damagedFragment
        track.isFragmented = stream.isFragmented
        track.fragmentSamples = stream.fragmentSamples
        track.marksFirstRandomAccessPoint = kind == .video && RandomAccess.understands(codec: stream.codec)
        if let standIn = Self.standIn(for: stream), let entry = stream.sampleEntry {
            // Unread: the whole entry replaces the one the muxer writes for the stand-in.
            track.standIn = standIn
            track.codec = entry.type
            track.sampleEntry = SampleEntryCarry(wholeEntry: entry)
        } else {
            track.sampleEntry = stream.sampleEntry.flatMap { SampleEntryCarry(sourceType: $0.type, boxes: $0.children ?? []) }
        }
        track.trackBoxes = TrackBoxCarry(boxes: stream.trackBoxes, keepsMetadata: keepsMetadata)
        track.headerBytes += (track.sampleEntry?.byteCount ?? 0) + (track.trackBoxes?.byteCount ?? 0)
        return track
    }

    /// The video's track as re-framed: the source's packets decoded (so read
    /// and cut as a copy would be), one encoded frame for each at its time.
    /// Of the source's sample entry only what describes the colour stays
    /// (colr, HDR10's mdcv and clli, Apple's amve), and only when the
    /// encoding keeps the source's colour: converted to 8-bit BT.709 (a
    /// preview clip's), the pictures are no longer what those boxes say,
    /// and the encoder writes its own colour. Of its track boxes, the
    /// metadata (not tapt, the source's aperture).
    static func reframed(_ track: MergePlan.Track, as encoding: VideoEncoding) -> MergePlan.Track {
        var reframed = track
        reframed.reframing = encoding
        reframed.codec = encoding.codec
        reframed.codecTag = encoding.codec == "hevc" ? "hvc1" : nil
        reframed.marksFirstRandomAccessPoint = false
        let entryType = encoding.codec == "hevc" ? "hvc1" : "avc1"
        reframed.sampleEntry = track.sampleEntry.flatMap { carry in
            SampleEntryCarry(
                sourceType: entryType,
                boxes: encoding.colour == .kept ? carry.boxes.filter { SampleEntryCarry.colourTypes.contains($0.type) } : [])
        }
        reframed.trackBoxes = track.trackBoxes.flatMap { TrackBoxCarry(boxes: $0.boxes.filter { $0.type != "tapt" }, keepsMetadata: true) }
        // An encoder's parameter sets, and the entries' smaller size, in place of the source's.
        reframed.headerBytes = 1024 + (reframed.sampleEntry?.byteCount ?? 0) + (reframed.trackBoxes?.byteCount ?? 0)
        return reframed
    }

    /// The soundtrack's track as encoded: packets in the encoder's time base
    /// (one tick a sample), one for each 1024 samples plus the encoder's
    /// priming and flush, and none of the source's sample-entry or track
    /// boxes, which describe the source's codec.
    static func encoded(_ track: MergePlan.Track, as encoding: AudioEncoding) -> MergePlan.Track {
        var encoded = track
        encoded.encoding = encoding
        encoded.codec = encoding.codec
        encoded.codecTag = nil
        encoded.timeBase = MediaTime(value: 1, timescale: Int64(encoding.sampleRate))
        let samples = (track.end - track.sourceStart).ticks(of: encoded.timeBase, rounding: .up)
        encoded.sampleCount = Int(samples / 1024) + 3
        encoded.headerBytes = 256  // an esds of a few dozen bytes, and the tags
        encoded.sampleEntry = nil
        encoded.trackBoxes = nil
        return encoded
    }

    /// A time base in which every sample of an audio stream falls on a
    /// tick: the stream's own, or one both it and the sample rate divide
    /// (WebM's milliseconds cannot place Opus's 6.5 ms pre-skip).
    static func sampleExactTimeBase(_ stream: StreamInfo) -> MediaTime {
        let base = stream.timeBase
        guard let rate = stream.sampleRate.map(Int64.init), rate > 0, base.value == 1, base.timescale % rate != 0 else { return base }
        let common = commonScale(base.timescale, rate)
        let exact = common % base.timescale == 0 && common % rate == 0 && common <= Int64(Int32.max)
        return exact ? MediaTime(value: 1, timescale: common) : base
    }

    /// Room for the moov box, when every track's sample count is known: an
    /// upper bound on what FFmpeg's mov muxer writes. Per video sample: stsz 4,
    /// stts 8, ctts 8, stss 4, sdtp 1; per audio sample: stsz 4, stts 8; per
    /// chunk: stsc 12, co64 8. A chunk ends at every interleaving window and at
    /// 1 MiB, so chunks are bounded by the windows plus the input MiB. Fixed
    /// boxes (mvhd, tkhd, mdhd, hdlr, minf, stsd, edts, udta) fit in 4 KiB a
    /// track besides the codec configuration and tags.
    static func movieHeader(
        faststart: Bool, video: MergePlan.Track, audio: [MergePlan.Track], metadataBytes: Int,
        end: MediaTime, inputBytes: Int
    ) -> MergePlan.MovieHeaderPlacement {
        guard faststart else { return .atEnd }
        // Clamped: a damaged file may declare a duration of centuries.
        let windows = Int(min((end.seconds / interleaveWindow.seconds).rounded(.up), 1e9)) + 2
        var bytes = 4096 + metadataBytes
        for (track, perSample) in [(video, 25)] + audio.map({ ($0, 12) }) {
            guard let samples = track.writtenSampleBound, samples > 0 else { return .movedToFront }
            // Past 512 MiB (20 million video samples; a damaged table
            // declares billions) nothing is reserved: the moov is moved to
            // the front once its real size is known.
            guard samples <= largestReservedMovieHeader / perSample else { return .movedToFront }
            let chunks = min(samples, windows + inputBytes / (1 << 20) + 1)
            bytes += 4096 + track.headerBytes + samples * perSample + chunks * 20
            guard bytes <= largestReservedMovieHeader else { return .movedToFront }
        }
        return .reservedAtFront(bytes: bytes)
    }

    /// A movie's sample tables are made from fragments when the video is
    /// copied from fragments, read by MediaMux in flat memory: a long
    /// recording then merges in flat memory as well, where FFmpeg's muxer
    /// would keep an entry for every sample. MP4 only, as fragmented output is.
    static func sampleTables(fragmented: Bool, container: MergePlan.Container, video: MergePlan.Track) -> MergePlan.SampleTables {
        guard !fragmented, container == .mp4, video.isCopied, video.readsOwnFragments != nil else { return .muxer }
        return .fromFragments(longest: longestFragment)
    }

    /// The most room reserved for a moov.
    static let largestReservedMovieHeader = 512 << 20

    /// Codecs whose MP4 sample entry holds their parameter sets, by name.
    static let parameterSetCodecs = ["h264": "H.264", "hevc": "HEVC"]
}
