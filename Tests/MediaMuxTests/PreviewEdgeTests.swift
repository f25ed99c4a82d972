import Foundation
@testable import MediaMux
@testable import MediaMuxCore
@testable import MediaMuxPreview
import Testing

/// Edges found in review: tiny sheet tiles, huge sheets, hand-made frames,
/// damaged or audio-less clip spans, videos without a declared size.
struct PreviewEdgeTests {
    static let frameIndex = Fixtures.path("h264_frame_index.mp4")

    /// Tiles too small for a label get none, and nothing traps; the size is the grid's.
    @Test(arguments: [(10, 1), (20, 12), (39, 12), (80, 12)])
    func smallSheetTiles(size: Int, frames: Int) async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("sheet.png")
        let image = try await MuxEngine().previews.contactSheet(
            of: Fixtures.path("h264_bframes_aac.mp4"), output: output, options: ContactSheetOptions(frames: frames, tileSize: size))
        let header = try PNG.header(PreviewTests.bytes(output))
        let grid = try PreviewPlanner.sheetColumns(frames: frames, columns: nil)
        // 320x240: tiles of size x 3/4 size.
        let tileHeight = Int((Double(size) * 0.75).rounded())
        #expect(header.width == grid.columns * size + (grid.columns + 1) * 8)
        #expect(header.height == grid.rows * tileHeight + (grid.rows + 1) * 8)
        #expect(image.width == header.width && image.height == header.height)
    }

    @Test func labelsOnlyWhereTheyFit() throws {
        let info = try Prober(cancellation: CancellationFlag()).probe(path: Self.frameIndex)
        let small = try PreviewPlanner.sheetPlan(info, output: "sheet.png", options: ContactSheetOptions(frames: 4, tileSize: 30))
        #expect(small.layout.labelScale == nil)
        let medium = try PreviewPlanner.sheetPlan(info, output: "sheet.png", options: ContactSheetOptions(frames: 4, tileSize: 120))
        #expect(medium.layout.labelScale == 1)
        let large = try PreviewPlanner.sheetPlan(info, output: "sheet.png", options: ContactSheetOptions(frames: 4, tileSize: 320))
        #expect(large.layout.labelScale == 2)
    }

    /// A sheet of a five-frame video asked for six tiles shows each frame
    /// once, five tiles, and says so, rather than a frame twice without a word.
    @Test func aSheetOfAShortVideoSaysItHasFewerFrames() async throws {
        let folder = try TemporaryFolder()
        let video = Fixtures.path("h264_negative_cts_tail.mp4")
        let output = folder.path("sheet.png")
        let image = try await MuxEngine().previews.contactSheet(of: video, output: output, options: ContactSheetOptions(frames: 6, tileSize: 40))
        #expect(image.warnings == ["\(video): the video has 5 frames, so the sheet shows 5, not the 6 asked for"])
        // Three columns, two rows, as for six; the sixth place is empty.
        let sheet = try PNG.decode([UInt8](Data(contentsOf: URL(fileURLWithPath: output))))
        let tileWidth = (sheet.width - 4 * 8) / 3
        let tileHeight = (sheet.height - 3 * 8) / 2
        #expect(sheet.width == 3 * tileWidth + 4 * 8 && tileWidth == 40, "\(sheet)")
        let margin = sheet.pixel(2, 2)
        let middle = { (column: Int, row: Int) in sheet.pixel(8 + column * (tileWidth + 8) + tileWidth / 2, 8 + row * (tileHeight + 8) + tileHeight / 2) }
        #expect(middle(1, 1) != margin, "the fifth tile is empty")
        #expect(middle(2, 1) == margin, "a sixth tile was drawn")
        let asked = try await MuxEngine().previews.contactSheet(
            of: video, output: folder.path("four.png"), options: ContactSheetOptions(frames: 4, tileSize: 40))
        #expect(asked.warnings.isEmpty)
    }

    /// A sheet too large to draw is refused before any frame is decoded.
    @Test func hugeSheetsAreRefused() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("sheet.png")
        await #expect(throws: MediaMuxError.self) {
            _ = try await MuxEngine().previews.contactSheet(of: Self.frameIndex, output: output, options: ContactSheetOptions(frames: 1000, tileSize: 4096))
        }
        #expect(folder.contents.isEmpty)
        let info = try Prober(cancellation: CancellationFlag()).probe(path: Self.frameIndex)
        #expect(throws: MediaMuxError.self) { _ = try PreviewPlanner.sheetPlan(info, output: "sheet.png", options: ContactSheetOptions(frames: 1, tileSize: 8192 * 4)) }
    }

    /// A hand-made frame whose pixels do not match its size is an error, not a read past the end.
    @Test(arguments: [(4000, 4000, 3), (2, 2, 0), (0, 5, 0), (3, 3, 28)])
    func handMadeFramesAreChecked(width: Int, height: Int, bytes: Int) throws {
        let folder = try TemporaryFolder()
        let frame = PreviewFrame(time: .zero(), width: width, height: height, layout: .rgb, pixels: [UInt8](repeating: 7, count: bytes))
        #expect(throws: MediaMuxError.self) { _ = try MuxEngine().previews.writeImage(frame, to: folder.path("x.png")) }
        #expect(folder.contents.isEmpty)
    }

    @Test func aGoodHandMadeFrameIsWritten() throws {
        let folder = try TemporaryFolder()
        let pixels = (0..<(3 * 2 * 3)).map { UInt8($0 * 10) }
        let frame = PreviewFrame(time: .zero(), width: 3, height: 2, layout: .rgb, pixels: pixels)
        let image = try MuxEngine().previews.writeImage(frame, to: folder.path("x.png"))
        let decoded = try PNG.decode(PreviewTests.bytes(image.path))
        #expect(decoded.width == 3 && decoded.height == 2 && decoded.pixels == pixels)
    }

    /// A clip of a span the audio does not reach has no audio track, and says so.
    @Test func aClipPastTheAudioHasNone() async throws {
        let folder = try TemporaryFolder()
        // h264_bframes_aac.mp4: 4 s of video, its AAC track ends at 3 s (TestMedia/README.md).
        let info = try await MuxEngine().probe(Fixtures.path("h264_bframes_aac.mp4"))
        let audioEnd = try #require(info.audioStreams.first?.end?.seconds)
        let report = try await MuxEngine().previews.previewClip(
            of: Fixtures.path("h264_bframes_aac.mp4"), output: folder.path("clip.mp4"),
            options: PreviewClipOptions(start: MediaTime(seconds: audioEnd + 0.2), duration: 0.5, height: 120))
        #expect(!report.hasAudio)
        let file = try MP4File(path: folder.path("clip.mp4"))
        #expect(file.tracks.map(\.handlerType) == ["vide"])
    }

    /// A clip's times are checked as they were in seconds: a MediaTime cannot
    /// be NaN, but can be zero or negative.
    @Test func clipTimesAreChecked() async throws {
        let folder = try TemporaryFolder()
        let refusals: [(PreviewClipOptions, String, String)] = [
            (PreviewClipOptions(duration: 0), "duration", "a clip must be longer than 0 seconds, not 0.0"),
            (PreviewClipOptions(duration: -1), "duration", "a clip must be longer than 0 seconds, not -1.0"),
            (PreviewClipOptions(start: -0.5), "start", "a start time must be 0 or more seconds, not -0.5"),
        ]
        for (options, option, message) in refusals {
            await #expect(throws: MediaMuxError.invalidOption(option: "PreviewClipOptions." + option, message: message)) {
                try await MuxEngine().previews.previewClip(of: Self.frameIndex, output: folder.path("clip.mp4"), options: options)
            }
        }
        #expect(folder.contents.isEmpty, "\(folder.contents)")
    }

    /// A clip of a damaged file fails naming it and leaves nothing.
    @Test func aClipOfADamagedFileFails() async throws {
        let folder = try TemporaryFolder()
        let input = Fixtures.path("truncated_h264.mp4")
        do {
            _ = try await MuxEngine().previews.previewClip(of: input, output: folder.path("clip.mp4"), options: PreviewClipOptions(start: 2, duration: 1, height: 120))
            Issue.record("a clip of a truncated file was written")
        } catch {
            #expect(error.description.hasPrefix(input), "\(error)")
        }
        #expect(folder.contents.isEmpty, "\(folder.contents)")
    }

    /// A video whose sample entry declares no size (0x0): merges and previews
    /// say what is wrong with it, and write nothing.
    @Test func aVideoWithoutADeclaredSize() async throws {
        let folder = try TemporaryFolder()
        var bytes = try PreviewTests.bytes(Fixtures.path("h264_rot90.mp4"))
        // avc1 sample entry: size(4) 'avc1'(4) reserved(6) index(2) predefined/reserved(16) width(2) height(2).
        // The sample entry, not the ftyp brand of the same name: the first avc1 after stsd.
        let stsd = try #require((0..<(bytes.count - 4)).first { bytes[$0..<$0 + 4] == Array("stsd".utf8)[...] })
        let avc1 = try #require((stsd..<(bytes.count - 4)).first { bytes[$0..<$0 + 4] == Array("avc1".utf8)[...] })
        for offset in (avc1 + 4 + 24)..<(avc1 + 4 + 28) { bytes[offset] = 0 }
        let input = folder.path("nosize.mp4")
        try Data(bytes).write(to: URL(fileURLWithPath: input))
        let info = try await MuxEngine().probe(input)
        try #require(info.videoStreams.first?.width == 0, "the patch did not take: \(info.videoStreams)")

        await #expect(throws: MediaMuxError.damaged(path: input, detail: "the video stream has no picture size")) {
            _ = try await MuxEngine().merge(video: input, audio: Fixtures.path("aac_7s.m4a"), output: folder.path("out.mp4"))
        }
        await #expect(throws: MediaMuxError.damaged(path: input, detail: "the video stream has no picture size")) {
            _ = try await MuxEngine().previews.contactSheet(of: input, output: folder.path("sheet.png"))
        }
        #expect(folder.contents == ["nosize.mp4"])
    }

    /// An MP4 cut short: frames before the cut come out, a moment after it is
    /// an error that says the file is truncated (not the last frame before it).
    @Test func momentsPastATruncation() async throws {
        let input = Fixtures.path("truncated_h264.mp4")
        let early = try await PreviewTests.collect(input, FrameOptions(selection: .times([0.5]), size: 80))
        #expect(early.count == 1)
        let error = await PreviewTests.firstError(input, FrameOptions(selection: .times([3.5]), size: 80))
        guard case .damaged(let path, let detail)? = error?.failure else {
            Issue.record("expected a damaged-file error, got \(String(describing: error))")
            return
        }
        #expect(path == input)
        #expect(detail.contains("file ends at"), "\(detail)")
    }

    @Test func aTooLargeSheetNamesItsFile() throws {
        let info = try Prober(cancellation: CancellationFlag()).probe(path: Self.frameIndex)
        #expect(throws: MediaMuxError.self) {
            _ = try PreviewPlanner.sheetPlan(info, output: "/x/sheet.png", options: ContactSheetOptions(frames: 1000, tileSize: 4096))
        }
        do {
            _ = try PreviewPlanner.sheetPlan(info, output: "/x/sheet.png", options: ContactSheetOptions(frames: 1000, tileSize: 4096))
        } catch let error as MediaMuxError {
            #expect(error.description.hasPrefix("/x/sheet.png: "), "\(error)")
        }
    }
}
