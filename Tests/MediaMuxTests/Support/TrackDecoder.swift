import CFFmpeg
import Foundation

/// Decodes a video track as the tests' MP4 reader reads it: the samples'
/// bytes in decode order, with the sample table's times, through libavcodec.
/// FFmpeg's demuxer is left out, so that the file is judged by its boxes,
/// not by how FFmpeg interprets them (FFmpeg 5.1 misreads some edit lists).
struct TrackDecoder {
    struct Frame: Equatable, CustomStringConvertible {
        /// Composition time, in the track's timescale.
        var time: Int64
        /// A hash of the visible pixels of every plane, in coded orientation
        /// (Swift's Hasher: comparable within one test run only).
        var hash: Int
        var description: String { "\(time):\(String(UInt(bitPattern: hash), radix: 16))" }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Every frame the track decodes to, in presentation order.
    static func frames(of track: MP4File.Track) throws -> [Frame] {
        let configurations: [String: (AVCodecID, String)] = ["hvc1": (AV_CODEC_ID_HEVC, "hvcC"), "hev1": (AV_CODEC_ID_HEVC, "hvcC"), "avc1": (AV_CODEC_ID_H264, "avcC")]
        guard let format = track.sampleFormat, let (codecID, configType) = configurations[format],
              let configuration = track.sampleEntryBoxes.first(where: { $0.type == configType }) else {
            throw Failure(description: "no decoder for sample entry \(track.sampleFormat ?? "none")")
        }
        var contextPointer = avcodec_find_decoder(codecID).flatMap { avcodec_alloc_context3($0) }
        guard let codec = avcodec_find_decoder(codecID), let context = contextPointer else { throw Failure(description: "no decoder") }
        defer { avcodec_free_context(&contextPointer) }
        let extra = Array(configuration.bytes.dropFirst(8))
        context.pointee.extradata = av_mallocz(extra.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)).assumingMemoryBound(to: UInt8.self)
        extra.withUnsafeBufferPointer { context.pointee.extradata.update(from: $0.baseAddress!, count: extra.count) }
        context.pointee.extradata_size = Int32(extra.count)
        context.pointee.thread_count = 1
        // The deepest reordering there is: FFmpeg's H.264 decoder otherwise
        // learns the depth from the frames and drops one it learns it from.
        context.pointee.has_b_frames = 16
        guard avcodec_open2(context, codec, nil) >= 0 else { throw Failure(description: "the decoder does not open") }
        var packet = av_packet_alloc()
        var frame = av_frame_alloc()
        defer {
            av_packet_free(&packet)
            av_frame_free(&frame)
        }
        var frames: [Frame] = []
        func drain() throws {
            while true {
                let code = avcodec_receive_frame(context, frame)
                if code == CFFmpeg_AVERROR_EAGAIN() || code == CFFmpeg_AVERROR_EOF() { return }
                guard code >= 0 else { throw Failure(description: "decoding failed (\(code))") }
                let time = frame!.pointee.pts != CFFmpeg_AV_NOPTS_VALUE() ? frame!.pointee.pts : frame!.pointee.best_effort_timestamp
                frames.append(Frame(time: time, hash: hash(frame!)))
                av_frame_unref(frame)
            }
        }
        let times = track.compositionTimes
        for index in 0..<track.sampleCount {
            let data = try track.sampleData(index)
            guard av_new_packet(packet, Int32(data.count)) >= 0 else { throw Failure(description: "out of memory") }
            data.copyBytes(to: packet!.pointee.data, count: data.count)
            packet!.pointee.pts = times[index]
            packet!.pointee.dts = track.decodeTimes[index]
            if track.isSyncSample(index) { packet!.pointee.flags |= AV_PKT_FLAG_KEY }
            let sent = avcodec_send_packet(context, packet)
            av_packet_unref(packet)
            guard sent >= 0 || sent == CFFmpeg_AVERROR_INVALIDDATA() else { throw Failure(description: "sending sample \(index) failed (\(sent))") }
            try drain()
        }
        avcodec_send_packet(context, nil)
        try drain()
        return frames.sorted { $0.time < $1.time }
    }

