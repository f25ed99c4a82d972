import Foundation
import MediaMuxBase
import NIOPosix
import Testing
import TestSupport
@testable import MediaMuxCore

/// Clips in sequence by copy (`MergeEngine.compose`), judged by the tests'
/// MP4 reader and decoder, not by the code under test: one sample entry,
/// every source sample's bytes in order, decode times rising across each
/// join, each clip's first picture at the sum of the lengths before it,
/// the pictures those of each clip's range, and the track and the sound
/// ending exactly at the sum of the clips.
@Suite(.offTheCooperativePool) struct CompositionTests {
    /// The engine of this suite and of `CompositionPlaybackTests`. Its
    /// blocking work runs on a pool of its own, not the process-wide one the
    /// downloads tested beside it hash and probe on, so that minutes of HEVC
    /// cuts under a sanitizer do not queue ahead of them. (The downloads'
    /// timeouts in CI were the tests' own blocking on Swift's threads; see
    /// `OffTheCooperativePool`.)
    static let engine: MergeEngine = {
        let pool = NIOThreadPool(numberOfThreads: 2)
        pool.start()
        return MergeEngine(runtime: MediaRuntime(threadPool: pool))
    }()
    private let engine = CompositionTests.engine

    private func seconds(_ value: Int64, _ scale: Int64 = 1) -> MediaTime { MediaTime(value: value, timescale: scale) }

    /// The samples' bytes of a file's video track, in decode order.
    private func sampleBytes(_ track: MP4File.Track, _ range: Range<Int>? = nil) throws -> [Data] {
        try (range ?? 0..<track.sampleCount).map { try track.sampleData($0) }
    }

    /// Checks the layout every composition must have, and returns the video track.
    /// `frameRate`: the clips' constant rate, whose frame duration every
    /// decode step must be (a join that lost its timing shows as a short step).
    /// `leftOutLeading`: decode steps of two frames allowed, one for each
    /// open GOP's leading picture left out where a clip begins (its decode slot stays empty).
    private func checkLayout(
        _ path: String, lasting expected: Double, frameRate: Int, leftOutLeading: Int = 0
    ) throws -> (movie: MP4File, video: MP4File.Track) {
        let movie = try MP4File(path: path)
        let video = try #require(movie.videoTracks.first)
        #expect(video.issues.isEmpty, "\(video.issues)")
        #expect(video.sampleEntryCount == 1, "one sample entry, not \(video.sampleEntryCount)")
        // No edit in the middle: at most an empty edit (none here) and one that plays the media.
        #expect((video.editList ?? []).filter { $0.mediaTime >= 0 }.count <= 1, "\(String(describing: video.editList))")
        let step = Int64(video.mediaTimescale) / Int64(frameRate)
        var gaps = 0
        for (index, (a, b)) in zip(video.decodeTimes, video.decodeTimes.dropFirst()).enumerated() where b - a != step {
            if b - a == 2 * step, gaps < leftOutLeading {
                gaps += 1
                continue
            }
            Issue.record("sample \(index + 1) is decoded \(b - a) ticks after the one before, not a frame (\(step)) after")
        }
        #expect(gaps == leftOutLeading, "\(gaps) steps of two frames, not \(leftOutLeading)")
        let shown = video.presentedDuration(movieTimescale: movie.movieTimescale)
        #expect(abs(shown - expected) < 0.001, "the video is shown for \(shown) s, not \(expected) s")
        return (movie, video)
    }

    /// Clips without sound and no soundtrack: the composition is its video
    /// alone, copied, as a file and as fragments, and GStreamer plays it for
    /// its length; the report has no audio track and says why nothing else.
    @Test func clipsWithoutSoundMakeAVideoAlone() async throws {
        let folder = try TemporaryFolder()
        let source = TestMedia.fixture("h264_26s_2fps.mp4")
        // Keyframes every 10 s at 2 fps: from the one at 20 s to the end, then from the one at 10 s to the one at 20 s.
        var composition = Composition(clips: [.init(source, from: seconds(20)), .init(source, from: seconds(10), to: seconds(20))])
        for layout in [OutputLayout.movie, .fragmented] {
            composition.options.layout = layout
            let output = folder.path("\(layout.rawValue).mp4")
            let report = try await engine.compose(composition, output: .file(output))
            #expect(report.audio == nil && report.originalAudio == nil && report.warnings.isEmpty, "\(layout): \(report.warnings)")
            #expect(report.clips.map(\.reason) == ["copied", "copied"], "\(report.clips.map(\.reason))")
            #expect(report.duration == seconds(16))
            let movie = try MP4File(path: output)
            #expect(movie.tracks.count == 1 && movie.audioTracks.isEmpty, "\(layout): \(movie.tracks.count) tracks")
            let video = try #require(movie.videoTracks.first)
            let sourceTrack = try #require(try MP4File(path: source).videoTracks.first)
            #expect(try sampleBytes(video) == (try sampleBytes(sourceTrack, 40..<52)) + (try sampleBytes(sourceTrack, 20..<40)), "\(layout)")
            #expect(abs(video.presentedDuration(movieTimescale: movie.movieTimescale) - 16) < 0.001, "\(layout)")
            let discovered = try GStreamer.discoveredDuration(of: output)
            #expect(abs(discovered - 16) < 0.001, "\(layout): GStreamer says \(discovered) s")
        }
        // Audio options with no sound to change: said, not refused.
        var louder = composition
        louder.options.audio.volume = 6
        louder.options.overwrite = true
        let louderReport = try await engine.compose(louder, output: .file(folder.path("louder.mp4")))
        #expect(louderReport.audio == nil)
        #expect(louderReport.warnings == ["no clip has sound and no soundtrack is given: the audio options have nothing to change"], "\(louderReport.warnings)")
        // With a soundtrack, the clips' own sound kept or mixed under it: there is none, and the report says so.
        for (own, warning) in [
            (OriginalAudio.kept, "no clip has sound to keep beside the soundtrack; none is kept"),
            (.mixed(level: -12), "no clip has sound to mix under the soundtrack; the soundtrack plays alone"),
        ] {
            var withSoundtrack = Composition(clips: composition.clips, soundtrack: TestMedia.fixture("aac_7s.m4a"))
            withSoundtrack.options.originalAudio = own
            withSoundtrack.options.overwrite = true
            let report = try await engine.compose(withSoundtrack, output: .file(folder.path("soundtrack.mp4")))
            #expect(report.audio != nil && report.originalAudio == nil)
            #expect(report.warnings == [warning], "\(report.warnings)")
            #expect(try MP4File(path: folder.path("soundtrack.mp4")).tracks.count == 2)
        }
    }

    @Test(Samples.required) func threeClipsFromOneSourceJoinByCopyWithEveryByte() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("three.mp4")
        let names = ["join_preroll_h264_640x360_aac_5s.mp4", "join_midroll_h264_640x360_aac_5s.mp4", "join_postroll_h264_640x360_aac_5s.mp4"]
        let sources = names.map(Samples.path)
        let report = try await engine.compose(Composition(clips: sources.map { Composition.Clip($0) }), output: .file(output))
        #expect(report.duration == seconds(15))
        #expect(report.clips.map(\.reason) == ["copied", "copied", "copied"])
        #expect(report.clips.map(\.place) == [seconds(0), seconds(5), seconds(10)])

