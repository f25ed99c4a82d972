import MediaMuxBase
package import CFFmpeg

/// One MP4/MOV muxer writing to a file, or to an AVIO context its owner
/// gives (a stream): owns the AVFormatContext, and the AVIO context of a
/// file. `finish()` writes the trailer; an unfinished muxer is closed by
/// deinit and its file is the caller's to delete.
package final class MuxerHandle {
    /// The file written, nil for a stream; errors name `reportedPath`, the output the user asked for.
    package let path: String?
    package let reportedPath: String
    package let context: UnsafeMutablePointer<AVFormatContext>
    /// The muxer opened its own file (closed by `finish` or deinit).
    private var ownsFile = false

    package init(path: String?, reportedPath: String, muxer: String) throws {
        self.path = path
        self.reportedPath = reportedPath
        var created: UnsafeMutablePointer<AVFormatContext>?
        // The muxer reopens the file by this URL for its faststart second pass.
        try ffmpegCheck(
            avformat_alloc_output_context2(&created, nil, muxer, path.map { "file:" + $0 }), "creating the \(muxer) muxer", path: reportedPath)
        guard let created else {
            throw MediaMuxError.outOfMemory("creating the \(muxer) muxer", path: reportedPath)
        }
        context = created
    }

    deinit {
        if ownsFile {
            avio_closep(&context.pointee.pb)
        } else {
            // A stream's AVIO context is its owner's to free.
            context.pointee.pb = nil
        }
        avformat_free_context(context)
    }

    /// The display matrix a copied stream gets.
    package enum DisplayMatrix {
        /// None written (audio).
        case none
        /// A pure rotation, clockwise degrees.
        case rotation(Int)
        /// The input stream's own, as it is (mirrors included); none if it has none.
        case source
    }

    /// Adds a stream whose parameters are copied from an input stream; for
    /// a codec FFmpeg has no name for, under the stand-in codec the plan
    /// gives (FFmpeg's name), whose sample entry the movie header rewrite
    /// replaces.
    package func addStream(
        copying input: UnsafeMutablePointer<AVStream>, codecTag: String?, standIn: String? = nil, matrix: DisplayMatrix,
        tags: TagSelection, configuration: [UInt8]? = nil
    ) throws -> UnsafeMutablePointer<AVStream> {
        guard let stream = avformat_new_stream(context, nil) else {
            throw MediaMuxError.outOfMemory("adding a stream", path: reportedPath)
        }
        try ffmpegCheck(avcodec_parameters_copy(stream.pointee.codecpar, input.pointee.codecpar), "copying codec parameters", path: reportedPath)
        if let configuration {
            // The decoder configuration the muxer writes as it is (an avcC it is handed whole).
            let parameters: UnsafeMutablePointer<AVCodecParameters> = stream.pointee.codecpar
            av_freep(&parameters.pointee.extradata)
            parameters.pointee.extradata_size = 0
            guard let bytes = av_mallocz(configuration.count + Int(AV_INPUT_BUFFER_PADDING_SIZE))?.assumingMemoryBound(to: UInt8.self) else {
                throw MediaMuxError.outOfMemory("writing the decoder configuration", path: reportedPath)
            }
            bytes.update(from: configuration, count: configuration.count)
            parameters.pointee.extradata = bytes
            parameters.pointee.extradata_size = Int32(configuration.count)
        }
        if let standIn {
            guard let descriptor = avcodec_descriptor_get_by_name(standIn) else {
                throw MediaMuxError.unexpected(path: reportedPath, detail: "this FFmpeg has no \(standIn) codec to stand in for one it cannot read")
            }
            stream.pointee.codecpar.pointee.codec_id = descriptor.pointee.id
        }
        // Let the muxer choose the sample entry unless the plan says otherwise.
        stream.pointee.codecpar.pointee.codec_tag = codecTag.map(fourCCValue) ?? 0
        stream.pointee.time_base = input.pointee.time_base
        copy(input.pointee.metadata, into: &stream.pointee.metadata, tags)
        switch matrix {
        case .none: break
        case .rotation(let degrees):
            try ffmpegCheck(CFFmpeg_stream_set_rotation(stream, Int32(degrees)), "writing the display matrix", path: reportedPath)
        case .source:
            if let values = CFFmpeg_stream_display_matrix(input) {
                try ffmpegCheck(CFFmpeg_stream_set_display_matrix(stream, values), "writing the display matrix", path: reportedPath)
            }
        }
        return stream
    }

    /// Adds a stream for what an opened encoder produces, with the tags of
    /// the input stream it encodes, if any, and the sample entry's fourcc
    /// when the muxer's own choice would be wrong.
    package func addStream(
        encodedBy encoder: UnsafeMutablePointer<AVCodecContext>, tagsOf input: UnsafeMutablePointer<AVStream>? = nil,
        tags: TagSelection = .only([]), codecTag: String? = nil
    ) throws -> UnsafeMutablePointer<AVStream> {
        guard let stream = avformat_new_stream(context, nil) else {
            throw MediaMuxError.outOfMemory("adding a stream", path: reportedPath)
        }
        try ffmpegCheck(avcodec_parameters_from_context(stream.pointee.codecpar, encoder), "copying codec parameters", path: reportedPath)
        if let codecTag { stream.pointee.codecpar.pointee.codec_tag = fourCCValue(codecTag) }
        stream.pointee.time_base = encoder.pointee.time_base
        if let input { copy(input.pointee.metadata, into: &stream.pointee.metadata, tags) }
        return stream
    }

    /// Whether encoders must put their configuration in extradata (MP4 does).
    package var wantsGlobalHeaders: Bool { (context.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER) != 0 }

    package func copyMetadata(from input: DemuxerHandle, _ selection: TagSelection) {
        copy(input.context.pointee.metadata, into: &context.pointee.metadata, selection)
    }

    private func copy(_ source: OpaquePointer?, into target: inout OpaquePointer?, _ selection: TagSelection) {
        var entry: UnsafeMutablePointer<AVDictionaryEntry>?
        while let next = av_dict_get(source, "", entry, AV_DICT_IGNORE_SUFFIX) {
            if selection.contains(String(cString: next.pointee.key)) { av_dict_set(&target, next.pointee.key, next.pointee.value, 0) }
            entry = next
        }
    }

    /// Opens the file (or, for a stream, takes `stream`, which its owner
    /// frees after this handle) and writes the header with the muxer's `options`.
    package func open(options: [String: String], stream: UnsafeMutablePointer<AVIOContext>? = nil) throws {
        if let path {
            // Never truncated (FFmpeg's file protocol does by default): the
            // output is new or empty, and on ext4 truncating an existing
            // inode (a nameless output reopened through /proc) makes its
            // last close flush every block it holds (auto_da_alloc), 0.3 s
            // for 450 MB that the page cache would otherwise write later.
            var protocolOptions: OpaquePointer?
            av_dict_set(&protocolOptions, "truncate", "0", 0)
            defer { av_dict_free(&protocolOptions) }
            let opened = avio_open2(&context.pointee.pb, "file:" + path, AVIO_FLAG_WRITE, nil, &protocolOptions)
            guard opened >= 0 else { throw MediaMuxError.outputNotWritable(path: reportedPath, reason: ffmpegErrorText(opened)) }
            ownsFile = true
        } else {
            context.pointee.pb = stream
        }
        var dictionary: OpaquePointer?
        for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
        defer { av_dict_free(&dictionary) }
        try outputCheck(avformat_write_header(context, &dictionary), "writing the file header", path: reportedPath)
    }

    package func stream(_ index: Int) -> UnsafeMutablePointer<AVStream> { context.pointee.streams[index]! }

    package func write(_ packet: UnsafeMutablePointer<AVPacket>) throws {
        try outputCheck(av_write_frame(context, packet), "writing a packet", path: reportedPath)
    }

    /// Writes a packet through the muxer's interleaving queue (encoded
    /// streams whose packets arrive roughly, not exactly, in time order).
    package func writeInterleaved(_ packet: UnsafeMutablePointer<AVPacket>) throws {
        try outputCheck(av_interleaved_write_frame(context, packet), "writing a packet", path: reportedPath)
    }

    package func finish() throws {
        try outputCheck(av_write_trailer(context), "writing the movie header", path: reportedPath)
        if ownsFile {
            try outputCheck(avio_closep(&context.pointee.pb), "closing the output", path: reportedPath)
            ownsFile = false
        } else {
            avio_flush(context.pointee.pb)
            if context.pointee.pb.pointee.error < 0 {
                try outputCheck(context.pointee.pb.pointee.error, "writing the last fragment", path: reportedPath)
            }
        }
    }
}

private func fourCCValue(_ text: String) -> UInt32 {
    let bytes = Array(text.utf8.prefix(4))
    guard bytes.count == 4 else { return 0 }
    return CFFmpeg_MKTAG(CChar(bitPattern: bytes[0]), CChar(bitPattern: bytes[1]), CChar(bitPattern: bytes[2]), CChar(bitPattern: bytes[3]))
}
