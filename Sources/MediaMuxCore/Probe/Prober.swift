import MediaMuxBase
import MediaMuxContainers
internal import CFFmpeg

/// Reads what a file holds and establishes, for every stream, where its
/// presentation starts and ends on the file's own timeline.
package struct Prober {
    package let cancellation: CancellationFlag

    package init(cancellation: CancellationFlag) { self.cancellation = cancellation }

    package func probe(path: String) throws -> MediaInfo {
        let demuxer = try DemuxerHandle(path: path, cancellation: cancellation, fragmentsAsReached: true)
        return try probe(demuxer)
    }

    package func probe(_ demuxer: DemuxerHandle) throws -> MediaInfo {
        let format = demuxer.context.pointee
        var streams = (0..<demuxer.streamCount).map { describe(demuxer, index: $0) }
        var containerDuration = format.duration > 0 && format.duration != noTimestamp
            ? MediaTime(value: format.duration, timescale: Int64(AV_TIME_BASE)) : nil
        var movieMetadata: MovieMetadataBoxes?
        if demuxer.isQuickTimeFamily {
            // Fragmented or damaged files may have no usable movie header; FFmpeg's values stand then.
            let header = try? MovieHeaderFacts(path: demuxer.path)
            applyQuickTimeTiming(demuxer, header: header, to: &streams)
            movieMetadata = header?.metadata
            // The movie header's own: FFmpeg 7 leaves the format's duration
            // to stream-info probing, which a complete MP4 skips.
            if let header, header.movieDuration > 0 {
                containerDuration = MediaTime(value: header.movieDuration, timescale: header.movieTimescale)
            }
            // A fragmented movie lasts as long as its samples, whatever mvhd and mehd say.
            if header?.fragments != nil {
                containerDuration = streams.compactMap(\.end).max()
            }
        } else {
            let origin = format.start_time != noTimestamp
                ? MediaTime(value: format.start_time, timescale: Int64(AV_TIME_BASE)) : .zero()
            try scanPackets(demuxer, fallbackOrigin: origin, into: &streams)
            nameUnnamedMatroskaCodecs(demuxer, in: &streams)
        }
        return MediaInfo(
            path: demuxer.path,
            format: demuxer.formatName,
            formatDescription: format.iformat.pointee.long_name.map { String(cString: $0) } ?? demuxer.formatName,
            containerDuration: containerDuration,
            metadataBytes: dictionaryBytes(format.metadata),
            tags: dictionary(format.metadata),
            streams: streams,
            movieMetadata: movieMetadata)
    }

    /// Matroska names each codec by a CodecID ("V_MPEGI/ISO/VVC"), which
    /// FFmpeg's demuxer drops for one it has no id for: read from the file
    /// and given as the stream's tag. FFmpeg makes a stream of each track
    /// entry in order; where it left one out, no stream is named.
    private func nameUnnamedMatroskaCodecs(_ demuxer: DemuxerHandle, in streams: inout [StreamInfo]) {
        guard demuxer.formatName.contains("matroska"), streams.contains(where: { $0.codec == "none" && $0.codecTag == nil }) else { return }
        let codecIDs = withFileForReading(demuxer.path, MatroskaTracks.codecIDs(descriptor:)) ?? []
        guard codecIDs.count == streams.count else { return }
        for i in streams.indices where streams[i].codec == "none" && streams[i].codecTag == nil {
            streams[i].codecTag = codecIDs[i].isEmpty ? nil : codecIDs[i]
        }
    }

    private func describe(_ demuxer: DemuxerHandle, index: Int) -> StreamInfo {
        let stream = demuxer.stream(index).pointee
        let parameters = stream.codecpar.pointee
        let kind: StreamInfo.Kind
        switch parameters.codec_type {
        case AVMEDIA_TYPE_VIDEO: kind = .video
        case AVMEDIA_TYPE_AUDIO: kind = .audio
        case AVMEDIA_TYPE_SUBTITLE: kind = .subtitle
        case AVMEDIA_TYPE_DATA: kind = .data
        case AVMEDIA_TYPE_ATTACHMENT: kind = .attachment
        default: kind = .other
        }
        let timeBase = MediaTime(timeBase: stream.time_base)
        let rotation = displayRotation(demuxer.stream(index))
        let frameRate = stream.avg_frame_rate.den > 0 && stream.avg_frame_rate.num > 0
            ? av_q2d(stream.avg_frame_rate) : nil
        var info = StreamInfo(
            index: index,
            kind: kind,
            codec: String(cString: avcodec_get_name(parameters.codec_id)),
            codecTag: fourCharacterCode(parameters.codec_tag),
            profile: avcodec_profile_name(parameters.codec_id, parameters.profile).map { String(cString: $0) },
            timeBase: timeBase,
            origin: .zero(timeBase.timescale),
            start: nil,
            end: nil,
            timing: .unknown,
            packetCount: stream.nb_frames > 0 ? Int(stream.nb_frames) : nil,
            isAttachedPicture: (stream.disposition & AV_DISPOSITION_ATTACHED_PIC) != 0,
            language: av_dict_get(stream.metadata, "language", nil, 0)?.pointee.value.map { String(cString: $0) },
            bitRate: parameters.bit_rate > 0 ? Int(parameters.bit_rate) : nil,
            headerBytes: Int(max(parameters.extradata_size, 0)) + dictionaryBytes(stream.metadata),
            width: kind == .video ? Int(parameters.width) : nil,
            height: kind == .video ? Int(parameters.height) : nil,
            rotation: rotation.degrees,
            hasUnusualMatrix: rotation.unusual,
            frameRate: kind == .video ? frameRate : nil,
            pixelAspect: kind == .video ? pixelAspect(demuxer, stream: demuxer.stream(index)) : PixelAspect(),
            sampleRate: kind == .audio ? Int(parameters.sample_rate) : nil,
            channels: kind == .audio ? Int(parameters.ch_layout.nb_channels) : nil,
            priming: kind == .audio && parameters.initial_padding > 0 ? Int(parameters.initial_padding) : nil)
        info.configuration = parameters.extradata.map { [UInt8](UnsafeBufferPointer(start: $0, count: Int(max(parameters.extradata_size, 0)))) } ?? []
        if kind == .video {
            let format = av_pix_fmt_desc_get(AVPixelFormat(rawValue: parameters.format))
            info.bitDepth = format.map { Int($0.pointee.comp.0.depth) }
                ?? info.configuration.flatMap { VideoConfiguration.bitDepth(codec: info.codec, configuration: $0) }
            info.colourTransfer = parameters.color_trc == AVCOL_TRC_UNSPECIFIED ? nil : av_color_transfer_name(parameters.color_trc).map { String(cString: $0) }
            info.displayMatrix = CFFmpeg_stream_display_matrix(demuxer.stream(index)).map { Array(UnsafeBufferPointer(start: $0, count: 9)) }
        }
        return info
    }

    /// MP4/MOV: a track starts after its leading empty edits and is presented
    /// for its tkhd duration (the sum of its edits): what players show, read
    /// from the movie header. FFmpeg's stream duration is sometimes that and
    /// sometimes the media's span; where both name the same instant to within a
    /// movie tick, FFmpeg's finer time base is kept.
    private func applyQuickTimeTiming(_ demuxer: DemuxerHandle, header: MovieHeaderFacts?, to streams: inout [StreamInfo]) {
        let smpb = demuxer.metadata("iTunSMPB").flatMap(ITunesGaplessInfo.init)
        for i in streams.indices {
            let stream = demuxer.stream(i).pointee
            let scale = streams[i].timeBase
            func ticks(_ value: Int64) -> MediaTime { MediaTime(ticks: value, of: scale) }
            if let header, header.fragments != nil {
                applyFragmentedTiming(header, trackID: Int(stream.id), to: &streams[i])
                if let smpb, header.tracks[Int(stream.id)]?.hasEditList == false { apply(smpb, to: &streams[i]) }
                continue
            }
            guard stream.duration > 0, stream.duration != noTimestamp else { continue }
            var start = MediaTime.zero(scale.timescale)
            var end = ticks(stream.duration)
            let track = header?.tracks[Int(stream.id)]
            if let header, let track, track.duration > 0 {
                let stated = MediaTime(value: track.duration, timescale: header.movieTimescale)
                let tick = MediaTime(value: 1, timescale: header.movieTimescale)
                if stated - end > tick || end - stated > tick { end = stated }
                start = MediaTime(value: track.delay, timescale: header.movieTimescale)
            }
            // No edit list, and every sample shown late by its composition
            // offset: the track is shown from its earliest sample to the end
            // of its last (see `presentedFrom`), not for tkhd's sum of
            // durations from zero, which leaves out the last frames' time.
            let presentedFrom = track.map { MovieHeaderFacts.presentedFrom($0, span: $0.tableSpan) } ?? 0
            if let track, let span = track.tableSpan, !track.hasEditList, presentedFrom > 0, track.mediaTimescale > 0 {
                start = MediaTime(value: presentedFrom, timescale: track.mediaTimescale)
                end = MediaTime(value: span.end, timescale: track.mediaTimescale)
            }
            streams[i].start = start
            streams[i].end = end
            streams[i].timing = .container
            streams[i].sampleEntry = track?.sampleEntry
            streams[i].trackBoxes = track?.otherBoxes ?? []
            // Fragmented files keep their samples outside the sample table: FFmpeg's timeline stands.
            if let track, track.isSingleSegment, track.mediaStart >= 0, (track.sampleCount ?? 0) > 0, streams[i].kind == .video {
                let (startValue, overflow) = presentedFrom.multipliedReportingOverflow(by: scale.value)
                if !overflow {
                    streams[i].mediaTimeline = MediaTimeline(
                        start: MediaTime(value: startValue, timescale: scale.timescale),
                        presentationLead: max(0, -track.leastCompositionOffset),
                        sampleCount: track.sampleCount)
                }
            }
            // The index after edit-list processing: exactly the packets the demuxer will deliver.
            let indexed = Int(avformat_index_get_entries_count(demuxer.stream(i)))
            if indexed > 0 { streams[i].packetCount = indexed }
            if let smpb, track?.hasEditList == false { apply(smpb, to: &streams[i]) }
        }
    }

    /// AAC without an edit list whose delay and padding only iTunSMPB
    /// declares: FFmpeg's timestamps include the priming; the real waveform
    /// is `valid` samples after it.
    private func apply(_ smpb: ITunesGaplessInfo, to stream: inout StreamInfo) {
        guard stream.kind == .audio, stream.codec == "aac", let rate = stream.sampleRate, rate > 0, smpb.priming > 0, smpb.valid > 0 else { return }
        stream.origin = MediaTime(value: Int64(smpb.priming), timescale: Int64(rate))
        stream.start = .zero(Int64(rate))
        stream.end = MediaTime(value: Int64(smpb.valid), timescale: Int64(rate))
        stream.priming = smpb.priming
        stream.timing = .iTunSMPB
    }

    /// A fragmented MP4's track lasts as its samples say, those of its
    /// sample table and of every fragment: its start is its leading empty
    /// edits, and it is presented from its edit list's media time (0
    /// without one) to the end of the sample shown last. mvhd, mehd, tkhd
    /// and the edit's duration are written before the fragments, or
    /// guessed, and do not count.
    private func applyFragmentedTiming(_ header: MovieHeaderFacts, trackID: Int, to stream: inout StreamInfo) {
        guard let track = header.tracks[trackID] else { return }
        stream.sampleEntry = track.sampleEntry
        stream.trackBoxes = track.otherBoxes
        stream.packetCount = header.fragmentedSampleCount(of: trackID)
        if let missing = header.fragments?.tracks[trackID]?.missingSamples, missing > 0 { stream.missingSamples = missing }
        stream.damagedFragment = header.fragments?.damage
        stream.isFragmented = true
        guard track.mediaTimescale > 0, let span = header.fragmentedSpan(of: trackID) else { return }
        let first = MovieHeaderFacts.presentedFrom(track, span: span)
        guard span.end > first else { return }
        // Without an edit list the file's timeline is the media's.
        let start = track.hasEditList
            ? MediaTime(value: track.delay, timescale: header.movieTimescale) : MediaTime(value: first, timescale: track.mediaTimescale)
        stream.start = start
        stream.end = start + MediaTime(value: span.end - first, timescale: track.mediaTimescale)
        stream.timing = .container
        let least = min(track.leastCompositionOffset, header.fragments?.tracks[trackID]?.leastCompositionOffset ?? 0)
        // Samples in the moov as well: FFmpeg moves those by an edit list its own way (not followed here).
        if (track.sampleCount ?? 0) == 0 || !track.hasEditList, track.sampleEntryCount == 1, !track.isProtected,
           stream.timeBase == MediaTime(value: 1, timescale: track.mediaTimescale) {
            stream.fragmentSamples = FragmentSamples(trackID: trackID, presentationLead: max(0, -least), tableSamples: track.sampleCount ?? 0)
        }
        if stream.kind == .video, track.isSingleSegment, stream.timeBase == MediaTime(value: 1, timescale: track.mediaTimescale) {
            stream.mediaTimeline = MediaTimeline(
                start: MediaTime(value: first, timescale: track.mediaTimescale), presentationLead: max(0, -least),
                sampleCount: stream.packetCount)
        }
    }

    /// Other containers do not index every sample or round their durations
    /// (Matroska stores a float, browser recordings none), so read the
    /// packets. The file's time zero is its earliest sample that is shown
    /// or heard: encoder delay dropped by the decoder does not count.
    private func scanPackets(_ demuxer: DemuxerHandle, fallbackOrigin: MediaTime, into streams: inout [StreamInfo]) throws {
        let units = streams.indices.map { SpanUnits(demuxer.stream($0)) }
        var spans = units.map { PacketSpan(timescale: $0.timescale) }
        // Ogg's packet durations are cut by the end trimming its granule
        // positions declare, which FFmpeg hands out as discard padding too.
        let durationsTrimmed = demuxer.formatName == "ogg"
        let packet = try PacketBuffer()
        while try demuxer.read(into: packet) {
            let p = packet.pointer.pointee
            let i = Int(p.stream_index)
            guard i < streams.count else { continue }
            let pts = p.pts != noTimestamp ? p.pts : p.dts
            guard pts != noTimestamp else { continue }
            // Junk before an MP3's first frame comes out as a packet that decodes to nothing.
            if !packetHoldsAudio(packet.pointer, stream: demuxer.stream(i)) { continue }
            // Times no file of this world has (a damaged or crafted one) would overflow: such packets do not count.
            let (at, late) = pts.multipliedReportingOverflow(by: units[i].perTick)
            let (length, long) = max(p.duration, 0).multipliedReportingOverflow(by: units[i].perTick)
            guard !late, !long, !at.addingReportingOverflow(length).overflow else { continue }
            var (skip, discard) = droppedSamples(packet.pointer)
            let samples = units[i].perSample > 0 ? decodedSamples(packet.pointer, stream: demuxer.stream(i)) : nil
            // Counted from the packets' durations, the end is already trimmed there.
            if samples == nil && durationsTrimmed { discard = 0 }
            // A Vorbis decoder outputs nothing for the first packet: its block only primes the overlap.
            if spans[i].count == 0, demuxer.stream(i).pointee.codecpar.pointee.codec_id == AV_CODEC_ID_VORBIS, units[i].perSample > 0 {
                skip = max(skip, max(p.duration, 0) * units[i].perTick / units[i].perSample)
            }
            spans[i].add(
                pts: at, duration: length,
                samples: samples.map { $0 * units[i].perSample }, skip: skip * units[i].perSample, discard: discard * units[i].perSample)
        }
        for i in streams.indices where streams[i].kind == .audio {
            let padding = Int64(demuxer.stream(i).pointee.codecpar.pointee.initial_padding)
            if padding > 0 { spans[i].dropAtStartIfUndeclared(padding * units[i].perSample) }
        }
        let presented = spans.map(\.presented)
        let origin = presented.compactMap { $0?.start }.min() ?? fallbackOrigin
        for i in streams.indices {
            streams[i].origin = origin
            streams[i].packetCount = spans[i].count
            guard let (start, end) = presented[i] else { continue }
            streams[i].start = start - origin
            streams[i].end = end - origin
            streams[i].timing = .packetScan
        }
    }

    /// The samples a decoder drops from a packet, at its start and at its
    /// end: FFmpeg's skip-samples side data (from MP3's LAME header, Ogg's
    /// granule positions, WebM's DiscardPadding).
    private func droppedSamples(_ packet: UnsafeMutablePointer<AVPacket>) -> (skip: Int64, discard: Int64) {
        var size = 0
        guard let data = av_packet_get_side_data(packet, AV_PKT_DATA_SKIP_SAMPLES, &size), size >= 8 else { return (0, 0) }
        let raw = UnsafeRawPointer(data)
        let skip = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
        let discard = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
        return (Int64(skip), Int64(discard))
    }

    /// The samples an audio packet decodes to, as its codec frames them:
    /// Opus from the packet's TOC byte, others with a fixed frame size
    /// (AAC 1024, MP3 1152) from that; nil otherwise. Not the packet's
    /// duration, which Ogg shortens by the end trimming it also declares.
    private func decodedSamples(_ packet: UnsafeMutablePointer<AVPacket>, stream: UnsafeMutablePointer<AVStream>) -> Int64? {
        let parameters = stream.pointee.codecpar.pointee
        if parameters.codec_id == AV_CODEC_ID_OPUS {
            guard let bytes = packet.pointee.data, packet.pointee.size > 0 else { return nil }
            return opusPacketSamples(UnsafeBufferPointer(start: bytes, count: Int(packet.pointee.size)))
        }
        return parameters.frame_size > 0 ? Int64(parameters.frame_size) : nil
    }
}

