import Foundation
import Testing
import TestSupport
@testable import MediaMux
@testable import MediaMuxCore
@testable import MediaMuxPreview

/// What a player that shares nothing with FFmpeg's demuxer shows first.
/// GStreamer (qtdemux applies the edit list, decodebin decodes) plays HEVC
/// here, which Chromium cannot. Its first pictures of each output are its
/// first pictures of the source: the copy changes nothing a player shows,
/// through the iPhone clip's first IDR picture missing from stss, negative
/// composition offsets and edits that start after a keyframe.
///
/// GStreamer's rule at an edit's start is its own: it shows what it decodes
/// from the keyframe whose decode time reaches the edit, so its first
/// pictures can come before the edit's (the iPhone clip) or after it
/// (h264_negative_start.mp4). The tests' reader judges the edits themselves
/// (DecodedFrameTests); here the player must see the output as it sees the source.
/// GStreamer 1.22 shows nothing of the iPhone clip once its edit is shorter
/// than about a third of a second (the source with its own edit shortened
/// fails alike), so the outputs here keep the video's whole length.
@Suite(.tags(.gstreamer), .skippedByTag, .offTheCooperativePool)
struct PlayerFirstFrameTests {
    @Test(arguments: DecodedFrameTests.videos)
    func gstreamerShowsTheSameFirstPictures(_ video: String) async throws {
        try await expectSameFirstPictures(Fixtures.path(video))
    }

    /// Not the AV1 file: GStreamer 1.22 here has no AV1 decoder (dav1d's is in plugins-bad).
    @Test(Samples.required, arguments: DecodedFrameTests.realVideos.filter { !$0.hasPrefix("av1") })
    func gstreamerShowsTheSameFirstPicturesOfRealFiles(_ video: String) async throws {
        try await expectSameFirstPictures(Samples.path(video))
    }

    private func expectSameFirstPictures(_ source: String) async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        _ = try await MuxEngine().merge(video: source, audio: Fixtures.path("aac_7s.m4a"), output: output, options: MergeOptions(orientation: .keep))
        let sourceFile = try MP4File(path: source)
        let track = try #require(sourceFile.videoTracks.first)
        let size = try #require(try DecodedFrameTests.shown(track, movieTimescale: sourceFile.movieTimescale).first?.byteCount)
        let count = 3
        let fromSource = try GStreamer.firstPictures(of: source, count: count, size: size, rawFile: folder.path("source.raw"))
        let fromOutput = try GStreamer.firstPictures(of: output, count: count, size: size, rawFile: folder.path("output.raw"))
        try #require(fromSource.count == count, "GStreamer showed \(fromSource.count) pictures of the source")
        #expect(fromOutput.map(TrackDecoder.hash(packed:)) == fromSource.map(TrackDecoder.hash(packed:)))
        // Each is one of the source's pictures, decoded by the tests' own reader.
        let decoded = Set(try TrackDecoder.frames(of: track).map(\.hash))
        #expect(fromOutput.allSatisfy { decoded.contains(TrackDecoder.hash(packed: $0)) })
    }
}
