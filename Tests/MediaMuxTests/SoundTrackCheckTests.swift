@testable import MediaMux
import Testing

/// The box-level check a download's body passes when it is MP4/M4A.
struct SoundTrackCheckTests {
    @Test(arguments: [
        ("aac_7s.m4a", true as Bool?),
        ("h264_bframes_aac.mp4", true),
        ("real/apple_h264_bframes_audio_starts_44ms_late.mov", true),
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
}
