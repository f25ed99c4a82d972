import MediaMuxBase
package import CFFmpeg
internal import CFFmpegScale

/// The YUV matrix to read a picture with, by its H.273 number (FFmpeg's
/// AVColorSpace): the one it declares when libswscale knows it (BT.709,
/// FCC, BT.601, SMPTE 240M, BT.2020), else BT.709 above 576 lines and
/// BT.601 up to them, which is what players assume for untagged video.
package func readingMatrix(declared: Int32, height: Int) -> Int32 {
    if [1, 4, 5, 6, 7, 9, 10].contains(declared) { return declared }
    return height > 576 ? 1 : 5
}

/// Scales decoded frames with libswscale into one pixel format and size,
/// honouring the source's colour matrix and range; any bit depth in, 8 bits out.
package final class Scaler {
    package let width: Int
    package let height: Int
    package let format: AVPixelFormat
    private var context: OpaquePointer?
    private var source: (width: Int32, height: Int32, format: Int32, space: Int32, range: Int32)?

    package init(width: Int, height: Int, format: AVPixelFormat) {
        self.width = width
        self.height = height
        self.format = format
    }

    deinit { sws_freeContext(context) }

    /// Scales `frame` into `planes` / `strides` (at least `height` rows each).
    package func scale(_ frame: UnsafeMutablePointer<AVFrame>, into planes: [UnsafeMutablePointer<UInt8>?], strides: [Int32], path: String) throws {
        let f = frame.pointee
        let key = (f.width, f.height, f.format, Int32(f.colorspace.rawValue), Int32(f.color_range.rawValue))
        if source.map({ $0 != key }) ?? true {
            // Bicubic, as ffmpeg's scale filter. For pictures people look at,
            // accurate rounding and full chroma; a video encoder gets the fast path.
            let flags = format == AV_PIX_FMT_YUV420P ? SWS_BICUBIC : SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT
            context = sws_getCachedContext(
                context, f.width, f.height, AVPixelFormat(rawValue: f.format), Int32(width), Int32(height), format,
                flags, nil, nil, nil)
            guard let context else {
                throw MediaMuxError.ffmpeg(operation: "setting up the scaler", path: path, code: FFmpegCode.invalid, message: "unsupported picture format or size")
            }
            let space = readingMatrix(declared: Int32(f.colorspace.rawValue), height: Int(f.height))
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
package func turnPicture(
    from source: UnsafePointer<UInt8>, sourceStride: Int, width: Int, height: Int, bytesPerPixel: Int,
    turn: PictureTurn, into destination: UnsafeMutablePointer<UInt8>, destinationStride: Int
) {
    guard turn != .none else {
        for y in 0..<height {
            (destination + y * destinationStride).update(from: source + y * sourceStride, count: width * bytesPerPixel)
        }
        return
    }
    // Where each shown row starts in the source, and how far apart its
    // pixels lie there: the pixel shown at (x, y) is read as libavfilter's
    // transpose and flips read it.
    let (row, pixel) = (sourceStride, bytesPerPixel)
    let (last, bottom) = (width - 1, height - 1)
    let start: (Int) -> Int
    let step: Int
    switch turn {
    case .none:  // (copied row by row above)
        (start, step) = ({ y in y * row }, pixel)
    case .flipped:  // from (x, bottom - y)
        (start, step) = ({ y in (bottom - y) * row }, pixel)
    case .clockwise90:  // the top row becomes the right-hand column: (x, y) from (y, bottom - x)
        (start, step) = ({ y in bottom * row + y * pixel }, -row)
    case .half:  // from (last - x, bottom - y)
        (start, step) = ({ y in (bottom - y) * row + last * pixel }, -pixel)
    case .clockwise270:  // the top row becomes the left-hand column, bottom up: from (last - y, x)
        (start, step) = ({ y in (last - y) * pixel }, row)
    case .mirrored:  // from (last - x, y)
        (start, step) = ({ y in y * row + last * pixel }, -pixel)
    case .transposed:  // from (y, x)
        (start, step) = ({ y in y * pixel }, row)
    case .antitransposed:  // from (last - y, bottom - x)
        (start, step) = ({ y in bottom * row + (last - y) * pixel }, -row)
    }
    let (shownWidth, shownHeight) = turn.swapsSides ? (height, width) : (width, height)
    for y in 0..<shownHeight {
        let out = destination + y * destinationStride
        var from = source + start(y)
        if pixel == 1 {
            for x in 0..<shownWidth {
                out[x] = from.pointee
                from += step
            }
        } else {
            for x in 0..<shownWidth {
                for byte in 0..<pixel { out[x * pixel + byte] = from[byte] }
                from += step
            }
        }
    }
}

/// What a graph of a scale and a turn into 8-bit 4:2:0 BT.709 makes (see
/// `VideoEncoding.isScaleAndTurn`), without libavfilter: libswscale scales
/// the decoded picture in its coded orientation, then its planes are turned
/// upright pixel by pixel.
final class ScaledUprightPictures {
    private let frame: VideoSize
    /// The scaled picture's size before the turn.
    private let coded: VideoSize
    private let turn: PictureTurn
    private let path: String
    private let scaler: Scaler
    private let scaled: FrameBuffer

    init(encoding: VideoEncoding, path: String) throws {
        frame = encoding.frame
        turn = encoding.turn
        coded = turn.swapsSides ? VideoSize(width: frame.height, height: frame.width) : frame
        self.path = path
        scaler = Scaler(width: coded.width, height: coded.height, format: AV_PIX_FMT_YUV420P)
        scaled = try FrameBuffer()
        try Self.allocate(scaled, coded, path: path)
    }

    /// `picture` scaled and turned into `target`, tagged BT.709 limited range.
    func convert(_ picture: FrameBuffer, into target: FrameBuffer) throws {
        av_frame_unref(target.pointer)
        try Self.allocate(target, frame, path: path)
        target.pointer.pointee.color_primaries = AVCOL_PRI_BT709
        target.pointer.pointee.color_trc = AVCOL_TRC_BT709
        target.pointer.pointee.colorspace = AVCOL_SPC_BT709
        target.pointer.pointee.color_range = AVCOL_RANGE_MPEG
        if turn == .none {
            try scaler.scale(picture.pointer, into: target.planes, strides: target.strides, path: path)
            return
        }
        try scaler.scale(picture.pointer, into: scaled.planes, strides: scaled.strides, path: path)
        let (from, fromStrides) = (scaled.planes, scaled.strides)
        let (to, toStrides) = (target.planes, target.strides)
        for plane in 0..<3 {
            let divisor = plane == 0 ? 1 : 2
            guard let source = from[plane], let destination = to[plane] else { continue }
            turnPicture(
                from: source, sourceStride: Int(fromStrides[plane]), width: coded.width / divisor, height: coded.height / divisor,
                bytesPerPixel: 1, turn: turn, into: destination, destinationStride: Int(toStrides[plane]))
        }
    }

    private static func allocate(_ frame: FrameBuffer, _ size: VideoSize, path: String) throws {
        frame.pointer.pointee.width = Int32(size.width)
        frame.pointer.pointee.height = Int32(size.height)
        frame.pointer.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        try ffmpegCheck(av_frame_get_buffer(frame.pointer, 0), "allocating a picture", path: path)
    }
}

extension FrameBuffer {
    /// The first four planes' data, for libswscale.
    package var planes: [UnsafeMutablePointer<UInt8>?] {
        let data = pointer.pointee.data
        return [data.0, data.1, data.2, data.3]
    }

    /// The first four planes' line sizes, for libswscale.
    package var strides: [Int32] {
        let lines = pointer.pointee.linesize
        return [lines.0, lines.1, lines.2, lines.3]
    }
}