        let (movie, video) = try checkLayout(output, lasting: 15, frameRate: 25)
        var expectedBytes: [Data] = []
        var expectedFrames: [TrackDecoder.Frame] = []
        var firstSamples: [Int] = []
        for source in sources {
            let track = try #require(try MP4File(path: source).videoTracks.first)
            firstSamples.append(expectedBytes.count)
            expectedBytes += try sampleBytes(track)
            expectedFrames += try TrackDecoder.frames(of: track)
        }
        #expect(video.sampleCount == expectedBytes.count)
        #expect(try sampleBytes(video) == expectedBytes, "every sample of the three clips, copied in order")
        // Each clip starts with a sync sample shown at 0, 5 and 10 s (after the track's start edit).
        let start = video.presentedStart
        for (clip, index) in firstSamples.enumerated() {
            #expect(video.isSyncSample(index))
            let shownAt = Double(video.compositionTimes[index] - start) / Double(video.mediaTimescale)
            #expect(abs(shownAt - Double(clip * 5)) < 0.0005, "clip \(clip) starts at \(shownAt) s")
        }
        let frames = try TrackDecoder.frames(of: video)
        #expect(frames.map(\.hash) == expectedFrames.map(\.hash), "the pictures of the three clips, in order")

        // The sound: the clips' own, decoded and encoded as one track of 15 s, with no gap at a join.
        let audio = try #require(movie.audioTracks.first)
        let sound = try AudioSamples.played(audio, movieTimescale: movie.movieTimescale)
        let length = Double(sound.delay + sound.count) / Double(sound.sampleRate)
        #expect(abs(length - 15) < 0.001, "the sound lasts \(length) s")
        #expect(report.audio!.encoding != nil)
    }

    @Test func keyframeCutsMoveOutwardToKeyframesAndKeepEveryFrameAskedFor() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("cut.mp4")
        // 30 fps with B-frames, a keyframe every second.
        let source = TestMedia.fixture("h264_bframes_aac.mp4")
        let composition = Composition(
            clips: [.init(source, from: seconds(1, 2), to: seconds(5, 2)), .init(source, from: seconds(1), to: seconds(3))], cut: .keyframe)
        let report = try await engine.compose(composition, output: .file(output))
        #expect(report.clips.map(\.range) == [seconds(0)..<seconds(3), seconds(1)..<seconds(3)])
        #expect(report.clips[0].reason.contains("start moved back to the keyframe at 0.000 s (asked 0.500 s)"), "\(report.clips[0].reason)")
        #expect(report.clips[0].reason.contains("end moved to the keyframe at 3.000 s (asked 2.500 s)"), "\(report.clips[0].reason)")
        #expect(report.clips[1].reason == "copied")
        #expect(report.duration == seconds(5))

        let (_, video) = try checkLayout(output, lasting: 5, frameRate: 30)
        let sourceTrack = try #require(try MP4File(path: source).videoTracks.first)
        let sourceFrames = try TrackDecoder.frames(of: sourceTrack)
        #expect(sourceFrames.count == 120)
        let frames = try TrackDecoder.frames(of: video)
        // The frames of 0-3 s, then those of 1-3 s, at 30 a second.
        #expect(frames.map(\.hash) == Array(sourceFrames[0..<90].map(\.hash)) + sourceFrames[30..<90].map(\.hash))
        let start = video.presentedStart
        let times = frames.map { Double($0.time - start) / Double(video.mediaTimescale) }
        for (index, time) in times.enumerated() where abs(time - Double(index) / 30) > 0.0005 {
            Issue.record("frame \(index) is shown at \(time) s, not \(Double(index) / 30) s")
        }
    }

    @Test func aClipThatBeginsAtAnHEVCCRAPictureIsASplicePoint() async throws {
        let folder = try TemporaryFolder()
        // x265's open GOPs: an IDR at 0 s, a CRA at 1 s with a leading picture (RASL) that references the GOP before.
        let source = TestMedia.fixture("hevc_hev1.mp4")
        let output = folder.path("spliced.mp4")
        let composition = Composition(clips: [.init(source, from: seconds(1)), .init(source, from: seconds(1))], soundtrack: TestMedia.fixture("aac_7s.m4a"))
        let report = try await engine.compose(composition, output: .file(output))
        #expect(report.clips.map(\.reason) == ["copied", "copied"])
        // Each clip leaves its CRA's one leading picture out.
        let (_, video) = try checkLayout(output, lasting: 2, frameRate: 30, leftOutLeading: 2)
        let sourceFrames = try TrackDecoder.frames(of: try #require(try MP4File(path: source).videoTracks.first))
        let frames = try TrackDecoder.frames(of: video)
        // The GOP's 30 pictures twice, each decoded as in the source: the second CRA a BLA picture, its RASL left out.
        let gop = sourceFrames[30..<60].map(\.hash)
        #expect(frames.map(\.hash) == gop + gop)
        // The second clip's first sample: the CRA's slices marked BLA_W_LP (16), and nothing else changed.
        let first = try video.sampleData(30)
        let sourceTrack = try #require(try MP4File(path: source).videoTracks.first)
        let cra = try #require((0..<sourceTrack.sampleCount).first { sourceTrack.isSyncSample($0) && $0 > 0 })
        let original = try sourceTrack.sampleData(cra)
        #expect(first.count == original.count)
        let changed = zip(first, original).enumerated().filter { $0.element.0 != $0.element.1 }
        #expect(!changed.isEmpty && changed.allSatisfy { ($0.element.0 >> 1) & 0x3F == 16 && ($0.element.1 >> 1) & 0x3F == 21 }, "\(changed.map(\.offset))")
    }

    /// The sequence and picture parameter sets an avcC (a sample entry's box, header included) holds.
    private func parameterSetCounts(_ track: MP4File.Track) throws -> (sps: Int, pps: Int) {
        let avcC = try #require(track.sampleEntryBoxes.first { $0.type == "avcC" }).bytes
        let sps = Int(avcC[8 + 5] & 0x1F)
        var at = 8 + 6
        for _ in 0..<sps { at += 2 + (Int(avcC[at]) << 8 | Int(avcC[at + 1])) }
        return (sps, Int(avcC[at]))
    }

    /// Checks that every frame of `video` is the one its source shows: the
    /// frames of each of `ranges` (source frame numbers, in display order),
    /// those in `copied` bit for bit, the others (encoded) by 40 dB and closer
    /// to their own source frame than to its neighbours. Returns the frames.
    private func checkFrames(
        of video: MP4File.Track, from sourceTrack: MP4File.Track, ranges: [Range<Int64>], copied: [Range<Int>]
    ) throws -> [TrackDecoder.Frame] {
        let frames = try TrackDecoder.frames(of: video, keepingLuma: true)
        let sourceFrames = try TrackDecoder.frames(of: sourceTrack, keepingLuma: true)
        let wanted = zip(ranges, copied).flatMap { range, copied in range.map { (Int($0), copied.contains(Int($0))) } }
        #expect(frames.count == wanted.count)
        for (index, (frame, (source, copied))) in zip(frames, wanted).enumerated() {
            if copied {
                if frame.hash != sourceFrames[source].hash { Issue.record("frame \(index): not the source's frame \(source) as copied") }
                continue
            }
            let luma = try #require(frame.luma)
            let psnr = luma.psnr(against: try #require(sourceFrames[source].luma))
            if psnr < 40 { Issue.record("frame \(index): \(psnr) dB against the source's frame \(source)") }
            for neighbour in [source - 1, source + 1] where sourceFrames.indices.contains(neighbour) {
                let other = luma.psnr(against: try #require(sourceFrames[neighbour].luma))
                if other >= psnr { Issue.record("frame \(index): \(other) dB against frame \(neighbour), not below its own \(psnr)") }
            }
        }
        return frames
    }

    /// A smart cut of H.264 with B-pyramids and a keyframe every 2 s (25 fps):
    /// only the frames between each cut inside a GOP and the keyframe on
    /// the copy's side are encoded, under the one sample entry. Cuts fall
    /// just after a keyframe, just before one, on a B-frame, on a keyframe,
    /// and at ends whose frames are and are not decoded before later ones.
    @Test func anExactCutInsideAGOPEncodesOnlyThePartialGOPs() async throws {
        let folder = try TemporaryFolder()
        let source = TestMedia.fixture("h264_gop2s_aac.mp4")
        func at(_ frame: Int64) -> MediaTime { MediaTime(value: frame, timescale: 25) }
        // Frames (of 150): 15-109, 51-102, 49-99, 53-74 (53 is a B-frame), 100-149.
        let ranges: [Range<Int64>] = [15..<110, 51..<103, 49..<100, 53..<75, 100..<150]
        let composition = Composition(clips: ranges.map { .init(source, from: at($0.lowerBound), to: at($0.upperBound)) })
        let output = folder.path("cut.mp4")
        let report = try await engine.compose(composition, output: .file(output))
        #expect(report.clips.map(\.reason) == [
            "start re-encoded: 35 frames before the keyframe at 2.000 s; copied from 2.000 s to 4.000 s; end re-encoded: 10 frames from the keyframe at 4.000 s",
            "start re-encoded: 49 frames before the keyframe at 4.000 s; copied from 4.000 s to 4.120 s",
            "start re-encoded: 1 frame before the keyframe at 2.000 s; copied from 2.000 s to 4.000 s",
            "encoded whole: its start at 2.120 s falls 3 frames after the keyframe at 2.000 s; its end at 3.000 s falls inside a GOP (the next keyframe is at 4.000 s); no IDR keyframe to copy from follows before its end",
            "copied",
        ], "\(report.clips.map(\.reason))")
        #expect(report.video.reframing == nil)
        let total = ranges.reduce(0) { $0 + $1.count }
        #expect(report.duration == at(Int64(total)))

        let (_, video) = try checkLayout(output, lasting: Double(total) / 25, frameRate: 25)
        #expect(try parameterSetCounts(video) == (2, 2), "the source's parameter sets and the cuts' in the one avcC")
        let sourceTrack = try #require(try MP4File(path: source).videoTracks.first)
        let syncs = (0..<sourceTrack.sampleCount).filter { sourceTrack.isSyncSample($0) }
        #expect(syncs.count == 3)
        // In decode order: per clip, the frames encoded, then the source's samples copied, byte for byte.
        enum Part { case encoded(Int), copied(Range<Int>) }
        let layout: [Part] = [
            .encoded(35), .copied(syncs[1]..<syncs[2]), .encoded(10),
            .encoded(49), .copied(syncs[2]..<(syncs[2] + 3)),
            .encoded(1), .copied(syncs[1]..<syncs[2]),
            .encoded(22),
            .copied(syncs[2]..<sourceTrack.sampleCount),
        ]
        var index = 0
        var encodedSamples = 0
        for part in layout {
            switch part {
            case .encoded(let count):
                encodedSamples += count
                index += count
            case .copied(let range):
                let copied = try sampleBytes(video, index..<(index + range.count))
                #expect(copied == (try sampleBytes(sourceTrack, range)), "samples \(index)..< of the output are the source's \(range)")
                index += range.count
            }
        }
        #expect(video.sampleCount == index)
        #expect(encodedSamples == 117)

        let frames = try checkFrames(of: video, from: sourceTrack, ranges: ranges, copied: [50..<100, 100..<103, 50..<100, 0..<0, 100..<150])
        // Each clip's first frame shown where the clips before it end.
        let start = video.presentedStart
        var place = 0
        for range in ranges {
            let shownAt = Double(frames[place].time - start) / Double(video.mediaTimescale)
            #expect(abs(shownAt - Double(place) / 25) < 0.0005, "the clip at frame \(place) starts at \(shownAt) s")
            place += range.count
        }
    }

    /// Real clips (another tool's H.264 Main, one IDR picture each): a range
    /// from the middle of one has no keyframe to copy from, so its frames
    /// are all encoded, with the cuts' encoder, between clips copied whole,
    /// all under the one avcC.
    @Test(Samples.required) func aRealClipCutInsideItsOnlyGOPIsEncodedBetweenCopiedOnes() async throws {
        let folder = try TemporaryFolder()
        let names = ["join_preroll_h264_640x360_aac_5s.mp4", "join_midroll_h264_640x360_aac_5s.mp4", "join_postroll_h264_640x360_aac_5s.mp4"]
        let sources = names.map(Samples.path)
        let output = folder.path("real.mp4")
        let report = try await engine.compose(
            Composition(clips: [.init(sources[0]), .init(sources[1], from: seconds(2), to: seconds(4)), .init(sources[2])]), output: .file(output))
        #expect(report.clips[0].reason == "copied" && report.clips[2].reason == "copied", "\(report.clips.map(\.reason))")
        #expect(report.clips[1].reason.hasPrefix("encoded whole: its start at 2.000 s falls 50 frames after the keyframe at 0.000 s"), "\(report.clips[1].reason)")
        #expect(report.video.cutEncoding?.profile == "main")
        let (_, video) = try checkLayout(output, lasting: 12, frameRate: 25)
        #expect(try parameterSetCounts(video) == (2, 2))
        let tracks = try sources.map { try #require(try MP4File(path: $0).videoTracks.first) }
        // 125 samples copied, 50 encoded, 125 copied.
        #expect(video.sampleCount == 300)
        #expect(try sampleBytes(video, 0..<125) == (try sampleBytes(tracks[0])))
        #expect(try sampleBytes(video, 175..<300) == (try sampleBytes(tracks[2])))
        let frames = try TrackDecoder.frames(of: video, keepingLuma: true)
        let middle = try TrackDecoder.frames(of: tracks[1], keepingLuma: true)
        #expect(frames.count == 300)
        #expect(frames[0..<125].map(\.hash) == (try TrackDecoder.frames(of: tracks[0])).map(\.hash))
        #expect(frames[175..<300].map(\.hash) == (try TrackDecoder.frames(of: tracks[2])).map(\.hash))
        for index in 125..<175 {
            let psnr = try #require(frames[index].luma).psnr(against: try #require(middle[index - 125 + 50].luma))
            if psnr < 36 { Issue.record("frame \(index): \(psnr) dB against the source's frame \(index - 125 + 50)") }
        }
    }

    /// The parameter sets an hvcC (a sample entry's box, header included) holds, by NAL unit type.
    private func hevcParameterSetCounts(_ track: MP4File.Track) throws -> [Int: Int] {
        let hvcC = Array(try #require(track.sampleEntryBoxes.first { $0.type == "hvcC" }).bytes.dropFirst(8))
        var counts: [Int: Int] = [:]
        var at = 23
        for _ in 0..<Int(hvcC[22]) {
            let type = Int(hvcC[at] & 0x3F)
            let count = Int(hvcC[at + 1]) << 8 | Int(hvcC[at + 2])
            at += 3
            for _ in 0..<count { at += 2 + (Int(hvcC[at]) << 8 | Int(hvcC[at + 1])) }
            counts[type, default: 0] += count
        }
        return counts
    }

    /// A copied sample that begins a stretch after others: the source's bytes
    /// but for its CRA slices' NAL unit type, made BLA_W_LP (21 to 16).
    private func isMarkedSplice(_ copied: Data, of original: Data) -> Bool {
        guard copied.count == original.count else { return false }
        let changed = zip(copied, original).filter { $0 != $1 }
        return !changed.isEmpty && changed.allSatisfy { ($0.0 >> 1) & 0x3F == 16 && ($0.1 >> 1) & 0x3F == 21 }
    }

    /// A smart cut of 10-bit HLG HEVC with open GOPs (hvc1): x265's parameter
    /// sets and slices are given ids of their own (VPS 1, SPS 1, PPS 15) in
    /// the one hvcC; the CRA's leading picture, which references the GOP
    /// before it, is encoded with the frames before it and left out of the
    /// copy, which begins at the CRA made a splice point.
    @Test
    func anExactCutInsideAnHEVCOpenGOPEncodesTheFramesBeforeItsKeyframe() async throws {
        let folder = try TemporaryFolder()
        let source = TestMedia.fixture("hevc_hlg10_opengop_aac.mp4")
        func at(_ frame: Int64) -> MediaTime { MediaTime(value: frame, timescale: 25) }
        // The third clip ends in the GOP of the CRA at 2 s, whose leading picture (frame 49) is shown before it, and the last at that CRA.
        let ranges: [Range<Int64>] = [15..<110, 51..<150, 0..<75, 0..<50]
        let output = folder.path("hevc.mp4")
        let report = try await engine.compose(
            Composition(clips: ranges.map { .init(source, from: at($0.lowerBound), to: at($0.upperBound)) }), output: .file(output))
        #expect(report.clips.map(\.reason) == [
            "start re-encoded: 35 frames before the keyframe at 2.000 s; copied from 2.000 s to 4.400 s",
            "start re-encoded: 49 frames before the keyframe at 4.000 s; copied from 4.000 s to 6.000 s",
            "copied from 0.000 s to 1.960 s; end re-encoded: 26 frames from 1.960 s (the keyframe at 2.000 s and the frames shown before it)",
            "copied from 0.000 s to 1.960 s; end re-encoded: 1 frame from 1.960 s (the keyframe at 2.000 s and the frames shown before it)",
        ], "\(report.clips.map(\.reason))")
        #expect(report.video.cutEncoding?.summary == "libx265 main10, crf 18, veryfast, parameter sets VPS 1, SPS 1, PPS 15")
        // The RASL picture's decode slot, left out of the first clip's copy.
        let (_, video) = try checkLayout(output, lasting: 319.0 / 25, frameRate: 25, leftOutLeading: 1)
        #expect(video.sampleFormat == "hvc1")
        let sourceTrack = try #require(try MP4File(path: source).videoTracks.first)
        var sets = try hevcParameterSetCounts(sourceTrack)
        for type in 32...34 { sets[type, default: 0] += 1 }
        #expect(try hevcParameterSetCounts(video) == sets)
        // Decode order: the CRA at 2 s is sample 49, its RASL 50; the CRA at 4 s is sample 100.
        let copies: [(at: Int, samples: [Int], splice: Bool)] = [
            (35, [49] + Array(51..<110), true), (35 + 60 + 49, Array(100..<150), true), (35 + 60 + 49 + 50, Array(0..<49), false),
            (35 + 60 + 49 + 50 + 75, Array(0..<49), false),
        ]
        for (first, samples, splice) in copies {
            let copied = try sampleBytes(video, first..<(first + samples.count))
            let original = try samples.map { try sourceTrack.sampleData($0) }
            if splice {
                #expect(isMarkedSplice(copied[0], of: original[0]), "sample \(first): the CRA made BLA_W_LP")
                #expect(Array(copied.dropFirst()) == Array(original.dropFirst()), "samples from \(first): the source's \(samples.first ?? 0)...")
            } else {
                #expect(copied == original, "samples from \(first): the source's \(samples.first ?? 0)...")
            }
        }
        #expect(video.sampleCount == 319)

        _ = try checkFrames(of: video, from: sourceTrack, ranges: ranges, copied: [50..<110, 100..<150, 0..<49, 0..<49])
    }

    /// A real iPhone clip (HEVC Main 10 HLG, B-frames, open GOPs, a 90°
    /// matrix, an edit list) cut inside its first GOP: the frames up to its
    /// CRA keyframe encoded by x265 under ids of their own, the rest copied
    /// from the CRA, made a splice point; the matrix kept.
    @Test(Samples.required)
    func aRealPhoneHEVCClipCutInsideAGOP() async throws {
        let folder = try TemporaryFolder()
        let source = Samples.path("iphone_hevc_rot90_bframes_editlist_nonsync_start.mp4")
        let output = folder.path("phone.mp4")
        let report = try await engine.compose(
            Composition(clips: [.init(source, from: seconds(1, 2))], soundtrack: TestMedia.fixture("aac_7s.m4a")), output: .file(output))
        #expect(report.clips[0].reason.hasPrefix("start re-encoded: "), "\(report.clips[0].reason)")
        #expect(report.video.cutEncoding?.profile == "main10")
        #expect(report.rotation.degrees == 90)
        let movie = try MP4File(path: output)
        let video = try #require(movie.videoTracks.first)
        #expect(video.sampleEntryCount == 1 && video.sampleFormat == "hvc1")
        // The source's sets (and its SEI), and the cut's VPS, SPS and PPS.
        #expect(try hevcParameterSetCounts(video) == [32: 2, 33: 2, 34: 2, 39: 1])
        #expect(video.rotationClockwiseDegrees == 90)

        // The frames from the one on screen at 0.5 s of the clip's timeline on, each the source's.
        let sourceTrack = try #require(try MP4File(path: source).videoTracks.first)
        let sourceFrames = try TrackDecoder.frames(of: sourceTrack, keepingLuma: true)
        let scale = Double(sourceTrack.mediaTimescale)
        let shown = sourceFrames.filter { $0.time >= sourceTrack.presentedStart }
        let first = try #require(shown.lastIndex { Double($0.time - sourceTrack.presentedStart) / scale <= 0.5 })
        let expected = Array(shown[first...])
        let frames = try TrackDecoder.frames(of: video, keepingLuma: true)
        #expect(frames.count == expected.count)
        // The copy begins at the first keyframe shown after the cut.
        let keyframe = try #require((0..<sourceTrack.sampleCount).first { sourceTrack.isSyncSample($0) && sourceTrack.compositionTimes[$0] > expected[0].time })
        let keyframeTime = sourceTrack.compositionTimes[keyframe]
        var encoded = 0
        for (index, (frame, wanted)) in zip(frames, expected).enumerated() {
            if wanted.time >= keyframeTime {
                if frame.hash != wanted.hash { Issue.record("frame \(index): not the source's, copied from its CRA on") }
            } else {
                encoded += 1
                let psnr = try #require(frame.luma).psnr(against: try #require(wanted.luma))
                if psnr < 36 { Issue.record("frame \(index): \(psnr) dB against the source's") }
            }
        }
        #expect(encoded > 0 && encoded < frames.count, "\(encoded) of \(frames.count) frames encoded")
        let shownFor = video.presentedDuration(movieTimescale: movie.movieTimescale)
        let asked = Double(shown.last!.time - sourceTrack.presentedStart) / scale
        #expect(shownFor > 0 && abs(shownFor - (report.duration.seconds)) < 0.001, "\(shownFor) s shown, \(report.duration.seconds) s planned, last source frame at \(asked) s")
    }

    /// A variable frame rate stays variable across a smart cut: every frame,
    /// encoded or copied, is shown at its source time less the cut's start,
    /// for as long as in the source.
    @Test func aVariableFrameRateSurvivesASmartCut() async throws {
        let folder = try TemporaryFolder()
        // Frames of 1/30, 1/10 and 1/15 s; keyframes at 0 and 2 s.
        let source = TestMedia.fixture("h264_vfr.mp4")
        let output = folder.path("vfr.mp4")
        let report = try await engine.compose(
            Composition(clips: [.init(source, from: seconds(1, 2))], soundtrack: TestMedia.fixture("aac_7s.m4a")), output: .file(output))
        #expect(report.clips[0].reason.hasPrefix("start re-encoded: "), "\(report.clips[0].reason)")
        let movie = try MP4File(path: output)
        let video = try #require(movie.videoTracks.first)
        let sourceTrack = try #require(try MP4File(path: source).videoTracks.first)
        let sourceFrames = try TrackDecoder.frames(of: sourceTrack, keepingLuma: true)
        let frames = try TrackDecoder.frames(of: video, keepingLuma: true)
        func clipTime(_ time: Int64, _ track: MP4File.Track) -> Double { Double(time - track.presentedStart) / Double(track.mediaTimescale) }
        // The frame on screen at 0.5 s and those after it, at their own times.
        let first = try #require(sourceFrames.lastIndex { clipTime($0.time, sourceTrack) <= 0.5 })
        let expected = Array(sourceFrames[first...])
        #expect(frames.count == expected.count)
        let start = clipTime(expected[0].time, sourceTrack)
        #expect(Set(zip(expected, expected.dropFirst()).map { clipTime($1.time, sourceTrack) - clipTime($0.time, sourceTrack) }.map { ($0 * 30).rounded() }).count > 1)
        for (index, (frame, wanted)) in zip(frames, expected).enumerated() {
            let at = index == 0 ? 0 : clipTime(wanted.time, sourceTrack) - 0.5
            if abs(clipTime(frame.time, video) - at) > 0.0005 { Issue.record("frame \(index) at \(clipTime(frame.time, video)) s, not \(at) s (from \(start))") }
            let psnr = try #require(frame.luma).psnr(against: try #require(wanted.luma))
            if psnr < 40 { Issue.record("frame \(index): \(psnr) dB") }
        }
        let shown = video.presentedDuration(movieTimescale: movie.movieTimescale)
        #expect(abs(shown - (sourceTrack.presentedDuration(movieTimescale: try MP4File(path: source).movieTimescale) - 0.5)) < 0.001, "\(shown) s")
    }

    /// Dolby Vision's per-frame metadata cannot be made for a cut's frames:
    /// a cut inside a GOP of a Dolby Vision clip has it encoded (Dolby Vision
    /// dropped, HLG kept), and says why.
    @Test(Samples.required) func aDolbyVisionClipCutInsideAGOPIsEncodedAndSaysWhy() async throws {
        let folder = try TemporaryFolder()
        let source = Samples.path("iphone14pro_hevc_dolbyvision84_hlg_rot90_0.1s.mov")
        let report = try await engine.compose(
            Composition(clips: [.init(source, from: seconds(1, 20))], soundtrack: TestMedia.fixture("aac_7s.m4a")), output: .file(folder.path("dv.mp4")))
        #expect(report.clips[0].reason.hasSuffix("(Dolby Vision profile 8.4's per-frame metadata cannot be encoded for a cut's frames)"), "\(report.clips[0].reason)")
        #expect(report.video.cutEncoding == nil && report.video.reframing != nil)
    }

    /// Frames shown before the end that are all decoded before any shown
    /// after it (no B-frame among them waits for a later frame) end a copy
    /// as they are: nothing is encoded.
    @Test func anEndWhoseFramesAreDecodedFirstIsCopied() async throws {
        let folder = try TemporaryFolder()
        // I B B B P: the I at 1 s and the P at 34 are decoded before the B-frames 31-33 between them.
        let source = TestMedia.fixture("h264_bframes_aac.mp4")
        let output = folder.path("copied.mp4")
        let report = try await engine.compose(
            Composition(clips: [.init(source, from: seconds(1), to: MediaTime(value: 35, timescale: 30))], soundtrack: TestMedia.fixture("aac_7s.m4a")),
            output: .file(output))
        #expect(report.clips.map(\.reason) == ["copied"])
        let (_, video) = try checkLayout(output, lasting: 5.0 / 30, frameRate: 30)
        let sourceTrack = try #require(try MP4File(path: source).videoTracks.first)
        let key = try #require((0..<sourceTrack.sampleCount).first { sourceTrack.isSyncSample($0) && $0 > 0 })
        #expect(try sampleBytes(video) == (try sampleBytes(sourceTrack, key..<(key + 5))))
        let frames = try TrackDecoder.frames(of: video)
        #expect(frames.map(\.hash) == (try TrackDecoder.frames(of: sourceTrack))[30..<35].map(\.hash))
    }

    /// An hev1 entry's parameter sets travel in its samples, so a cut's
    /// encoded frames cannot join them under the one entry (see
    /// `CutEncoding`): a cut inside one of its GOPs has every clip encoded
    /// to one format, frame for frame, and says why.
    @Test func anExactCutInsideAnHev1GOPEncodesEveryClipFrameForFrameAndSaysWhy() async throws {
        let folder = try TemporaryFolder()
        let source = TestMedia.fixture("hevc_hev1.mp4")
        // 1.5 s is 15 frames after the CRA keyframe at 1 s (30 fps, 2 s); the
        // second clip ends at that CRA, whose leading picture is shown before it.
        let composition = Composition(
            clips: [.init(source, from: seconds(3, 2), to: seconds(19, 10)), .init(source, to: seconds(1))], soundtrack: TestMedia.fixture("aac_7s.m4a"))
        let output = folder.path("encoded.mp4")
        let report = try await engine.compose(composition, output: .file(output))
        #expect(report.clips[0].reason == "encoded: its start at 1.500 s falls 15 frames after the keyframe at 1.000 s (a cut's encoded frames join an hvc1 sample entry's parameter sets, not those of hev1)")
        #expect(report.clips[1].reason.hasPrefix("encoded with the others, to one sample entry: clips[0] its start at 1.500 s"), "\(report.clips[1].reason)")
        #expect(report.video.reframing != nil)
        #expect(report.duration == seconds(14, 10))

        let (_, video) = try checkLayout(output, lasting: 1.4, frameRate: 30)
        let frames = try TrackDecoder.frames(of: video, keepingLuma: true)
        let sourceFrames = try TrackDecoder.frames(of: try #require(try MP4File(path: source).videoTracks.first), keepingLuma: true)
        // Frames 45-56, then 0-29 of the source: every frame asked for, and no other.
        let expected = Array(sourceFrames[45..<57]) + Array(sourceFrames[0..<30])
        #expect(frames.count == expected.count)
        for (index, (frame, wanted)) in zip(frames, expected).enumerated() {
            let psnr = try #require(frame.luma).psnr(against: try #require(wanted.luma))
            if psnr < 40 { Issue.record("frame \(index): \(psnr) dB against the source's") }
        }
        // And a frame is not its neighbour: the comparison tells frames apart.
        let first = try #require(frames[0].luma)
        let neighbour = first.psnr(against: try #require(sourceFrames[44].luma))
        let itself = first.psnr(against: try #require(sourceFrames[45].luma))
        #expect(neighbour < itself, "\(neighbour) dB against the frame before, \(itself) dB against its own")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["encoded.mp4"])
    }

    @Test func aKeyframeCutThatCannotCopyIsRefusedNamingTheClip() async throws {
        let source = TestMedia.fixture("h264_bframes_aac.mp4")
        let other = TestMedia.fixture("hevc_hev1.mp4")
        let error = try await #require(throws: MediaMuxError.self) {
            try await engine.plan(Composition(clips: [.init(source), .init(other)], cut: .keyframe), output: .file("/tmp/never-written.mp4"))
        }
        #expect(error.code == .invalidOption)
        #expect(error.context.clip == .init(index: 1, file: other))
        #expect(error.description.hasPrefix("clips[1] (\(other)): its video codec (hevc, not h264) differs from the first clip's"), "\(error)")
        #expect(error.description.hasSuffix("keyframe cuts copy only, and clips are joined by copy only when they agree"), "\(error)")
    }

    @Test func aClipOfAnotherTurnIsEncodedUprightIntoTheFirstClipsFrame() async throws {
        let folder = try TemporaryFolder()
        let landscape = TestMedia.fixture("h264_bframes_aac.mp4")
        // Coded 320x240 with a 90° matrix: shown 240x320, portrait.
        let portrait = TestMedia.fixture("h264_rot90.mp4")
        let output = folder.path("mixed.mp4")
        var composition = Composition(clips: [.init(landscape, to: seconds(1)), .init(portrait, to: seconds(1)), .init(landscape, from: seconds(1), to: seconds(2))])
        composition.options.video.fit = .pad
        let report = try await engine.compose(composition, output: .file(output))
        #expect(report.clips[1].reason == "encoded: its display rotation (90°, not 0°) differs from the first clip's (\(landscape))")
        #expect(report.rotation.degrees == 0)
        let (_, video) = try checkLayout(output, lasting: 3, frameRate: 30)
        #expect(video.width == 320 && video.height == 240)
        let frames = try TrackDecoder.frames(of: video, keepingLuma: true)
        #expect(frames.count == 90)
        // The portrait clip's pictures, upright as players show them, fitted into 320x240 on black: 180x240 in the middle.
        let sourceFrames = try TrackDecoder.frames(of: try #require(try MP4File(path: portrait).videoTracks.first), keepingLuma: true)
        for index in [30, 45, 59] {
            let shown = try #require(frames[index].luma).cropped(x: 70, y: 0, width: 180, height: 240)
            let upright = try #require(sourceFrames[index - 30].luma).turned(clockwise: 90).scaled(width: 180, height: 240)
            let psnr = shown.psnr(against: upright)
            #expect(psnr > 30, "frame \(index): \(psnr) dB against the portrait clip's picture turned upright")
            // Not the picture left as coded (unturned, squeezed): the comparison tells them apart.
            let unturned = try #require(sourceFrames[index - 30].luma).scaled(width: 180, height: 240)
            #expect(shown.psnr(against: unturned) < psnr - 5)
        }
        // The first and third clips' pictures fill the frame as they are.
        let landscapeTrack = try #require(try MP4File(path: landscape).videoTracks.first)
        let landscapeFrames = try TrackDecoder.frames(of: landscapeTrack, keepingLuma: true)
        let third = try #require(frames[70].luma)
        #expect(third.psnr(against: try #require(landscapeFrames[40].luma)) > 30)
    }

    @Test func rangesOutsideAClipAreRefused() async throws {
        let source = TestMedia.fixture("h264_bframes_aac.mp4")
        let cases: [(Composition.Clip, String)] = [
            (.init(source, from: seconds(2), to: seconds(5)), "the clip ends at 5.000 s, after its video does (4.000 s)"),
            (.init(source, from: seconds(3), to: seconds(2)), "the clip ends at 2.000 s, not after it starts (3.000 s)"),
            (.init(source, from: seconds(4)), "the clip starts at 4.000 s, at or after its video ends (4.000 s)"),
        ]
        for (clip, words) in cases {
            let error = try await #require(throws: MediaMuxError.self) {
                try await engine.plan(Composition(clips: [.init(source), clip]), output: .file("/tmp/never-written.mp4"))
            }
            #expect(error.code == .invalidOption)
            #expect(error.context.clip?.index == 1)
            #expect(error.description.contains(words), "\(error)")
        }
        let none = try await #require(throws: MediaMuxError.self) {
            try await engine.plan(Composition(clips: []), output: .file("/tmp/never-written.mp4"))
        }
        #expect(none.description.contains("needs at least one clip"))
    }

    @Test func aSoundtrackPlaysOverTheWholeCompositionAsOverAMergesVideo() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("soundtrack.mp4")
        let source = TestMedia.fixture("h264_bframes_aac.mp4")
        let soundtrack = TestMedia.fixture("aac_7s.m4a")
        let composition = Composition(
            clips: [.init(source, from: seconds(1), to: seconds(3)), .init(source, to: seconds(2))], soundtrack: soundtrack)
        let report = try await engine.compose(composition, output: .file(output))
        #expect(report.duration == seconds(4))
        #expect(report.endReason == .videoEndsFirst)
        #expect(report.audio!.source == soundtrack)
        #expect(report.audio!.encoding == nil, "AAC into MP4 is copied, as a merge copies it")
        // The clips' own sound is said to be left out, once for the file.
        #expect(report.leftOut.map(\.reason) == ["the soundtrack replaces the video's own audio"], "\(report.leftOut)")
        let (movie, _) = try checkLayout(output, lasting: 4, frameRate: 30)
        let audio = try #require(movie.audioTracks.first)
        let shown = audio.presentedDuration(movieTimescale: movie.movieTimescale)
        #expect(abs(shown - 4) < 0.001, "the soundtrack is cut at 4 s, not \(shown) s")
    }

    @Test func theClipsOwnSoundKeptBesideASoundtrackIsASecondTrackOffUntilChosen() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("kept.mp4")
        let source = TestMedia.fixture("h264_bframes_aac.mp4")
        var composition = Composition(
            clips: [.init(source, to: seconds(1)), .init(source, from: seconds(2))], soundtrack: TestMedia.fixture("aac_7s.m4a"))
        composition.options.originalAudio = .kept
        let report = try await engine.compose(composition, output: .file(output))
        let kept = try #require(report.originalAudio)
        #expect(kept.encoding != nil, "two clips' sound, joined into one track")
        #expect(report.leftOut.isEmpty, "\(report.leftOut)")
        let (movie, _) = try checkLayout(output, lasting: 3, frameRate: 30)
        #expect(movie.audioTracks.count == 2)
        let second = try #require(movie.audioTracks.last)
        #expect(!second.isEnabled)
        let sound = try AudioSamples.played(second, movieTimescale: movie.movieTimescale)
        #expect(abs(Double(sound.delay + sound.count) / Double(sound.sampleRate) - 3) < 0.001)

    }

    @Test func theClipsOwnSoundMixedUnderASoundtrackPlaysWhereEachClipDoes() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("mixed.mp4")
        // The clips' sound is 880 Hz for the source's first 3 s; the soundtrack 440 Hz throughout.
        let source = TestMedia.fixture("h264_bframes_aac.mp4")
        var composition = Composition(
            clips: [.init(source, to: seconds(1)), .init(source, from: seconds(2))], soundtrack: TestMedia.fixture("aac_7s.m4a"))
        composition.options.originalAudio = .mixed(level: 0)
        let report = try await engine.compose(composition, output: .file(output))
        #expect(report.audio!.encoding?.reason.contains("mixed with the video's own audio") == true, "\(String(describing: report.audio!.encoding))")
        #expect(report.originalAudio == nil)
        let (movie, _) = try checkLayout(output, lasting: 3, frameRate: 30)
        let audio = try #require(movie.audioTracks.first)
        let sound = try AudioSamples.played(audio, movieTimescale: movie.movieTimescale)
        let rate = sound.sampleRate
        let left = sound.channels[0]
        func tones(from start: Double, to end: Double) -> (a440: Double, a880: Double) {
            let samples = left[(Int(start * Double(rate)) + sound.delay)..<(Int(end * Double(rate)) + sound.delay)]
            return (AudioSamples.amplitude(at: 440, in: samples, sampleRate: rate), AudioSamples.amplitude(at: 880, in: samples, sampleRate: rate))
        }
        // The first clip's sound (0-1 s), the second's from 2 s of its file (1-2 s here), none from its 3 s on (2-3 s).
        for (start, end, clipSounds) in [(0.1, 0.9, true), (1.1, 1.9, true), (2.1, 2.9, false)] {
            let (a440, a880) = tones(from: start, to: end)
            #expect(a440 > 0.05, "the soundtrack at \(start)-\(end) s: \(a440)")
            if clipSounds {
                #expect(a880 > 0.05, "the clip's sound at \(start)-\(end) s: \(a880)")
            } else {
                #expect(a880 < 0.01, "no clip sound at \(start)-\(end) s: \(a880)")
            }
        }
    }

    @Test func aStreamedCompositionIsTheFragmentedFile() async throws {
        let folder = try TemporaryFolder()
        let source = TestMedia.fixture("h264_bframes_aac.mp4")
        var composition = Composition(clips: [.init(source, from: seconds(2)), .init(source, to: seconds(1))], soundtrack: TestMedia.fixture("aac_7s.m4a"))
        let body = try await engine.body(composition, name: "response")
        var streamed: [UInt8] = []
        for try await chunk in body { streamed += chunk.readableBytesView }
        composition.options.layout = .fragmented
        let file = folder.path("fragmented.mp4")
        _ = try await engine.compose(composition, output: .file(file))
        #expect(streamed == Array(try Data(contentsOf: URL(fileURLWithPath: file))))
        #expect(body.plan.clips.count == 2)
    }
}