/// False for an MP3 packet that does not start with a frame header: junk
/// the demuxer resynced past, which no decoder outputs anything for.
func packetHoldsAudio(_ packet: UnsafeMutablePointer<AVPacket>, stream: UnsafeMutablePointer<AVStream>) -> Bool {
    guard stream.pointee.codecpar.pointee.codec_id == AV_CODEC_ID_MP3 else { return true }
    guard let data = packet.pointee.data, packet.pointee.size > 0 else { return false }
    return AudioFrameSync.startsWithMPEGAudioFrame(UnsafeBufferPointer(start: data, count: Int(packet.pointee.size)))
}

/// A timescale in which both a stream's ticks and its samples are whole numbers.
private struct SpanUnits {
    var timescale: Int64
    /// Units per tick of the time base, and per sample.
    var perTick: Int64
    var perSample: Int64

    init(_ stream: UnsafeMutablePointer<AVStream>) {
        let base = stream.pointee.time_base
        let ticks = Int64(max(base.den, 1))
        let rate = Int64(max(stream.pointee.codecpar.pointee.sample_rate, 0))
        var scale = ticks
        if rate > 0 {
            let common = commonScale(ticks, rate)
            if common % ticks == 0, common % rate == 0, common <= Int64(Int32.max) * 1000 { scale = common }
        }
        timescale = scale
        // A tick is num/den seconds.
        perTick = Int64(max(base.num, 1)) * (scale / ticks)
        perSample = rate > 0 && scale % rate == 0 ? scale / rate : 0
    }
}

