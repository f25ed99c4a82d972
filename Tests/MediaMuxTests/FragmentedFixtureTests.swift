import Foundation
import Testing
import TestSupport
import MediaMuxContainers
@testable import MediaMux
@testable import MediaMuxCore

/// The layouts fragmenting writers make (TestMedia/make-fixtures.sh, from
/// one source, fmp4_source.mp4, by stream copy): probed, merged in either
/// role and previewed with every sample they hold, byte for byte, ending
/// where their samples end. The tests' own MP4 reader reads the fragments
/// (Support/MP4Fragments.swift) and the defragmented source says what the
/// packets must be.
@Suite struct FragmentedFixtureTests {
    static let source = Fixtures.path("fmp4_source.mp4")
    /// Every layout that holds the whole recording.
    static let whole = [
        "fmp4_empty_moov.mp4", "fmp4_moov_and_fragments.mp4", "fmp4_fragment_per_frame.mp4", "fmp4_wrong_mehd.mp4",
        "fmp4_negative_cts.mp4",
    ]
    /// The same recording not fragmented, with no edit list: B-frames show
    /// its first picture two frames late, and its last ends two frames after
    /// what tkhd states.
    static let withoutEditList = "h264_no_edit_list.mp4"
    static let sourceVideoFrames = 60
    static let sourceAudioPackets = 119

    /// Where the top-level boxes of `type` start in a file's bytes.
    static func offsets(of type: String, in bytes: [UInt8]) -> [Int] {
        var found: [Int] = []
        var at = 0
        while at + 8 <= bytes.count {
            let size = bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
            if String(decoding: bytes[at + 4..<at + 8], as: UTF8.self) == type { found.append(at) }
            guard size >= 8 else { break }
            at += size
        }
        return found
    }

    /// The source's packets of one kind, as the tests' reader reads them.
    static func packets(_ track: MP4File.Track) throws -> [Data] {
        try (0..<track.sampleCount).map { try track.sampleData($0) }
    }

    @Test(arguments: whole)
    func theReaderFindsTheSourcesPackets(_ name: String) throws {
        let source = try MP4File(path: Self.source)
        let file = try MP4File(path: Fixtures.path(name))
        #expect(file.fragmentCount > 1)
        for (kind, original, fragmented) in [("video", source.videoTracks.first, file.videoTracks.first), ("audio", source.audioTracks.first, file.audioTracks.first)] {
            let original = try #require(original)
            let fragmented = try #require(fragmented, "\(name) has no \(kind) track")
            #expect(fragmented.issues.isEmpty, "\(fragmented.issues)")
            #expect(try Self.packets(fragmented) == Self.packets(original), "\(name): the \(kind) packets differ from the source's")
        }
        #expect(source.videoTracks.first?.sampleCount == Self.sourceVideoFrames)
        #expect(source.audioTracks.first?.sampleCount == Self.sourceAudioPackets)
    }

    @Test(arguments: whole)
    func theProbeCountsEverySampleAndEndsWhereTheyDo(_ name: String) async throws {
        let path = Fixtures.path(name)
        let info = try await MuxEngine().probe(path)
        let file = try MP4File(path: path)
        let video = try #require(info.video)
        let audio = try #require(info.audio)
        #expect(video.packetCount == Self.sourceVideoFrames && audio.packetCount == Self.sourceAudioPackets)
        for (stream, track) in [(video, file.videoTracks.first), (audio, file.audioTracks.first)] {
            let track = try #require(track)
            let span = try #require(stream.end).seconds - (try #require(stream.start).seconds)
            #expect(abs(span - track.presentedEnd) < 0.001, "\(name): probed \(span) s, the samples end at \(track.presentedEnd) s")
        }
        let longest = max(file.videoTracks[0].presentedEnd, file.audioTracks[0].presentedEnd)
        #expect(abs(try #require(info.duration).seconds - longest) < 0.001, "\(name): \(String(describing: info.duration))")
    }

