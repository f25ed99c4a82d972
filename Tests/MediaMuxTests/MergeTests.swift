import Foundation
import Testing
import TestSupport
@testable import MediaMux
@testable import MediaMuxCore
@testable import MediaMuxPreview

/// End-to-end merges over TestMedia, checked with the tests' own MP4 reader
/// (never with libavformat): durations and edits in the written boxes, the
/// display matrix, the sample entry, and the copied samples' bytes.
struct MergeTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var video: MediaFile
        var audio: MediaFile
        /// The expected end, from the fixtures' own facts (SOURCES.md, TestMedia/README.md).
        var seconds: Double
        var rotation = 0
        var videoTag: String? = nil
        var orientation: Orientation = .keep
        var testDescription: String { "\(video) + \(audio)" }
        var readsSamples: Bool { video.isSample || audio.isSample }
    }

    static let cases: [Case] = [
        // H.264 with B-frames (4.0 s) cut by a 2.0 s AAC.
        Case(video: "h264_bframes_aac.mp4", audio: "aac_2s.m4a", seconds: 2.0, videoTag: "avc1"),
        // iPhone HEVC, B-frames, edit list starting before the first sync sample: elst 27722/10000 s.
        Case(video: .sample("iphone_hevc_rot90_bframes_editlist_nonsync_start.mp4"), audio: "aac_7s.m4a", seconds: 2.7722, rotation: 90, videoTag: "hvc1"),
        // Audio starting 44 ms late: empty edit 1320/30000 + 29259/30000.
        Case(video: .sample("apple_h264_bframes_audio_starts_44ms_late.mov"), audio: .sample("apple_h264_bframes_audio_starts_44ms_late.mov"), seconds: 30579.0 / 30000),
        // iTunSMPB-only priming: 7119 valid samples at 22050 Hz.
        Case(video: "h264_bframes_aac.mp4", audio: .sample("nero_aac_lc_22khz_mono_itunsmpb.m4a"), seconds: 7119.0 / 22050),
        // VP9 in WebM (ns timestamps) with fdkaac iTunSMPB: 11187 valid samples at 44.1 kHz.
        Case(video: .sample("vp9_642x642_mkvmerge_timescale1ns.webm"), audio: .sample("fdkaac_lc_44khz_itunsmpb_moov_at_end.m4a"), seconds: 11187.0 / 44100),
        // VP9 in MP4: the vpcC box must survive (the muxer rebuilds it from the pixel format).
        Case(video: "vp9.mp4", audio: "aac_7s.m4a", seconds: 2.0, videoTag: "vp09"),
        // HEVC tagged hev1 comes out hvc1.
        Case(video: "hevc_hev1.mp4", audio: "aac_7s.m4a", seconds: 2.0, videoTag: "hvc1"),
        // Variable frame rate: the movie header says 2.5 s.
        Case(video: "h264_vfr.mp4", audio: "aac_7s.m4a", seconds: 2.5),
        // ctts v1 whose deepest offset FFmpeg 5.1 misses: 5 frames at 25 fps.
        Case(video: "h264_negative_cts_tail.mp4", audio: "aac_7s.m4a", seconds: 0.2, videoTag: "avc1"),
        // Edit list starting on a non-keyframe: elst 2900 ms.
        Case(video: "h264_negative_start.mp4", audio: "aac_7s.m4a", seconds: 2.9),
        // Matroska video 3 s long, starting 23 ms after its own audio: shown from 0 with the MP3.
        Case(video: "h264_aac.mkv", audio: "mp3_5s.mp3", seconds: 3.0),
        // AV1 with Opus from a WebM without duration.
        Case(video: "av1.mp4", audio: .sample("chrome_mediarecorder_opus_no_duration.webm"), seconds: 1.5),
        // Android layout with a VBR MP3.
        Case(video: .sample("android14_hevc_hlg_audio_track_first.mp4"), audio: .sample("lame399_vbr_xing_lametag_mono.mp3"), seconds: 0.3001),
        // Rotation: each kept as the source has it (re-framing is ReframeTests').
        Case(video: "h264_rot90.mp4", audio: "aac_7s.m4a", seconds: 3.0, rotation: 90),
        Case(video: "h264_rot180.mp4", audio: "aac_7s.m4a", seconds: 3.0, rotation: 180),
        Case(video: "h264_rot270.mp4", audio: "aac_7s.m4a", seconds: 3.0, rotation: 270),
        Case(video: "h264_coded_portrait.mp4", audio: "aac_7s.m4a", seconds: 3.0, rotation: 0),
        // Landscape content is copied under the landscape orientation too.
        Case(video: "h264_rot180.mp4", audio: "aac_7s.m4a", seconds: 3.0, rotation: 180, orientation: .landscape),
        Case(video: .sample("iphone_hevc_rot90_aac_mebx_0.3s.mp4"), audio: "aac_7s.m4a", seconds: 179.0 / 600, rotation: 90, videoTag: "hvc1"),
        // iPhone 14 Pro, Dolby Vision 8.4: elst 64/600 s over ctts v1 offsets that put pictures before their decode time.
        Case(video: .sample("iphone14pro_hevc_dolbyvision84_hlg_rot90_0.1s.mov"), audio: "aac_7s.m4a", seconds: 64.0 / 600, rotation: 90, videoTag: "hvc1"),
        // AV1 10-bit PQ, coded portrait 720x1280: 127 frames of 1001/30000 s.
        Case(video: .sample("av1_hdr10_mdcv_clli.mp4"), audio: "aac_7s.m4a", seconds: 127 * 1001.0 / 30000, videoTag: "av01"),
        // Two clips cut for joins (one avcC): 125 frames at 25 fps, against 5.015 s of the other's AAC.
        Case(video: .sample("join_preroll_h264_640x360_aac_5s.mp4"), audio: .sample("join_midroll_h264_640x360_aac_5s.mp4"), seconds: 5.0, videoTag: "avc1"),
    ]

    @Test(arguments: cases.filter { !$0.readsSamples })
    func mergeIsExact(_ example: Case) async throws {
        try await expectExactMerge(example)
    }

    @Test(Samples.required, arguments: cases.filter(\.readsSamples))
    func mergeOfRealFilesIsExact(_ example: Case) async throws {
        try await expectExactMerge(example)
    }

    private func expectExactMerge(_ example: Case) async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        let report = try await MuxEngine().merge(
            video: example.video.path, audio: example.audio.path, output: output,
            options: MergeOptions(orientation: example.orientation))
        #expect(folder.contents == ["out.mp4"], "no temporary file is left behind")

        let file = try MP4File(path: output)
        #expect(file.isFastStart)
        let movieSeconds = Double(file.movieDuration) / Double(file.movieTimescale)
        #expect(abs(movieSeconds - example.seconds) < 0.001, "mvhd says \(movieSeconds) s")
        #expect(abs(report.duration.seconds - example.seconds) < 0.001)
        #expect(file.tracks.count == 2)
        for track in file.tracks {
            let presented = track.presentedDuration(movieTimescale: file.movieTimescale)
            #expect(abs(presented - example.seconds) < 0.001, "track \(track.trackID) \(track.handlerType) presents \(presented) s")
            #expect(Double(track.tkhdDuration) / Double(file.movieTimescale) - example.seconds < 0.001)
            // The media reaches the end of the edit: nothing is cut short.
            if let edit = track.editList?.last, edit.mediaTime >= 0 {
                let editEnd = Double(edit.mediaTime) / Double(track.mediaTimescale) + Double(edit.segmentDuration) / Double(file.movieTimescale)
                #expect(Double(track.mediaDuration) / Double(track.mediaTimescale) >= editEnd - 0.001)
            }
            #expect(track.issues.isEmpty)
        }
        let video = try #require(file.videoTracks.first)
        #expect(video.rotationClockwiseDegrees == example.rotation)
        if let tag = example.videoTag { #expect(video.sampleFormat == tag) }
        #expect(report.rotation.degrees == example.rotation)

        try expectCopied(video, from: example.video.path, handler: "vide")
        try expectCopied(try #require(file.audioTracks.first), from: example.audio.path, handler: "soun")
    }

    /// The codec configuration box of a track's sample description (avcC,
    /// hvcC, vpcC, av1C, esds, dOps), as raw bytes.
    private func configurationBox(_ track: MP4File.Track, in path: String) throws -> Data? {
        guard let stsd = track.box.find("mdia/minf/stbl/stsd").first?.box else { return nil }
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(stsd.offset))
        let bytes = [UInt8](try handle.read(upToCount: Int(stsd.size)) ?? Data())
        for name in ["avcC", "hvcC", "vpcC", "av1C", "esds", "dOps"] {
            let pattern = Array(name.utf8)
            guard let at = (4..<max(bytes.count - 4, 4)).first(where: { Array(bytes[$0..<$0 + 4]) == pattern }) else { continue }
            let size = bytes[(at - 4)..<at].reduce(0) { $0 << 8 | Int($1) }
            guard size >= 8, at - 4 + size <= bytes.count else { return nil }
            return Data(bytes[(at - 4)..<(at - 4 + size)])
        }
        return nil
    }

    /// For an esds box, its DecoderSpecificInfo (descriptor tag 5); for an
    /// hvcC, the record with each array's completeness flag cleared (hvc1
    /// sets what hev1 leaves, for the same parameter sets); any other
    /// configuration box as it is.
    private func decoderConfiguration(_ box: Data) -> Data {
        let bytes = [UInt8](box)
        if bytes.count > 8, String(decoding: bytes[4..<8], as: UTF8.self) == "hvcC" {
            return Data(HEVCConfigurationArrays.withCompletenessCleared(bytes))
        }
        guard bytes.count > 12, String(decoding: bytes[4..<8], as: UTF8.self) == "esds" else { return box }
        var at = 12
        while at < bytes.count {
            let tag = bytes[at]
            var length = 0
            at += 1
            for _ in 0..<4 where at < bytes.count {
                length = length << 7 | Int(bytes[at] & 0x7F)
                at += 1
                if bytes[at - 1] & 0x80 == 0 { break }
            }
            switch tag {
            case 5: return Data(bytes[at..<min(at + length, bytes.count)])
            case 3: at += 3  // ES_ID and flags; the nested descriptors follow
            case 4: at += 13  // object type, stream type, buffer size, bitrates
            default: at += length
            }
        }
        return Data()
    }

    /// The output's samples are the input's, byte for byte and in decode order
    /// (checked where the input is itself MP4/MOV, which the reader understands).
    private func expectCopied(_ output: MP4File.Track, from inputPath: String, handler: String) throws {
        guard [".mp4", ".mov", ".m4a"].contains(where: inputPath.hasSuffix),
              let input = try MP4File(path: inputPath).tracks.first(where: { $0.handlerType == handler }) else { return }
        #expect(output.sampleCount > 0 && output.sampleCount <= input.sampleCount)
        // The decoder configuration travels intact, or players cannot decode the
        // copy. An esds also holds the track number and bitrates, which the
        // muxer rightly rewrites; what the decoder reads is its tag-5 payload.
        let inputConfiguration = try configurationBox(input, in: inputPath).map(decoderConfiguration)
        #expect(inputConfiguration != nil, "\(inputPath): no configuration box found")
        #expect(try configurationBox(output, in: output.filePath).map(decoderConfiguration) == inputConfiguration,
                "\(inputPath): decoder configuration differs")
        let first = try output.sampleData(0)
        // FFmpeg skips samples that no edit ever reaches, so the copy may start after the input's first sample.
        let offset = try (0..<input.sampleCount).first { try input.sampleData($0) == first }
        let start = try #require(offset, "the first output sample is not among the input's")
        for index in 0..<output.sampleCount {
            #expect(try output.sampleData(index) == input.sampleData(start + index), "sample \(index)")
        }
    }

    @Test(Samples.required) func startOffsetsAndPrimingSurvive() async throws {
        let folder = try TemporaryFolder()
        // Audio 44 ms late (empty edit of 1320/30000 s) keeps its delay.
        let late = folder.path("late.mp4")
        let movie = Samples.path("apple_h264_bframes_audio_starts_44ms_late.mov")
        _ = try await MuxEngine().merge(video: movie, audio: movie, output: late)
        let lateFile = try MP4File(path: late)
        let lateEdits = try #require(lateFile.audioTracks.first?.editList)
        #expect(lateEdits.count == 2 && lateEdits[0].isEmpty)
        #expect(abs(Double(lateEdits[0].segmentDuration) / Double(lateFile.movieTimescale) - 0.044) < 0.0005)

        // Priming given by an edit list (FFmpeg's AAC: 1024 samples) and by iTunSMPB (Nero: 2624).
        let primings: [(audio: MediaFile, priming: Int, rate: Int)] = [("aac_7s.m4a", 1024, 44100), (.sample("nero_aac_lc_22khz_mono_itunsmpb.m4a"), 2624, 22050)]
        for (audio, priming, rate) in primings {
            let output = folder.path("primed-\(priming).mp4")
            _ = try await MuxEngine().merge(video: Fixtures.path("h264_rot180.mp4"), audio: audio.path, output: output)
            let track = try #require(try MP4File(path: output).audioTracks.first)
            let edit = try #require(track.editList?.last)
            #expect(track.mediaTimescale == UInt32(rate))
            #expect(edit.mediaTime == Int64(priming), "\(audio): media_time \(edit.mediaTime)")
        }
    }

    /// A late audio track whose first packets are priming: the empty edit is
    /// the planned 0.5 s, and the priming stays hidden by the media time.
    @Test func lateAudioWithPrimingStartsOnTime() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("late.mp4")
        let report = try await MuxEngine().merge(
            video: Fixtures.path("h264_bframes_aac.mp4"), audio: Fixtures.path("crafted/aac_late_start_with_priming.m4a"), output: output)
        #expect(report.audio!.start == MediaTime(value: 1, timescale: 2))
        let file = try MP4File(path: output)
        let audio = try #require(file.audioTracks.first)
        let edits = try #require(audio.editList)
        #expect(edits.count == 2 && edits[0].isEmpty)
        #expect(abs(Double(edits[0].segmentDuration) / Double(file.movieTimescale) - 0.5) < 0.0001)
        #expect(edits[1].mediaTime == 1024)
        #expect(abs(Double(file.movieDuration) / Double(file.movieTimescale) - 2.5) < 0.001)
    }

    /// Boxes that no encoder writes must not crash the probe: an error or a
    /// result, never a trap (a trap would end this test process).
    @Test(arguments: ["crafted/box_size_beyond_int64.m4a", "crafted/edit_durations_overflow.m4a"])
    func craftedBoxesDoNotCrash(_ name: String) async throws {
        let info = try? await MuxEngine().probe(Fixtures.path(name))
        #expect(info == nil || info?.audioStreams.count == 1)
        let folder = try TemporaryFolder()
        _ = try? await MuxEngine().merge(video: Fixtures.path("h264_rot90.mp4"), audio: Fixtures.path(name), output: folder.path("o.mp4"))
        #expect(folder.contents.allSatisfy { !$0.hasSuffix(".partial") })
    }

    @Test func movieHeaderPlacement() async throws {
        let folder = try TemporaryFolder()
        let atEnd = folder.path("end.mov")
        _ = try await MuxEngine().merge(video: Fixtures.path("h264_rot90.mp4"), audio: Fixtures.path("pcm_2s.wav"), output: atEnd, options: MergeOptions(faststart: false))
        #expect(try MP4File(path: atEnd).isFastStart == false)
        // Sample counts unknown up front are impossible here; the scan-based inputs still reserve room.
        let front = folder.path("front.mp4")
        _ = try await MuxEngine().merge(video: Fixtures.path("h264_aac.mkv"), audio: Fixtures.path("opus_5s.ogg"), output: front)
        #expect(try MP4File(path: front).isFastStart)
    }

    /// When sample counts are unknown up front the plan asks FFmpeg to move
    /// the moov to the front in a second pass; that path must be exact too.
    @Test func secondPassFaststart() async throws {
        let folder = try TemporaryFolder()
        var plan = try await MuxEngine().plan(video: Fixtures.path("h264_bframes_aac.mp4"), audio: Fixtures.path("aac_2s.m4a"), output: folder.path("moved.mp4"))
        plan.movieHeader = .movedToFront
        _ = try await MuxEngine().execute(plan)
        let file = try MP4File(path: folder.path("moved.mp4"))
        #expect(file.isFastStart)
        #expect(file.topLevelBoxes(ofType: "free").allSatisfy { $0.size < 64 })
        #expect(file.movieDuration == UInt64(2 * file.movieTimescale))
        #expect(folder.contents == ["moved.mp4"])
    }

    @Test func cancellationLeavesNothing() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("cancelled.mp4")
        let task = Task {
            try await MuxEngine().merge(video: Fixtures.path("h264_bframes_aac.mp4"), audio: Fixtures.path("aac_7s.m4a"), output: output)
        }
        task.cancel()
        do {
            _ = try await task.value
            Issue.record("a merge cancelled before it started completed")
        } catch let error as MediaMuxError {
            guard error.code == .cancelled else {
                Issue.record("unexpected error \(error)")
                return
            }
        }
        #expect(folder.contents.isEmpty)
    }

    @Test func badInputsAreNamedErrors() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        let video = Fixtures.path("h264_rot90.mp4")
        let audio = Fixtures.path("aac_2s.m4a")
        let failures: [(String, String, MediaMuxError)] = [
            (video, Fixtures.path("empty.m4a"), .notMedia(path: Fixtures.path("empty.m4a"), detail: "the file is empty")),
            (video, Fixtures.path("missing.m4a"), .fileNotFound(path: Fixtures.path("missing.m4a"))),
            (video, folder.url.path, .notAFile(path: folder.url.path)),
            (video, video, .noStream(kind: .audio, path: video)),
            (audio, audio, .noStream(kind: .video, path: audio)),
            (video, "concat:\(audio)|\(audio)", .fileNotFound(path: "concat:\(audio)|\(audio)")),
        ]
        for (videoPath, audioPath, expected) in failures {
            await #expect(throws: expected) {
                try await MuxEngine().merge(video: videoPath, audio: audioPath, output: output)
            }
        }
        for name in ["html_page.m4a", "text_file.mp4", "random_bytes.mp4"] {
            await #expect(throws: MediaMuxError.notMedia(path: Fixtures.path(name), detail: "no known audio or video format")) {
                try await MuxEngine().merge(video: video, audio: Fixtures.path(name), output: output)
            }
        }
        try await expectDamaged(.fixture("truncated_h264.mp4"), asAudio: false, in: folder)
        #expect(folder.contents.isEmpty, "nothing is left behind: \(folder.contents)")
    }

    /// A real damaged file: a fuzz input with two movie headers and no media data.
    @Test(Samples.required) func realDamagedFilesAreNamedErrors() async throws {
        let folder = try TemporaryFolder()
        try await expectDamaged(.sample("fuzz_two_moov_no_mdat_bad_timescale.mp4"), asAudio: false, in: folder)
        #expect(folder.contents.isEmpty, "nothing is left behind: \(folder.contents)")
    }

    /// A real fragmented MP4 cut short (Core Media, SOURCES.md): its one
    /// fragment declares 4088 AAC samples and the file holds the first 7
    /// whole (and the start of the 8th). The 7 are kept, byte for byte, and
    /// the report counts the rest.
    @Test(Samples.required) func aRealFragmentedFileCutShortKeepsItsWholeSamples() async throws {
        let path = Samples.path("truncated_coremedia_fmp4_aac.mp4")
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        let report = try await MuxEngine().merge(video: Fixtures.path("h264_26s_2fps.mp4"), audio: path, output: output)
        #expect(report.audio!.packets == 7)
        #expect(report.warnings == ["\(path): the file is cut short inside a fragment: 4081 audio samples it declares are missing; the whole ones before the cut are kept"])
        let copy = try #require(try MP4File(path: output).audioTracks.first)
        let sourceBytes = try Data(contentsOf: URL(fileURLWithPath: path))
        // The tests' reader refuses the cut file; the samples follow one another in its mdat, from its payload.
        let mdat = try #require(sourceBytes.range(of: Data("mdat".utf8)))
        var position = mdat.upperBound
        for index in 0..<copy.sampleCount {
            let sample = try copy.sampleData(index)
            #expect(sourceBytes[position..<min(position + sample.count, sourceBytes.endIndex)] == sample, "sample \(index + 1)")
            position += sample.count
        }
        #expect(abs(report.duration.seconds - 7 * 1024.0 / 48000) < 0.001)
    }

    private func expectDamaged(_ file: MediaFile, asAudio: Bool, in folder: TemporaryFolder) async throws {
        let (video, audio) = (Fixtures.path("h264_rot90.mp4"), Fixtures.path("aac_2s.m4a"))
        do {
            _ = try await MuxEngine().merge(video: asAudio ? video : file.path, audio: asAudio ? file.path : audio, output: folder.path("out.mp4"))
            Issue.record("\(file) was merged")
        } catch {
            guard case .damaged(let path, _) = error.failure else {
                Issue.record("\(file): \(error)")
                return
            }
            #expect(path == file.path)
        }
    }

    /// An MP4 cut before its moov (the download that stopped early) is damage,
    /// and the error says what FFmpeg found missing.
    @Test func mp4CutBeforeItsMovieHeader() async throws {
        let folder = try TemporaryFolder()
        let whole = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("h264_bframes_aac.mp4")))
        let cut = folder.path("cut.mp4")
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: cut))
        await #expect(throws: MediaMuxError.damaged(path: cut, detail: "moov atom not found")) {
            try await MuxEngine().merge(video: cut, audio: Fixtures.path("aac_2s.m4a"), output: folder.path("out.mp4"))
        }
        #expect(folder.contents == ["cut.mp4"])
    }
}