/// The size of a tag dictionary as a muxer would write it, roughly: keys,
/// values and a box header each.
private func dictionaryBytes(_ tags: OpaquePointer?) -> Int {
    dictionary(tags).reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 32 }
}

private func dictionary(_ dictionary: OpaquePointer?) -> [String: String] {
    var tags: [String: String] = [:]
    var entry: UnsafeMutablePointer<AVDictionaryEntry>?
    while let next = av_dict_get(dictionary, "", entry, AV_DICT_IGNORE_SUFFIX) {
        tags[String(cString: next.pointee.key)] = next.pointee.value.map { String(cString: $0) } ?? ""
        entry = next
    }
    return tags
}

/// The container's pixel aspect (pasp) when it gives one, else the codec's.
private func pixelAspect(_ demuxer: DemuxerHandle, stream: UnsafeMutablePointer<AVStream>) -> PixelAspect {
    let guessed = av_guess_sample_aspect_ratio(demuxer.context, stream, nil)
    return PixelAspect(width: Int(guessed.num), height: Int(guessed.den))
}

/// The clockwise rotation players apply, from a stream's display matrix.
private func displayRotation(_ stream: UnsafeMutablePointer<AVStream>) -> (degrees: Int, unusual: Bool) {
    guard let matrix = CFFmpeg_stream_display_matrix(stream) else { return (0, false) }
    let counterclockwise = av_display_rotation_get(matrix)
    guard counterclockwise.isFinite else { return (0, true) }
    let clockwise = -counterclockwise
    let quarter = Int((clockwise / 90).rounded())
    let degrees = ((quarter * 90) % 360 + 360) % 360
    let isPureRotation = abs(clockwise - Double(quarter * 90)) < 0.01
    // A mirrored matrix has a negative determinant.
    let determinant = Int64(matrix[0]) * Int64(matrix[4]) - Int64(matrix[1]) * Int64(matrix[3])
    return (degrees, !isPureRotation || determinant < 0)
}

/// Apple's gapless tag: " 00000000 PRIMING PADDING VALIDSAMPLES ...", in hex.
package struct ITunesGaplessInfo: Equatable {
    package var priming: Int
    package var padding: Int
    package var valid: Int

    package init?(_ text: String) {
        let fields = text.split(separator: " ")
        guard fields.count >= 4,
              let priming = Int(fields[1], radix: 16),
              let padding = Int(fields[2], radix: 16),
              let valid = Int(fields[3], radix: 16) else { return nil }
        self.priming = priming
        self.padding = padding
        self.valid = valid
    }
}
