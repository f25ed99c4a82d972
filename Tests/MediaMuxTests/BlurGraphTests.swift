import CFFmpeg
import MediaMuxBase
import Testing
@testable import MediaMuxCore

/// The `blur` fit's graph run through libavfilter on a made picture: the
/// picture keeps the source's bit depth all the way (libavfilter's `overlay`
/// would take it through an 8-bit alpha plane), lands where the plan says,
/// and the sides show it darkened.
struct BlurGraphTests {
    /// A coded 1920x1080 10-bit picture, shown a quarter turn clockwise
    /// (1080x1920 upright), into a 1920x1080 frame: 608x1080 in the middle.
    static let encoding = VideoEncoding(
        codec: "hevc", encoder: "libx265", sourceCodec: "hevc", frame: VideoSize(width: 1920, height: 1080),
        picture: VideoSize(width: 1080, height: 1920), fit: .blur, turn: .clockwise90, bitDepth: 10, quality: 23,
        preset: "superfast", reason: "test", notes: [])

    /// Luma rising by one code value every 2.2 columns across the coded
    /// picture (64 to 940, 877 levels), so top to bottom once it is turned.
    static func gradient() throws -> FrameBuffer {
        let frame = try madeFrame(width: 1920, height: 1080, format: AV_PIX_FMT_YUV420P10LE)
        let picture = frame.pointer
        func fill(_ plane: Int, width: Int, height: Int, _ value: (Int) -> UInt16) {
            let (data, stride) = plane == 0 ? (picture.pointee.data.0, picture.pointee.linesize.0)
                : plane == 1 ? (picture.pointee.data.1, picture.pointee.linesize.1) : (picture.pointee.data.2, picture.pointee.linesize.2)
            guard let data else { return }
            for row in 0..<height {
                let line = UnsafeMutableRawPointer(data + row * Int(stride)).assumingMemoryBound(to: UInt16.self)
                for column in 0..<width { line[column] = value(column) }
            }
        }
        fill(0, width: 1920, height: 1080) { UInt16(64 + $0 * 876 / 1919) }
        fill(1, width: 960, height: 540) { _ in 512 }
        fill(2, width: 960, height: 540) { _ in 512 }
        return frame
    }

    @Test func thePictureKeepsTenBitsBetweenDarkerSides() throws {
        let graph = try FilterGraph(
            filters: Self.encoding.filterGraph, width: 1920, height: 1080, format: AV_PIX_FMT_YUV420P10LE,
            timeBase: AVRational(num: 1, den: 30), pixelAspect: AVRational(num: 1, den: 1), outputFormat: AV_PIX_FMT_YUV420P10LE,
            path: "gradient")
        try graph.send(try Self.gradient())
        try graph.send(nil)
        let output = try FrameBuffer()
        try #require(try graph.receive(into: output))
        let frame = output.pointer.pointee
        #expect((frame.width, frame.height, frame.format) == (1920, 1080, AV_PIX_FMT_YUV420P10LE.rawValue))
        let luma = try #require(frame.data.0)
        func value(_ x: Int, _ y: Int) -> Int {
            Int(UnsafeRawPointer(luma + y * Int(frame.linesize.0)).assumingMemoryBound(to: UInt16.self)[x])
        }
        // The middle column of the picture (x 656 to 1263) runs the whole
        // gradient, top (the coded picture's left) to bottom, in ten bits:
        // an 8-bit pass would leave at most 256 levels.
        let column = (0..<1080).map { value(960, $0) }
        #expect(Set(column).count > 600, "\(Set(column).count) levels")
        #expect(column.first! < 80 && column.last! > 920, "\(column.first!) ... \(column.last!)")
        // The sides show the same gradient, zoomed to cover the frame,
        // blurred, and darkened to 60 %: never above 60 % of the way from
        // black (64) to the brightest (940), not black, and still rising.
        for x in [300, 1600] {
            let side = [100, 540, 980].map { value(x, $0) }
            #expect(side.allSatisfy { $0 > 70 && $0 <= 64 + 876 * 6 / 10 + 4 }, "\(x): \(side)")
            #expect(side[0] < side[1] && side[1] < side[2], "\(x): \(side)")
        }
        #expect(try !graph.receive(into: output))
    }
}
