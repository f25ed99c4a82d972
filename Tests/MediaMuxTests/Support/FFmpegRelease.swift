import CFFmpeg

/// Which FFmpeg the tests run on, for the few places where FFmpeg itself
/// behaves differently and a test states how (CI runs the suite on Debian
/// 12's FFmpeg 5.1 and Debian 13's 7.1).
enum FFmpegRelease {
    /// libavformat's major version: 59 in FFmpeg 5.x, 60 in 6.x, 61 in 7.x.
    static let formatMajor = Int(avformat_version() >> 16)
    static var isSevenOrLater: Bool { formatMajor >= 61 }
}
