import Foundation
import Testing
import TestSupport
@testable import MediaMux
@testable import MediaMuxCore

/// A track whose codec this FFmpeg has no id for is named by its
/// four-character code (or Matroska CodecID) and what it is, never as
/// "none", and copied whole from MP4/MOV. The fixtures: the fuzz seed
/// `vvc_entry.mp4` (Fuzz/make-seeds.sh), HEVC packets under a `vvc1` sample
/// entry; `av1_dav1.mp4`, AV1 under `dav1` with a profile 10 dvvC; and
/// `fpcm.mp4`, float PCM (TestMedia/make-fixtures.sh).
struct UnnamedCodecTests {
    static let vvc = Fixtures.path("fuzz/seeds/vvc_entry.mp4")

    static let dav1 = Fixtures.path("av1_dav1.mp4")
    static let fpcm = Fixtures.path("fpcm.mp4")
    static var isFFmpeg5: Bool { FFmpegLibraries.version.hasPrefix("5.") }

    @Test func aCodecThisFFmpegCannotNameIsNamedByItsCode() async throws {
        let info = try await MuxEngine().probe(Self.vvc)
        let video = try #require(info.video)
        #expect(video.codecTag == "vvc1")
        if Self.isFFmpeg5 {
            // FFmpeg 5.1 (libavcodec 59) has no codec id for VVC.
            #expect(video.codec == "none")
            let named = "vvc1: VVC (H.266), which FFmpeg \(FFmpegLibraries.version) cannot read"
            #expect(video.unreadableCodec == named)
            let folder = try TemporaryFolder()
            await #expect(throws: MediaMuxError.notMedia(path: Self.vvc, detail: "its video is \(named)")) {
                _ = try await MuxEngine().previews.contactSheet(of: Self.vvc, output: folder.path("sheet.png"))
            }
            #expect(folder.contents.isEmpty)
        } else {
            // FFmpeg 7.1 (libavcodec 61) reads vvc1 as VVC: its own name stands.
            #expect(video.codec == "vvc" && video.unreadableCodec == nil)
        }
        // Dolby Vision on AV1 is unread by both.
        let dav1 = try #require(try await MuxEngine().probe(Self.dav1).video)
        #expect(dav1.codec == "none" && dav1.codecTag == "dav1")
    }

    /// The stsd box whole (its one sample entry, header and all) and each
    /// sample's bytes, read by the tests' own MP4 reader.
    static func entryAndSamples(_ track: MP4File.Track, in file: MP4File) throws -> (stsd: [UInt8], samples: [Data]) {
        let stsd = try #require(track.box.find("mdia/minf/stbl/stsd").first)
        return (try file.bytes(of: stsd), try FragmentedFixtureTests.packets(track))
    }

    /// Each sample's presentation time in seconds, from the track's first shown sample.
    static func presentationTimes(_ track: MP4File.Track) -> [Double] {
        track.compositionTimes.map { Double($0 - track.presentedStart) / Double(track.mediaTimescale) }
    }

    /// A video track FFmpeg cannot read, copied from MP4 into MP4 and MOV:
    /// the source's sample entry byte for byte, every packet byte for
    /// byte, each shown at its time, and the output ends where the
    /// shorter input does, to the millisecond.
    @Test(arguments: [("fuzz/seeds/vvc_entry.mp4", "vvc1"), ("av1_dav1.mp4", "dav1")], ["mp4", "mov"])
    func anUnreadVideoTrackIsCopiedWhole(_ fixture: (name: String, type: String), container: String) async throws {
        let path = Fixtures.path(fixture.name)
        let unread = try #require(try await MuxEngine().probe(path).video).unreadableCodec != nil
        let folder = try TemporaryFolder()
        let output = folder.path("out.\(container)")
        let report = try await MuxEngine().merge(video: path, audio: Fixtures.path("aac_2s.m4a"), output: output)
        let sourceFile = try MP4File(path: path)
        let file = try MP4File(path: output)
        let source = try #require(sourceFile.videoTracks.first)
        let copy = try #require(file.videoTracks.first)
        #expect(copy.sampleFormat == fixture.type && report.video.codecTag == fixture.type)
        let (sourceEntry, sourceSamples) = try Self.entryAndSamples(source, in: sourceFile)
        let (copiedEntry, copiedSamples) = try Self.entryAndSamples(copy, in: file)
        if unread {
            #expect(copiedEntry == sourceEntry, "the sample entry changed")
            #expect(report.video.codec == fixture.type)
        }
        // Every frame up to the audio's end (2 s; vvc_entry lasts 0.3 s, av1_dav1 1.5 s), whole.
        #expect(copiedSamples == sourceSamples && report.video.packets == source.sampleCount)
        // Each frame shown when the source shows it. (The last frame's
        // decode duration may grow to its presentation's end, as in every copy.)
        #expect(Self.presentationTimes(copy) == Self.presentationTimes(source))
        let seconds = Double(file.movieDuration) / Double(file.movieTimescale)
        #expect(abs(seconds - report.duration.seconds) < 0.001 && report.endReason == .videoEndsFirst)
        #expect(abs(seconds - source.presentedEnd) < 0.001, "the output lasts \(seconds) s, the video \(source.presentedEnd) s")
    }

    /// A soundtrack FFmpeg 5.1 cannot read (ISO 23003-5 float PCM) is copied
    /// whole; FFmpeg 7.1 reads it as PCM, which MP4 output encodes as AAC
    /// like any other PCM.
    @Test func anUnreadSoundtrackIsCopiedWhole() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        let report = try await MuxEngine().merge(video: Fixtures.path("h264_bframes_aac.mp4"), audio: Self.fpcm, output: output)
        let file = try MP4File(path: output)
        let copy = try #require(file.audioTracks.first)
        #expect(abs(report.duration.seconds - 1.024) < 0.001 && report.endReason == .audioEndsFirst)
        let seconds = Double(file.movieDuration) / Double(file.movieTimescale)
        #expect(abs(seconds - 1.024) < 0.001)
        guard Self.isFFmpeg5 else {
            #expect(report.audio!.codec == "aac" && report.audio!.encoding?.sourceCodec == "pcm_f32le")
            return
        }
        let sourceFile = try MP4File(path: Self.fpcm)
        let source = try #require(sourceFile.audioTracks.first)
        let (sourceEntry, sourceSamples) = try Self.entryAndSamples(source, in: sourceFile)
        let (copiedEntry, copiedSamples) = try Self.entryAndSamples(copy, in: file)
        #expect(copy.sampleFormat == "fpcm" && report.audio!.codec == "fpcm" && report.audio!.encoding == nil)
        #expect(copiedEntry == sourceEntry, "the sample entry changed")
        #expect(copiedSamples == sourceSamples && copy.timeToSample == source.timeToSample)
        #expect(copy.mediaTimescale == 8000 && Self.presentationTimes(copy) == Self.presentationTimes(source))
    }

    /// What a copy cannot do: an unread track is never decoded, so re-framing
    /// it, or changing the soundtrack's level, is refused by name.
    @Test func anUnreadTrackIsNeverDecoded() async throws {
        let version = FFmpegLibraries.version
        let folder = try TemporaryFolder()
        var reframe = MergeOptions()
        reframe.orientation = .portrait
        await #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.orientation", message:
            "\(Self.dav1): its video stream is dav1: Dolby Vision on AV1, which FFmpeg \(version) cannot read; it can be copied as it is, but not re-framed")) {
            _ = try await MuxEngine().merge(video: Self.dav1, audio: Fixtures.path("aac_2s.m4a"), output: folder.path("a.mp4"), options: reframe)
        }
        if Self.isFFmpeg5 {
            var louder = MergeOptions()
            louder.audio.volume = 3
            await #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.audio", message:
                "\(Self.fpcm): its audio stream is fpcm: floating-point PCM (ISO 23003-5), which FFmpeg \(version) cannot read; it can be copied as it is, but not encoded (set to 3.0 dB)")) {
                _ = try await MuxEngine().merge(video: Fixtures.path("h264_bframes_aac.mp4"), audio: Self.fpcm, output: folder.path("b.mp4"), options: louder)
            }
        }
        #expect(folder.contents.isEmpty)
    }

    /// Matroska keeps no sample entry to copy: the stream is refused, named
    /// by its CodecID (read from the file; FFmpeg's demuxer drops it). The
    /// file is h264_aac.mkv with its video's CodecID replaced by VVC's.
    @Test func anUnreadMatroskaTrackIsNamedByItsCodecID() async throws {
        let folder = try TemporaryFolder()
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Fixtures.path("h264_aac.mkv"))))
        let avc = Array("V_MPEG4/ISO/AVC".utf8), vvc = Array("V_MPEGI/ISO/VVC".utf8)
        let at = try #require((0...(bytes.count - avc.count)).first { Array(bytes[$0..<$0 + avc.count]) == avc })
        bytes.replaceSubrange(at..<at + avc.count, with: vvc)
        let path = folder.path("vvc.mkv")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let video = try #require(try await MuxEngine().probe(path).video)
        guard Self.isFFmpeg5 || video.codec == "none" else { return }  // a later FFmpeg may know the ID
        let named = "V_MPEGI/ISO/VVC: VVC (H.266), which FFmpeg \(FFmpegLibraries.version) cannot read"
        #expect(video.unreadableCodec == named)
        await #expect(throws: MediaMuxError.notMedia(path: path, detail: "its video stream is \(named); only an MP4 or MOV source's can be copied unread")) {
            _ = try await MuxEngine().merge(video: path, audio: Fixtures.path("aac_2s.m4a"), output: folder.path("out.mp4"))
        }
        #expect(folder.contents == ["vvc.mkv"])
    }

    @Test func whatTheCodesAre() {
        let version = FFmpegLibraries.version
        #expect(UnnamedCodec.describe(tag: "dav1") == "dav1: Dolby Vision on AV1, which FFmpeg \(version) cannot read")
        #expect(UnnamedCodec.describe(tag: "fpcm") == "fpcm: floating-point PCM (ISO 23003-5), which FFmpeg \(version) cannot read")
        #expect(UnnamedCodec.describe(tag: "zzzz") == "zzzz, a codec FFmpeg \(version) has no name for")
        #expect(UnnamedCodec.describe(tag: nil) == "a codec FFmpeg \(version) has no name for")
    }
}
