import Foundation
import Testing
import TestSupport
@testable import MediaMux
@testable import MediaMuxCore
@testable import MediaMuxPreview

/// Previews over TestMedia, judged without the code under test: frame
/// indices read from the pictures of h264_frame_index.mp4, turned pictures
/// compared with an unturned twin turned by the test's own code, PNGs decoded
/// and JPEG headers parsed by Support/Pictures.swift, clips read with the
/// tests' MP4 reader, expected sizes from TestMedia/README.md and expected.json.
struct PreviewTests {
    static let frameIndex = Fixtures.path("h264_frame_index.mp4")
    static let iphone = Samples.path("iphone_hevc_rot90_bframes_editlist_nonsync_start.mp4")
    /// A source with many frames, for the cancellations.
    static let longer = Fixtures.path("h264_bframes_aac.mp4")

    // MARK: Helpers

    static func collect(_ path: String, _ options: FrameOptions) async throws -> [PreviewFrame] {
        var frames: [PreviewFrame] = []
        for try await frame in MuxEngine().previews.frames(of: path, options: options) { frames.append(frame) }
        return frames
    }

    static func picture(_ frame: PreviewFrame) -> Picture {
        Picture(width: frame.width, height: frame.height, channels: frame.layout.bytesPerPixel, pixels: frame.pixels)
    }

    /// The frame indices of h264_frame_index.mp4 (display size) at `selection`.
    static func indices(_ selection: FrameSelection, size: Int? = nil) async throws -> [Int?] {
        try await collect(frameIndex, FrameOptions(selection: selection, size: size)).map { FrameIndex.read(picture($0)) }
    }

    static func time(ofFrame index: Int) -> MediaTime { MediaTime(value: Int64(index), timescale: 30) }

    /// The first video stream's facts in TestMedia/expected.json (ffprobe's),
    /// by the file's name there (`samples/NAME` for the real files).
    static func expectedVideo(_ name: String) throws -> (width: Int, height: Int, clockwise: Int) {
        let data = try Data(contentsOf: Fixtures.packageRoot.appendingPathComponent("TestMedia/expected.json"))
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let files = try #require(root["files"] as? [String: Any])
        let file = try #require(files[name] as? [String: Any])
        let streams = try #require(file["streams"] as? [[String: Any]])
        let video = try #require(streams.first { $0["codec_type"] as? String == "video" })
        let width = try #require(video["width"] as? Int)
        let height = try #require(video["height"] as? Int)
        // ffprobe's rotation is counterclockwise: -90 is a quarter turn clockwise.
        let counterclockwise = video["rotation"] as? Int ?? 0
        return (width, height, ((-counterclockwise) % 360 + 360) % 360)
    }

    /// When each video sample of an MP4 is shown, in seconds, by its boxes
    /// alone: composition time less the edit's media time, plus any empty edit.
    static func presentationTimes(of path: String) throws -> [Double] {
        let file = try MP4File(path: path)
        let video = try #require(file.videoTracks.first)
        let edits = video.editList ?? []
        let empty = edits.prefix { $0.isEmpty }.reduce(Int64(0)) { $0 + $1.segmentDuration }
        let mediaStart = edits.first { !$0.isEmpty }?.mediaTime ?? 0
        let offset = Double(empty) / Double(file.movieTimescale)
        return video.compositionTimes.map { Double($0 - mediaStart) / Double(video.mediaTimescale) + offset }.sorted()
    }

    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    static func fileSize(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? -1
    }

    // MARK: 1. Frame accuracy

    /// Each time T gives the last frame shown at or before T: index floor(T * 30).
    static let singleTimes: [(MediaTime, Int)] = [
        (0, 0),
        (0.001, 0),
        (time(ofFrame: 1), 1),  // exactly on a frame
        (time(ofFrame: 1) - 0.001, 0),  // just before it
        (0.2, 6),  // inside the first GOP, no seek needed
        (0.5, 15),
        (time(ofFrame: 17) - 0.001, 16),
        (0.999, 29),  // just before the keyframe at 1.0 s: the frame before it
        (1.0, 30),  // the keyframe itself
        (1.001, 30),  // right after it
        (time(ofFrame: 31), 31),
        (1.999, 59),
        (2.0, 60),
        (2.5, 75),
        (time(ofFrame: 89) - 0.001, 88),
        (2.9999, 89),
        (3.0, 90),
        (time(ofFrame: 119), 119),
        (3.99, 119),  // the last frame
        (3.9999, 119),
    ]

    @Test(arguments: singleTimes)
    func theFrameShownAtATime(_ time: MediaTime, _ expected: Int) async throws {
        let frames = try await Self.collect(Self.frameIndex, FrameOptions(selection: .times([time]), size: nil))
        try #require(frames.count == 1)
        #expect(FrameIndex.read(Self.picture(frames[0])) == expected, "at \(time.seconds) s")
        #expect(frames[0].time == Self.time(ofFrame: expected), "at \(time.seconds) s the frame says \(frames[0].time)")
    }

    /// Every frame, each asked for at its own time, in one stream: the
    /// B-frame reordering and all four GOPs in one pass.
    @Test func everyFrameAtItsOwnTime() async throws {
        let frames = try await Self.collect(Self.frameIndex, FrameOptions(selection: .times((0..<120).map(Self.time(ofFrame:))), size: 80))
        #expect(frames.map { FrameIndex.read(Self.picture($0)) } == (0..<120).map { $0 })
        #expect(frames.map(\.time) == (0..<120).map(Self.time(ofFrame:)))
    }