    /// Without an edit list the video starts where ffprobe says (TestMedia/
    /// expected.json): at its first picture, two frames in, so a merge shows
    /// that picture at zero and lasts the 2.000 s the pictures do. FFmpeg
    /// shows the samples of the version-1 truns late by their deepest
    /// offset instead (see TestMedia/README.md); that file is left out.
    @Test(arguments: whole.filter { $0 != "fmp4_negative_cts.mp4" } + ["dash_video.mp4", "dash_video_sidx.mp4", withoutEditList])
    func theVideoStartsAtItsFirstPicture(_ name: String) async throws {
        let data = try Data(contentsOf: Fixtures.packageRoot.appendingPathComponent("TestMedia/expected.json"))
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let file = try #require((root["files"] as? [String: Any])?[name] as? [String: Any])
        let streams = try #require(file["streams"] as? [[String: Any]])
        let ffprobe = try #require(streams.first { $0["codec_type"] as? String == "video" }?["start_time"] as? Double)
        #expect(abs(ffprobe - 1024.0 / 15360) < 0.000_001, "\(name): ffprobe starts the video at \(ffprobe) s")
        let video = try #require(try await MuxEngine().probe(Fixtures.path(name)).video)
        #expect(abs(try #require(video.start).seconds - ffprobe) < 0.000_001, "\(name): probed from \(String(describing: video.start))")
        #expect(abs(try #require(video.end).seconds - (ffprobe + 2)) < 0.000_001, "\(name): probed to \(String(describing: video.end))")
    }

