@testable import MediaMuxCore

extension VideoEncoding {
    /// What the tests' clips and encode spans encode to: H.264 in `frame`,
    /// the picture filling it, upright, 8-bit BT.709 (libx264, veryfast).
    static func testClip(of stream: StreamInfo, frame: VideoSize, quality: Int = 23) -> VideoEncoding {
        VideoEncoding(
            codec: "h264", encoder: "libx264", sourceCodec: stream.codec, frame: frame, picture: frame, fit: .pad, turn: stream.uprightTurn,
            bitDepth: 8, quality: quality, preset: "veryfast", colour: .bt709, reason: "a test's encoding", notes: [])
    }
}
