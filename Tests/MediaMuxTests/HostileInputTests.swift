import Foundation
import MediaMux
@testable import MediaMuxBase
import MediaMuxContainers
@testable import MediaMuxCore
import Testing

/// Files made to hurt: boxes nested a hundred thousand deep, pictures that
/// declare 144 megapixels, playlists and concat scripts that name other files.
/// Each fails with an error naming the file (or is read as far as it is
/// sound), and nothing outside the file given is ever opened.
@Suite struct HostileInputTests {
    let engine = MuxEngine()

    /// A box of `type` around `payload`.
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        let size = UInt32(8 + payload.count)
        return withUnsafeBytes(of: size.bigEndian, Array.init) + Array(type.utf8) + payload
    }

    /// `depth` udta boxes, each the only child of the one around it: 8 bytes a level.
    static func nestedUserData(depth: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(depth * 8)
        for level in 0..<depth {
            bytes += withUnsafeBytes(of: UInt32(8 * (depth - level)).bigEndian, Array.init) + Array("udta".utf8)
        }
        return bytes
    }

    /// `source` with `extra` added at the end of its moov, which must end the file.
    static func appendingToMovieHeader(_ source: String, _ extra: [UInt8]) throws -> [UInt8] {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source)))
        var offset = 0
        while offset + 8 <= bytes.count {
            let size = Int(BoxBuffer.be32(bytes, offset))
            if String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self) == "moov" {
                try #require(offset + size == bytes.count, "the moov must end \(source)")
                bytes += extra
                BoxBuffer.put32(UInt32(size + extra.count), into: &bytes, at: offset)
                return bytes
            }
            offset += size
        }
        throw BoxFailure.malformed("no moov in \(source)")
    }

    @Test func boxesNestedDeeperThanAnyMovieAreKeptWholeNotRecursedInto() throws {
        let nested = Self.nestedUserData(depth: 200_000)
        let moov = Self.box("moov", Self.box("mvhd", [UInt8](repeating: 0, count: 100)) + nested)
        let tree = try MovieTree(moovBytes: moov)
        // Byte for byte as it came, and opened no deeper than the limit.
        #expect(tree.bytes == moov)
        var depth = 0
        var node = tree.root
        while let inner = node.first("udta") {
            depth += 1
            node = inner
        }
        // moov is depth 0; the udta at the limit is a leaf holding the rest.
        #expect(depth == BoxNode.deepestContainer)
        #expect(node.children == nil)
        #expect(node.head.count == (200_000 - depth) * 8)
    }

    @Test func aMovieWithBoxesNestedAHundredThousandDeepMergesOrFailsNamingIt() async throws {
        let folder = try TemporaryFolder()
        let hostile = folder.path("nested.mp4")
        let bytes = try Self.appendingToMovieHeader(Fixtures.path("h264_rot90.mp4"), Self.nestedUserData(depth: 100_000))
        try Data(bytes).write(to: URL(fileURLWithPath: hostile))
        var options = MergeOptions()
        options.keepsMetadata = true
        do {
            let report = try await engine.merge(video: hostile, audio: Fixtures.path("aac_2s.m4a"), output: folder.path("out.mp4"), options: options)
            #expect(report.merge.duration > .zero())
            // The video's user data is the video's, not carried as a million-level tree.
            #expect(try Data(contentsOf: URL(fileURLWithPath: folder.path("out.mp4"))).count < 200_000)
        } catch let error as MediaMuxError {
            #expect(error.subject == hostile && error.kind == .input, "\(error)")
            #expect(folder.contents == ["nested.mp4"])
        }
    }

    /// JPEG frames whose headers say 12000x12000 (144 megapixels, 216 MB a
    /// frame) in a file of 2 KB: refused before a frame is allocated.
    @Test func picturesDeclaringAHundredMegapixelsAreRefusedNamingTheFile() async throws {
        let folder = try TemporaryFolder()
        let hostile = folder.path("huge.mov")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("fuzz/regressions/mjpeg_sof_12000x12000.mov"))))
        try #require(bytes.count < 4096)
        try Data(bytes).write(to: URL(fileURLWithPath: hostile))
        bytes.removeAll()
        await #expect {
            for try await _ in engine.previews.frames(of: hostile, options: FrameOptions(selection: .evenlySpaced(count: 2), size: 64)) {}
        } throws: { error in
            let error = error as? MediaMuxError
            return error?.subject == hostile && error?.kind == .input
        }
    }

    /// A copy of h264_rot90.mp4 in `folder` with the 32-bit word at `offset`
    /// bytes into its video track's `box` (a path under trak) set to `value`.
    static func patched(_ folder: TemporaryFolder, _ name: String, box: String, offset: Int64, value: UInt32) throws -> String {
        let source = Fixtures.path("h264_rot90.mp4")
        let file = try MP4File(path: source)
        let node = try #require(file.moov.find("trak/" + box).first, "no \(box) in \(source)")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source)))
        BoxBuffer.put32(value, into: &bytes, at: Int(node.box.offset + offset))
        let path = folder.path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func expectRefusedAsInput(_ path: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async {
        await #expect(sourceLocation: sourceLocation) {
            try await body()
        } throws: { error in
            let error = error as? MediaMuxError
            return error?.subject == path && error?.kind == .input && error?.description.hasPrefix(path + ": ") == true
        }
    }

    /// A fuzz finding merged: the file, which side of the merge it is, and
    /// what the error must say.
    struct Finding: Sendable, CustomTestStringConvertible {
        var name: String
        var isVideo: Bool
        var says: String
        /// What it says on FFmpeg 7, where that differs.
        var saysOnFFmpeg7: String? = nil
        var testDescription: String { name }
    }

    /// Files the fuzzer found that the muxer refused naming the output (an
    /// avcC made of a packet, a frame shown a day after its decode time) or
    /// that were copied into a file no reader opens (an AAC channel
    /// configuration MP4 readers refuse): each is now the input's damage,
    /// said in its terms, with nothing written.
    @Test(arguments: [
        Finding(name: "mp4_h264_without_avcC.mp4", isVideo: true, says: "its H.264 video has no decoder configuration"),
        // FFmpeg 7.1's MPEG-TS reader refuses the packet itself ("Packet corrupt", then
        // AVERROR_INVALIDDATA from av_read_frame) before the plan sees its times.
        Finding(name: "ts_h264_shown_a_day_after_decoding.ts", isVideo: true, says: "s after it is decoded, further apart than MP4 can store",
                saysOnFFmpeg7: "reading packets: Invalid data found when processing input"),
        // FFmpeg 7.1's Matroska reader gives the stream 0 channels for channel configuration 14
        // (5.1's keeps the track's Channels element), so the plan refuses it before decoding.
        Finding(name: "mkv_aac_chan_config_14.mkv", isVideo: false, says: "the audio's codec configuration cannot be decoded",
                saysOnFFmpeg7: "its audio stream says 0 channels at 44100 Hz"),
    ])
    func fuzzFindingsAreTheInputsDamage(_ finding: Finding) async throws {
        let folder = try TemporaryFolder()
        let hostile = Fixtures.path("fuzz/regressions/" + finding.name)
        let video = finding.isVideo ? hostile : Fixtures.path("h264_vfr.mp4")
        let audio = finding.isVideo ? Fixtures.path("aac_2s.m4a") : hostile
        await #expect {
            _ = try await engine.merge(video: video, audio: audio, output: folder.path("out.mp4"))
        } throws: { error in
            let error = error as? MediaMuxError
            let says = FFmpegRelease.isSevenOrLater ? finding.saysOnFFmpeg7 ?? finding.says : finding.says
            return error?.subject == hostile && error?.kind == .input && error?.description.contains(says) == true
        }
        #expect(folder.contents.isEmpty)
    }

    /// A sample table declaring 100 million samples (400 MB of sizes) in a
    /// file of 15 KB: refused once the table is found short, for probing,
    /// merging and decoding alike.
    @Test func aHundredMillionDeclaredSamplesAreRefused() async throws {
        let folder = try TemporaryFolder()
        // stsz: size, type, version+flags, sample size, then the count.
        let hostile = try Self.patched(folder, "samples.mp4", box: "mdia/minf/stbl/stsz", offset: 16, value: 100_000_000)
        await Self.expectRefusedAsInput(hostile) { _ = try await engine.probe(hostile) }
        await Self.expectRefusedAsInput(hostile) {
            _ = try await engine.merge(video: hostile, audio: Fixtures.path("aac_2s.m4a"), output: folder.path("out.mp4"))
        }
        await Self.expectRefusedAsInput(hostile) {
            for try await _ in engine.previews.frames(of: hostile, options: FrameOptions(selection: .evenlySpaced(count: 2), size: 64)) {}
        }
        #expect(folder.contents == ["samples.mp4"])
    }

    /// A moov that says it is 2 GB long in a file of 15 KB, and a sample
    /// table box that says it runs past its parent: read as far as they are
    /// sound or refused, never read past the end or allocated at their word.
    @Test(arguments: ["moov", "stbl"])
    func boxesLongerThanTheFile(_ box: String) async throws {
        let folder = try TemporaryFolder()
        let source = Fixtures.path("h264_rot90.mp4")
        let file = try MP4File(path: source)
        let offset = box == "moov" ? file.moov.box.offset : try #require(file.moov.find("trak/mdia/minf/stbl").first).box.offset
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source)))
        BoxBuffer.put32(0x7FFF_FFF0, into: &bytes, at: Int(offset))
        let hostile = folder.path("long.mp4")
        try Data(bytes).write(to: URL(fileURLWithPath: hostile))
        do {
            let report = try await engine.merge(video: hostile, audio: Fixtures.path("aac_2s.m4a"), output: folder.path("out.mp4"))
            #expect(report.merge.duration > .zero())
            #expect(try await engine.probe(folder.path("out.mp4")).video != nil)
        } catch {
            #expect(error.subject == hostile && error.kind == .input, "\(error)")
            #expect(folder.contents == ["long.mp4"])
        }
    }

    /// A sample description whose picture is 65535x65535 (12 GiB a frame
    /// as 4:2:0, 17 GiB as RGBA): refused before a frame is allocated.
    @Test func aSampleDescriptionDeclaringFourGigapixelsIsRefused() async throws {
        let folder = try TemporaryFolder()
        // stsd: size, type, version+flags, entry count; avc1: size, type,
        // 6 reserved, data reference index, 16 predefined, then width and height.
        let hostile = try Self.patched(folder, "huge.mp4", box: "mdia/minf/stbl/stsd", offset: 16 + 8 + 8 + 16, value: 0xFFFF_FFFF)
        await Self.expectRefusedAsInput(hostile) {
            for try await _ in engine.previews.frames(of: hostile, options: FrameOptions(selection: .evenlySpaced(count: 2), size: 64)) {}
        }
        #expect(folder.contents == ["huge.mp4"])
    }

    /// Tags that look like paths name nothing MediaMux writes: outputs are
    /// the caller's names, frames are numbered and timed.
    @Test func outputNamesNeverComeFromTheInputsTags() async throws {
        let folder = try TemporaryFolder()
        let hostile = folder.path("tagged.mp4")
        let made = try ExternalTool.run("/usr/bin/ffmpeg", [
            "-v", "error", "-i", Fixtures.path("h264_bframes_aac.mp4"), "-c", "copy",
            "-metadata", "title=../../escaped.png", "-metadata", "comment=/tmp/escaped.mp4",
            "-metadata:s:v", "handler_name=../frame-01-0.000s.png", hostile,
        ], keeping: .errors, seconds: 60)
        try #require(made.status == 0, "ffmpeg: \(String(decoding: made.text, as: UTF8.self))")
        var options = MergeOptions()
        options.keepsMetadata = true
        _ = try await engine.merge(video: hostile, audio: Fixtures.path("aac_2s.m4a"), output: folder.path("merged.mp4"), options: options)
        try FileManager.default.createDirectory(atPath: folder.path("frames"), withIntermediateDirectories: false)
        let images = try await engine.previews.writeFrames(of: hostile, into: folder.path("frames"), options: FrameOptions(selection: .evenlySpaced(count: 3), size: 32))
        #expect(images.count == 3)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path("frames")).sorted()
        #expect(names.count == 3 && names.allSatisfy { $0.wholeMatch(of: /frame-\d\d-\d+\.\d{3}s\.png/) != nil }, "\(names)")
        #expect(folder.contents.sorted() == ["frames", "merged.mp4", "tagged.mp4"])
        #expect(!FileManager.default.fileExists(atPath: "/tmp/escaped.mp4"))
        #expect(!FileManager.default.fileExists(atPath: folder.path("../../escaped.png")))
    }

    /// Playlists and concat scripts name other files; no demuxer that would
    /// follow them is allowed, so they are not media MediaMux reads.
    @Test(arguments: [
        ("list.m3u8", "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nAUDIO\n#EXT-X-ENDLIST\n"),
        ("list.ffconcat", "ffconcat version 1.0\nfile 'AUDIO'\n"),
        ("list.txt", "file 'AUDIO'\n"),
        ("list.sdp", "v=0\no=- 0 0 IN IP4 127.0.0.1\ns=x\nc=IN IP4 127.0.0.1\nt=0 0\nm=audio 5004 RTP/AVP 97\na=rtpmap:97 MPEG4-GENERIC/48000/2\n"),
    ])
    func filesThatNameOtherFilesAreNotFollowed(_ name: String, _ text: String) async throws {
        let folder = try TemporaryFolder()
        let path = folder.path(name)
        try text.replacingOccurrences(of: "AUDIO", with: Fixtures.path("aac_2s.m4a")).write(toFile: path, atomically: true, encoding: .utf8)
        await #expect {
            _ = try await engine.probe(path)
        } throws: { error in
            guard case .notMedia(let named, _) = (error as? MediaMuxError)?.failure else { return false }
            return named == path
        }
    }

    /// FFmpeg's other protocols (data:, subfile:, concat:) are names of files
    /// to MediaMux, which opens everything through the file protocol.
    @Test(arguments: ["data:audio/mp4;base64,AAAAGGZ0eXBNNEEg", "subfile,,start,0,end,0,,:AUDIO", "concat:AUDIO|AUDIO"])
    func otherProtocolsAreFileNames(_ url: String) async throws {
        let path = url.replacingOccurrences(of: "AUDIO", with: Fixtures.path("aac_2s.m4a"))
        await #expect(throws: MediaMuxError.fileNotFound(path: path)) {
            _ = try await engine.probe(path)
        }
    }
}
