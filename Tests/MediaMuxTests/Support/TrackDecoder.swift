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
        /// The size of the packed planes the hash covers.
        var byteCount: Int?
        /// The luma plane, when asked for.
        var luma: LumaPlane? = nil
        var description: String { "\(time):\(String(UInt(bitPattern: hash), radix: 16))" }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Every frame the track decodes to, in presentation order, with its
    /// luma plane when `keepingLuma`.
    static func frames(of track: MP4File.Track, keepingLuma: Bool = false) throws -> [Frame] {
        let configurations: [String: (AVCodecID, String)] = [
            "hvc1": (AV_CODEC_ID_HEVC, "hvcC"), "hev1": (AV_CODEC_ID_HEVC, "hvcC"), "avc1": (AV_CODEC_ID_H264, "avcC"), "av01": (AV_CODEC_ID_AV1, "av1C"),
        ]
        guard let format = track.sampleFormat, let (codecID, configType) = configurations[format],
              let configuration = track.sampleEntryBoxes.first(where: { $0.type == configType }) else {
            throw Failure(description: "no decoder for sample entry \(track.sampleFormat ?? "none")")
        }
        let decoder = try Decoder(codecID, keepingLuma: keepingLuma) { context in
            let extra = Array(configuration.bytes.dropFirst(8))
            context.pointee.extradata = av_mallocz(extra.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)).assumingMemoryBound(to: UInt8.self)
            extra.withUnsafeBufferPointer { context.pointee.extradata.update(from: $0.baseAddress!, count: extra.count) }
            context.pointee.extradata_size = Int32(extra.count)
            // The deepest reordering there is: FFmpeg's H.264 decoder otherwise
            // learns the depth from the frames and drops one it learns it from.
            context.pointee.has_b_frames = 16
        }
        let times = track.compositionTimes
        for index in 0..<track.sampleCount {
            let data = try track.sampleData(index)
            try decoder.send { packet in
                guard av_new_packet(packet, Int32(data.count)) >= 0 else { throw Failure(description: "out of memory") }
                data.copyBytes(to: packet.pointee.data, count: data.count)
                packet.pointee.pts = times[index]
                packet.pointee.dts = track.decodeTimes[index]
                if track.isSyncSample(index) { packet.pointee.flags |= AV_PKT_FLAG_KEY }
                return true
            }
        }
        try decoder.finish()
        return decoder.frames.sorted { $0.time < $1.time }
    }

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
        guard index >= 0, let stream = context.pointee.streams[Int(index)] else { throw Failure(description: "no video in \(path)") }
        let decoder = try Decoder(stream.pointee.codecpar.pointee.codec_id, limit: limit) { decoder in
            guard avcodec_parameters_to_context(decoder, stream.pointee.codecpar) >= 0 else { throw Failure(description: "no decoder") }
            decoder.pointee.pkt_timebase = stream.pointee.time_base
        }
        var done = false
        while !done, decoder.frames.count < limit {
            try decoder.send { packet in
                done = av_read_frame(context, packet) < 0
                return !done && packet.pointee.stream_index == index
            }
        }
        try decoder.finish()
        return decoder.frames
    }

    /// One single-threaded libavcodec decoder and the frames it has given, hashed.
    private final class Decoder {
        private var context: UnsafeMutablePointer<AVCodecContext>?
        private var packet = av_packet_alloc()
        private var frame = av_frame_alloc()
        private let limit: Int
        private let keepingLuma: Bool
        private(set) var frames: [Frame] = []

        init(
            _ codecID: AVCodecID, limit: Int = .max, keepingLuma: Bool = false, configure: (UnsafeMutablePointer<AVCodecContext>) throws -> Void
        ) throws {
            self.limit = limit
            self.keepingLuma = keepingLuma
            guard let codec = avcodec_find_decoder(codecID), let context = avcodec_alloc_context3(codec) else {
                throw Failure(description: "no decoder for codec \(codecID.rawValue)")
            }
            self.context = context
            try configure(context)
            context.pointee.thread_count = 1
            guard avcodec_open2(context, codec, nil) >= 0 else { throw Failure(description: "the decoder does not open") }
        }

        deinit {
            av_packet_free(&packet)
            av_frame_free(&frame)
            avcodec_free_context(&context)
        }

        /// Fills the packet with `fill` (which may say there is nothing to
        /// send this time), sends it and takes the frames that are ready.
        func send(_ fill: (UnsafeMutablePointer<AVPacket>) throws -> Bool) throws {
            defer { av_packet_unref(packet) }
            guard try fill(packet!) else { return }
            let sent = avcodec_send_packet(context, packet)
            guard sent >= 0 || sent == CFFmpeg_AVERROR_INVALIDDATA() else { throw Failure(description: "sending a packet failed (\(sent))") }
            try drain()
        }

        /// Flushes the decoder.
        func finish() throws {
            avcodec_send_packet(context, nil)
            try drain()
        }

        private func drain() throws {
            while frames.count < limit {
                let code = avcodec_receive_frame(context, frame)
                if code == CFFmpeg_AVERROR_EAGAIN() || code == CFFmpeg_AVERROR_EOF() { return }
                guard code >= 0 else { throw Failure(description: "decoding failed (\(code))") }
                let picture = frame!.pointee
                let planes = packedPlanes(frame!)
                frames.append(Frame(
                    time: picture.pts != CFFmpeg_AV_NOPTS_VALUE() ? picture.pts : picture.best_effort_timestamp,
                    hash: hash(packed: planes), byteCount: planes.count, luma: keepingLuma ? LumaPlane(frame!) : nil))
                av_frame_unref(frame)
            }
        }
    }

    /// A hash of the decoded picture's pixels, plane by plane, without
    /// padding: the layout raw video has elsewhere (GStreamer's I420 and
    /// I420_10LE for widths that need no row padding), hashed alike by `hash(packed:)`.
    static func hash(_ frame: UnsafeMutablePointer<AVFrame>) -> Int {
        hash(packed: packedPlanes(frame))
    }

    static func hash(packed: [UInt8]) -> Int {
        var hasher = Hasher()
        packed.withUnsafeBytes { hasher.combine(bytes: $0) }
        return hasher.finalize()
    }

    /// The Y, U and V planes' visible samples, row after row.
    static func packedPlanes(_ frame: UnsafeMutablePointer<AVFrame>) -> [UInt8] {
        guard let descriptor = av_pix_fmt_desc_get(AVPixelFormat(frame.pointee.format)) else { return [] }
        let bytesPerSample = descriptor.pointee.comp.0.depth > 8 ? 2 : 1
        let data = [frame.pointee.data.0, frame.pointee.data.1, frame.pointee.data.2]
        let strides = [frame.pointee.linesize.0, frame.pointee.linesize.1, frame.pointee.linesize.2].map(Int.init)
        var packed: [UInt8] = []
        for plane in 0..<min(Int(descriptor.pointee.nb_components), 3) {
            guard let base = data[plane] else { continue }
            let shiftX = plane > 0 ? Int(descriptor.pointee.log2_chroma_w) : 0
            let shiftY = plane > 0 ? Int(descriptor.pointee.log2_chroma_h) : 0
            let width = (Int(frame.pointee.width) + (1 << shiftX) - 1) >> shiftX
            let height = (Int(frame.pointee.height) + (1 << shiftY) - 1) >> shiftY
            packed.reserveCapacity(packed.count + width * height * bytesPerSample)
            for row in 0..<height {
                packed += UnsafeRawBufferPointer(start: base + row * strides[plane], count: width * bytesPerSample)
            }
        }
        return packed
    }
}