    @Test func timesComeBackSortedWithoutRepeats() async throws {
        let frames = try await Self.collect(
            Self.frameIndex, FrameOptions(selection: .times([3.5, 0.5, 2.0, 0.5, 1.001, 3.5, 0]), size: nil))
        #expect(frames.map { FrameIndex.read(Self.picture($0)) } == [0, 15, 30, 60, 105])
        #expect(frames.map(\.time) == [0, 15, 30, 60, 105].map(Self.time(ofFrame:)))
    }

    /// Jumps forward across keyframes, and back in time with a second stream
    /// of the same file (a stream's times are sorted, so one never goes back).
    @Test func jumpsAcrossKeyframesAndAFreshStreamGoesBack() async throws {
        // 3.95 s and 3.96 s both fall within frame 118 (3.933 to 3.967 s): distinct times, one frame twice.
        let forward = try await Self.indices(.times([0.1, 3.95, 3.96]))
        #expect(forward == [3, 118, 118])
        let unordered = try await Self.indices(.times([1.9, 2.1, 0.95]))
        #expect(unordered == [28, 57, 63])
        // Two streams of one file at once, read alternately.
        var late = MuxEngine().previews.frames(of: Self.frameIndex, options: FrameOptions(selection: .times([2.9, 3.3]), size: nil)).makeAsyncIterator()
        var early = MuxEngine().previews.frames(of: Self.frameIndex, options: FrameOptions(selection: .times([0.3, 1.2]), size: nil)).makeAsyncIterator()
        var seen: [Int?] = []
        for _ in 0..<2 {
            seen.append(try await late.next().map { FrameIndex.read(Self.picture($0)) } ?? -1)
            seen.append(try await early.next().map { FrameIndex.read(Self.picture($0)) } ?? -1)
        }
        #expect(seen == [87, 9, 99, 36])
        let lateEnd = try await late.next()
        let earlyEnd = try await early.next()
        #expect(lateEnd == nil && earlyEnd == nil)
    }

    @Test func allFramesOfARange() async throws {
        let frames = try await Self.collect(Self.frameIndex, FrameOptions(selection: .all(from: 1.5, to: 2.0), size: nil))
        #expect(frames.map { FrameIndex.read(Self.picture($0)) } == Array(45...59))
        #expect(frames.map(\.time) == (45...59).map(Self.time(ofFrame:)))
    }

    @Test func allFramesOfTheWholeVideo() async throws {
        let frames = try await Self.collect(Self.frameIndex, FrameOptions(selection: .all(), size: 80))
        #expect(frames.map { FrameIndex.read(Self.picture($0)) } == Array(0..<120))
        // Starting between frames: the frame shown at the start comes first.
        #expect(try await Self.indices(.all(from: 2.99, to: 3.1)) == [89, 90, 91, 92])
    }

    @Test func aFixedRate() async throws {
        #expect(try await Self.indices(.rate(perSecond: 10, from: 0, to: 1)) == Array(stride(from: 0, through: 27, by: 3)))
        #expect(try await Self.indices(.rate(perSecond: 2, from: 2.5, to: nil)) == [75, 90, 105])
    }

    /// Tenths of a second from 0.3 s: every step is exactly the time of frame
    /// 3 * tenths, so each is that frame, however the sum is rounded.
    @Test func aFixedRateFromAnOffset() async throws {
        let indices = try await Self.indices(.rate(perSecond: 10, from: 0.3, to: 3.35))
        #expect(indices == Array(stride(from: 9, through: 99, by: 3)))
    }

    @Test func evenlySpacedFramesStandForTheMiddleOfTheirShare() async throws {
        // (k + 0.5) * 4.0 / 4 s: 0.5, 1.5, 2.5, 3.5.
        let frames = try await Self.collect(Self.frameIndex, FrameOptions(selection: .evenlySpaced(count: 4), size: nil))
        #expect(frames.map { FrameIndex.read(Self.picture($0)) } == [15, 45, 75, 105])
        #expect(frames.map(\.time) == [15, 45, 75, 105].map(Self.time(ofFrame:)))
    }

    /// The middle of share k of `count` in 4 s is (2k + 1) * 2 / count s;
    /// for these counts it falls exactly on a frame time (or halfway between
    /// two, for 24), so the frame shown there is floor of it times 30 fps,
    /// worked out here in whole numbers.
    @Test(arguments: [3, 6, 12, 24])
    func evenlySpacedMiddlesOnFrameTimes(_ count: Int) async throws {
        let expected = (0..<count).map { (2 * $0 + 1) * 4 * 30 / (2 * count) }
        let indices = try await Self.indices(.evenlySpaced(count: count))
        #expect(indices == expected)
    }

    // MARK: 2. Size and aspect

    struct SizeCase: CustomTestStringConvertible, Sendable {
        var file: String
        var size: Int?
        var width: Int
        var height: Int
        var testDescription: String { "\(file) at \(size.map(String.init) ?? "display size")" }
    }