/// Compositions as players play them: the duration Chromium and GStreamer
/// report, to the millisecond, and the picture Chromium shows inside a later
/// clip, which must be the one its source shows at the same moment of the clip.
@Suite(.tags(.browser, .gstreamer), .skippedByTag, .offTheCooperativePool)
struct CompositionPlaybackTests {
    /// A fragmented composition (a smart cut of B-frame clips, their sound
    /// joined into one encoded track) ends where its file does for
    /// GStreamer, ffprobe and Chromium from disk, as a fragmented merge does.
    @Test func playersAgreeOnWhereAFragmentedCompositionEnds() async throws {
        let folder = try TemporaryFolder()
        var composition = Composition(clips: [
            .init(TestMedia.fixture("h264_gop2s_aac.mp4"), from: MediaTime(value: 3, timescale: 5), to: MediaTime(value: 22, timescale: 5)),
            .init(TestMedia.fixture("h264_bframes_aac.mp4"), from: MediaTime(1), to: MediaTime(value: 5, timescale: 2)),
        ])
        composition.options.layout = .fragmented
        let report = try await CompositionTests.engine.compose(composition, output: .file(folder.path("composed.mp4")))
        #expect(report.duration == MediaTime(value: 53, timescale: 10))
        try FragmentedOutputTests.expectPlayersAgree(on: "composed.mp4", in: folder, end: 5.3)
    }

