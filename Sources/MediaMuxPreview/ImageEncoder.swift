import MediaMuxBase
import MediaMuxCore
internal import CFFmpeg

/// Still images through libavcodec's own encoders: PNG from RGB(A), JPEG
/// from full-range 4:2:0 (JFIF) converted with libswscale.
final class ImageEncoder {
    let format: ImageFormat
    private var converter: Scaler?
    private var converterSize: (width: Int, height: Int)?

    init(format: ImageFormat) {
        self.format = format
    }

    /// The encoded file's bytes.
    func encode(_ picture: PreviewFrame, path: String) throws -> [UInt8] {
        // A PreviewFrame can be made by hand: check it before FFmpeg reads it.
        guard (1...PictureSize.largest).contains(picture.width), (1...PictureSize.largest).contains(picture.height) else {
            throw MediaMuxError.invalidOption(option: "picture", message: "\(path): a picture of \(picture.width)x\(picture.height) cannot be an image; each side must be 1 to \(PictureSize.largest) pixels")
        }
        guard picture.pixels.count == picture.height * picture.bytesPerRow else {
            throw MediaMuxError.invalidOption(option: "picture", message: "\(path): a \(picture.width)x\(picture.height) \(picture.layout.rawValue) picture needs \(picture.height * picture.bytesPerRow) bytes, not \(picture.pixels.count)")
        }
        let codecID = format == .png ? AV_CODEC_ID_PNG : AV_CODEC_ID_MJPEG
        guard let codec = avcodec_find_encoder(codecID) else {
            throw MediaMuxError.ffmpeg(operation: "finding the \(format.rawValue) encoder", path: path, code: FFmpegCode.notAvailable, message: "this FFmpeg has none")
        }
        guard let allocated = avcodec_alloc_context3(codec) else {
            throw MediaMuxError.outOfMemory("allocating an encoder", path: path)
        }
        var context: UnsafeMutablePointer<AVCodecContext>? = allocated
        defer { avcodec_free_context(&context) }
        let rgbFormat = picture.layout == .rgb ? AV_PIX_FMT_RGB24 : AV_PIX_FMT_RGBA
        allocated.pointee.width = Int32(picture.width)
        allocated.pointee.height = Int32(picture.height)
        allocated.pointee.time_base = AVRational(num: 1, den: 25)
        let frame = try FrameBuffer()
        frame.pointer.pointee.width = Int32(picture.width)
        frame.pointer.pointee.height = Int32(picture.height)
        frame.pointer.pointee.pts = 0

        let source = try FrameBuffer()
        try fill(source, with: picture, format: rgbFormat, path: path)
        switch format {
        case .png:
            allocated.pointee.pix_fmt = rgbFormat
            allocated.pointee.compression_level = 3
            av_frame_move_ref(frame.pointer, source.pointer)
        case .jpeg:
            allocated.pointee.pix_fmt = AV_PIX_FMT_YUVJ420P
            allocated.pointee.color_range = AVCOL_RANGE_JPEG
            // Quantiser 3 of 31: what `ffmpeg -q:v 3` gives, near-transparent for previews.
            allocated.pointee.flags |= AV_CODEC_FLAG_QSCALE
            allocated.pointee.global_quality = 3 * CFFmpeg_FF_QP2LAMBDA()
            frame.pointer.pointee.format = AV_PIX_FMT_YUVJ420P.rawValue
            frame.pointer.pointee.quality = allocated.pointee.global_quality
            frame.pointer.pointee.color_range = AVCOL_RANGE_JPEG
            try ffmpegCheck(av_frame_get_buffer(frame.pointer, 0), "allocating a picture", path: path)
            try yuv(picture).scale(source.pointer, into: frame.planes, strides: frame.strides, path: path)
        }
        try ffmpegCheck(avcodec_open2(allocated, codec, nil), "opening the \(format.rawValue) encoder", path: path)
        try ffmpegCheck(avcodec_send_frame(allocated, frame.pointer), "encoding the image", path: path)
        try ffmpegCheck(avcodec_send_frame(allocated, nil), "encoding the image", path: path)
        guard let packet = av_packet_alloc() else {
            throw MediaMuxError.outOfMemory("allocating a packet", path: path)
        }
        var owned: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&owned) }
        try ffmpegCheck(avcodec_receive_packet(allocated, packet), "encoding the image", path: path)
        return Array(UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
    }

    private func yuv(_ picture: PreviewFrame) -> Scaler {
        if let converter, converterSize.map({ $0 == (picture.width, picture.height) }) == true { return converter }
        let made = Scaler(width: picture.width, height: picture.height, format: AV_PIX_FMT_YUVJ420P)
        converter = made
        converterSize = (picture.width, picture.height)
        return made
    }
}

/// Copies a picture's pixels into a freshly allocated frame.
func fill(_ frame: FrameBuffer, with picture: PreviewFrame, format: AVPixelFormat, path: String) throws {
    frame.pointer.pointee.width = Int32(picture.width)
    frame.pointer.pointee.height = Int32(picture.height)
    frame.pointer.pointee.format = format.rawValue
    try ffmpegCheck(av_frame_get_buffer(frame.pointer, 0), "allocating a picture", path: path)
    let stride = Int(frame.pointer.pointee.linesize.0)
    let rowBytes = picture.bytesPerRow
    picture.pixels.withUnsafeBufferPointer { pixels in
        for row in 0..<picture.height {
            (frame.pointer.pointee.data.0! + row * stride).update(from: pixels.baseAddress! + row * rowBytes, count: rowBytes)
        }
    }
}
