import MediaMuxBase
import MediaMuxCore
internal import CFFmpeg

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
