import Testing
@testable import MediaMux
@testable import MediaMuxCore
@testable import MediaMuxPreview

/// The codes MediaMux raises for FFmpeg are the ones FFmpeg means by their names.
struct FFmpegCodeTests {
    @Test func namedCodesMeanWhatFFmpegSays() {
        #expect(ffmpegErrorText(FFmpegCode.outOfMemory) == "Cannot allocate memory")
        #expect(ffmpegErrorText(FFmpegCode.notAvailable) == "Function not implemented")
        #expect(ffmpegErrorText(FFmpegCode.invalid) == "Invalid argument")
        #expect(ffmpegErrorText(FFmpegCode.tryAgain) == "Resource temporarily unavailable")
        #expect(MediaMuxError.outOfMemory("allocating a frame", path: "a.mp4") ==
            .ffmpeg(operation: "allocating a frame", path: "a.mp4", code: FFmpegCode.outOfMemory, message: "out of memory"))
    }
}