    static let sizeCases: [SizeCase] = [
        // Coded 120x90 with 4:3 pixels: displayed 160x90.
        SizeCase(file: "h264_frame_index.mp4", size: nil, width: 160, height: 90),
        SizeCase(file: "h264_frame_index.mp4", size: 80, width: 80, height: 45),
        SizeCase(file: "h264_frame_index.mp4", size: 320, width: 320, height: 180),
        // Coded 320x240; a quarter turn shows it 240x320.
        SizeCase(file: "h264_rot90.mp4", size: 160, width: 120, height: 160),
        SizeCase(file: "h264_rot180.mp4", size: 160, width: 160, height: 120),
        SizeCase(file: "h264_rot270.mp4", size: 160, width: 120, height: 160),
        SizeCase(file: "h264_rot90.mp4", size: nil, width: 240, height: 320),
        SizeCase(file: "h264_coded_portrait.mp4", size: 160, width: 120, height: 160),
    ]

    @Test(arguments: sizeCases, [PixelLayout.rgb, .rgba])
    func uprightScaledSize(_ example: SizeCase, _ layout: PixelLayout) async throws {
        let frames = try await Self.collect(
            Fixtures.path(example.file), FrameOptions(selection: .times([1.0]), size: example.size, layout: layout))
        let frame = try #require(frames.first)
        #expect(frames.count == 1)
        #expect(frame.width == example.width && frame.height == example.height, "\(frame.width)x\(frame.height)")
        #expect(frame.layout == layout)
        #expect(frame.pixels.count == example.width * example.height * (layout == .rgb ? 3 : 4))
        #expect(frame.bytesPerRow == example.width * (layout == .rgb ? 3 : 4))
        if layout == .rgba {
            #expect(stride(from: 3, to: frame.pixels.count, by: 4).allSatisfy { frame.pixels[$0] == 255 }, "alpha is opaque")
        }
        #expect(Self.picture(frame).variance > 100, "the picture has content")
    }

    /// RGBA is RGB with an alpha byte after each pixel, nothing else.
    @Test func rgbaIsRgbPlusAlpha() async throws {
        let rgb = try #require(try await Self.collect(Self.frameIndex, FrameOptions(selection: .times([2.5]), size: nil)).first)
        let rgba = try #require(try await Self.collect(Self.frameIndex, FrameOptions(selection: .times([2.5]), size: nil, layout: .rgba)).first)
        let stripped = stride(from: 0, to: rgba.pixels.count, by: 4).flatMap { rgba.pixels[$0..<$0 + 3] }
        #expect(stripped == rgb.pixels)
        #expect(FrameIndex.read(Self.picture(rgba)) == 75)
    }

    // MARK: 3. Upright pixels

    @Test(arguments: [("h264_rot90.mp4", 90), ("h264_rot180.mp4", 180), ("h264_rot270.mp4", 270)])
    func turnedPicturesMatchTheTwinTurnedByTheTest(_ name: String, _ degrees: Int) async throws {
        let folder = try TemporaryFolder()
        let twin = folder.path("unturned.mp4")
        try TrackHeaderEdit.unrotatedCopy(of: Fixtures.path(name), to: twin)
        #expect(try MP4File(path: Fixtures.path(name)).videoTracks.first?.rotationClockwiseDegrees == degrees)
        #expect(try MP4File(path: twin).videoTracks.first?.rotationClockwiseDegrees == 0)

        let options = FrameOptions(selection: .times([0.5, 1.5]), size: nil)
        let references = try await Self.collect(twin, options).map(Self.picture)
        let turned = try await Self.collect(Fixtures.path(name), options).map(Self.picture)
        try #require(references.count == 2 && turned.count == 2)
        for (reference, output) in zip(references, turned) {
            #expect(reference.width == 320 && reference.height == 240)
            let right = reference.turned(clockwise: degrees)
            #expect(output.width == right.width && output.height == right.height)
            let difference = right.meanDifference(to: output)
            #expect(difference < 1.0, "\(name): mean difference \(difference) from the twin turned \(degrees)°")
            // The comparison can tell: the opposite turn has the same shape and differs.
            let wrong = reference.turned(clockwise: (degrees + 180) % 360)
            #expect(wrong.meanDifference(to: output) > 10, "\(name): the opposite turn should not match")
        }
        // The two moments differ, so neither comparison is against a still picture.
        #expect(references[0].meanDifference(to: references[1]) > 1)
    }

    // MARK: 4. 10-bit sources

    @Test func tenBitSourcesDecodeToEightBitPictures() async throws {
        try await expectEightBitPictures(of: "av1_10bit.mp4", size: 64, time: 0.5)
    }

    @Test(Samples.required) func tenBitPhoneVideoDecodesToEightBitPictures() async throws {
        try await expectEightBitPictures(of: .sample("android14_hevc_hlg_audio_track_first.mp4"), size: 320, time: 0.15)
    }

    private func expectEightBitPictures(of name: MediaFile, size: Int, time: Double) async throws {
        let facts = try Self.expectedVideo(name.description)
        let longest = max(facts.width, facts.height)
        let turned = facts.clockwise % 180 != 0
        let (uprightWidth, uprightHeight) = turned ? (facts.height, facts.width) : (facts.width, facts.height)
        let width = Int((Double(uprightWidth) * Double(size) / Double(longest)).rounded())
        let height = Int((Double(uprightHeight) * Double(size) / Double(longest)).rounded())
        for layout in [PixelLayout.rgb, .rgba] {
            let frames = try await Self.collect(name.path, FrameOptions(selection: .times([0, MediaTime(seconds: time)]), size: size, layout: layout))
            #expect(frames.count == 2)
            for frame in frames {
                #expect(frame.width == width && frame.height == height, "\(name): \(frame.width)x\(frame.height)")
                #expect(frame.pixels.count == width * height * layout.bytesPerPixel)
                let picture = Self.picture(frame)
                #expect(picture.pixels.contains { $0 != 0 }, "\(name): all black")
                #expect(picture.variance > 50, "\(name): variance \(picture.variance)")
                // Not stuck at the top either: 10-bit values squeezed wrongly saturate.
                let mean = Double(picture.pixels.reduce(0) { $0 + Int($1) }) / Double(picture.pixels.count)
                #expect(mean > 10 && mean < 245, "\(name): mean \(mean)")
            }
        }
    }

