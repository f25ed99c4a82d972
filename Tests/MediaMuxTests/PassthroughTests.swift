import MediaMuxContainers
import Foundation
import Testing
import TestSupport
@testable import MediaMux
@testable import MediaMuxCore
@testable import MediaMuxPreview

/// A stream copy carries the source's description of its streams and of the
/// recording: every box of the sample entries, byte for byte, and the capture
/// metadata. Judged by the tests' own MP4 reader against the source files.
struct PassthroughTests {
    /// Boxes that only hold a QuickTime sample entry together (wave's frma,
    /// its copy of the entry type, its terminator).
    static let structural: Set<String> = ["frma", "mp4a", "\0\0\0\0", "wave"]

    struct Case: CustomTestStringConvertible, Sendable {
        var video: MediaFile
        var output: String
        /// Types the source has that must be among the output's (besides the byte-for-byte check).
        var mustCarry: [String]
        var testDescription: String { "\(video) -> \(output)" }
    }

    static let cases: [Case] = ["mp4", "mov"].flatMap { container in
        [
            // Dolby Vision 8.4 (dvvC), HLG colour as QuickTime's nclc.
            Case(video: .sample("iphone_hevc_rot90_aac_mebx_0.3s.mp4"), output: container, mustCarry: ["hvcC", "dvvC", "colr"]),
            // iPhone 14 Pro: Dolby Vision 8.4 and Apple's ambient viewing environment (amve).
            Case(video: .sample("iphone14pro_hevc_dolbyvision84_hlg_rot90_0.1s.mov"), output: container, mustCarry: ["hvcC", "dvvC", "colr", "amve"]),
            Case(video: .sample("iphone_hevc_rot90_bframes_editlist_nonsync_start.mp4"), output: container, mustCarry: ["hvcC", "pasp", "colr"]),
            Case(video: .sample("android14_hevc_hlg_audio_track_first.mp4"), output: container, mustCarry: ["hvcC", "colr"]),
            Case(video: .sample("apple_h264_bframes_audio_starts_44ms_late.mov"), output: container, mustCarry: ["avcC", "colr"]),
            // HDR10 mastering display and light levels, amve, clap and an unknown box.
            Case(video: "hevc_hdr10_entry_boxes.mp4", output: container, mustCarry: ["mdcv", "clli", "amve", "clap", "zzzz"]),
            // Dolby Vision profile 5: the entry stays dvh1, which FFmpeg 5.1 cannot write.
            Case(video: "hevc_dv_profile5.mp4", output: container, mustCarry: ["hvcC", "dvcC"]),
        ]
    } + [
        // AV1 with PQ and BT.2020 in an nclx colr, into MP4 (MOV cannot hold AV1). SOURCES.md
        // says mdcv and clli too, but the file has neither box, nor metadata OBUs.
        Case(video: .sample("av1_hdr10_mdcv_clli.mp4"), output: "mp4", mustCarry: ["av1C", "colr", "fiel"]),
    ]

    @Test(arguments: cases.filter { !$0.video.isSample })
    func videoSampleEntryBoxesArriveByteForByte(_ example: Case) async throws {
        try await expectSampleEntryKept(example)
    }

    @Test(Samples.required, arguments: cases.filter(\.video.isSample))
    func realVideoSampleEntryBoxesArriveByteForByte(_ example: Case) async throws {
        try await expectSampleEntryKept(example)
    }

