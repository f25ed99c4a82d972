import CFFmpeg
import MediaMuxBase
import Testing
@testable import MediaMuxCore

/// A picture that is only scaled and turned into 8-bit BT.709 (a preview
/// clip's) goes through libswscale and a turn of its pixels rather than
/// libavfilter, which it then need not load. The two make the same bytes
/// when the graph runs on one thread: checked here for every turn, on a
/// BT.601 picture that the scale also converts, against the graph itself.
struct ScaledUprightTests {
    /// A coded 320x240 8-bit BT.601 picture with a pattern no turn or mirror maps onto itself.
    static func pattern() throws -> FrameBuffer {
        let frame = try madeFrame(width: 320, height: 240, format: AV_PIX_FMT_YUV420P)
        let picture = frame.pointer
        picture.pointee.colorspace = AVCOL_SPC_SMPTE170M
        picture.pointee.color_range = AVCOL_RANGE_MPEG
        for plane in 0..<3 {
            let (width, height) = plane == 0 ? (320, 240) : (160, 120)
            let data = [picture.pointee.data.0, picture.pointee.data.1, picture.pointee.data.2][plane]!
            let stride = Int([picture.pointee.linesize.0, picture.pointee.linesize.1, picture.pointee.linesize.2][plane])
            for y in 0..<height {
                for x in 0..<width { data[y * stride + x] = UInt8(16 + (x * 3 + y * y / 7 + plane * 40) % 220) }
            }
        }
        return frame
    }

    static func bytes(_ frame: FrameBuffer) -> [[UInt8]] {
        let picture = frame.pointer.pointee
        return (0..<3).map { plane in
            let (width, height) = plane == 0 ? (Int(picture.width), Int(picture.height)) : (Int(picture.width) / 2, Int(picture.height) / 2)
            let data = [picture.data.0, picture.data.1, picture.data.2][plane]!
            let stride = Int([picture.linesize.0, picture.linesize.1, picture.linesize.2][plane])
            return (0..<height).flatMap { y in (0..<width).map { data[y * stride + $0] } }
        }
    }

    @Test(arguments: PictureTurn.allCases)
    func theSamePicturesAsTheGraph(_ turn: PictureTurn) throws {
        // Scaled to 3/4 (240x180 coded), shown as the turn says.
        let frame = turn.swapsSides ? VideoSize(width: 180, height: 240) : VideoSize(width: 240, height: 180)
        let encoding = VideoEncoding(
            codec: "h264", encoder: "libx264", sourceCodec: "h264", frame: frame, picture: frame, fit: .pad, turn: turn,
            bitDepth: 8, quality: 23, preset: "fast", colour: .bt709, reason: "test", notes: [])
        #expect(encoding.isScaleAndTurn)

        let direct = try FrameBuffer()
        try ScaledUprightPictures(encoding: encoding, path: "pattern").convert(try Self.pattern(), into: direct)

        let filters = encoding.filterGraph(decoded: AVCOL_SPC_SMPTE170M.rawValue, height: 240, fullRange: false)
        #expect(filters.contains("in_color_matrix=bt601:out_color_matrix=bt709"), "\(filters)")
        let graph = try FilterGraph(
            filters: filters, width: 320, height: 240, format: AV_PIX_FMT_YUV420P, timeBase: AVRational(num: 1, den: 30),
            pixelAspect: AVRational(num: 1, den: 1), outputFormat: AV_PIX_FMT_YUV420P, threads: 1, path: "pattern")
        try graph.send(try Self.pattern())
        try graph.send(nil)
        let filtered = try FrameBuffer()
        try #require(try graph.receive(into: filtered))
        #expect((filtered.pointer.pointee.width, filtered.pointer.pointee.height) == (Int32(frame.width), Int32(frame.height)))
        #expect(Self.bytes(direct) == Self.bytes(filtered))
        // Not the picture as coded: the turn moved it (or, for none, the scale made it).
        #expect(Self.bytes(direct)[0].count == frame.width * frame.height)
    }
}
