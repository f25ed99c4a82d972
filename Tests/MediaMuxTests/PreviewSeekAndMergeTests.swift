import Foundation
@testable import MediaMux
@testable import MediaMuxCore
@testable import MediaMuxPreview
import Testing

/// How the frame reader gets to a moment (by seeking, not from the start),
/// and the thumbnails a merge hands out in the same pass.
struct PreviewSeekAndMergeTests {
    static let frameIndex = Fixtures.path("h264_frame_index.mp4")

    static func reader(_ selection: FrameSelection) throws -> FrameReader {
        let info = try Prober(cancellation: CancellationFlag()).probe(path: frameIndex)
        let plan = try PreviewPlanner.framePlan(info, options: FrameOptions(selection: selection, size: nil))
        return try FrameReader(plan: plan, threads: 0, cancellation: CancellationFlag())
    }

    /// Keyframes sit at 0, 1, 2 and 3 s (30 fps). Reaching 3.5 s must start at
    /// the keyframe at 3 s: about 15 frames plus the decoder's reordering
    /// delay, never the 106 from the start.
    @Test func aLateMomentIsReachedFromTheKeyframeBeforeIt() throws {
        let reader = try Self.reader(.times([3.5]))
        let frame = try #require(try reader.next())
        #expect(FrameIndex.read(Picture(width: frame.width, height: frame.height, channels: 3, pixels: frame.pixels)) == 105)
        #expect(reader.framesDecoded <= 30, "decoded \(reader.framesDecoded) frames to reach 3.5 s")
    }

    /// Moments close together are reached by decoding on; one past the next
    /// keyframe by seeking. Either way the total stays near the frames between
    /// each keyframe and its moment.
    @Test func nearMomentsDecodeOnAndFarOnesSeek() throws {
        let near = try Self.reader(.times([0.2, 0.3, 0.4]))
        var indices: [Int?] = []
        while let frame = try near.next() {
            indices.append(FrameIndex.read(Picture(width: frame.width, height: frame.height, channels: 3, pixels: frame.pixels)))
        }
        #expect(indices == [6, 9, 12])
        #expect(near.framesDecoded <= 20, "decoded \(near.framesDecoded) frames for three moments within 0.4 s")

        let far = try Self.reader(.times([0.1, 2.9, 3.9]))
        indices = []
        while let frame = try far.next() {
            indices.append(FrameIndex.read(Picture(width: frame.width, height: frame.height, channels: 3, pixels: frame.pixels)))
        }
        #expect(indices == [3, 87, 117])
        // From the start it would be 118 or more.
        #expect(far.framesDecoded <= 75, "decoded \(far.framesDecoded) frames")
    }

    final class Collected: Sendable {
        let frames = Locked<[PreviewFrame]>([])
        func add(_ frame: PreviewFrame) { frames.withLock { $0.append(frame) } }
        var all: [PreviewFrame] { frames.withLock { $0 } }
    }

    /// The output's keyframes (0, 1, 2, 3 s), each the right picture, sized
    /// as the output is shown.
    @Test func mergeHandsOutKeyframeThumbnails() async throws {
        let folder = try TemporaryFolder()
        let collected = Collected()
        let report = try await MuxEngine().merge(
            MergeJob(
                video: Self.frameIndex, audio: Fixtures.path("aac_7s.m4a"), output: folder.path("out.mp4"),
                thumbnails: ThumbnailOptions(size: 160)),
            thumbnail: { collected.add($0) })
        #expect(report.duration == MediaTime(value: 4, timescale: 1))
        let frames = collected.all
        #expect(frames.map(\.time) == [0, 1, 2, 3].map { MediaTime(value: $0, timescale: 1) })
        #expect(frames.allSatisfy { $0.width == 160 && $0.height == 90 })
        let indices = frames.map { FrameIndex.read(Picture(width: $0.width, height: $0.height, channels: 3, pixels: $0.pixels)) }
        #expect(indices == [0, 30, 60, 90])
    }

    /// Spacing: with thumbnails at least 1.5 s apart, the keyframes at 0 and 2 s.
    @Test func mergeThumbnailsKeepTheirSpacing() async throws {
        let folder = try TemporaryFolder()
        let collected = Collected()
        _ = try await MuxEngine().merge(
            MergeJob(
                video: Self.frameIndex, audio: Fixtures.path("aac_7s.m4a"), output: folder.path("out.mp4"),
                thumbnails: ThumbnailOptions(size: 80, every: 1.5)),
            thumbnail: { collected.add($0) })
        #expect(collected.all.map(\.time.seconds) == [0, 2])
    }

    /// A rotated source (coded 320x240, shown portrait) merged with its
    /// rotation kept: thumbnails upright as the output is shown, 120x160;
    /// re-framed into a landscape frame (426x240, 0° written): that frame, 160x90.
    @Test(arguments: [(Orientation.keep, 90, 120, 160), (.landscape, 0, 160, 90)])
    func mergeThumbnailsFollowTheOutputRotation(_ orientation: Orientation, rotation: Int, width: Int, height: Int) async throws {
        let folder = try TemporaryFolder()
        let collected = Collected()
        let report = try await MuxEngine().merge(
            MergeJob(
                video: Fixtures.path("h264_rot90.mp4"), audio: Fixtures.path("aac_7s.m4a"), output: folder.path("out.mp4"),
                options: MergeOptions(orientation: orientation), thumbnails: ThumbnailOptions(size: 160)),
            thumbnail: { collected.add($0) })
        #expect(report.rotation.degrees == rotation)
        let frames = collected.all
        #expect(!frames.isEmpty)
        #expect(frames.allSatisfy { $0.width == width && $0.height == height }, "\(frames.map { ($0.width, $0.height) })")
    }

    /// A bad thumbnail size is an option error, found before anything is written.
    @Test func thumbnailSizeIsChecked() async throws {
        let folder = try TemporaryFolder()
        await #expect(throws: MediaMuxError.self) {
            _ = try await MuxEngine().merge(
                MergeJob(
                    video: Self.frameIndex, audio: Fixtures.path("aac_7s.m4a"), output: folder.path("out.mp4"),
                    thumbnails: ThumbnailOptions(size: 0)))
        }
        #expect(folder.contents.isEmpty)
    }

    /// Spacing is a MediaTime: never NaN, but zero or negative is refused by name.
    @Test(arguments: [(MediaTime.zero(), "0.0"), (-1.5, "-1.5")])
    func thumbnailSpacingIsChecked(_ every: MediaTime, _ shown: String) {
        #expect(throws: MediaMuxError.invalidOption(option: "ThumbnailOptions.every", message: "thumbnails must be more than 0 seconds apart, not \(shown)")) {
            try ThumbnailOptions(every: every).validate()
        }
    }
}