    private func expectSampleEntryKept(_ example: Case) async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out." + example.output)
        let report = try await MuxEngine().merge(video: example.video.path, audio: Fixtures.path("aac_2s.m4a"), output: output)
        let source = try #require(try MP4File(path: example.video.path).videoTracks.first)
        let copy = try #require(try MP4File(path: output).videoTracks.first)
        #expect(copy.sampleFormat == source.sampleFormat)
        #expect(report.video.codecTag == copy.sampleFormat)
        for box in source.sampleEntryBoxes where !Self.structural.contains(box.type) {
            #expect(copy.sampleEntryBoxes.contains { $0.bytes == box.bytes }, "\(box) of the source is missing or changed")
        }
        let types = Set(copy.sampleEntryBoxes.map(\.type))
        #expect(Set(example.mustCarry).isSubset(of: types), "\(copy.sampleEntryBoxes)")
    }

    /// Track-level boxes: the video's tapt (QuickTime's aperture dimensions,
    /// iPhone) and the audio's tgas (Apple .mov) arrive byte for byte. Track
    /// references do not: the iPhone's tie its metadata tracks, which are not
    /// copied, to the video by track IDs the output does not have.
    @Test(Samples.required, arguments: ["mp4", "mov"])
    func trackBoxesArriveByteForByte(_ container: String) async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out." + container)
        let video = Samples.path("iphone_hevc_rot90_aac_mebx_0.3s.mp4")
        let audio = Samples.path("apple_h264_bframes_audio_starts_44ms_late.mov")
        _ = try await MuxEngine().merge(video: video, audio: audio, output: output)
        func boxes(_ file: MP4File, _ track: MP4File.Track?, _ type: String) throws -> [[UInt8]] {
            try #require(track).box.children.filter { $0.type == type }.map { try file.bytes(of: $0) }
        }
        let (videoFile, audioFile, copy) = (try MP4File(path: video), try MP4File(path: audio), try MP4File(path: output))
        let tapt = try boxes(videoFile, videoFile.videoTracks.first, "tapt")
        try #require(tapt.count == 1)
        #expect(try boxes(copy, copy.videoTracks.first, "tapt") == tapt)
        let gain = try boxes(audioFile, audioFile.audioTracks.first, "tgas")
        try #require(gain.count == 1)
        #expect(try boxes(copy, copy.audioTracks.first, "tgas") == gain)
        #expect(videoFile.tracks.contains { track in track.box.children.contains { $0.type == "tref" } })
        #expect(copy.tracks.allSatisfy { track in !track.box.children.contains { $0.type == "tref" } })
    }

    /// The policy for track-level boxes, without FFmpeg: tref never, user
    /// data only with the metadata, the muxer's user data joined rather than
    /// replaced, new boxes before the media.
    @Test func trackBoxPolicy() throws {
        func leaf(_ type: String, _ byte: UInt8) -> BoxNode { BoxNode(type: type, head: [byte]) }
        let source = [leaf("tapt", 1), leaf("tref", 2), BoxNode(type: "udta", head: [], children: [leaf("name", 3), leaf("\u{A9}xyz", 4)]), leaf("zzzz", 5)]
        #expect(TrackBoxCarry(boxes: [leaf("tref", 2), leaf("free", 0)], keepsMetadata: true) == nil)
        let bare = try #require(TrackBoxCarry(boxes: source, keepsMetadata: false))
        #expect(bare.boxes.map(\.type) == ["tapt", "zzzz"])
        let carry = try #require(TrackBoxCarry(boxes: source, keepsMetadata: true))
        let written = BoxNode(type: "trak", head: [], children: [
            leaf("tkhd", 0), leaf("edts", 0), leaf("mdia", 0), BoxNode(type: "udta", head: [], children: [leaf("name", 9)]),
        ])
        let merged = carry.merged(into: written)
        #expect(merged.children?.map(\.type) == ["tkhd", "tapt", "zzzz", "edts", "mdia", "udta"])
        #expect(merged.first("udta")?.children == [leaf("name", 9), leaf("\u{A9}xyz", 4)])
    }

    /// hev1 becomes hvc1 (Apple's players refuse hev1): hvcC must then say
    /// its parameter sets are complete; the rest is the source's.
    @Test func aChangedEntryTypeKeepsTheMuxersConfiguration() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        _ = try await MuxEngine().merge(video: Fixtures.path("hevc_hev1.mp4"), audio: Fixtures.path("aac_2s.m4a"), output: output)
        let source = try #require(try MP4File(path: Fixtures.path("hevc_hev1.mp4")).videoTracks.first)
        let copy = try #require(try MP4File(path: output).videoTracks.first)
        #expect(source.sampleFormat == "hev1")
        #expect(copy.sampleFormat == "hvc1")
        #expect(copy.sampleEntryBoxes.filter { $0.type == "hvcC" }.count == 1)
        // hvc1 keeps every parameter set in hvcC (ISO 14496-15, 8.4.1), and says so
        // (FFmpeg 7.1's muxer sets the flags, 5.1's does not; MediaMux does on both).
        let sourceArrays = HEVCConfigurationArrays.read(try #require(source.sampleEntryBoxes.first { $0.type == "hvcC" }).bytes)
        let copyArrays = HEVCConfigurationArrays.read(try #require(copy.sampleEntryBoxes.first { $0.type == "hvcC" }).bytes)
        #expect(sourceArrays.map(\.type) == [32, 33, 34, 39] && sourceArrays.allSatisfy { !$0.complete })
        #expect(copyArrays.map(\.type) == sourceArrays.map(\.type))
        #expect(copyArrays.allSatisfy { $0.complete == (32...34).contains($0.type) }, "\(copyArrays)")
        for box in source.sampleEntryBoxes where box.type != "hvcC" {
            #expect(copy.sampleEntryBoxes.contains { $0.bytes == box.bytes }, "\(box)")
        }
    }

    /// Audio from a QuickTime movie: its esds sits inside a `wave` box, which
    /// MP4 does not have. In .mp4 the esds stands in the entry itself; in .mov
    /// it goes into the muxer's own wave.
    @Test(Samples.required, arguments: ["mp4", "mov"])
    func quickTimeAudioConfigurationLeavesItsWaveBox(_ container: String) async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out." + container)
        let movie = Samples.path("apple_h264_bframes_audio_starts_44ms_late.mov")
        _ = try await MuxEngine().merge(video: Fixtures.path("h264_rot90.mp4"), audio: movie, output: output)
        let source = try #require(try MP4File(path: movie).audioTracks.first)
        let copy = try #require(try MP4File(path: output).audioTracks.first)
        let esds = try #require(source.sampleEntryBoxes.first { $0.type == "esds" })
        #expect(esds.inWave)
        let written = try #require(copy.sampleEntryBoxes.first { $0.type == "esds" })
        #expect(written.bytes == esds.bytes)
        #expect(written.inWave == (container == "mov"))
        #expect(copy.sampleEntryBoxes.filter { $0.type == "esds" }.count == 1)
    }

    // MARK: Metadata

    /// iPhone 12 Pro Max and iPhone 14 Pro recordings.
    @Test(Samples.required, arguments: ["iphone_hevc_rot90_aac_mebx_0.3s.mp4", "iphone14pro_hevc_dolbyvision84_hlg_rot90_0.1s.mov"], ["mp4", "mov"])
    func iPhoneCaptureMetadataIsKept(_ name: String, _ container: String) async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out." + container)
        let video = Samples.path(name)
        let report = try await MuxEngine().merge(video: video, audio: Fixtures.path("aac_2s.m4a"), output: output)
        let keys = [
            "com.apple.quicktime.location.accuracy.horizontal", "com.apple.quicktime.location.ISO6709", "com.apple.quicktime.make",
            "com.apple.quicktime.model", "com.apple.quicktime.software", "com.apple.quicktime.creationdate",
        ]
        let source = try MP4File(path: video)
        let copy = try MP4File(path: output)
        #expect(try source.metadataKeys() == keys)
        #expect(try copy.metadataKeys() == keys)
        // The values, typed as the phone wrote them.
        let sourceItems = try source.bytes(of: try #require(source.moov.find("meta/ilst").first))
        let copyItems = try copy.bytes(of: try #require(copy.moov.find("meta/ilst").first))
        #expect(copyItems == sourceItems)
        #expect(report.keptMetadata == keys + ["creation_time"])
        #expect(try Self.creationTime(copy) == Self.creationTime(source))
    }

    /// Android writes its location as QuickTime user data (©xyz); an older
    /// Apple/FFmpeg movie as an iTunes-style tag item.
    @Test(Samples.required, arguments: [
        ("android14_hevc_hlg_audio_track_first.mp4", "udta/\u{A9}xyz"),
        ("apple_h264_bframes_audio_starts_44ms_late.mov", "udta/meta/ilst/\u{A9}xyz"),
    ])
    func userDataLocationIsKept(_ name: String, _ path: String) async throws {
        let video = Samples.path(name)
        for container in ["mp4", "mov"] {
            let folder = try TemporaryFolder()
            let output = folder.path("out." + container)
            _ = try await MuxEngine().merge(video: video, audio: Fixtures.path("aac_2s.m4a"), output: output)
            let source = try MP4File(path: video)
            let copy = try MP4File(path: output)
            let location = try source.bytes(of: try #require(source.moov.find(path).first))
            let written = try copy.moov.find(path).map { try copy.bytes(of: $0) }
            #expect(written == [location], "\(container)")
        }
    }

    @Test(Samples.required, arguments: [
        "iphone_hevc_rot90_aac_mebx_0.3s.mp4", "iphone14pro_hevc_dolbyvision84_hlg_rot90_0.1s.mov",
        "android14_hevc_hlg_audio_track_first.mp4", "apple_h264_bframes_audio_starts_44ms_late.mov",
    ])
    func noMetadataLeavesNoLocationAnywhere(_ name: String) async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        let video = Samples.path(name)
        let report = try await MuxEngine().merge(
            video: video, audio: Fixtures.path("aac_2s.m4a"), output: output, options: MergeOptions(keepsMetadata: false))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: output))
        // The four files' coordinates, Apple's key, and the user-data type.
        let needles = ["+37.7450-122.4301", "+51.5335-000.1261", "+51.5334-000.1255", "+40.6892-074.0445", "ISO6709", "iPhone", "\u{A9}xyz"]
        for needle in needles {
            let pattern = Data(needle.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) })
            #expect(bytes.range(of: pattern) == nil, "\(needle) is in the output")
        }
        #expect(report.keptMetadata.isEmpty)
        #expect(try Self.creationTime(MP4File(path: output)) == 0)
        // The sources do have them: the search would have found them.
        let source = try Data(contentsOf: URL(fileURLWithPath: video))
        #expect(source.range(of: Data("\u{A9}xyz".unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) })) != nil || source.range(of: Data("ISO6709".utf8)) != nil)
    }

    /// mvhd's creation time, seconds since 1904.
    static func creationTime(_ file: MP4File) throws -> UInt64 {
        let mvhd = try file.bytes(of: try #require(file.moov.find("mvhd").first))
        return mvhd[8] == 1 ? mvhd[12..<20].reduce(0) { $0 << 8 | UInt64($1) } : mvhd[12..<16].reduce(0) { $0 << 8 | UInt64($1) }
    }

    @Test(Samples.required) func theReportNamesEveryStreamLeftOut() async throws {
        let folder = try TemporaryFolder()
        let video = Samples.path("iphone_hevc_rot90_aac_mebx_0.3s.mp4")
        let report = try await MuxEngine().merge(video: video, audio: Fixtures.path("aac_2s.m4a"), output: folder.path("out.mp4"))
        #expect(report.leftOut.map(\.streamIndex) == [1, 2, 3, 4])
        #expect(report.leftOut.allSatisfy { $0.path == video })
        #expect(report.leftOut[0].reason == "the soundtrack replaces the video's own audio")
        #expect(report.leftOut.dropFirst().allSatisfy { $0.what == "data mebx" && $0.reason == "timed metadata is not copied" })
    }

    // MARK: Where the grown movie header goes

    /// A moov that outgrows the room reserved for it goes to the end of the
    /// file, whole; the old one becomes free space and every sample stays put.
    @Test(Samples.required) func aMovieHeaderThatOutgrowsItsRoomMovesToTheEnd() async throws {
        let folder = try TemporaryFolder()
        let video = Samples.path("iphone_hevc_rot90_aac_mebx_0.3s.mp4")
        var bare = try await MuxEngine().plan(video: video, audio: Fixtures.path("aac_2s.m4a"), output: folder.path("bare.mp4"))
        bare.video.sampleEntry = nil
        bare.audio!.sampleEntry = nil
        bare.metadata = MetadataCarry.plan(video: try await MuxEngine().probe(video), keep: false)
        _ = try await MuxEngine().execute(bare)
        let bareMovie = try #require(try MP4File(path: folder.path("bare.mp4")).topLevelBoxes(ofType: "moov").first)

        var tight = try await MuxEngine().plan(video: video, audio: Fixtures.path("aac_2s.m4a"), output: folder.path("tight.mp4"))
        tight.movieHeader = .reservedAtFront(bytes: Int(bareMovie.size) + 8)
        let report = try await MuxEngine().execute(tight)
        let file = try MP4File(path: folder.path("tight.mp4"))
        #expect(!file.isFastStart)
        #expect(file.topLevelBoxes(ofType: "moov").count == 1)
        #expect(report.warnings.contains { $0.contains("moved to the end") })
        #expect(file.videoTracks.first?.sampleEntryBoxes.contains { $0.type == "dvvC" } == true)
        try Self.expectSameSamples(file, as: MP4File(path: folder.path("bare.mp4")))
    }

    /// Faststart by moving the finished moov to the front: chunk offsets rise
    /// by its size and every sample's bytes are where the tables say.
    @Test func movingToTheFrontKeepsEverySample() async throws {
        let folder = try TemporaryFolder()
        let video = Fixtures.path("hevc_hdr10_entry_boxes.mp4")
        var plan = try await MuxEngine().plan(video: video, audio: Fixtures.path("aac_2s.m4a"), output: folder.path("moved.mp4"))
        plan.movieHeader = .movedToFront
        _ = try await MuxEngine().execute(plan)
        var atEnd = plan
        atEnd.outputPath = folder.path("end.mp4")
        atEnd.movieHeader = .atEnd
        _ = try await MuxEngine().execute(atEnd)
        let moved = try MP4File(path: folder.path("moved.mp4"))
        #expect(moved.isFastStart)
        #expect(moved.topLevelBoxes(ofType: "free").allSatisfy { $0.size < 64 })
        #expect(moved.fileSize == (try MP4File(path: folder.path("end.mp4")).fileSize))
        try Self.expectSameSamples(moved, as: MP4File(path: folder.path("end.mp4")))
    }

    static func expectSameSamples(_ file: MP4File, as reference: MP4File) throws {
        #expect(file.tracks.count == reference.tracks.count)
        for (track, expected) in zip(file.tracks, reference.tracks) {
            #expect(track.issues.isEmpty)
            #expect(track.sampleCount == expected.sampleCount)
            for index in 0..<min(track.sampleCount, expected.sampleCount) {
                #expect(try track.sampleData(index) == expected.sampleData(index), "track \(track.trackID) sample \(index)")
            }
        }
    }

    /// Offsets past 4 GiB turn a 32-bit chunk offset table into a 64-bit one.
    @Test func raisedChunkOffsetsWidenTo64Bits() throws {
        func stco(_ offsets: [UInt32]) -> BoxNode {
            var head: [UInt8] = [0, 0, 0, 0] + [0, 0, 0, UInt8(offsets.count)]
            for offset in offsets { head += (0..<4).map { UInt8(truncatingIfNeeded: offset >> (24 - 8 * $0)) } }
            return BoxNode(type: "stco", head: head)
        }
        func trak(_ table: BoxNode) -> BoxNode {
            let stbl = BoxNode(type: "stbl", head: [], children: [table])
            let minf = BoxNode(type: "minf", head: [], children: [stbl])
            return BoxNode(type: "trak", head: [], children: [BoxNode(type: "mdia", head: [], children: [minf])])
        }
        var moov = BoxNode(type: "moov", head: [], children: [trak(stco([8, 100])), trak(stco([UInt32.max - 10]))])
        try moov.raiseChunkOffsets(by: 100)
        let first = try #require(moov.children?[0].first("mdia/minf/stbl/stco"))
        #expect(try first.uint32(at: 8) == 108 && first.uint32(at: 12) == 200)
        let second = try #require(moov.children?[1].first("mdia/minf/stbl/co64"))
        #expect(try second.int64(at: 8) == Int64(UInt32.max) + 90)
    }

    /// Parsing a movie header and writing it back gives the same bytes.
    @Test(arguments: ["hevc_hdr10_entry_boxes.mp4", "h264_bframes_aac.mp4", "aac_7s.m4a"])
    func movieTreesRoundTrip(_ name: String) throws {
        try expectRoundTrip(Fixtures.path(name))
    }

    @Test(Samples.required, arguments: [
        "iphone_hevc_rot90_aac_mebx_0.3s.mp4", "iphone_hevc_rot90_bframes_editlist_nonsync_start.mp4",
        "iphone14pro_hevc_dolbyvision84_hlg_rot90_0.1s.mov", "av1_hdr10_mdcv_clli.mp4",
        "android14_hevc_hlg_audio_track_first.mp4", "apple_h264_bframes_audio_starts_44ms_late.mov",
        "fdkaac_lc_44khz_itunsmpb_moov_at_end.m4a", "nero_aac_lc_22khz_mono_itunsmpb.m4a",
        "fmp4_h264_aac_sidx_seekable.mp4", "fmp4_opus_audio.mp4",
    ])
    func realMovieTreesRoundTrip(_ name: String) throws {
        try expectRoundTrip(Samples.path(name))
    }

    private func expectRoundTrip(_ path: String) throws {
        let descriptor = open(path, O_RDONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let moov = try readMovieBox(descriptor: descriptor)
        let tree = try MovieTree(moovBytes: moov.bytes)
        #expect(tree.bytes == moov.bytes)
        // Sample entries of sound and video are opened, not kept whole.
        for trak in tree.tracks where ["vide", "soun"].contains(MovieTree.handler(of: trak)) {
            #expect(MovieTree.sampleEntries(of: trak).first?.children != nil)
        }
    }
}
