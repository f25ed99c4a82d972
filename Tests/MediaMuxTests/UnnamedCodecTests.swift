import Foundation
import Testing
import TestSupport
@testable import MediaMux
@testable import MediaMuxCore

/// A track whose codec this FFmpeg has no id for is named by its
/// four-character code and what it is, never as "none". The fixture is the
/// fuzz seed `vvc_entry.mp4` (Fuzz/make-seeds.sh): HEVC packets under a
/// `vvc1` sample entry, which no decoder reads.
struct UnnamedCodecTests {
    static let vvc = Fixtures.path("fuzz/seeds/vvc_entry.mp4")

    @Test func aCodecThisFFmpegCannotNameIsNamedByItsCode() async throws {
        let info = try await MuxEngine().probe(Self.vvc)
        let video = try #require(info.video)
        #expect(video.codecTag == "vvc1")
        if FFmpegLibraries.version.hasPrefix("5.") {
            // FFmpeg 5.1 (libavcodec 59) has no codec id for VVC.
            #expect(video.codec == "none")
            let named = "vvc1: VVC (H.266), which FFmpeg \(FFmpegLibraries.version) cannot read"
            #expect(video.unreadableCodec == named)
            let folder = try TemporaryFolder()
            await #expect(throws: MediaMuxError.notMedia(path: Self.vvc, detail: "its video stream is \(named)")) {
                _ = try await MuxEngine().merge(video: Self.vvc, audio: Fixtures.path("aac_2s.m4a"), output: folder.path("out.mp4"))
            }
            await #expect(throws: MediaMuxError.notMedia(path: Self.vvc, detail: "its video is \(named)")) {
                _ = try await MuxEngine().contactSheet(of: Self.vvc, output: folder.path("sheet.png"))
            }
            #expect(folder.contents.isEmpty)
        } else {
            // FFmpeg 7.1 (libavcodec 61) reads vvc1 as VVC: its own name stands.
            #expect(video.codec == "vvc" && video.unreadableCodec == nil)
        }
    }

    @Test func whatTheCodesAre() {
        let version = FFmpegLibraries.version
        #expect(UnnamedCodec.describe(tag: "dav1") == "dav1: Dolby Vision on AV1, which FFmpeg \(version) cannot read")
        #expect(UnnamedCodec.describe(tag: "fpcm") == "fpcm: floating-point PCM (ISO 23003-5), which FFmpeg \(version) cannot read")
        #expect(UnnamedCodec.describe(tag: "zzzz") == "zzzz, a codec FFmpeg \(version) has no name for")
        #expect(UnnamedCodec.describe(tag: nil) == "a codec FFmpeg \(version) has no name for")
    }
}
