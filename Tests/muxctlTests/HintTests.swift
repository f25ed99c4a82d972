@testable import muxctl
import MediaMux
import Testing

/// The next steps muxctl prints under an error name its own flags, so they
/// are made here, not by the library.
@Suite("error hints")
struct HintTests {
    @Test func codecHintsOfferMOVOnlyWhereMOVCanHoldTheCodec() {
        // FFmpeg 5.1 refuses Opus in MOV and FLAC in MP4 and MOV: no hint to try MOV.
        #expect(MediaMuxError.codecNotSupportedInContainer(codec: "opus", container: "mov", path: "o.mov").hint == nil)
        #expect(MediaMuxError.codecNotSupportedInContainer(codec: "flac", container: "mp4", path: "o.mp4").hint == nil)
        #expect(MediaMuxError.codecNotSupportedInContainer(codec: "pcm_s24le", container: "mp4", path: "o.mp4").hint == "try a .mov output")
    }

    @Test func httpAndOutputHints() {
        #expect(MediaMuxError.http(status: 404, url: "http://127.0.0.1/a.m4a").hint == "check the URL")
        #expect(MediaMuxError.outputExists(path: "o.mp4").hint == "pass --force to overwrite it")
        #expect(MediaMuxError.http(status: 500, url: "http://127.0.0.1/a.m4a").hint == nil)
    }
}