    @Test(Samples.required) func playersAgreeOnTheLengthAndThePictures() async throws {
        let folder = try TemporaryFolder()
        let names = ["join_preroll_h264_640x360_aac_5s.mp4", "join_midroll_h264_640x360_aac_5s.mp4", "join_postroll_h264_640x360_aac_5s.mp4"]
        for name in names {
            try FileManager.default.copyItem(atPath: Samples.path(name), toPath: folder.path(name))
        }
        let bframes = folder.path("bframes.mp4")
        try FileManager.default.copyItem(atPath: TestMedia.fixture("h264_bframes_aac.mp4"), toPath: bframes)
        let engine = CompositionTests.engine
        _ = try await engine.compose(Composition(clips: names.map { Composition.Clip(folder.path($0)) }), output: .file(folder.path("three.mp4")))
        _ = try await engine.compose(
            Composition(clips: [.init(bframes, from: MediaTime(value: 1, timescale: 2), to: MediaTime(value: 5, timescale: 2)), .init(bframes, from: MediaTime(1), to: MediaTime(3))], cut: .keyframe),
            output: .file(folder.path("cut.mp4")))

        // 7.52 s of the three is 2.52 s of the second clip; 4.02 s of the cut is 2.02 s of the source (its second clip from 1 s).
        let (durations, pictures) = try BrowserTimelineTests.play(
            [("three.mp4", [7.52]), (names[0], [2.52]), (names[1], [2.52]), ("cut.mp4", [4.02]), ("bframes.mp4", [2.02, 3.02])], in: folder)
        #expect(abs((durations["three.mp4"] ?? 0) - 15) < 0.001, "\(durations)")
        #expect(abs((durations["cut.mp4"] ?? 0) - 5) < 0.001, "\(durations)")
        let joined = try #require(pictures["three.mp4"]?["7.52"])
        #expect(joined == pictures[names[1]]?["2.52"], "\(pictures)")
        // And not the picture the first clip shows at that moment of its own: the hashes tell pictures apart.
        #expect(joined != pictures[names[0]]?["2.52"], "\(pictures)")
        let cut = try #require(pictures["cut.mp4"]?["4.02"])
        #expect(cut == pictures["bframes.mp4"]?["2.02"], "\(pictures)")
        #expect(cut != pictures["bframes.mp4"]?["3.02"], "\(pictures)")

        for (name, seconds) in [("three.mp4", 15.0), ("cut.mp4", 5.0)] {
            let path = folder.path(name)
            let discovered = try GStreamer.discoveredDuration(of: path)
            #expect(abs(discovered - seconds) < 0.001, "GStreamer: \(name) lasts \(discovered) s")
            #expect(try GStreamer.decodedCaps(of: path).contains("video/x-raw"))
        }
    }

