import Foundation
import Testing

/// `muxctl preview` and `muxctl merge --preview`: files, names, JSON, errors.
/// Image sizes are read from the files' own headers (PNG IHDR), not from muxctl.
@Suite("preview command")
struct PreviewCommandTests {
    /// Width and height from a PNG's IHDR chunk, or nil if the file is not a PNG.
    static func pngSize(_ path: String) -> (width: Int, height: Int)? {
        guard let data = FileManager.default.contents(atPath: path), data.count > 24 else { return nil }
        let bytes = [UInt8](data)
        guard bytes[0..<8] == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], bytes[12..<16] == Array("IHDR".utf8)[...] else { return nil }
        func word(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (word(16), word(20))
    }

    static func jpegIsJPEG(_ path: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path), data.count > 4 else { return false }
        return data[0] == 0xFF && data[1] == 0xD8 && data[data.count - 2] == 0xFF && data[data.count - 1] == 0xD9
    }

    @Test("--out writes 12 frames by default, in time order, named with their times")
    func defaultFrames() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let folder = scratch.output("frames")
        let result = try await MuxCtl.run(["preview", MuxCtl.fixture("h264_frame_index.mp4"), "--out", folder])
        #expect(result.exited && result.status == 0, "\(result)")
        let names = Scratch.list(folder)
        #expect(names.count == 12, "\(names)")
        // The middle of each twelfth of 4 s: 1/6 s, 0.5 s, ... shown as the frame at or before it (30 fps).
        let expectedTimes = (0..<12).map { k -> String in
            let frame = Int(((Double(k) + 0.5) / 3 * 30).rounded(.down) + 1e-9)
            let seconds = Double(frame) / 30
            return String(format: "%.3f", seconds)
        }
        let expectedNames = expectedTimes.enumerated().map { String(format: "frame-%02d-", $0.offset + 1) + $0.element + "s.png" }
        #expect(names == expectedNames)
        for name in names {
            let size = try #require(Self.pngSize(folder + "/" + name), "\(name) is not a PNG")
            // 120x90 coded with 4:3 pixels is shown 160x90; the longest side becomes 320.
            #expect(size.width == 320 && size.height == 180, "\(name): \(size)")
        }
    }

    @Test("--at, --size, --format jpeg and --json")
    func timesAsJPEG() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let folder = scratch.output("frames")
        let result = try await MuxCtl.run([
            "preview", MuxCtl.fixture("h264_rot90.mp4"), "--out", folder, "--at", "2.5, 0.5,1", "--size", "100",
            "--format", "jpeg", "--json",
        ])
        #expect(result.exited && result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        let report = try #require(jsonObject(result.stdout), "\(result)")
        let images = try #require(report["images"] as? [[String: Any]])
        #expect(images.map { number($0["time"]) } == [0.5, 1.0, 2.5])
        for image in images {
            let path = try #require(image["path"] as? String)
            #expect(Self.jpegIsJPEG(path), "\(path)")
            // 320x240 turned a quarter: 75x100 upright.
            #expect(number(image["width"]) == 75 && number(image["height"]) == 100, "\(image)")
            let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
            #expect(number(image["bytes"]) == Double(bytes))
        }
        #expect(Scratch.list(folder).allSatisfy { $0.hasSuffix(".jpg") })
    }

    @Test("--sheet draws a grid of the requested columns")
    func sheet() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("sheet.png")
        let result = try await MuxCtl.run([
            "preview", MuxCtl.fixture("h264_frame_index.mp4"), "--sheet", output, "--frames", "7", "--columns", "3", "--size", "80",
        ])
        #expect(result.exited && result.status == 0, "\(result)")
        let size = try #require(Self.pngSize(output))
        // Tiles of 80x45 in 3 columns and 3 rows, 8 px apart and around.
        #expect(size.width == 3 * 80 + 4 * 8 && size.height == 3 * 45 + 4 * 8, "\(size)")
        #expect(scratch.outputFolder == ["sheet.png"])
    }

    @Test("--clip writes an MP4 and reports its size and length")
    func clip() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("clip.mp4")
        let result = try await MuxCtl.run([
            "preview", MuxCtl.fixture("h264_bframes_aac.mp4"), "--clip", output, "--start", "1", "--seconds", "2",
            "--height", "120", "--json",
        ])
        #expect(result.exited && result.status == 0, "\(result)")
        let report = try #require(jsonObject(result.stdout), "\(result)")
        let clip = try #require(report["clip"] as? [String: Any])
        #expect(number(clip["duration"]) == 2.0)
        #expect(number(clip["height"]) == 120)
        #expect(number(clip["width"]) == 160)
        #expect(clip["hasAudio"] as? Bool == true)
        #expect(scratch.outputFolder == ["clip.mp4"])
        let data = try #require(FileManager.default.contents(atPath: output))
        #expect(data.range(of: Data("avc1".utf8)) != nil && data.range(of: Data("mp4a".utf8)) != nil)
        // Faststart: the movie box comes before the media data.
        let moov = try #require(data.range(of: Data("moov".utf8)))
        let mdat = try #require(data.range(of: Data("mdat".utf8)))
        #expect(moov.lowerBound < mdat.lowerBound)
    }

    @Test("merge --preview writes keyframe thumbnails of the output")
    func mergePreview() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("merged.mp4")
        let folder = scratch.output("thumbs")
        let result = try await MuxCtl.run([
            "merge", MuxCtl.fixture("h264_frame_index.mp4"), MuxCtl.fixture("aac_7s.m4a"), output, "--preview", folder,
            "--preview-size", "160",
        ])
        #expect(result.exited && result.status == 0, "\(result)")
        // Keyframes at 0, 1, 2 and 3 s; a twelfth of 4 s apart at least, so all four.
        #expect(Scratch.list(folder) == ["frame-0001-0.000s.png", "frame-0002-1.000s.png", "frame-0003-2.000s.png", "frame-0004-3.000s.png"])
        for name in Scratch.list(folder) {
            let size = try #require(Self.pngSize(folder + "/" + name))
            #expect(size.width == 160 && size.height == 90)
        }
    }

    struct Failure: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var status: Int32
        var names: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let failures: [Failure] = [
        Failure(arguments: ["preview", "TestMedia/missing.mp4", "--out", "OUT/f"], status: 1, names: "TestMedia/missing.mp4"),
        Failure(arguments: ["preview", "TestMedia/aac_7s.m4a", "--out", "OUT/f"], status: 1, names: "TestMedia/aac_7s.m4a"),
        Failure(arguments: ["preview", "TestMedia/text_file.mp4", "--sheet", "OUT/s.png"], status: 1, names: "TestMedia/text_file.mp4"),
        Failure(arguments: ["preview", "TestMedia/h264_rot90.mp4", "--out", "OUT/f", "--at", "1,99"], status: 2, names: "TestMedia/h264_rot90.mp4"),
        Failure(arguments: ["preview", "TestMedia/h264_rot90.mp4", "--clip", "OUT/c.mp4", "--start", "50"], status: 2, names: "TestMedia/h264_rot90.mp4"),
        Failure(arguments: ["preview", "TestMedia/h264_rot90.mp4", "--sheet", "OUT/s.jpg"], status: 2, names: "OUT/s.jpg"),
        Failure(arguments: ["preview", "TestMedia/h264_rot90.mp4", "--sheet", "OUT/missing/s.png"], status: 2, names: "OUT/missing/s.png"),
    ]

    @Test("bad inputs and options: one error line naming the file, nothing written", arguments: failures)
    func failure(_ failure: Failure) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let out = scratch.outputs.path
        let arguments = failure.arguments.map { $0.replacingOccurrences(of: "OUT/", with: out + "/") }
        let result = try await MuxCtl.run(arguments)
        expectCleanFailure(result, status: failure.status, naming: failure.names.replacingOccurrences(of: "OUT/", with: out + "/"), scratch: scratch)
    }

    @Test("usage errors", arguments: [
        ["preview", "TestMedia/h264_rot90.mp4"],
        ["preview", "TestMedia/h264_rot90.mp4", "--out", "x", "--sheet", "y.png"],
        ["preview", "TestMedia/h264_rot90.mp4", "--out", "x", "--frames", "3", "--every", "1"],
        ["preview", "TestMedia/h264_rot90.mp4", "--out", "x", "--at", "1,abc"],
        ["preview", "TestMedia/h264_rot90.mp4", "--clip", "x.mp4", "--frames", "3"],
        ["preview", "TestMedia/h264_rot90.mp4", "--out", "x", "--size", "0"],
        ["preview", "TestMedia/h264_rot90.mp4", "--sheet", "x.png", "--format", "jpeg"],
        ["preview", "TestMedia/h264_rot90.mp4", "--out", "x", "--seconds", "2"],
        ["preview", "TestMedia/h264_rot90.mp4", "--clip", "x.mp4", "--size", "100"],
        ["merge", "TestMedia/h264_rot90.mp4", "TestMedia/aac_7s.m4a", "x.mp4", "--preview-every", "1"],
    ])
    func usage(_ arguments: [String]) async throws {
        let result = try await MuxCtl.run(arguments)
        #expect(result.exited && result.status == 64, "\(result)")
        #expect(!result.looksLikeCrash)
    }

    @Test("an existing frame is kept without --force, and nothing else is left")
    func existingFrame() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let folder = scratch.output("frames")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let taken = folder + "/frame-02-1.000s.png"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: taken))
        let result = try await MuxCtl.run(["preview", MuxCtl.fixture("h264_frame_index.mp4"), "--out", folder, "--at", "0,1,2"])
        #expect(result.exited && result.status == 2, "\(result)")
        #expect(result.firstErrorLine.contains(taken), "\(result)")
        #expect(Scratch.list(folder) == ["frame-02-1.000s.png"])
        #expect(FileManager.default.contents(atPath: taken) == Data("keep me".utf8))
    }

    @Test("merge --preview refuses existing thumbnails before merging")
    func mergePreviewExisting() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let folder = scratch.output("thumbs")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let taken = folder + "/frame-0001-0.000s.png"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: taken))
        let result = try await MuxCtl.run([
            "merge", MuxCtl.fixture("h264_frame_index.mp4"), MuxCtl.fixture("aac_7s.m4a"), scratch.output("m.mp4"), "--preview", folder,
        ])
        #expect(result.exited && result.status == 2, "\(result)")
        #expect(result.firstErrorLine.contains(taken), "\(result)")
        #expect(scratch.outputFolder == ["thumbs"])
        #expect(Scratch.list(folder) == ["frame-0001-0.000s.png"])
    }

    @Test("a failed merge leaves no thumbnails and no folder it made")
    func mergePreviewFailure() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let result = try await MuxCtl.run([
            "merge", MuxCtl.fixture("truncated_h264.mp4"), MuxCtl.fixture("aac_7s.m4a"), scratch.output("m.mp4"),
            "--preview", scratch.output("thumbs"),
        ])
        expectCleanFailure(result, status: 1, naming: MuxCtl.fixture("truncated_h264.mp4"), scratch: scratch)
    }
}