    /// Sample times that do not add up, in a movie without an edit list (its
    /// video's first stts run made 2^32-1 samples of 2^32-1 ticks, which
    /// overflows): the first picture cannot be found, so the track starts at
    /// zero, as FFmpeg reads it, and the rest of the movie header stands.
    @Test func sampleTimesThatOverflowLeaveTheHeaderStanding() throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.path(Self.withoutEditList))))
        let type = Array("stts".utf8)
        let at = try #require((0..<(bytes.count - 4)).first { Array(bytes[$0..<$0 + 4]) == type })
        // After the type: version and flags, the entry count, then the first entry's count and delta.
        for offset in (at + 12)..<(at + 20) { bytes[offset] = 0xFF }
        let folder = try TemporaryFolder()
        let path = folder.path("overflowing.mp4")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let facts = try MovieHeaderFacts(path: path)
        let video = try #require(facts.tracks[1])
        #expect(video.sampleEntry?.type == "avc1" && facts.tracks.count == 2)
        #expect(video.tableSpan == nil)
        #expect(MovieHeaderFacts.presentedFrom(video, span: video.tableSpan) == 0)
    }

    @Test(arguments: whole + [withoutEditList])
    func asTheVideoEveryFrameIsKept(_ name: String) async throws {
        let path = Fixtures.path(name)
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        let report = try await MuxEngine().merge(video: path, audio: Fixtures.path("aac_7s.m4a"), output: output)
        let source = try #require(try MP4File(path: path).videoTracks.first)
        let file = try MP4File(path: output)
        let copy = try #require(file.videoTracks.first)
        #expect(report.video.packets == Self.sourceVideoFrames)
        #expect(try Self.packets(copy) == Self.packets(source), "\(name): the video's packets changed")
        let scale = Int64(copy.mediaTimescale) / Int64(source.mediaTimescale)
        try #require(scale >= 1 && Int64(copy.mediaTimescale) % Int64(source.mediaTimescale) == 0)
        let copyStart = copy.editList?.first { !$0.isEmpty }?.mediaTime ?? 0
        for index in 0..<min(source.sampleCount, copy.sampleCount) {
            #expect(copy.isSyncSample(index) == source.isSyncSample(index), "\(name): sync flag of frame \(index + 1)")
            #expect(copy.compositionTimes[index] - copyStart == (source.compositionTimes[index] - source.presentedStart) * scale,
                    "\(name): frame \(index + 1) is presented at another moment")
        }
        #expect(report.endReason == .videoEndsFirst)
        let seconds = Double(file.movieDuration) / Double(file.movieTimescale)
        #expect(abs(seconds - source.presentedEnd) < 0.001, "\(name): the output lasts \(seconds) s, the video's samples \(source.presentedEnd) s")
    }

    @Test(arguments: whole)
    func asTheSoundtrackEveryPacketIsKept(_ name: String) async throws {
        try await Self.expectEveryAudioPacketKept(Fixtures.path(name), packets: Self.sourceAudioPackets)
    }

    /// Merges `path` as the soundtrack of a 26-second video: every packet
    /// is copied byte for byte and the output ends where the audio's
    /// samples do. Returns the output's audio track.
    @discardableResult
    static func expectEveryAudioPacketKept(_ path: String, packets: Int) async throws -> MP4File.Track {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        let report = try await MuxEngine().merge(video: Fixtures.path("h264_26s_2fps.mp4"), audio: path, output: output)
        let source = try #require(try MP4File(path: path).audioTracks.first)
        let file = try MP4File(path: output)
        let copy = try #require(file.audioTracks.first)
        #expect(report.audio!.packets == packets && source.sampleCount == packets)
        #expect(try Self.packets(copy) == Self.packets(source), "\(path): the audio's packets changed")
        #expect(report.endReason == .audioEndsFirst)
        let seconds = Double(file.movieDuration) / Double(file.movieTimescale)
        #expect(abs(seconds - source.presentedEnd) < 0.001, "\(path): the output lasts \(seconds) s, the audio's samples \(source.presentedEnd) s")
        return copy
    }

    @Test(arguments: whole + [withoutEditList])
    func everyFrameIsPreviewed(_ name: String) async throws {
        var times: [Double] = []
        for try await frame in MuxEngine().previews.frames(of: Fixtures.path(name), options: FrameOptions(selection: .all(), size: 64)) {
            times.append(frame.time.seconds)
        }
        #expect(times.count == Self.sourceVideoFrames, "\(name): \(times.count) frames")
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
        let source = try #require(try MP4File(path: Fixtures.path(name)).videoTracks.first)
        // On the video's own timeline, whose zero is its first picture.
        let last = Double(try #require(source.compositionTimes.max()) - source.presentedStart) / Double(source.mediaTimescale)
        #expect(abs((times.last ?? 0) - last) < 0.001, "\(name): the last frame at \(times.last ?? 0) s, its sample at \(last) s")
    }

    /// The last fragment's media data cut in half: the samples that are
    /// whole are kept, and the report says how many were lost.
    @Test func aCutLastFragmentKeepsTheWholeSamplesAndWarns() async throws {
        let cut = Fixtures.path("fmp4_cut_last_fragment.mp4")
        let cutBytes = try Data(contentsOf: URL(fileURLWithPath: cut))
        // The same file uncut (but for the mfra that ends it) is fmp4_empty_moov.mp4.
        let uncutPath = Fixtures.path("fmp4_empty_moov.mp4")
        let uncut = try MP4File(path: uncutPath)
        try #require(try Data(contentsOf: URL(fileURLWithPath: uncutPath)).prefix(cutBytes.count) == cutBytes)
        func whole(_ track: MP4File.Track) -> Int {
            (0..<track.sampleCount).filter { track.sampleOffsets[$0] + Int64(track.sampleSizes[$0]) <= Int64(cutBytes.count) }.count
        }
        let video = try #require(uncut.videoTracks.first)
        let audio = try #require(uncut.audioTracks.first)
        let (wholeVideo, wholeAudio) = (whole(video), whole(audio))
        try #require(wholeVideo < video.sampleCount || wholeAudio < audio.sampleCount)

        let info = try await MuxEngine().probe(cut)
        #expect(info.video?.packetCount == wholeVideo && info.audio?.packetCount == wholeAudio)

        let folder = try TemporaryFolder()
        // As the video: its frames that are whole (the cut falls in the audio's data here, after them).
        let asVideo = try await MuxEngine().merge(video: cut, audio: Fixtures.path("aac_7s.m4a"), output: folder.path("video.mp4"))
        #expect(asVideo.video.packets == wholeVideo)
        let videoCopy = try #require(try MP4File(path: folder.path("video.mp4")).videoTracks.first)
        #expect(try Self.packets(videoCopy) == Array(Self.packets(video).prefix(wholeVideo)))
        // As the soundtrack: the whole packets, and a warning that counts the rest.
        let asAudio = try await MuxEngine().merge(video: Fixtures.path("h264_26s_2fps.mp4"), audio: cut, output: folder.path("audio.mp4"))
        #expect(asAudio.audio!.packets == wholeAudio)
        let audioCopy = try #require(try MP4File(path: folder.path("audio.mp4")).audioTracks.first)
        #expect(try Self.packets(audioCopy) == Array(Self.packets(audio).prefix(wholeAudio)))
        let lost = audio.sampleCount - wholeAudio
        try #require(lost > 0)
        #expect(asAudio.warnings.contains { $0.hasPrefix(cut) && $0.contains("cut short") && $0.contains("\(lost) audio samples") },
                "\(asAudio.warnings)")
    }

    /// A fragment header that does not parse, mid-file: fmp4_empty_moov.mp4
    /// with its third fragment's first trun declaring 2^31-1 samples. The
    /// samples of the fragments before it are kept, as video and as
    /// soundtrack, with a warning that says where the file was left; the
    /// probe says so too.
    @Test func aDamagedFragmentHeaderKeepsTheFragmentsBeforeIt() async throws {
        let sourcePath = Fixtures.path("fmp4_empty_moov.mp4")
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: sourcePath)))
        let moofs = Self.offsets(of: "moof", in: bytes)
        try #require(moofs.count > 3)
        let damagedAt = moofs[2]
        let trun = try #require((damagedAt..<moofs[3]).first { String(decoding: bytes[$0..<$0 + 4], as: UTF8.self) == "trun" })
        bytes.replaceSubrange(trun + 8..<trun + 12, with: [0x7F, 0xFF, 0xFF, 0xFF])
        let folder = try TemporaryFolder()
        let path = folder.path("damaged.mp4")
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        // What lies in the first two fragments, by the tests' own reader of the intact file.
        let source = try MP4File(path: sourcePath)
        func before(_ track: MP4File.Track) -> Int { track.sampleOffsets.filter { $0 < Int64(damagedAt) }.count }
        let video = try #require(source.videoTracks.first), audio = try #require(source.audioTracks.first)
        let (keptVideo, keptAudio) = (before(video), before(audio))
        try #require(keptVideo > 0 && keptVideo < video.sampleCount && keptAudio > 0)

        let info = try await MuxEngine().probe(path)
        #expect(info.video?.packetCount == keptVideo && info.audio?.packetCount == keptAudio)
        let damage = "the fragment header at byte \(damagedAt) is damaged"
        #expect(info.video?.damagedFragment?.hasPrefix(damage) == true, "\(String(describing: info.video?.damagedFragment))")

        let asVideo = try await MuxEngine().merge(video: path, audio: Fixtures.path("aac_7s.m4a"), output: folder.path("video.mp4"))
        let videoCopy = try #require(try MP4File(path: folder.path("video.mp4")).videoTracks.first)
        #expect(asVideo.video.packets == keptVideo)
        #expect(try Self.packets(videoCopy) == Array(Self.packets(video).prefix(keptVideo)))
        #expect(asVideo.warnings.contains { $0.hasPrefix("\(path): \(damage)") && $0.contains("the rest of the file is left out") },
                "\(asVideo.warnings)")
        let asAudio = try await MuxEngine().merge(video: Fixtures.path("h264_26s_2fps.mp4"), audio: path, output: folder.path("audio.mp4"))
        let audioCopy = try #require(try MP4File(path: folder.path("audio.mp4")).audioTracks.first)
        #expect(asAudio.audio!.packets == keptAudio)
        #expect(try Self.packets(audioCopy) == Array(Self.packets(audio).prefix(keptAudio)))
    }

    /// A fragment that declares two million samples of defaults in a few
    /// bytes (a fuzzing regression) is damage, not a list of samples held
    /// in memory (a 1.4 KB file declaring 16 million made the probe peak at
    /// 1.48 GB, about 0.9 GB of it that list): the
    /// fragment before it is kept, and the probe says where the file is left.
    @Test func aFragmentDeclaringMillionsOfSamplesIsDamage() async throws {
        let path = Fixtures.path("fuzz/regressions/fmp4_two_million_samples_in_a_few_bytes.mp4")
        let moofs = Self.offsets(of: "moof", in: try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
        try #require(moofs.count == 2)
        // The first fragment is fmp4_empty_moov.mp4's, byte for byte.
        let source = try #require(try MP4File(path: Fixtures.path("fmp4_empty_moov.mp4")).videoTracks.first)
        let kept = source.sampleOffsets.filter { $0 < Int64(moofs[1]) }.count
        let info = try await MuxEngine().probe(path)
        #expect(info.video?.packetCount == kept && kept > 0)
        #expect(info.video?.damagedFragment == "the fragment header at byte \(moofs[1]) is damaged (a fragment declares more than 1048576 samples)")
        let folder = try TemporaryFolder()
        let report = try await MuxEngine().merge(video: path, audio: Fixtures.path("aac_7s.m4a"), output: folder.path("out.mp4"))
        #expect(report.video.packets == kept)
    }

    /// DASH representations: a video-only and an audio-only fMP4, with and
    /// without sidx. The pair ends where the video (the shorter) ends; the
    /// audio's edit list drops its 1024 priming samples.
    @Test(arguments: [("dash_video.mp4", "dash_audio.mp4"), ("dash_video_sidx.mp4", "dash_audio_sidx.mp4")])
    func aDASHPairMergesExactly(_ videoName: String, _ audioName: String) async throws {
        let (videoPath, audioPath) = (Fixtures.path(videoName), Fixtures.path(audioName))
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        let report = try await MuxEngine().merge(video: videoPath, audio: audioPath, output: output)
        let video = try #require(try MP4File(path: videoPath).videoTracks.first)
        let audio = try #require(try MP4File(path: audioPath).audioTracks.first)
        #expect(audio.editList?.first { !$0.isEmpty }?.mediaTime == 1024)
        let file = try MP4File(path: output)
        #expect(report.endReason == .videoEndsFirst)
        #expect(try Self.packets(try #require(file.videoTracks.first)) == Self.packets(video))
        let seconds = Double(file.movieDuration) / Double(file.movieTimescale)
        #expect(abs(seconds - video.presentedEnd) < 0.001, "the output lasts \(seconds) s, the video \(video.presentedEnd) s")
        // The audio keeps its priming before zero, as its edit list says.
        let copy = try #require(file.audioTracks.first)
        #expect(copy.editList?.first { !$0.isEmpty }?.mediaTime == 1024, "\(String(describing: copy.editList))")

        // The audio alone, shorter than a long video: it ends where its samples do, priming dropped.
        let audioOnly = folder.path("audio.mp4")
        let second = try await MuxEngine().merge(video: Fixtures.path("h264_26s_2fps.mp4"), audio: audioPath, output: audioOnly)
        #expect(second.endReason == .audioEndsFirst && second.audio!.packets == Self.sourceAudioPackets)
        // The last sample lasts 192 of its 1024: the sine's 2.5 s end there.
        let expected = audio.presentedEnd
        #expect(abs(expected - 2.5) < 0.000_001)
        let written = try MP4File(path: audioOnly)
        let lasts = Double(written.movieDuration) / Double(written.movieTimescale)
        #expect(abs(lasts - expected) < 0.001, "the output lasts \(lasts) s, the audio's samples after its priming \(expected) s")
    }
}
