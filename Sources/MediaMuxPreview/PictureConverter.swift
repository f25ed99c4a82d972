import MediaMuxBase
import MediaMuxCore
internal import CFFmpeg
internal import CFFmpegScale

/// Scales decoded frames with libswscale into one pixel format and size,
/// honouring the source's colour matrix and range; any bit depth in, 8 bits out.
final class Scaler {
    let width: Int
    let height: Int
    let format: AVPixelFormat
    private var context: OpaquePointer?
    private var source: (width: Int32, height: Int32, format: Int32, space: Int32, range: Int32)?

    init(width: Int, height: Int, format: AVPixelFormat) {
        self.width = width
        self.height = height
        self.format = format
    }

    deinit { sws_freeContext(context) }

    /// Scales `frame` into `planes` / `strides` (at least `height` rows each).
    func scale(_ frame: UnsafeMutablePointer<AVFrame>, into planes: [UnsafeMutablePointer<UInt8>?], strides: [Int32], path: String) throws {
        let f = frame.pointee
        let key = (f.width, f.height, f.format, Int32(f.colorspace.rawValue), Int32(f.color_range.rawValue))
        if source == nil || source! != key {
            // Bicubic, as ffmpeg's scale filter. For pictures people look at,
            // accurate rounding and full chroma; a video encoder gets the fast path.
            let flags = format == AV_PIX_FMT_YUV420P ? SWS_BICUBIC : SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT
            context = sws_getCachedContext(
                context, f.width, f.height, AVPixelFormat(rawValue: f.format), Int32(width), Int32(height), format,
                flags, nil, nil, nil)
            guard let context else {
                throw MediaMuxError.ffmpeg(operation: "setting up the scaler", path: path, code: FFmpegCode.invalid, message: "unsupported picture format or size")
            }
            let space = PreviewPlanner.colourMatrix(declared: Int32(f.colorspace.rawValue), height: Int(f.height))
            let fullRangeIn: Int32 = f.color_range == AVCOL_RANGE_JPEG ? 1 : 0
            // RGB and JPEG (JFIF) are full range with BT.601's matrix; the clip encoder gets BT.709 limited range.
            let toClip = format == AV_PIX_FMT_YUV420P
            let outSpace = toClip ? Int32(SWS_CS_ITU709) : Int32(SWS_CS_DEFAULT)
            sws_setColorspaceDetails(
                context, sws_getCoefficients(space), fullRangeIn, sws_getCoefficients(outSpace), toClip ? 0 : 1, 0, 1 << 16, 1 << 16)
            source = key
        }
        let sourcePlanes = withUnsafePointer(to: frame.pointee.data) { tuple in
            tuple.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { Array(UnsafeBufferPointer(start: $0, count: 8)) }
        }
        let sourceStrides = withUnsafePointer(to: frame.pointee.linesize) { tuple in
            tuple.withMemoryRebound(to: Int32.self, capacity: 8) { Array(UnsafeBufferPointer(start: $0, count: 8)) }
        }
        let rows = sws_scale(context, sourcePlanes, sourceStrides, 0, f.height, planes, strides)
        guard rows > 0 else {
            throw MediaMuxError.ffmpeg(operation: "scaling a frame", path: path, code: rows, message: ffmpegErrorText(rows))
        }
    }
}

/// Copies a picture of `width` x `height` pixels, turned and mirrored as
/// `turn` says (the core's rule, which a merge's re-framing and a preview
/// clip turn by too). The destination is `height` x `width` when the turn
/// swaps the sides.
func turnPicture(
    from source: UnsafePointer<UInt8>, sourceStride: Int, width: Int, height: Int, bytesPerPixel: Int,
    turn: PictureTurn, into destination: UnsafeMutablePointer<UInt8>, destinationStride: Int
) {
    guard turn != .none else {
        for y in 0..<height {
            (destination + y * destinationStride).update(from: source + y * sourceStride, count: width * bytesPerPixel)
        }
        return
    }
    // Where the pixel shown at (x, y) comes from, as libavfilter's transpose and flips take it.
    let (last, bottom) = (width - 1, height - 1)
    let from: (Int, Int) -> (Int, Int)
    switch turn {
    case .none, .clockwise90: from = { x, y in (y, bottom - x) }  // the top row becomes the right-hand column
    case .half: from = { x, y in (last - x, bottom - y) }
    case .clockwise270: from = { x, y in (last - y, x) }  // the top row becomes the left-hand column, bottom up
    case .mirrored: from = { x, y in (last - x, y) }
    case .flipped: from = { x, y in (x, bottom - y) }
    case .transposed: from = { x, y in (y, x) }
    case .antitransposed: from = { x, y in (last - y, bottom - x) }
    }
    let (shownWidth, shownHeight) = turn.swapsSides ? (height, width) : (width, height)
    for y in 0..<shownHeight {
        let out = destination + y * destinationStride
        for x in 0..<shownWidth {
            let (sourceX, sourceY) = from(x, y)
            let pixel = source + sourceY * sourceStride + sourceX * bytesPerPixel
            for byte in 0..<bytesPerPixel { out[x * bytesPerPixel + byte] = pixel[byte] }
        }
    }
}

/// Turns decoded frames into upright RGB(A) pictures of the planned size.
final class PictureConverter {
    private let path: String
    private let picture: PictureSize
    private let layout: PixelLayout
    private let scaler: Scaler
    private let scratch: UnsafeMutablePointer<UInt8>
    private let scratchStride: Int

    convenience init(plan: FramePlan) throws {
        try self.init(path: plan.path, picture: plan.picture, layout: plan.layout)
    }

    init(path: String, picture: PictureSize, layout: PixelLayout) throws {
        self.path = path
        self.picture = picture
        self.layout = layout
        scaler = Scaler(
            width: picture.scaledWidth, height: picture.scaledHeight,
            format: layout == .rgb ? AV_PIX_FMT_RGB24 : AV_PIX_FMT_RGBA)
        // Rows aligned for swscale's vector code.
        scratchStride = (picture.scaledWidth * layout.bytesPerPixel + 63) / 64 * 64
        guard let memory = av_malloc(scratchStride * picture.scaledHeight + 64) else {
            throw MediaMuxError.outOfMemory("allocating a picture", path: path)
        }
        scratch = memory.assumingMemoryBound(to: UInt8.self)
    }

    deinit { av_free(scratch) }

    func picture(_ frame: FrameBuffer, time: MediaTime) throws -> PreviewFrame {
        try scaler.scale(frame.pointer, into: [scratch, nil, nil, nil], strides: [Int32(scratchStride), 0, 0, 0], path: path)
        let bytesPerPixel = layout.bytesPerPixel
        let pixels = [UInt8](unsafeUninitializedCapacity: picture.width * picture.height * bytesPerPixel) { buffer, count in
            turnPicture(
                from: scratch, sourceStride: scratchStride, width: picture.scaledWidth, height: picture.scaledHeight,
                bytesPerPixel: bytesPerPixel, turn: picture.turn,
                into: buffer.baseAddress!, destinationStride: picture.width * bytesPerPixel)
            count = buffer.count
        }
        return PreviewFrame(time: time, width: picture.width, height: picture.height, layout: layout, pixels: pixels)
    }
}