    /// A smart cut of 10-bit HEVC with open GOPs (x265's sets and slices
    /// renamed) as GStreamer plays it: its length, and every picture it
    /// shows that of the tests' own decoder (Chromium here has no HEVC).
    /// Decoded with one thread: gst-libav 1.26 on FFmpeg 7.1 (Debian 13),
    /// frame-threaded, loses pictures of any copy of this x265 clip that
    /// starts at its CRA, ffmpeg's own `-ss 2 -c copy` included ("Could not
    /// find ref with POC ...", then "Couldn't get codec frame"; 62 to 100 of
    /// 100 pictures from one run to the next), and decodes them all with
    /// one thread (see the Compositions article). GStreamer 1.22 on FFmpeg
    /// 5.1 decodes it right either way.
    @Test
    func gstreamerShowsAnHEVCSmartCutAsTheTestsDecoder() async throws {
        let folder = try TemporaryFolder()
        let source = TestMedia.fixture("hevc_hlg10_opengop_aac.mp4")
        func at(_ frame: Int64) -> MediaTime { MediaTime(value: frame, timescale: 25) }
        // Frames 15-109 (35 encoded, 60 copied from the CRA at 2 s), then 51-149 (49 encoded, 50 copied).
        let output = folder.path("hevc.mp4")
        _ = try await CompositionTests.engine.compose(
            Composition(clips: [.init(source, from: at(15), to: at(110)), .init(source, from: at(51))]), output: .file(output))
        let discovered = try GStreamer.discoveredDuration(of: output)
        #expect(abs(discovered - 7.76) < 0.001, "GStreamer: it lasts \(discovered) s")
        #expect(try GStreamer.decodedCaps(of: output).contains("I420_10LE"))
        let lumaBytes = 192 * 108 * 2
        let shown = try GStreamer.firstPictures(
            of: output, count: 1000, size: lumaBytes * 3 / 2, rawFile: folder.path("hevc.yuv"), decoder: "avdec_h265 max-threads=1")
        let decoded = try TrackDecoder.frames(of: try #require(try MP4File(path: output).videoTracks.first), keepingLuma: true)
        #expect(shown.count == 194 && decoded.count == 194)
        for (index, (picture, frame)) in zip(shown, decoded).enumerated() {
            let luma = try #require(frame.luma).samples
            let gst = stride(from: 0, to: lumaBytes, by: 2).map { UInt16(picture[$0]) | UInt16(picture[$0 + 1]) << 8 }
            if luma != gst { Issue.record("GStreamer's picture \(index) differs") }
        }
    }

    /// A smart cut (frames at cuts inside GOPs encoded, under the copy's one
    /// sample entry) as players play it: the length in both; Chromium's
    /// picture inside a copied stretch that of the source; every picture
    /// GStreamer shows that of the tests' own decoder, all 147 of them.
    @Test func playersAgreeOnASmartCut() async throws {
        let folder = try TemporaryFolder()
        let source = folder.path("gop2s.mp4")
        try FileManager.default.copyItem(atPath: TestMedia.fixture("h264_gop2s_aac.mp4"), toPath: source)
        func at(_ frame: Int64) -> MediaTime { MediaTime(value: frame, timescale: 25) }
        // Frames 15-109 (35 encoded, 50 copied, 10 encoded), then 51-102 (49 encoded, 3 copied).
        let output = folder.path("smart.mp4")
        _ = try await CompositionTests.engine.compose(
            Composition(clips: [.init(source, from: at(15), to: at(110)), .init(source, from: at(51), to: at(103))]), output: .file(output))
        // 1.82 s of the output is 2.42 s of the source, in the first clip's copied GOP.
        let (durations, pictures) = try BrowserTimelineTests.play([("smart.mp4", [1.82]), ("gop2s.mp4", [2.42, 2.46])], in: folder)
        #expect(abs((durations["smart.mp4"] ?? 0) - 5.88) < 0.001, "\(durations)")
        let copied = try #require(pictures["smart.mp4"]?["1.82"])
        #expect(copied == pictures["gop2s.mp4"]?["2.42"], "\(pictures)")
        #expect(copied != pictures["gop2s.mp4"]?["2.46"], "\(pictures)")

        let discovered = try GStreamer.discoveredDuration(of: output)
        #expect(abs(discovered - 5.88) < 0.001, "GStreamer: it lasts \(discovered) s")
        let size = 192 * 108 * 3 / 2
        let shown = try GStreamer.firstPictures(of: output, count: 1000, size: size, rawFile: folder.path("smart.yuv"))
        let video = try #require(try MP4File(path: output).videoTracks.first)
        let decoded = try TrackDecoder.frames(of: video, keepingLuma: true)
        #expect(shown.count == 147 && decoded.count == 147)
        for (index, (picture, frame)) in zip(shown, decoded).enumerated() {
            let luma = try #require(frame.luma).samples
            if !luma.elementsEqual(picture[0..<(192 * 108)], by: { $0 == UInt16($1) }) { Issue.record("GStreamer's picture \(index) differs") }
        }
    }
}