    // MARK: 5. Images

    @Test func pngFramesAreNamedInTimeOrderAndHoldThePictures() async throws {
        let folder = try TemporaryFolder()
        let target = folder.path("frames")
        let reports = Reports()
        let written = try await MuxEngine().previews.writeFrames(
            of: Self.frameIndex, into: target, options: FrameOptions(selection: .times([2.0, 0.5, Self.time(ofFrame: 31)]), size: 160), format: .png,
            progress: { reports.add($0) })
        // The first report goes out at once, the last always; the throttle may drop the one between.
        #expect(reports.all.first?.done == 1 && reports.all.allSatisfy { $0.total == 3 })
        #expect(reports.all.last == PreviewProgress(done: 3, total: 3, fraction: 1))
        #expect(written.map { ($0.path as NSString).lastPathComponent } == ["frame-01-0.500s.png", "frame-02-1.033s.png", "frame-03-2.000s.png"])
        #expect(written.map(\.time) == [15, 31, 60].map(Self.time(ofFrame:)))
        let listing = try FileManager.default.contentsOfDirectory(atPath: target).sorted()
        #expect(listing == ["frame-01-0.500s.png", "frame-02-1.033s.png", "frame-03-2.000s.png"], "nothing else, no .partial: \(listing)")
        for (image, index) in zip(written, [15, 31, 60]) {
            let bytes = try Self.bytes(image.path)
            #expect(Array(bytes.prefix(8)) == PNG.signature)
            let header = try PNG.header(bytes)
            #expect(header.width == 160 && header.height == 90)
            #expect(image.width == 160 && image.height == 90)
            #expect(image.bytes == bytes.count)
            let decoded = try PNG.decode(bytes)
            #expect(decoded.channels == 3)
            #expect(FrameIndex.read(decoded) == index, "\(image.path)")
        }
    }

