import MediaMuxBase
package import CFFmpeg

/// One AVFrame, reused or handed between owners by swapping.
package final class FrameBuffer {
    package let pointer: UnsafeMutablePointer<AVFrame>

    package init() throws {
        guard let frame = av_frame_alloc() else {
            throw MediaMuxError.outOfMemory("allocating a frame", path: "-")
        }
        pointer = frame
    }

    deinit {
        var doomed: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&doomed)
    }

    /// The presentation time of a decoded frame, in stream ticks: its own
    /// packet's, which the decoder carries through. FFmpeg's best-effort
    /// guess is only for packets without one: it switches to decode times
    /// once presentation times go backwards, as they do where an iPhone's
    /// first IDR picture is presented after the pictures that follow it,
    /// and then labels every later picture with another's time.
    package var timestamp: Int64? {
        let own = pointer.pointee.pts
        if own != noTimestamp { return own }
        let guess = pointer.pointee.best_effort_timestamp
        return guess == noTimestamp ? nil : guess
    }
}

/// One decoder: owns the AVCodecContext opened for a stream.
package final class DecoderHandle {
    package let context: UnsafeMutablePointer<AVCodecContext>
    package let path: String
    /// Packets or frames the decoder rejected as damaged, and passed over.
    package private(set) var rejectedPackets = 0

    /// "video" or "audio", for messages.
    private let media: String

    /// The largest picture decoded, in pixels: 8192x8192, which 8K video
    /// (7680x4320) and 360° video (8192x4096) fit in. A file that declares
    /// more (a hostile one declares 65535x65535, 4 GiB a frame) is refused
    /// before a frame is allocated; FFmpeg's decoders hold to it too, for
    /// pictures whose size changes mid-stream.
    package static let largestPicture = 8192 * 8192

    package init(stream: UnsafeMutablePointer<AVStream>, path: String, threads: Int = 0) throws {
        self.path = path
        let parameters = stream.pointee.codecpar!
        media = parameters.pointee.codec_type == AVMEDIA_TYPE_AUDIO ? "audio" : "video"
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            if parameters.pointee.codec_id == AV_CODEC_ID_NONE {
                let tag = fourCharacterCode(parameters.pointee.codec_tag)
                throw MediaMuxError.notMedia(path: path, detail: "its \(media) is \(UnnamedCodec.describe(tag: tag))")
            }
            let name = String(cString: avcodec_get_name(parameters.pointee.codec_id))
            throw MediaMuxError.notMedia(path: path, detail: "no decoder for \(name) in this FFmpeg")
        }
        guard let fresh = avcodec_alloc_context3(codec) else {
            throw MediaMuxError.outOfMemory("allocating a decoder", path: path)
        }
        context = fresh
        // From here on a throw runs deinit, which frees the context.
        try inputCheck(avcodec_parameters_to_context(context, parameters), "the \(media)'s codec configuration cannot be used", path: path)
        context.pointee.pkt_timebase = stream.pointee.time_base
        let (width, height) = (Int(parameters.pointee.width), Int(parameters.pointee.height))
        if width * height > Self.largestPicture {
            throw MediaMuxError.notMedia(
                path: path, detail: "its pictures are \(width)x\(height); MediaMux decodes at most 67 megapixels (8192x8192)")
        }
        context.pointee.max_pixels = Int64(Self.largestPicture)
        context.pointee.thread_count = Int32(threads)
        context.pointee.thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE
        try inputCheck(avcodec_open2(context, codec, nil), "the \(media)'s codec configuration cannot be decoded", path: path)
    }

    deinit {
        var doomed: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&doomed)
    }

    package enum Output { case frame, needsInput, finished }

    /// Hands a packet to the decoder (nil: the end of the stream). False when
    /// the decoder has frames to give first.
    package func send(_ packet: UnsafeMutablePointer<AVPacket>?) throws -> Bool {
        let code = avcodec_send_packet(context, packet)
        if code == CFFmpeg_AVERROR_EAGAIN() { return false }
        if code == CFFmpeg_AVERROR_EOF() { return true }
        // A damaged packet is the decoder's business; frames that decode still count.
        if code == CFFmpeg_AVERROR_INVALIDDATA() {
            rejectedPackets += 1
            return true
        }
        try inputCheck(code, "the \(media) cannot be decoded", path: path)
        return true
    }

    package func receive(into frame: FrameBuffer) throws -> Output {
        while true {
            let code = avcodec_receive_frame(context, frame.pointer)
            if code == CFFmpeg_AVERROR_EAGAIN() { return .needsInput }
            if code == CFFmpeg_AVERROR_EOF() { return .finished }
            // A damaged frame (reported here with frame threads) is passed over, as from send().
            if code == CFFmpeg_AVERROR_INVALIDDATA() {
                rejectedPackets += 1
                continue
            }
            try inputCheck(code, "the \(media) cannot be decoded", path: path)
            return .frame
        }
    }

    /// Forgets everything buffered, after a seek.
    package func flush() { avcodec_flush_buffers(context) }
}

