import MediaMuxBase
import MediaMuxContainers
package import CFFmpeg

/// One demuxer: owns the AVFormatContext from a successful open until deinit.
/// Not Sendable on purpose: it is used by one thread at a time.
package final class DemuxerHandle {
    package let path: String
    package let context: UnsafeMutablePointer<AVFormatContext>
    let cancellation: CancellationFlag

    /// Demuxers MediaMux accepts. Whitelisting keeps playlists (hls, concat),
    /// image sequences and text "formats" from ever opening other files.
    package static let allowedFormats = "mov,matroska,webm,mp3,aac,ogg,wav,flac,mpegts,avi,caf,aiff,w64"

    /// `ignoringEditLists`: MP4/MOV samples keep the times their sample
    /// tables give them, for a caller that applies the edit list itself.
    /// `fragmentsAsReached`: the mov demuxer stops at the first media data
    /// and reads each movie fragment's header only when reading reaches it,
    /// instead of indexing every fragment's samples on opening (a one-hour
    /// recording's 277,000 entries). A probe, which reads no packets, counts
    /// the fragments itself; a copy of a fragmented file reads up to a
    /// damaged fragment header instead of failing to open.
    package init(
        path: String, cancellation: CancellationFlag = CancellationFlag(), ignoringEditLists: Bool = false, fragmentsAsReached: Bool = false
    ) throws {
        try checkReadableFile(path)
        self.path = path
        self.cancellation = cancellation
        var format = Self.recognizedFormat(path)
        var attempt = try Self.openContext(
            path, format: format, cancellation: cancellation, ignoringEditLists: ignoringEditLists,
            fragmentsAsReached: fragmentsAsReached && format.map { String(cString: $0.pointee.name).contains("mov") } == true)
        // Junk before a raw MP3 or AAC stream can make FFmpeg's probe pick a
        // demuxer off the whitelist (raw AMR-NB) or none; where frames follow
        // the junk, their own demuxer reads them, resyncing past it.
        if attempt.context == nil, format == nil, !cancellation.isRaised, let sync = Self.audioFramesAfterJunk(path) {
            format = av_find_input_format(sync.formatName)
            attempt = try Self.openContext(path, format: format, cancellation: cancellation, ignoringEditLists: ignoringEditLists, fragmentsAsReached: false)
        }
        guard let opened = attempt.context else {
            // An interrupted read surfaces as whatever the demuxer makes of it.
            if cancellation.isRaised { throw MediaMuxError.cancelled(path: path) }
            throw Self.openError(attempt.code, path: path, recognized: format != nil, said: attempt.said)
        }
        context = opened
        let infoCode = needsStreamInfo ? Self.findStreamInfo(context) : 0
        // An MP4/MOV whose sample entries describe every stream hands out
        // whole samples with the times, sizes and sync flags of its tables:
        // FFmpeg's parsers (the mov demuxer asks for H.264's and others')
        // would only re-read every packet, a quarter of a copy's work, and
        // drop the flags its sdtp box gives (disposable samples).
        if isQuickTimeFamily, infoCode >= 0, !needsStreamInfo { context.pointee.flags |= AVFMT_FLAG_NOPARSE }
        // Every property is set by now, so a throw still runs deinit, which closes the context.
        if infoCode < 0 {
            if cancellation.isRaised { throw MediaMuxError.cancelled(path: path) }
            throw MediaMuxError.damaged(path: path, detail: FFmpegMessages.take(for: UnsafeMutableRawPointer(context)) ?? ffmpegErrorText(infoCode))
        }
        Self.setOpusRates(context)
    }

    /// One avformat_open_input of `path` with MediaMux's options (whitelists,
    /// no data references, bounded probing): the context, or the failure's
    /// code and what FFmpeg said.
    private static func openContext(
        _ path: String, format: UnsafePointer<AVInputFormat>?, cancellation: CancellationFlag, ignoringEditLists: Bool, fragmentsAsReached: Bool
    ) throws -> (context: UnsafeMutablePointer<AVFormatContext>?, code: Int32, said: String?) {
        guard let fresh = avformat_alloc_context() else {
            throw MediaMuxError.outOfMemory("allocating a demuxer", path: path)
        }
        fresh.pointee.interrupt_callback = AVIOInterruptCB(
            callback: { opaque in
                guard let opaque else { return 0 }
                return Unmanaged<CancellationFlag>.fromOpaque(opaque).takeUnretainedValue().isRaised ? 1 : 0
            },
            opaque: Unmanaged.passUnretained(cancellation).toOpaque())
        var options: OpaquePointer?
        av_dict_set(&options, "protocol_whitelist", "file", 0)
        av_dict_set(&options, "format_whitelist", Self.allowedFormats, 0)
        // A QuickTime data reference (dref) may name another file holding a
        // track's samples; FFmpeg opens it only with enable_drefs, through
        // the file protocol the whitelist allows. Never: the samples come
        // from the file given, or the file is damaged.
        av_dict_set(&options, "enable_drefs", "0", 0)
        av_dict_set(&options, "use_absolute_path", "0", 0)
        // Probing is bounded: at most 10 MB read and 10 s of the streams
        // decoded to find what the container does not say (beyond the
        // index the container itself needs, an MP4's moov), at most 100
        // streams, and pictures no larger than decoding allows (below).
        av_dict_set(&options, "probesize", "10000000", 0)
        av_dict_set(&options, "analyzeduration", "10000000", 0)
        av_dict_set(&options, "max_streams", "100", 0)
        if ignoringEditLists { av_dict_set(&options, "ignore_editlist", "1", 0) }
        if fragmentsAsReached { av_dict_set(&options, "fflags", "+ignidx", 0) }
        defer { av_dict_free(&options) }
        var opened: UnsafeMutablePointer<AVFormatContext>? = fresh
        // On failure avformat_open_input frees the context itself.
        let code = avformat_open_input(&opened, "file:" + path, format, &options)
        guard code >= 0, let opened else { return (nil, code, FFmpegMessages.take(for: fresh)) }
        return (opened, code, nil)
    }

    /// Opus is always decoded at 48 kHz, whatever rate its encoder was fed
    /// (RFC 7845 5.1), and MP4 stores it at 48 kHz (its sample entry and
    /// timescale, in the Opus-in-ISOBMFF mapping). Some writers put the
    /// input rate in an MP4 entry (16000 in a real fragmented file), which
    /// FFmpeg's reader takes for the stream's rate when it does not decode to
    /// probe: copied as it is, the output's audio would be timed in 16 kHz
    /// ticks against 48 kHz sample counts.
    private static func setOpusRates(_ context: UnsafeMutablePointer<AVFormatContext>) {
        for index in 0..<Int(context.pointee.nb_streams) {
            guard let parameters = context.pointee.streams[index]?.pointee.codecpar,
                  parameters.pointee.codec_id == AV_CODEC_ID_OPUS else { continue }
            parameters.pointee.sample_rate = 48000
        }
    }

    deinit {
        _ = FFmpegMessages.take(for: UnsafeMutableRawPointer(context))
        var doomed: UnsafeMutablePointer<AVFormatContext>? = context
        avformat_close_input(&doomed)
    }

    /// avformat_find_stream_info with its decoders held to the picture size
    /// MediaMux decodes at most: a file declaring 65535x65535 pictures must
    /// not have a 12 GiB frame allocated while it is probed.
    private static func findStreamInfo(_ context: UnsafeMutablePointer<AVFormatContext>) -> Int32 {
        var perStream: [OpaquePointer?] = (0..<Int(context.pointee.nb_streams)).map { _ in
            var options: OpaquePointer?
            av_dict_set(&options, "max_pixels", String(DecoderHandle.largestPicture), 0)
            return options
        }
        defer {
            for index in perStream.indices { av_dict_free(&perStream[index]) }
        }
        return perStream.withUnsafeMutableBufferPointer { avformat_find_stream_info(context, $0.baseAddress) }
    }

    /// The demuxer for the two families MediaMux sees most, named from the
    /// file's first bytes. FFmpeg's own probing runs every demuxer's probe
    /// function, which costs more memory than the rest of opening an MP4.
    /// Anything else is probed by FFmpeg within the whitelist.
    private static func recognizedFormat(_ path: String) -> UnsafePointer<AVInputFormat>? {
        guard let head = withFileForReading(path, { readBytes($0, count: 12, at: 0) }) ?? nil, head.count == 12 else { return nil }
        let boxType = String(decoding: head[4..<8], as: UTF8.self)
        if MovieTree.leadingBoxTypes.contains(boxType) {
            return av_find_input_format("mov")
        }
        if head[0..<4] == [0x1A, 0x45, 0xDF, 0xA3] {
            return av_find_input_format("matroska")
        }
        return nil
    }

    /// Where frames of raw MPEG audio or ADTS AAC run within the first MiB
    /// of a file FFmpeg's probe did not take for either, and it does not
    /// start with AMR's magic (an AMR file stays AMR).
    private static func audioFramesAfterJunk(_ path: String) -> AudioFrameSync? {
        guard let head = withFileForReading(path, { readBytes($0, count: (1 << 20) + 64 * 1024, at: 0) }) ?? nil else { return nil }
        if head.starts(with: Array("#!AMR".utf8)) { return nil }
        guard let found = AudioFrameSync.find(in: head), found.offset < 1 << 20 else { return nil }
        return found.kind
    }

    /// Invalid data in a file whose first bytes name its container is damage
    /// (an MP4 cut before its moov); otherwise nothing recognised the file.
    /// A file FFmpeg knows as a format off the whitelist (a playlist, a
    /// concat script, an SDP session, an image) is refused as what it is.
    private static func openError(_ code: Int32, path: String, recognized: Bool, said: String?) -> MediaMuxError {
        if code == CFFmpeg_AVERROR_INVALIDDATA() {
            if recognized { return .damaged(path: path, detail: said ?? ffmpegErrorText(code)) }
            return .notMedia(path: path, detail: "no known audio or video format")
        }
        if let refused = refusedFormat(path) {
            return .notMedia(path: path, detail: "it is \(refused), not an audio or video file MediaMux reads")
        }
        return .unreadable(path: path, reason: said ?? ffmpegErrorText(code))
    }

    /// What FFmpeg's probes make of the file's first 4 KiB, when that is a
    /// format off the whitelist: its description and name ("M3U8 playlist
    /// (hls)"). Only probes run, over bytes read here: no demuxer opens.
    private static func refusedFormat(_ path: String) -> String? {
        guard var head = withFileForReading(path, { readBytes($0, count: 4096, at: 0) }) ?? nil, !head.isEmpty else { return nil }
        let size = Int32(head.count)
        // The probes may read up to AVPROBE_PADDING_SIZE bytes past the end.
        head += [UInt8](repeating: 0, count: Int(AVPROBE_PADDING_SIZE))
        let found = head.withUnsafeMutableBufferPointer { buffer in
            path.withCString { name in
                var data = AVProbeData(filename: name, buf: buffer.baseAddress, buf_size: size, mime_type: nil)
                return av_probe_input_format(&data, 1)
            }
        }
        guard let found, let name = found.pointee.name.map({ String(cString: $0) }) else { return nil }
        let allowed = Set(allowedFormats.split(separator: ","))
        guard !name.split(separator: ",").contains(where: allowed.contains) else { return nil }
        let description = found.pointee.long_name.map { String(cString: $0) } ?? name
        return "\(description) (\(name))"
    }

    /// Codecs whose MP4/MOV sample description holds their whole configuration
    /// (avcC, hvcC, av1C, esds, dOps, ...), so that a stream copy needs nothing
    /// that only decoding reveals. VP9's vpcC, for one, is rebuilt by the muxer
    /// from the pixel format, which only decoding tells.
    private static let completeInSampleDescription: Set<AVCodecID> = [
        AV_CODEC_ID_H264, AV_CODEC_ID_HEVC, AV_CODEC_ID_AV1, AV_CODEC_ID_MPEG4,
        AV_CODEC_ID_AAC, AV_CODEC_ID_MP3, AV_CODEC_ID_ALAC, AV_CODEC_ID_OPUS, AV_CODEC_ID_AC3, AV_CODEC_ID_EAC3,
    ]

    /// find_stream_info decodes frames to fill in what the container does not
    /// say (about 5 MiB of decoder state for 720p H.264). MP4/MOV files whose
    /// streams all describe themselves fully can do without it.
    private var needsStreamInfo: Bool {
        guard isQuickTimeFamily else { return true }
        return (0..<streamCount).contains { index in
            let parameters = stream(index).pointee.codecpar.pointee
            let isMedia = parameters.codec_type == AVMEDIA_TYPE_VIDEO || parameters.codec_type == AVMEDIA_TYPE_AUDIO
            return isMedia && !Self.completeInSampleDescription.contains(parameters.codec_id)
        }
    }

    package var formatName: String { String(cString: context.pointee.iformat.pointee.name) }

    /// True for the QuickTime family (mov, mp4, m4a, 3gp), whose edit lists
    /// make FFmpeg's stream durations presentation ends measured from zero.
    package var isQuickTimeFamily: Bool { formatName.split(separator: ",").contains("mov") }

    package var streamCount: Int { Int(context.pointee.nb_streams) }

    package func stream(_ index: Int) -> UnsafeMutablePointer<AVStream> {
        context.pointee.streams[index]!
    }

    /// The stream a plan names, if the file still has it with that kind of media:
    /// a plan may be stale (the file changed since it was probed) or edited.
    package func plannedStream(_ index: Int, kind: MediaMuxError.StreamKind) throws -> UnsafeMutablePointer<AVStream> {
        let wanted = kind == .video ? AVMEDIA_TYPE_VIDEO : AVMEDIA_TYPE_AUDIO
        guard index >= 0, index < streamCount, stream(index).pointee.codecpar.pointee.codec_type == wanted else {
            throw MediaMuxError.damaged(path: path, detail: "stream \(index) is not the \(kind.rawValue) stream it was when probed; the file changed")
        }
        return stream(index)
    }

    /// Reads the next packet of any stream. False at the end of the file.
    package func read(into packet: PacketBuffer) throws -> Bool {
        av_packet_unref(packet.pointer)
        let code = av_read_frame(context, packet.pointer)
        if code == CFFmpeg_AVERROR_EOF() { return false }
        if code == CFFmpeg_AVERROR_EXIT() || cancellation.isRaised { throw MediaMuxError.cancelled(path: path) }
        if code < 0 {
            let said = FFmpegMessages.take(for: UnsafeMutableRawPointer(context)) ?? ffmpegErrorText(code)
            throw MediaMuxError.damaged(path: path, detail: "reading packets: \(said)")
        }
        return true
    }

    /// When the container's index places samples of stream `index` beyond
    /// the end of the file (an MP4 cut short), how far: the bytes the index
    /// needs and the bytes there are. Nil when it fits or there is no index.
    package func indexOverrun(of index: Int) -> (needed: Int64, present: Int64)? {
        let stream = self.stream(index)
        let count = avformat_index_get_entries_count(stream)
        guard count > 0, let last = avformat_index_get_entry(stream, count - 1), let io = context.pointee.pb else { return nil }
        let needed = last.pointee.pos + Int64(last.pointee.size)
        let present = avio_size(io)
        guard last.pointee.pos >= 0, present > 0, needed > present else { return nil }
        return (needed, present)
    }

    /// Has the demuxer skip every stream but `index` where it can (one a
    /// reader of another stream of the file skipped before included).
    package func keepOnly(_ index: Int) {
        for other in 0..<streamCount {
            stream(other).pointee.discard = other == index ? AVDISCARD_DEFAULT : AVDISCARD_ALL
        }
    }

    /// Goes back to the first packet of stream `index`, to read it again:
    /// the first in the container's index where there is one, since the
    /// stream's start time can lie after packets that prime the decoder
    /// (AAC's priming, placed before zero by an edit list).
    package func rewind(_ index: Int) throws {
        let target: Int64
        if let first = avformat_index_get_entry(stream(index), 0) {
            target = first.pointee.timestamp
        } else {
            let start = stream(index).pointee.start_time
            target = start == noTimestamp ? 0 : start
        }
        // Any sample, not only a sync sample: the first one (a video's may not be one).
        var code = av_seek_frame(context, Int32(index), target, AVSEEK_FLAG_BACKWARD | AVSEEK_FLAG_ANY)
        if code < 0 { code = avformat_seek_file(context, Int32(index), Int64.min, Int64.min, Int64.min, 0) }
        if code < 0 {
            let said = FFmpegMessages.take(for: UnsafeMutableRawPointer(context)) ?? ffmpegErrorText(code)
            throw MediaMuxError.damaged(path: path, detail: "going back to its start to play it again failed (\(said))")
        }
    }

    /// Goes to the last sync sample of stream `index` at or before `timestamp`
    /// (the stream's time base), as far as the format's index knows; false
    /// when the format cannot seek. A reader checks where it landed: some
    /// formats (MP3 without a table of contents, Ogg) land only near it.
    /// Where the index has no sync sample at or before `timestamp`, nothing
    /// is sought and reading goes on where it was: FFmpeg's fallback for a
    /// failed seek reads ahead to build its index, which would pass over packets.
    package func seek(_ index: Int, to timestamp: Int64) -> Bool {
        let stream = self.stream(index)
        if avformat_index_get_entries_count(stream) > 0, av_index_search_timestamp(stream, timestamp, AVSEEK_FLAG_BACKWARD) < 0 {
            return false
        }
        return av_seek_frame(context, Int32(index), timestamp, AVSEEK_FLAG_BACKWARD) >= 0
    }

    /// Whether each packet is one of the container's samples (an MP4 or
    /// MOV sample, a Matroska block), wherever reading starts: a seek then
    /// hands out the same packets as reading through. WAV's packets are
    /// runs of samples that start where reading starts.
    package var packetsAreContainerSamples: Bool {
        isQuickTimeFamily || formatName.split(separator: ",").contains("matroska")
    }

    /// Bytes read from the file so far, the movie header's included: what a
    /// test of seeking counts.
    package var bytesRead: Int64 { context.pointee.pb?.pointee.bytes_read ?? 0 }

    /// Reads the next packet of stream `index`, passing over any other. False at the end.
    package func read(into packet: PacketBuffer, of index: Int) throws -> Bool {
        while try read(into: packet) {
            if packet.pointer.pointee.stream_index == Int32(index) { return true }
        }
        return false
    }

    package func metadata(_ key: String) -> String? {
        guard let entry = av_dict_get(context.pointee.metadata, key, nil, 0), let value = entry.pointee.value else {
            return nil
        }
        return String(cString: value)
    }
}

/// One AVPacket, reused across reads.
package final class PacketBuffer {
    package let pointer: UnsafeMutablePointer<AVPacket>

    package init() throws {
        guard let packet = av_packet_alloc() else {
            throw MediaMuxError.outOfMemory("allocating a packet", path: "-")
        }
        pointer = packet
    }

    deinit {
        var doomed: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&doomed)
    }
}