    @Test func pngKeepsTheFramePixelsExactly() async throws {
        let folder = try TemporaryFolder()
        let options = FrameOptions(selection: .times([1.5]), size: nil, layout: .rgba)
        let written = try await MuxEngine().previews.writeFrames(of: Fixtures.path("h264_rot90.mp4"), into: folder.url.path, options: options)
        let frame = try #require(try await Self.collect(Fixtures.path("h264_rot90.mp4"), options).first)
        let decoded = try PNG.decode(try Self.bytes(try #require(written.first).path))
        #expect(decoded == Self.picture(frame))
    }

    @Test func jpegFramesHaveTheirSizeInTheFrameHeader() async throws {
        let folder = try TemporaryFolder()
        let written = try await MuxEngine().previews.writeFrames(
            of: Fixtures.path("h264_rot270.mp4"), into: folder.url.path,
            options: FrameOptions(selection: .rate(perSecond: 1), size: 200), format: .jpeg)
        #expect(written.map { ($0.path as NSString).lastPathComponent } == ["frame-01-0.000s.jpg", "frame-02-1.000s.jpg", "frame-03-2.000s.jpg"])
        #expect(folder.contents.sorted() == written.map { ($0.path as NSString).lastPathComponent })
        for image in written {
            let bytes = try Self.bytes(image.path)
            #expect(Array(bytes.prefix(2)) == [0xFF, 0xD8], "SOI")
            let frame = try #require(JPEG.frame(bytes), "\(image.path): no frame header")
            #expect(frame.marker == 0xC0, "baseline")
            #expect(frame.precision == 8 && frame.components == 3)
            #expect(frame.width == 150 && frame.height == 200)
            #expect(image.width == 150 && image.height == 200)
            let onDisk = try Self.fileSize(image.path)
            #expect(image.bytes == bytes.count && image.bytes == onDisk)
        }
    }

    @Test(arguments: ImageFormat.allCases)
    func anExistingImageIsKeptAndTheOthersAreUndone(_ format: ImageFormat) async throws {
        let folder = try TemporaryFolder()
        // The second of three images is there already.
        let existing = folder.path("frame-02-1.000s.\(format.fileExtension)")
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: existing))
        await #expect(throws: MediaMuxError.outputExists(path: existing)) {
            try await MuxEngine().previews.writeFrames(
                of: Self.frameIndex, into: folder.url.path, options: FrameOptions(selection: .times([0, 1, 2]), size: 80), format: format)
        }
        #expect(folder.contents == [(existing as NSString).lastPathComponent], "left behind: \(folder.contents)")
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "keep me")

        // With overwrite the same call replaces it.
        let written = try await MuxEngine().previews.writeFrames(
            of: Self.frameIndex, into: folder.url.path, options: FrameOptions(selection: .times([0, 1, 2]), size: 80),
            format: format, overwrite: true)
        #expect(written.count == 3)
        #expect(folder.contents.count == 3)
        #expect(try Self.fileSize(existing) == written[1].bytes)
    }

    // MARK: 6. Contact sheet

    struct SheetCase: CustomTestStringConvertible, Sendable {
        var file: String
        var frames: Int
        var columns: Int?
        var tileSize: Int
        var grid: (columns: Int, rows: Int)
        var tile: (width: Int, height: Int)
        var testDescription: String { "\(file): \(frames) frames, columns \(columns.map(String.init) ?? "auto")" }
    }

    static let sheetCases: [SheetCase] = [
        SheetCase(file: "h264_frame_index.mp4", frames: 12, columns: nil, tileSize: 320, grid: (4, 3), tile: (320, 180)),
        SheetCase(file: "h264_frame_index.mp4", frames: 7, columns: 5, tileSize: 320, grid: (5, 2), tile: (320, 180)),
        SheetCase(file: "h264_frame_index.mp4", frames: 5, columns: nil, tileSize: 100, grid: (3, 2), tile: (100, 56)),
        SheetCase(file: "h264_rot90.mp4", frames: 12, columns: nil, tileSize: 160, grid: (4, 3), tile: (120, 160)),
        SheetCase(file: "h264_rot180.mp4", frames: 2, columns: 9, tileSize: 160, grid: (2, 1), tile: (160, 120)),
    ]

    @Test(arguments: sheetCases)
    func contactSheetGrid(_ example: SheetCase) async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("sheet.png")
        let report = try await MuxEngine().previews.contactSheet(
            of: Fixtures.path(example.file), output: output,
            options: ContactSheetOptions(frames: example.frames, columns: example.columns, tileSize: example.tileSize))
        let gap = 8
        let width = example.grid.columns * example.tile.width + (example.grid.columns + 1) * gap
        let height = example.grid.rows * example.tile.height + (example.grid.rows + 1) * gap
        let bytes = try Self.bytes(output)
        let header = try PNG.header(bytes)
        #expect(header.width == width && header.height == height, "IHDR \(header.width)x\(header.height)")
        #expect(report.width == width && report.height == height && report.bytes == bytes.count && report.time == nil)
        #expect(folder.contents == ["sheet.png"])

        // The frame-index tiles say which frames they are: (k + 0.5) * 4 / frames seconds.
        guard example.file == "h264_frame_index.mp4" else { return }
        let sheet = try PNG.decode(bytes)
        for k in 0..<example.frames {
            let (row, column) = k.quotientAndRemainder(dividingBy: example.grid.columns)
            let x = gap + column * (example.tile.width + gap)
            let y = gap + row * (example.tile.height + gap)
            // In whole numbers, free of rounding: floor((2k + 1) / (2 * frames) * 4 s * 30 fps).
            let expected = (2 * k + 1) * 4 * 30 / (2 * example.frames)
            #expect(FrameIndex.read(sheet, x: x, y: y, width: example.tile.width, height: example.tile.height) == expected, "tile \(k)")
        }
        // Cells past the last frame stay background.
        let cells = example.grid.columns * example.grid.rows
        if cells > example.frames {
            let (row, column) = (cells - 1).quotientAndRemainder(dividingBy: example.grid.columns)
            let centre = sheet.pixel(gap + column * (example.tile.width + gap) + example.tile.width / 2, gap + row * (example.tile.height + gap) + example.tile.height / 2)
            #expect(centre.allSatisfy { $0 > 16 && $0 < 64 }, "empty cell \(Array(centre))")
        }
    }

    @Test(arguments: [0, 1001, -1])
    func contactSheetFrameCountOutOfRange(_ frames: Int) async throws {
        let folder = try TemporaryFolder()
        let error = await #expect(throws: MediaMuxError.self) {
            try await MuxEngine().previews.contactSheet(of: Self.frameIndex, output: folder.path("sheet.png"), options: ContactSheetOptions(frames: frames))
        }
        guard error?.code == .invalidOption, error?.option == "ContactSheetOptions.frames" else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(folder.contents.isEmpty)
    }

    @Test func contactSheetNeedsAPngName() async throws {
        let folder = try TemporaryFolder()
        let error = await #expect(throws: MediaMuxError.self) {
            try await MuxEngine().previews.contactSheet(of: Self.frameIndex, output: folder.path("sheet.jpg"))
        }
        #expect(error?.code == .invalidOption && error?.option == "output", "\(String(describing: error))")
        let existing = folder.path("sheet.png")
        try Data("old".utf8).write(to: URL(fileURLWithPath: existing))
        await #expect(throws: MediaMuxError.outputExists(path: existing)) {
            try await MuxEngine().previews.contactSheet(of: Self.frameIndex, output: existing, options: ContactSheetOptions(frames: 2, tileSize: 64))
        }
        #expect(folder.contents == ["sheet.png"])
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "old")
    }

    // MARK: 7. Preview clip

    @Test(Samples.required) func previewClipOfAPortraitPhoneVideo() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("clip.mp4")
        let report = try await MuxEngine().previews.previewClip(
            of: Self.iphone, output: output, options: PreviewClipOptions(start: 0.5, duration: 1.0, height: 360))
        #expect(folder.contents == ["clip.mp4"], "no temporary file is left behind")

        // Upright size from ffprobe's facts: even width for the display aspect at height 360.
        let facts = try Self.expectedVideo("samples/iphone_hevc_rot90_bframes_editlist_nonsync_start.mp4")
        #expect(facts.clockwise == 90)
        let (uprightWidth, uprightHeight) = facts.clockwise % 180 != 0 ? (facts.height, facts.width) : (facts.width, facts.height)
        let width = Int((360.0 * Double(uprightWidth) / Double(uprightHeight) / 2).rounded()) * 2
        #expect(width == 202)

        let file = try MP4File(path: output)
        #expect(file.isFastStart)
        #expect(abs(Double(file.movieDuration) / Double(file.movieTimescale) - 1.0) < 0.001, "mvhd \(file.movieDuration)/\(file.movieTimescale)")
        #expect(file.tracks.count == 2)
        let video = try #require(file.videoTracks.first)
        #expect(video.sampleFormat == "avc1")
        #expect(video.width == Double(width) && video.height == 360, "tkhd \(video.width)x\(video.height)")
        #expect(video.matrix == [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x4000_0000], "identity matrix")
        #expect(video.rotationClockwiseDegrees == 0)
        #expect(abs(video.presentedDuration(movieTimescale: file.movieTimescale) - 1.0) < 0.001)
        #expect(video.issues.isEmpty)
        // The source's frames shown from 0.5 s until 1.5 s, counted from its own boxes (it is VFR).
        // By the boxes (composition time less the elst media_time 26642) its frames fall 1408/90000 s
        // later than FFmpeg places them (ffprobe: 0.500000, 0.533333, ...), which moves one frame
        // across the start; either reading is allowed, nothing else.
        let shown = try Self.presentationTimes(of: Self.iphone)
        let first = try #require(shown.last { $0 <= 0.5 })
        let inSpan = shown.filter { $0 >= first && $0 < 1.5 }.count
        #expect(inSpan > 20)
        #expect((inSpan - 1...inSpan).contains(video.sampleCount), "\(video.sampleCount) frames, the source shows \(inSpan) in the span")
        #expect(video.isSyncSample(0))
        let audio = try #require(file.audioTracks.first)
        #expect(audio.sampleFormat == "mp4a")
        #expect(abs(audio.presentedDuration(movieTimescale: file.movieTimescale) - 1.0) < 0.001,
                "audio presents \(audio.presentedDuration(movieTimescale: file.movieTimescale)) s")
        #expect(audio.issues.isEmpty)

        #expect(report.width == width && report.height == 360)
        #expect(report.hasAudio)
        #expect(report.videoFrames == video.sampleCount)
        let onDisk = try Self.fileSize(output)
        #expect(report.bytes == onDisk)
        #expect(report.start == MediaTime(value: 1, timescale: 2))
        #expect(report.duration == MediaTime(value: 1, timescale: 1))
    }

    /// A clip of the frame-index video: video only, starting on the frame
    /// shown at `start` and ending before `start + seconds`.
    @Test func previewClipWithoutAudioStartsOnTheRightFrame() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("clip.m4v")
        let report = try await MuxEngine().previews.previewClip(
            of: Self.frameIndex, output: output, options: PreviewClipOptions(start: 1.0, duration: 1.0, height: 180, crf: 18))
        let file = try MP4File(path: output)
        #expect(file.tracks.count == 1)
        let video = try #require(file.videoTracks.first)
        #expect(file.audioTracks.isEmpty && !report.hasAudio)
        #expect(video.width == 320 && video.height == 180)
        #expect(video.sampleCount == 30)
        #expect(abs(Double(file.movieDuration) / Double(file.movieTimescale) - 1.0) < 0.001)
        // Its pictures carry the source's indices 30...59 (read back through the frame stream,
        // whose indices the tests above hold to the fixture).
        let frames = try await Self.collect(output, FrameOptions(selection: .all(), size: nil))
        #expect(frames.map { FrameIndex.read(Self.picture($0)) } == (30...59).map { $0 })
    }

    /// A clip that runs past the end of the input is cut where the input
    /// ends. From 2.0 s the iPhone video shows its frames from the one on
    /// screen at 2.0 s to the last (at 2.317 s, shown until 2.7722 s), by
    /// its sample table and edit list; audio plays until 2.2577 s.
    @Test(Samples.required) func previewClipPastTheLastFrame() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("tail.mp4")
        let report = try await MuxEngine().previews.previewClip(
            of: Self.iphone, output: output, options: PreviewClipOptions(start: 2.0, duration: 5.0, height: 180))
        let file = try MP4File(path: output)
        // expected.json: video duration 2.7722 s, audio 2.257708 s.
        #expect(abs(Double(file.movieDuration) / Double(file.movieTimescale) - 0.7722) < 0.001)
        #expect(abs(report.duration.seconds - 0.7722) < 0.001)
        let source = try MP4File(path: Self.iphone)
        let sourceVideo = try #require(source.videoTracks.first)
        let edit = try #require(sourceVideo.editList?.first { !$0.isEmpty })
        let times = sourceVideo.compositionTimes.sorted()
        let from = edit.mediaTime + 2 * Int64(sourceVideo.mediaTimescale)
        let onScreen = try #require(times.last { $0 <= from })
        let left = times.filter { $0 >= onScreen }.count
        #expect(left == 9)
        let video = try #require(file.videoTracks.first)
        #expect(video.sampleCount == left && report.videoFrames == left)
        let audio = try #require(file.audioTracks.first)
        let audioSeconds = audio.presentedDuration(movieTimescale: file.movieTimescale)
        #expect(audioSeconds > 0.2 && audioSeconds < 0.7722 + 0.001, "audio presents \(audioSeconds) s")
        #expect(folder.contents == ["tail.mp4"])
    }

    @Test func previewClipStartingPastTheEndFails() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("clip.mp4")
        let error = await #expect(throws: MediaMuxError.self) {
            try await MuxEngine().previews.previewClip(of: Self.frameIndex, output: output, options: PreviewClipOptions(start: 4.5, duration: 1))
        }
        if let error, error.code == .invalidOption {
            #expect(error.option == "PreviewClipOptions.start")
            #expect(error.description.contains(Self.frameIndex), "\(error)")
        } else {
            Issue.record("\(String(describing: error))")
        }
        #expect(folder.contents.isEmpty, "left behind: \(folder.contents)")
        let existing = folder.path("old.mp4")
        try Data("old".utf8).write(to: URL(fileURLWithPath: existing))
        await #expect(throws: MediaMuxError.outputExists(path: existing)) {
            try await MuxEngine().previews.previewClip(of: Self.frameIndex, output: existing, options: PreviewClipOptions(duration: 0.5, height: 90))
        }
        #expect(folder.contents == ["old.mp4"])
    }

    // MARK: 8. Errors

    /// What the frame stream throws, typed: `MediaMuxError` is all it can throw.
    static func firstError(_ path: String, _ options: FrameOptions) async -> MediaMuxError? {
        do throws(MediaMuxError) {
            for try await _ in MuxEngine().previews.frames(of: path, options: options) {}
            return nil
        } catch {
            return error
        }
    }

    @Test func namedErrors() async throws {
        let missing = Fixtures.path("no_such_file.mp4")
        #expect(await Self.firstError(missing, FrameOptions()) == .fileNotFound(path: missing))
        let song = Fixtures.path("aac_7s.m4a")
        #expect(await Self.firstError(song, FrameOptions()) == .noStream(kind: .video, path: song))

        // Times far past any video are refused like any other (a MediaTime is never NaN, but may be huge).
        let huge = MediaTime(value: .max, timescale: 1)
        for selection in [FrameSelection.times([1.0, 4.0]), .times([9]), .all(from: 4.0), .rate(perSecond: 1, from: 5), .times([huge]), .all(from: huge)] {
            let error = await Self.firstError(Self.frameIndex, FrameOptions(selection: selection))
            guard let error, error.code == .invalidOption, error.option == "FrameOptions.selection" else {
                Issue.record("\(selection): \(String(describing: error))")
                continue
            }
            #expect(error.description.contains(Self.frameIndex), "\(selection): \(error)")
        }
        let badSizes = [FrameOptions(size: 0), FrameOptions(size: -5), FrameOptions(size: 8193)]
        for options in badSizes {
            let error = await Self.firstError(Self.frameIndex, options)
            #expect(error?.code == .invalidOption && error?.option == "FrameOptions.size", "\(options): \(String(describing: error))")
        }
        for options in [
            FrameOptions(selection: .times([])), FrameOptions(selection: .times([-1])),
            FrameOptions(selection: .times([MediaTime(value: .min, timescale: 1)])), FrameOptions(selection: .all(from: 1, to: MediaTime(value: .min, timescale: 1))),
            FrameOptions(selection: .evenlySpaced(count: 0)), FrameOptions(selection: .rate(perSecond: 0)),
            FrameOptions(selection: .all(from: 2, to: 1)), FrameOptions(selection: .all(from: -1)),
        ] {
            let error = await Self.firstError(Self.frameIndex, options)
            guard error?.code == .invalidOption, error?.option == "FrameOptions.selection" else {
                Issue.record("\(options): \(String(describing: error))")
                continue
            }
        }
        // Images and sheets give the same errors, and write nothing.
        let folder = try TemporaryFolder()
        await #expect(throws: MediaMuxError.fileNotFound(path: missing)) {
            try await MuxEngine().previews.writeFrames(of: missing, into: folder.path("frames"))
        }
        await #expect(throws: MediaMuxError.noStream(kind: .video, path: song)) {
            try await MuxEngine().previews.contactSheet(of: song, output: folder.path("sheet.png"))
        }
        await #expect(throws: MediaMuxError.noStream(kind: .video, path: song)) {
            try await MuxEngine().previews.previewClip(of: song, output: folder.path("clip.mp4"))
        }
        #expect(folder.contents.isEmpty, "left behind: \(folder.contents)")
    }

    @Test func aStreamEndsAfterAnError() async throws {
        var iterator = MuxEngine().previews.frames(of: Fixtures.path("missing.mp4")).makeAsyncIterator()
        await #expect(throws: MediaMuxError.fileNotFound(path: Fixtures.path("missing.mp4"))) { try await iterator.next() }
        #expect(try await iterator.next() == nil)
    }

    // MARK: 9. Cancellation

    @Test func cancellingTheConsumerStopsTheStream() async throws {
        let (firstFrame, announce) = AsyncStream.makeStream(of: Void.self)
        let task = Task { () -> (count: Int, error: MediaMuxError?) in
            var count = 0
            do throws(MediaMuxError) {
                for try await _ in MuxEngine().previews.frames(of: Self.longer, options: FrameOptions(selection: .all(), size: 160)) {
                    count += 1
                    if count == 1 {
                        announce.yield()
                        // Wait here until the test cancels this task (the sleep ends early then).
                        try? await Task.sleep(for: .seconds(60))
                    }
                }
                return (count, nil)
            } catch {
                return (count, error)
            }
        }
        for await _ in firstFrame { break }
        task.cancel()
        let (count, error) = await task.value
        // The loop waited after its first frame until cancelled: no frame may follow.
        #expect(count == 1, "\(count) frames")
        #expect(error == .cancelled(path: Self.longer), "the loop ended with \(String(describing: error)) after \(count) frames")
    }

    @Test func cancellingImageWritingLeavesNothing() async throws {
        let folder = try TemporaryFolder()
        let target = folder.url.path
        let task = Task {
            try await MuxEngine().previews.writeFrames(of: Self.longer, into: target, options: FrameOptions(selection: .all(), size: 64))
        }
        task.cancel()
        await #expect(throws: MediaMuxError.cancelled(path: Self.longer)) { try await task.value }
        #expect(folder.contents.isEmpty, "left behind: \(folder.contents)")
    }

    // MARK: 10. Paced

    @Test func pacedFramesAreTheSameFrames() async throws {
        let frames = try await Self.collect(
            Self.frameIndex, FrameOptions(selection: .rate(perSecond: 10, from: 0, to: 0.5), size: 80, paced: true))
        #expect(frames.map { FrameIndex.read(Self.picture($0)) } == [0, 3, 6, 9, 12])
        #expect(frames.map(\.time) == [0, 3, 6, 9, 12].map(Self.time(ofFrame:)))
    }

    // MARK: Planner (pure)

    @Test func planSizes() {
        // The iPhone video: 1920x1080 coded, a quarter turn, clip height 360.
        let clip = PictureSize(codedWidth: 1920, codedHeight: 1080, aspect: PixelAspect(), turn: .clockwise90, longest: nil, height: 360, even: true)
        #expect([clip.width, clip.height, clip.scaledWidth, clip.scaledHeight] == [202, 360, 360, 202] as [Int])
        let anamorphic = PictureSize(codedWidth: 120, codedHeight: 90, aspect: PixelAspect(width: 4, height: 3), turn: .none, longest: nil)
        #expect([anamorphic.width, anamorphic.height] == [160, 90] as [Int])
        let turned = PictureSize(codedWidth: 120, codedHeight: 90, aspect: PixelAspect(width: 4, height: 3), turn: .clockwise270, longest: 45)
        #expect([turned.width, turned.height, turned.scaledWidth, turned.scaledHeight] == [25, 45, 45, 25] as [Int])
        // An odd clip height becomes even; the width follows the height used (90: 16:9 gives 160).
        let odd = PictureSize(codedWidth: 120, codedHeight: 90, aspect: PixelAspect(width: 4, height: 3), turn: .none, longest: nil, height: 91, even: true)
        #expect([odd.width, odd.height] == [160, 90] as [Int])
        let tiny = PictureSize(codedWidth: 4000, codedHeight: 10, aspect: PixelAspect(), turn: .none, longest: 100, even: true)
        #expect([tiny.width, tiny.height] == [100, 2] as [Int])
    }

    @Test func sheetGrids() throws {
        let cases: [(frames: Int, columns: Int?, grid: [Int])] = [
            (12, nil, [4, 3]), (7, 5, [5, 2]), (1, nil, [1, 1]), (2, nil, [2, 1]), (5, nil, [3, 2]), (10, nil, [4, 3]),
            (3, 10, [3, 1]), (1000, nil, [32, 32]), (1000, 100, [100, 10]),
        ]
        for example in cases {
            let grid = try PreviewPlanner.sheetColumns(frames: example.frames, columns: example.columns)
            #expect([grid.columns, grid.rows] as [Int] == example.grid, "\(example.frames) frames, columns \(String(describing: example.columns))")
        }
        for (frames, columns) in [(0, nil), (1001, nil), (5, 0), (5, 101)] as [(Int, Int?)] {
            #expect(throws: MediaMuxError.self) { try PreviewPlanner.sheetColumns(frames: frames, columns: columns) }
        }
    }

    @Test func planMoments() throws {
        #expect(try PreviewPlanner.moments(.rate(perSecond: 3, from: 1, to: 2), duration: 4, path: "v") == .at([1, 1 + 1.0 / 3, 1 + 2.0 / 3]))
        #expect(try PreviewPlanner.moments(.rate(perSecond: 1, from: 0, to: 10), duration: 2.5, path: "v") == .at([0, 1, 2]))
        #expect(try PreviewPlanner.moments(.all(from: 1, to: 9), duration: 4, path: "v") == .every(from: 1, to: 4))
        #expect(try PreviewPlanner.moments(.evenlySpaced(count: 2), duration: 4, path: "v") == .at([1, 3]))
        #expect(try PreviewPlanner.moments(.times([2, 1, 2, 0]), duration: 4, path: "v") == .at([0, 1, 2]))
        #expect(throws: MediaMuxError.invalidOption(option: "FrameOptions.selection", message: "v: 4.000 s is past the end of the video (4.000 s)")) {
            try PreviewPlanner.moments(.times([4]), duration: 4, path: "v")
        }
    }
}

/// Progress reports, collected from whichever thread sends them.
final class Reports: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [PreviewProgress] = []

    func add(_ item: PreviewProgress) { lock.withLock { items.append(item) } }
    var all: [PreviewProgress] { lock.withLock { items } }
}