/// One encoder: owns its AVCodecContext from allocation to deinit, so a
/// failure while setting it up frees it too.
package final class EncoderHandle {
    package let context: UnsafeMutablePointer<AVCodecContext>
    package let codec: UnsafePointer<AVCodec>
    package let path: String
    private let packet: PacketBuffer

    package init(codec: UnsafePointer<AVCodec>, path: String) throws {
        self.codec = codec
        self.path = path
        packet = try PacketBuffer()
        guard let made = avcodec_alloc_context3(codec) else {
            throw MediaMuxError.outOfMemory("allocating an encoder", path: path)
        }
        context = made
    }

    deinit {
        var doomed: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&doomed)
    }

    /// Opens the encoder with private options; returns FFmpeg's code.
    package func open(options: [(String, String)] = []) -> Int32 {
        var dictionary: OpaquePointer?
        for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
        defer { av_dict_free(&dictionary) }
        return avcodec_open2(context, codec, &dictionary)
    }

    /// Encodes a frame (nil: the end) and hands every packet ready to `write`.
    package func encode(_ frame: UnsafeMutablePointer<AVFrame>?, what: String, write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        try ffmpegCheck(avcodec_send_frame(context, frame), "encoding \(what)", path: path)
        while true {
            let code = avcodec_receive_packet(context, packet.pointer)
            if code == CFFmpeg_AVERROR_EAGAIN() || code == CFFmpeg_AVERROR_EOF() { return }
            try ffmpegCheck(code, "encoding \(what)", path: path)
            try write(packet.pointer)
            av_packet_unref(packet.pointer)
        }
    }
}

/// Codecs FFmpeg 5.1 has no id for, by the sample entry type (or codec tag,
/// or Matroska CodecID) their files carry: what they are, for the messages
/// that refuse them.
package enum UnnamedCodec {
    static let known: [String: String] = [
        "vvc1": "VVC (H.266)", "vvi1": "VVC (H.266)",
        "dav1": "Dolby Vision on AV1",
        "evc1": "MPEG-5 EVC", "apv1": "APV", "avs3": "AVS3", "lhv1": "multi-layer HEVC (MV-HEVC)",
        "fpcm": "floating-point PCM (ISO 23003-5)", "ipcm": "integer PCM (ISO 23003-5)",
        "mha1": "MPEG-H 3D Audio", "mhm1": "MPEG-H 3D Audio", "iamf": "IAMF", "ac-4": "AC-4",
        // Matroska CodecIDs.
        "V_MPEGI/ISO/VVC": "VVC (H.266)", "V_AVS3": "AVS3", "A_MPEGH/MHA1": "MPEG-H 3D Audio",
        "A_MPEGH/MHM1": "MPEG-H 3D Audio", "A_AC4": "AC-4",
    ]

    /// "vvc1: VVC (H.266), which FFmpeg 5.1.9 cannot read"; without a tag,
    /// "a codec FFmpeg 5.1.9 has no name for".
    package static func describe(tag: String?) -> String {
        let version = FFmpegLibraries.version
        guard let tag else { return "a codec FFmpeg \(version) has no name for" }
        guard let what = known[tag] else { return "\(tag), a codec FFmpeg \(version) has no name for" }
        return "\(tag): \(what), which FFmpeg \(version) cannot read"
    }
}

/// A codec tag as text: four printable characters, else hexadecimal; nil for none.
func fourCharacterCode(_ tag: UInt32) -> String? {
    guard tag != 0 else { return nil }
    let bytes = (0..<4).map { UInt8((tag >> (8 * $0)) & 0xFF) }
    guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return "0x" + String(tag, radix: 16) }
    return String(decoding: bytes, as: UTF8.self)
}
