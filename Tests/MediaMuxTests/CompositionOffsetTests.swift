import Foundation
import Testing
import TestSupport
@testable import MediaMux
@testable import MediaMuxCore
@testable import MediaMuxPreview

/// Video whose samples are presented before they are decoded (negative
/// composition offsets) is copied with every sample's bytes and moment kept.
/// Judged against the sample tables, read by the tests' own MP4 reader: the
/// source's composition times, measured from where its edit list starts
/// presenting, are the output's, sample by sample.
struct CompositionOffsetTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var video: MediaFile
        /// 1-based samples the output must mark as sync although the source does not.
        var newSyncSamples: [Int] = []
        var testDescription: String { video.description }
    }

    static let cases: [Case] = [
        // FFmpeg 5.1 hands out pts < dts here (its DTS shift ignores the last two ctts entries).
        Case(video: "h264_negative_cts_tail.mp4"),
        // ctts v1 down to -46950 after a first offset of 0; FFmpeg 5.1 places this
        // edit list's start 0.349 s late. Sample 1 is an IDR picture stss leaves out.
        Case(video: .sample("iphone_hevc_rot90_bframes_editlist_nonsync_start.mp4"), newSyncSamples: [1]),
        // Negative offsets stored in a version-0 ctts, with cslg.
        Case(video: .sample("iphone_hevc_rot90_aac_mebx_0.3s.mp4")),
        Case(video: .sample("apple_h264_bframes_audio_starts_44ms_late.mov")),
        // iPhone 14 Pro, Dolby Vision 8.4: ctts v1 with some pts below dts.
        Case(video: .sample("iphone14pro_hevc_dolbyvision84_hlg_rot90_0.1s.mov")),
    ]

    /// The media time where a track's presentation starts: its first non-empty edit.
    private func presentationStart(_ track: MP4File.Track) -> Int64 {
        track.editList?.first(where: { !$0.isEmpty })?.mediaTime ?? 0
    }

    @Test(arguments: cases.filter { !$0.video.isSample })
    func everySampleKeepsItsBytesAndMoment(_ example: Case) async throws {
        try await expectSamplesKept(example)
    }

    @Test(Samples.required, arguments: cases.filter(\.video.isSample))
    func everySampleOfRealFilesKeepsItsBytesAndMoment(_ example: Case) async throws {
        try await expectSamplesKept(example)
    }

    private func expectSamplesKept(_ example: Case) async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        _ = try await MuxEngine().merge(
            video: example.video.path, audio: Fixtures.path("aac_7s.m4a"), output: output,
            options: MergeOptions(orientation: .keep))

        let source = try #require(try MP4File(path: example.video.path).videoTracks.first)
        let copy = try #require(try MP4File(path: output).videoTracks.first)
        #expect(copy.issues.isEmpty)
        #expect(copy.sampleCount == source.sampleCount, "every sample of these short clips is shown, so every one is copied")
        // The muxer may multiply a small timescale (600 becomes 19200): compare moments exactly across scales.
        let sourceScale = Int64(source.mediaTimescale)
        let copyScale = Int64(copy.mediaTimescale)
        #expect(copyScale % sourceScale == 0)

        // Decoded no later than presented: the output needs no negative offsets.
        #expect(copy.compositionOffsets.allSatisfy { $0 >= 0 })
        #expect(zip(copy.decodeTimes, copy.decodeTimes.dropFirst()).allSatisfy { $0 < $1 })

        let sourceStart = presentationStart(source)
        let copyStart = presentationStart(copy)
        let sourceTimes = source.compositionTimes
        let copyTimes = copy.compositionTimes
        for index in 0..<min(source.sampleCount, copy.sampleCount) {
            #expect(
                (copyTimes[index] - copyStart) * sourceScale == (sourceTimes[index] - sourceStart) * copyScale,
                "sample \(index + 1) is presented at another moment")
            #expect(try copy.sampleData(index) == source.sampleData(index), "sample \(index + 1) differs")
            let wasSync = source.isSyncSample(index)
            #expect(copy.isSyncSample(index) == (wasSync || example.newSyncSamples.contains(index + 1)), "sync flag of sample \(index + 1)")
        }
    }

    @Test func mergingAVideoWhoseDemuxerReportsPtsBelowDtsSucceeds() async throws {
        // Before the fix, the muxer refused this file's fourth packet with EINVAL.
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        let report = try await MuxEngine().merge(
            video: Fixtures.path("h264_negative_cts_tail.mp4"), audio: Fixtures.path("aac_2s.m4a"), output: output)
        #expect(report.video.packets == 5)
        #expect(abs(report.duration.seconds - 0.2) < 0.0005)
        let file = try MP4File(path: output)
        let video = try #require(file.videoTracks.first)
        // Source ctts 0, 1024, -512, -512, 0 (12800 per second): the output lowers decoding by 512.
        #expect(video.compositionOffsets == [512, 1536, 0, 0, 512])
        #expect(video.editList?.map(\.mediaTime) == [512])
    }

    @Test func theIRAPPictureTest() {
        let hvcC: [UInt8] = [1] + [UInt8](repeating: 0, count: 20) + [0x03]
        let avcC: [UInt8] = [1, 0x64, 0, 0x1F, 0xFF]
        func sample(_ nalHeaders: [[UInt8]]) -> [UInt8] {
            nalHeaders.flatMap { header in [0, 0, 0, UInt8(header.count + 2)] + header + [0xAA, 0xBB] }
        }
        func starts(_ codec: String, _ configuration: [UInt8], _ sample: [UInt8]) -> Bool {
            configuration.withUnsafeBufferPointer { config in
                sample.withUnsafeBufferPointer { RandomAccess.startsDecoding(codec: codec, configuration: config, sample: $0) }
            }
        }
        // HEVC: a prefix SEI (39) and a Dolby Vision RPU (62) before an IDR_N_LP slice (20).
        #expect(starts("hevc", hvcC, sample([[39 << 1, 1], [62 << 1, 1], [20 << 1, 1]])))
        #expect(starts("hevc", hvcC, sample([[21 << 1, 1]])))  // CRA
        #expect(!starts("hevc", hvcC, sample([[35 << 1, 1], [1 << 1, 1]])))  // AUD, then a trailing picture
        #expect(!starts("hevc", hvcC, sample([[62 << 1, 1]])))  // no slice at all
        // H.264: SEI (6) then IDR (5); a non-IDR slice (1).
        #expect(starts("h264", avcC, sample([[0x06], [0x65]])))
        #expect(!starts("h264", avcC, sample([[0x41]])))
        // A length that runs past the sample, or an Annex B configuration: not known, so no.
        #expect(!starts("h264", avcC, [0, 0, 0, 200, 0x65]))
        #expect(!starts("h264", [0, 0, 0, 1, 0x67], sample([[0x65]])))
    }
}
