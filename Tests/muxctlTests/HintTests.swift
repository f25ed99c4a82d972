@testable import muxctl
import MediaMux
import Testing

/// The next steps muxctl prints under an error name its own flags, so they
/// are made here, not by the library.
@Suite("error hints")
struct HintTests {
    @Test func codecHints() {
        // Audio that cannot be copied is refused only when copying was asked for: encoding it is the way out.
        let encode = "leave out --audio-codec copy to have it encoded AAC"
        #expect(MediaMuxError.codecNotSupportedInContainer(codec: "opus", container: "mov", path: "o.mov").hint == encode)
        #expect(MediaMuxError.codecNotSupportedInContainer(codec: "flac", container: "mp4", path: "o.mp4").hint == encode)
        #expect(MediaMuxError.codecNotSupportedInContainer(codec: "pcm_s24le", container: "mp4", path: "o.mp4").hint == encode)
        // Video is never encoded: MOV where MOV holds the codec, else nothing to suggest.
        #expect(MediaMuxError.codecNotSupportedInContainer(codec: "prores", container: "mp4", path: "o.mp4").hint == "try a .mov output")
        #expect(MediaMuxError.codecNotSupportedInContainer(codec: "prores", container: "mov", path: "o.mov").hint == nil)
    }

    @Test func httpAndOutputHints() {
        #expect(MediaMuxError.http(status: 404, url: "http://127.0.0.1/a.m4a").hint == "check the URL")
        #expect(MediaMuxError.outputExists(path: "o.mp4").hint == "pass --force to overwrite it")
        #expect(MediaMuxError.http(status: 500, url: "http://127.0.0.1/a.m4a").hint == nil)
    }
}
