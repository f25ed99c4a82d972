import CFFmpeg
import Testing
@testable import MediaMuxCore

/// A blank decoded picture for tests that run the core's picture paths on
/// pixels they set themselves: its size and format, its planes allocated.
func madeFrame(width: Int32, height: Int32, format: AVPixelFormat) throws -> FrameBuffer {
    let frame = try FrameBuffer()
    frame.pointer.pointee.width = width
    frame.pointer.pointee.height = height
    frame.pointer.pointee.format = format.rawValue
    frame.pointer.pointee.pts = 0
    try #require(av_frame_get_buffer(frame.pointer, 0) >= 0)
    return frame
}
