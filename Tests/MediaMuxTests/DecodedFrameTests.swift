import Foundation
import Testing
import TestSupport
@testable import MediaMux
@testable import MediaMuxCore
@testable import MediaMuxPreview

/// The output shows the source's pictures: the first frames of both, from
/// where their edit lists start presenting, decoded in display order without
/// rotation, hash for hash. The tracks are read by the tests' MP4 reader and
/// decoded by libavcodec (see TrackDecoder), so FFmpeg's edit-list handling
/// does not judge a file that MediaMux wrote to work around it.
struct DecodedFrameTests {
    static let videos = [
        "h264_negative_cts_tail.mp4",
        // The edit starts on a B-frame after a keyframe.
        "h264_negative_start.mp4",
        "h264_bframes_aac.mp4",
        "hevc_hdr10_entry_boxes.mp4",
    ]

    static let realVideos = [
        // The first IDR picture is missing from stss; FFmpeg 5.1 misreads the edit start.
        // That picture is presented after the 13 decoded next, so FFmpeg's best-effort
        // frame times label later pictures two frames off: each frame's own pts is used.
        "iphone_hevc_rot90_bframes_editlist_nonsync_start.mp4",
        // Dolby Vision 8.4, negative composition offsets in a version-0 ctts.
        "iphone_hevc_rot90_aac_mebx_0.3s.mp4",
        // iPhone 14 Pro, Dolby Vision 8.4: ctts v1 whose offsets put some pictures before their decode time.
        "iphone14pro_hevc_dolbyvision84_hlg_rot90_0.1s.mov",
        "apple_h264_bframes_audio_starts_44ms_late.mov",
        "android14_hevc_hlg_audio_track_first.mp4",
        "av1_hdr10_mdcv_clli.mp4",
    ]

    /// The frames a player shows from the track's edit: the one on screen at
    /// the edit's start, then every later one, as far as the edit reaches.
    /// FFmpeg's rule differs where an edit starts between two frames (Apple
    /// writes such edits): it drops the frame on screen at the start, which
    /// is shown for less than a frame's time, and starts with the next.
    static func shown(
        _ track: MP4File.Track, movieTimescale: UInt32, asFFmpeg: Bool = false, keepingLuma: Bool = false
    ) throws -> [TrackDecoder.Frame] {
        let frames = try TrackDecoder.frames(of: track, keepingLuma: keepingLuma)
        // Without an edit list the media plays from its start to its end.
        var start: Int64 = 0
        var end = track.mediaDuration
        if let edit = track.editList?.first(where: { !$0.isEmpty }) {
            start = edit.mediaTime
            end = start + Int64(edit.segmentDuration) * Int64(track.mediaTimescale) / Int64(movieTimescale)
        }
        let onScreen = frames.lastIndex { $0.time <= start } ?? 0
        let first = asFFmpeg ? frames.firstIndex { $0.time >= start } ?? frames.count : onScreen
        return Array(frames[first...].prefix { $0.time < end })
    }

    @Test(arguments: videos)
    func theOutputShowsTheSourcesFirstFrames(_ video: String) async throws {
        try await expectSourcesFirstFrames(Fixtures.path(video))
    }

    @Test(Samples.required, arguments: realVideos)
    func theOutputShowsARealSourcesFirstFrames(_ video: String) async throws {
        try await expectSourcesFirstFrames(Samples.path(video))
    }

    private func expectSourcesFirstFrames(_ video: String) async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        _ = try await MuxEngine().merge(
            video: video, audio: Fixtures.path("aac_7s.m4a"), output: output, options: MergeOptions(orientation: .keep))
        let sourceFile = try MP4File(path: video)
        let copyFile = try MP4File(path: output)
        let source = try Self.shown(try #require(sourceFile.videoTracks.first), movieTimescale: sourceFile.movieTimescale)
        let copy = try Self.shown(try #require(copyFile.videoTracks.first), movieTimescale: copyFile.movieTimescale)
        let count = min(8, source.count)
        try #require(count > 0)
        #expect(copy.count >= count)
        #expect(copy.prefix(count).map(\.hash) == source.prefix(count).map(\.hash), "source \(source.prefix(count)), output \(copy.prefix(count))")
        // FFmpeg-based players (its demuxer applies the output's edit list)
        // show the same pictures, from the first: none is lost at the start.
        let sourceAsFFmpeg = try Self.shown(sourceFile.videoTracks[0], movieTimescale: sourceFile.movieTimescale, asFFmpeg: true).prefix(count)
        let throughFFmpeg = try TrackDecoder.framesThroughFFmpeg(path: output, limit: sourceAsFFmpeg.count)
        #expect(throughFFmpeg.map(\.hash) == sourceAsFFmpeg.map(\.hash), "FFmpeg shows \(throughFFmpeg)")
    }
    /// A preview of the source shows at each moment the picture its edit
    /// list shows then: FFmpeg's reading of the edit list put the iPhone
    /// clip's previews 0.349 s late. Moments on frames (exact times included)
    /// and between them, judged by the tests' reader and decoder.
    @Test(arguments: videos)
    func previewsShowWhatTheEditListShows(_ video: String) throws {
        try expectPreviewsAsTheEditListShows(Fixtures.path(video))
    }

    @Test(Samples.required, arguments: realVideos)
    func previewsOfRealFilesShowWhatTheEditListShows(_ video: String) throws {
        try expectPreviewsAsTheEditListShows(Samples.path(video))
    }

    private func expectPreviewsAsTheEditListShows(_ path: String) throws {
        let file = try MP4File(path: path)
        let track = try #require(file.videoTracks.first)
        let frames = try TrackDecoder.frames(of: track).sorted { $0.time < $1.time }
        var start: Int64 = 0
        var end = track.mediaDuration
        if let edit = track.editList?.first(where: { !$0.isEmpty }) {
            start = edit.mediaTime
            end = start + Int64(edit.segmentDuration) * Int64(track.mediaTimescale) / Int64(file.movieTimescale)
        }
        let scale = Double(track.mediaTimescale)
        // Exact times in the track's own ticks: on a frame means on it.
        let timescale = Int64(track.mediaTimescale)
        let onFrames = frames.filter { $0.time > start && $0.time < end }.map { MediaTime(value: $0.time - start, timescale: timescale) }
        let sixths = (0..<6).map { MediaTime(value: (end - start) * Int64($0), timescale: timescale * 6) }
        let moments = Array(Set(sixths + onFrames.prefix(3) + onFrames.suffix(1))).sorted()
        let info = try Prober(cancellation: CancellationFlag()).probe(path: path)
        let plan = try PreviewPlanner.framePlan(info, options: FrameOptions(selection: .times(moments), size: nil))
        let expected = try moments.map { moment in
            let tick = start + Int64((moment.seconds * scale + 1e-3).rounded(.down))
            return try #require(frames.last { $0.time <= tick } ?? frames.first).hash
        }
        // FFmpeg's choice of threads, and one thread (what a batch uses): the same pictures.
        for threads in [0, 1] {
            let reader = try FrameReader(plan: plan, threads: threads, cancellation: CancellationFlag())
            var shown: [Int] = []
            while let (frame, _) = try reader.nextDecoded() { shown.append(TrackDecoder.hash(frame.pointer)) }
            #expect(shown == expected, "at \(moments), \(threads) threads")
        }
    }
}
