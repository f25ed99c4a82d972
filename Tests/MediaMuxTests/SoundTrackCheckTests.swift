import MediaMuxContainers
@testable import MediaMux
@testable import MediaMuxCore
@testable import MediaMuxPreview
@testable import MediaMuxDownload
import Testing
import TestSupport

/// The box-level check a download's body passes when it is MP4/M4A.
struct SoundTrackCheckTests {
    @Test(arguments: [
        ("aac_7s.m4a", true as Bool?),
        ("h264_bframes_aac.mp4", true),
        ("h264_frame_index.mp4", false),
        ("av1_10bit.mp4", false),
        // Not QuickTime, or no readable moov: left to FFmpeg's probe.
        ("mp3_5s.mp3", nil),
        ("text_file.mp4", nil),
        ("random_bytes.mp4", nil),
        // The check reads the movie header only: a file cut after it still has
        // its sound track there (the merge refuses the missing samples).
        ("truncated_h264.mp4", true),
    ])
    func soundTrack(_ name: String, expected: Bool?) {
        #expect(quickTimeHasSoundTrack(path: Fixtures.path(name)) == expected)
    }

    @Test(Samples.required, arguments: [
        ("apple_h264_bframes_audio_starts_44ms_late.mov", true as Bool?),
        ("iphone14pro_hevc_dolbyvision84_hlg_rot90_0.1s.mov", true),
        // Fragmented: the sound track is declared in the moov, its samples are in fragments.
        ("fmp4_opus_audio.mp4", true),
        ("av1_hdr10_mdcv_clli.mp4", true),
    ])
    func soundTrackOfRealFiles(_ name: String, expected: Bool?) {
        #expect(quickTimeHasSoundTrack(path: Samples.path(name)) == expected)
    }
}

/// The whole check a downloaded body passes without FFmpeg: the box-level
/// one, then the first bytes of the common audio files and of text pages.
/// nil is left to the probe the facade passes (FFmpeg's).
struct DownloadAudioCheckTests {
    @Test(arguments: [
        ("aac_7s.m4a", true as Bool?),
        ("h264_frame_index.mp4", false),
        ("mp3_5s.mp3", true),
        ("pcm_2s.wav", true),
        // Ogg and Matroska hold video too; random bytes are nothing known.
        ("opus_5s.ogg", nil),
        ("opus_5s.webm", nil),
        ("random_bytes.mp4", nil),
    ])
    func recognized(_ name: String, expected: Bool?) throws {
        #expect(try recognizedAudio(path: Fixtures.path(name)) == expected)
    }

    @Test(Samples.required, arguments: [
        ("lame399_vbr_xing_lametag_mono.mp3", true as Bool?),
        ("lame_vbr_xing_toc_stereo.mp3", true),
        ("chrome_mediarecorder_opus_no_duration.webm", nil),
        ("opus_webm_audio_only_preskip_3s.webm", nil),
        ("adobe_audition_pcm24_48k_trailing_chunks.wav", true),
    ])
    func recognizedRealFiles(_ name: String, expected: Bool?) throws {
        #expect(try recognizedAudio(path: Samples.path(name)) == expected)
    }

    /// An error page served with 200, and an empty body, are not media: they
    /// fail as a demuxer's open would, so the download names them the same way.
    @Test(arguments: ["html_page.m4a", "empty.m4a"])
    func textAndEmptyBodiesAreNotMedia(_ name: String) {
        #expect(throws: MediaMuxError.self) { _ = try recognizedAudio(path: Fixtures.path(name)) }
    }

    @Test func signatures() throws {
        func bytes(_ text: String, then rest: [UInt8] = []) -> [UInt8] { Array(text.utf8) + rest }
        #expect(try AudioSignature.classify(bytes("fLaC", then: [0, 0, 0, 34]), path: "x") == true)
        #expect(try AudioSignature.classify(bytes("FORM", then: [0, 0, 0, 8]) + bytes("AIFF"), path: "x") == true)
        #expect(try AudioSignature.classify(bytes("RIFF", then: [0, 0, 0, 8]) + bytes("AVI "), path: "x") == nil)
        #expect(try AudioSignature.classify([0xFF, 0xF1, 0x50, 0x80], path: "x") == true)
        #expect(try AudioSignature.classify([0xFF, 0x00, 0x50, 0x80], path: "x") == nil)
        #expect(throws: MediaMuxError.self) { _ = try AudioSignature.classify([0xEF, 0xBB, 0xBF] + bytes("  {\"error\": 1}"), path: "x") }
    }
}