    fileprivate static func hash(_ frame: UnsafeMutablePointer<AVFrame>) -> Int {
        var hasher = Hasher()
        guard let descriptor = av_pix_fmt_desc_get(AVPixelFormat(frame.pointee.format)) else { return 0 }
        let bytesPerSample = descriptor.pointee.comp.0.depth > 8 ? 2 : 1
        let data = [frame.pointee.data.0, frame.pointee.data.1, frame.pointee.data.2]
        let strides = [frame.pointee.linesize.0, frame.pointee.linesize.1, frame.pointee.linesize.2].map(Int.init)
        for plane in 0..<min(Int(descriptor.pointee.nb_components), 3) {
            guard let base = data[plane] else { continue }
            let shiftX = plane > 0 ? Int(descriptor.pointee.log2_chroma_w) : 0
            let shiftY = plane > 0 ? Int(descriptor.pointee.log2_chroma_h) : 0
            let width = (Int(frame.pointee.width) + (1 << shiftX) - 1) >> shiftX
            let height = (Int(frame.pointee.height) + (1 << shiftY) - 1) >> shiftY
            for row in 0..<height {
                hasher.combine(bytes: UnsafeRawBufferPointer(start: base + row * strides[plane], count: width * bytesPerSample))
            }
        }
        return hasher.finalize()
    }
}

extension TrackDecoder {
    /// The frames FFmpeg shows of a file's first video stream: its demuxer
    /// (edit lists applied, samples before the start marked to discard) and
    /// decoder, as FFmpeg-based players use them. Times are in the stream's
    /// time base, from the demuxer.
    static func framesThroughFFmpeg(path: String, limit: Int) throws -> [Frame] {
        var format: UnsafeMutablePointer<AVFormatContext>?
        guard avformat_open_input(&format, path, nil, nil) >= 0, let context = format else { throw Failure(description: "cannot open \(path)") }
        defer { avformat_close_input(&format) }
        guard avformat_find_stream_info(context, nil) >= 0 else { throw Failure(description: "no stream info in \(path)") }
        let index = av_find_best_stream(context, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard index >= 0, let stream = context.pointee.streams[Int(index)], let codec = avcodec_find_decoder(stream.pointee.codecpar.pointee.codec_id) else {
            throw Failure(description: "no video decoder for \(path)")
        }
        var decoder = avcodec_alloc_context3(codec)
        defer { avcodec_free_context(&decoder) }
        guard let decoder, avcodec_parameters_to_context(decoder, stream.pointee.codecpar) >= 0 else { throw Failure(description: "no decoder") }
        decoder.pointee.pkt_timebase = stream.pointee.time_base
        decoder.pointee.thread_count = 1
        guard avcodec_open2(decoder, codec, nil) >= 0 else { throw Failure(description: "the decoder does not open") }
        var packet = av_packet_alloc()
        var frame = av_frame_alloc()
        defer {
            av_packet_free(&packet)
            av_frame_free(&frame)
        }
        var frames: [Frame] = []
        func drain() throws {
            while frames.count < limit {
                let code = avcodec_receive_frame(decoder, frame)
                if code == CFFmpeg_AVERROR_EAGAIN() || code == CFFmpeg_AVERROR_EOF() { return }
                guard code >= 0 else { throw Failure(description: "decoding failed (\(code))") }
                frames.append(Frame(time: frame!.pointee.best_effort_timestamp, hash: hash(frame!)))
                av_frame_unref(frame)
            }
        }
        while frames.count < limit, av_read_frame(context, packet) >= 0 {
            defer { av_packet_unref(packet) }
            guard packet!.pointee.stream_index == index else { continue }
            let sent = avcodec_send_packet(decoder, packet)
            guard sent >= 0 || sent == CFFmpeg_AVERROR_INVALIDDATA() else { throw Failure(description: "sending a packet failed (\(sent))") }
            try drain()
        }
        avcodec_send_packet(decoder, nil)
        try drain()
        return frames
    }
}
