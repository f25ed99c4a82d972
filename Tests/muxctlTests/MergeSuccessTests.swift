import Foundation
import Testing
import TestSupport

/// `muxctl merge` on good inputs: exit 0, one output, the right summary.
@Suite("merge succeeds")
struct MergeSuccessTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var video: String
        var audio: String
        var extra: [String] = []
        var outputName = "merged.mp4"
        var duration: Double
        var videoDuration: Double
        var trim: String
        /// Of AUDIO's stream (so we can tell it was not the video's own audio).
        var sampleRate: Int
        var channels: Int
        var videoCodecTag: String? = nil
        var faststart = true
        var testDescription: String { "\(video) + \(audio) \(extra.joined(separator: " ")) → \(outputName)" }
    }

    static let cases: [Case] = [
        Case(video: "h264_bframes_aac.mp4", audio: "aac_2s.m4a", duration: 2.0, videoDuration: 2.0,
             trim: "audio ends first", sampleRate: 48000, channels: 1),
        Case(video: "h264_bframes_aac.mp4", audio: "aac_7s.m4a", duration: 4.0, videoDuration: 4.0,
             trim: "video ends first", sampleRate: 44100, channels: 2),
        Case(video: "h264_bframes_aac.mp4", audio: "aac_7s.m4a", extra: ["--no-faststart"], duration: 4.0,
             videoDuration: 4.0, trim: "video ends first", sampleRate: 44100, channels: 2, faststart: false),
        Case(video: "h264_bframes_aac.mp4", audio: "aac_2s.m4a", outputName: "merged.mov", duration: 2.0,
             videoDuration: 2.0, trim: "audio ends first", sampleRate: 48000, channels: 1),
        Case(video: "h264_bframes_aac.mp4", audio: "aac_2s.m4a", outputName: "merged.m4v", duration: 2.0,
             videoDuration: 2.0, trim: "audio ends first", sampleRate: 48000, channels: 1),
        Case(video: "hevc_hev1.mp4", audio: "aac_7s.m4a", duration: 2.0, videoDuration: 2.0,
             trim: "video ends first", sampleRate: 44100, channels: 2, videoCodecTag: "hvc1"),
        Case(video: "h264_rot90.mp4", audio: "aac_7s.m4a", duration: 3.0, videoDuration: 3.0,
             trim: "video ends first", sampleRate: 44100, channels: 2),
        Case(video: "h264_aac.mkv", audio: "aac_2s.m4a", duration: 2.0, videoDuration: 2.0,
             trim: "audio ends first", sampleRate: 48000, channels: 1),
    ]

    @Test("--json prints one JSON object with the report", arguments: cases)
    func jsonReport(_ c: Case) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output(c.outputName)
        let result = try await MuxCtl.run(
            ["merge", MuxCtl.fixture(c.video), MuxCtl.fixture(c.audio), output, "--json"] + c.extra)

        #expect(result.exited && result.status == 0, "\(result)")
        #expect(!result.looksLikeCrash, "\(result)")
        #expect(result.stderr.isEmpty, "stderr should be empty with --json: \(result)")
        #expect(scratch.outputFolder == [c.outputName], "stray files: \(scratch.outputFolder)")

        let text = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(text.split(separator: "\n").count == 1, "expected one line of JSON: \(result)")
        let report = try #require(jsonObject(text), "stdout is not one JSON object: \(result)")

        for key in ["output", "duration", "video", "audio", "rotation", "trim", "elapsedSeconds"] {
            #expect(report[key] != nil, "missing key \(key) in \(report)")
        }
        #expect(report["output"] as? String == output)
        let duration = try #require(number(report["duration"]))
        #expect(abs(duration - c.duration) < 0.001, "duration \(duration), expected \(c.duration)")
        #expect(report["trim"] as? String == c.trim)
        #expect(number(report["rotation"]) != nil)
        #expect((number(report["elapsedSeconds"]) ?? -1) >= 0)
        #expect(report["faststart"] as? Bool == c.faststart)

        let video = try #require(report["video"] as? [String: Any], "video is not an object")
        let audio = try #require(report["audio"] as? [String: Any], "audio is not an object")
        for (name, track) in [("video", video), ("audio", audio)] {
            #expect(track["codec"] is String, "\(name).codec")
            #expect(number(track["duration"]) != nil, "\(name).duration")
            #expect((number(track["packets"]) ?? 0) > 0, "\(name).packets")
        }
        #expect(abs((number(video["duration"]) ?? -1) - c.videoDuration) < 0.001, "video \(video)")
        #expect(abs((number(audio["duration"]) ?? -1) - c.duration) < 0.001, "audio \(audio)")
        #expect(video["source"] as? String == MuxCtl.fixture(c.video))
        #expect(audio["source"] as? String == MuxCtl.fixture(c.audio))
        if let tag = c.videoCodecTag { #expect(video["codecTag"] as? String == tag) }

        // What the output really holds, read back with `muxctl probe`.
        let probe = try #require(try await probeJSON(output))
        #expect(abs((number(probe["containerDuration"]) ?? -1) - c.duration) < 0.001, "probe: \(probe)")
        let streams = probe["streams"] as? [[String: Any]] ?? []
        #expect(streams.map { $0["kind"] as? String } == ["video", "audio"], "exactly one video and one audio: \(streams)")
        if let outAudio = streams.last {
            #expect(number(outAudio["sampleRate"]).map(Int.init) == c.sampleRate, "audio must come from AUDIO: \(outAudio)")
            #expect(number(outAudio["channels"]).map(Int.init) == c.channels, "audio must come from AUDIO: \(outAudio)")
        }
    }

    @Test("plain summary names the output and leaves no stray files")
    func textSummary() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("out.mp4")
        let result = try await MuxCtl.run(
            ["merge", MuxCtl.fixture("h264_bframes_aac.mp4"), MuxCtl.fixture("aac_2s.m4a"), output])
        #expect(result.exited && result.status == 0, "\(result)")
        #expect(fileExists(output))
        #expect(scratch.outputFolder == ["out.mp4"], "stray files: \(scratch.outputFolder)")
        #expect(Scratch.partials(in: scratch.outputs.path).isEmpty)
        #expect(result.stdout.contains(output), "summary should name \(output): \(result)")
        #expect(result.stdout.hasPrefix("wrote \(output): 2.000 s"), "\(result)")
        #expect(result.stderr.isEmpty, "no progress bar when stderr is not a terminal: \(result)")
        #expect(!result.looksLikeCrash)
    }

    @Test("a soundtrack MP4 cannot carry is encoded AAC, and the summary and --json say why")
    func transcodedSoundtrack() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("out.mp4")
        let video = MuxCtl.fixture("h264_26s_2fps.mp4")
        let text = try await MuxCtl.run(["merge", video, MuxCtl.fixture("flac_3s.flac"), output])
        #expect(text.exited && text.status == 0, "\(text)")
        #expect(text.stdout.hasPrefix("wrote \(output): 3.000 s"), "\(text)")
        #expect(text.stdout.contains("audio aac (mp4a): "), "\(text)")
        #expect(text.stdout.contains("transcoded from \(MuxCtl.fixture("flac_3s.flac")): flac -> aac 192 kb/s (MP4 cannot carry FLAC)"), "\(text)")

        let json = try await MuxCtl.run(["merge", video, MuxCtl.fixture("vorbis_2s.ogg"), output, "--force", "--json", "--audio-bitrate", "96k"])
        #expect(json.exited && json.status == 0, "\(json)")
        let report = try #require(jsonObject(json.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let audio = try #require(report["audio"] as? [String: Any])
        let transcoded = try #require(audio["transcoded"] as? [String: Any], "\(audio)")
        #expect(transcoded["from"] as? String == "vorbis" && transcoded["to"] as? String == "aac")
        #expect(number(transcoded["bitRate"]) == 96_000)
        #expect(transcoded["reason"] as? String == "players do not read Vorbis in MP4")
        #expect(abs((number(report["duration"]) ?? 0) - 2.0) < 0.001)
        // A copied soundtrack has no "transcoded".
        let copied = try await MuxCtl.run(["merge", video, MuxCtl.fixture("aac_2s.m4a"), output, "--force", "--json"])
        let copiedReport = try #require(jsonObject(copied.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect((copiedReport["audio"] as? [String: Any])?["transcoded"] == nil)
    }

    /// `--end`, `--loop-audio` and `--audio-offset` (negative, as typed), in the summary and in --json.
    @Test func endPolicyLoopAndOffset() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("out.mp4")
        let video = MuxCtl.fixture("h264_bframes_aac.mp4")
        let looped = try await MuxCtl.run(["merge", video, MuxCtl.fixture("aac_chirp_1.5s.m4a"), output, "--end", "video", "--loop-audio"])
        #expect(looped.exited && looped.status == 0, "\(looped)")
        #expect(looped.stdout.hasPrefix("wrote \(output): 4.000 s"), "\(looped)")
        #expect(looped.stdout.contains("4.000 s, played 3 times, transcoded from "), "\(looped)")
        #expect(looped.stdout.contains("(looped, and AAC cannot repeat by copy)"), "\(looped)")
        #expect(looped.stdout.contains("end: the whole video; the audio repeats to its end"), "\(looped)")

        let held = try await MuxCtl.run(["merge", video, MuxCtl.fixture("aac_7s.m4a"), output, "--force", "--end", "audio", "--json"])
        #expect(held.exited && held.status == 0, "\(held)")
        let report = try #require(jsonObject(held.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(abs((number(report["duration"]) ?? 0) - 7.3) < 0.001)
        #expect(report["trim"] as? String == "the whole audio; the last video frame stays until it ends")
        let videoTrack = try #require(report["video"] as? [String: Any])
        #expect(abs((number(videoTrack["heldLastFrame"]) ?? 0) - 3.3) < 0.001, "\(videoTrack)")

        let earlier = try await MuxCtl.run(["merge", video, MuxCtl.fixture("aac_7s.m4a"), output, "--force", "--audio-offset", "-4.5"])
        #expect(earlier.exited && earlier.status == 0, "\(earlier)")
        #expect(earlier.stdout.hasPrefix("wrote \(output): 2.800 s"), "\(earlier)")
        #expect(earlier.stdout.contains("copied from"), "\(earlier)")
        let later = try await MuxCtl.run(["merge", video, MuxCtl.fixture("aac_2s.m4a"), output, "--force", "--audio-offset=1.5", "--end", "video"])
        #expect(later.stdout.contains("2.000 s, starts at 1.500 s, copied from"), "\(later)")
        #expect(later.stdout.contains("end: the whole video; the audio stops early"), "\(later)")
    }

    @Test func keepOriginalAudio() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("out.mp4")
        let video = MuxCtl.fixture("h264_bframes_aac.mp4")
        let text = try await MuxCtl.run(["merge", video, MuxCtl.fixture("aac_7s.m4a"), output, "--keep-original-audio"])
        #expect(text.exited && text.status == 0, "\(text)")
        #expect(text.stdout.contains("  original audio aac (mp4a): "), "\(text)")
        #expect(text.stdout.contains("copied from \(video); a second track, off until chosen"), "\(text)")
        #expect(!text.stdout.contains("the soundtrack replaces the video's own audio"), "\(text)")
        let json = try await MuxCtl.run(["merge", video, MuxCtl.fixture("aac_7s.m4a"), output, "--force", "--keep-original-audio", "--json"])
        let report = try #require(jsonObject(json.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let original = try #require(report["originalAudio"] as? [String: Any], "\(json)")
        #expect(original["source"] as? String == video && abs((number(original["duration"]) ?? 0) - 3) < 0.001)

        let mixed = try await MuxCtl.run(["merge", video, MuxCtl.fixture("aac_7s.m4a"), output, "--force", "--mix-original", "-12"])
        #expect(mixed.exited && mixed.status == 0, "\(mixed)")
        #expect(mixed.stdout.contains("aac -> aac 192 kb/s (mixed with the video's own audio at -12.0 dB)"), "\(mixed)")
        #expect(!mixed.stdout.contains("original audio"), "\(mixed)")
    }

    /// `--volume`, `--fade-in`, `--fade-out` and `--loudness` (negative values as typed).
    @Test func levelEffects() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("out.mp4")
        let video = MuxCtl.fixture("h264_26s_2fps.mp4")
        let faded = try await MuxCtl.run(["merge", video, MuxCtl.fixture("aac_7s.m4a"), output, "--volume", "-6", "--fade-in", "1", "--fade-out", "2"])
        #expect(faded.exited && faded.status == 0, "\(faded)")
        #expect(faded.stdout.contains("aac -> aac 192 kb/s (set to -6.0 dB, faded in over 1.000 s, faded out over 2.000 s)"), "\(faded)")

        let loud = try await MuxCtl.run(["merge", video, MuxCtl.fixture("aac_7s.m4a"), output, "--force", "--loudness", "-16", "--json"])
        #expect(loud.exited && loud.status == 0, "\(loud)")
        let report = try #require(jsonObject(loud.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let audio = try #require(report["audio"] as? [String: Any])
        let loudness = try #require(audio["loudness"] as? [String: Any], "\(audio)")
        let measured = try #require(number(loudness["measuredLUFS"]))
        #expect(abs((number(loudness["gainDB"]) ?? 0) - (-16 - measured)) < 0.001)
        #expect(loudness["limited"] as? Bool == false)
        #expect((audio["transcoded"] as? [String: Any])?["reason"] as? String == "brought to -16.0 LUFS")
    }

    @Test("relative paths work from the current folder", arguments: [["-q"], ["--json"]])
    func relativePaths(_ flags: [String]) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try FileManager.default.copyItem(atPath: MuxCtl.fixture("h264_rot90.mp4"), toPath: scratch.input("v.mp4"))
        try FileManager.default.copyItem(atPath: MuxCtl.fixture("aac_2s.m4a"), toPath: scratch.input("a.m4a"))
        let result = try await MuxCtl.run(["merge", "in/v.mp4", "in/a.m4a", "out/o.mp4"] + flags, in: scratch.root)
        #expect(result.exited && result.status == 0, "\(result)")
        #expect(scratch.outputFolder == ["o.mp4"])
    }

    @Test("--quiet and -q print nothing", arguments: ["--quiet", "-q"])
    func quiet(_ flag: String) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("q.mp4")
        let result = try await MuxCtl.run(
            ["merge", MuxCtl.fixture("h264_bframes_aac.mp4"), MuxCtl.fixture("aac_7s.m4a"), output, flag])
        #expect(result.exited && result.status == 0, "\(result)")
        #expect(result.stdout.isEmpty, "stdout: \(result)")
        #expect(result.stderr.isEmpty, "stderr: \(result)")
        #expect(scratch.outputFolder == ["q.mp4"])
    }

    /// Files whose names look like FFmpeg protocol URLs are still just files.
    @Test("paths that look like FFmpeg URLs are opened as plain files",
          arguments: ["concat:x|y.m4a", "file:a.m4a", "subfile:,,start,0,end,100,,:a.m4a"])
    func protocolLookingFileNames(_ name: String) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        try FileManager.default.copyItem(atPath: MuxCtl.fixture("aac_2s.m4a"), toPath: scratch.input(name))
        let outputName = name.replacingOccurrences(of: ".m4a", with: ".mp4")
        let result = try await MuxCtl.run(
            ["merge", MuxCtl.fixture("h264_bframes_aac.mp4"), "in/" + name, "out/" + outputName, "--json"], in: scratch.root)
        #expect(result.exited && result.status == 0, "\(result)")
        #expect(scratch.outputFolder == [outputName])
        let report = jsonObject(result.stdout)
        #expect(abs((number(report?["duration"]) ?? -1) - 2.0) < 0.001, "\(result)")
    }
}

/// The rotation the summary reports must be the rotation the output carries.
@Suite("merge rotation")
struct MergeRotationTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var video: String
        var extra: [String]
        var reported: Int
        var testDescription: String { "\(video) \(extra.joined(separator: " ")) → \(reported)°" }
    }

    static let cases: [Case] = [
        // By default each is kept as its source shows it.
        Case(video: "h264_rot90.mp4", extra: [], reported: 90),
        Case(video: "h264_rot90.mp4", extra: ["--orientation", "keep"], reported: 90),
        Case(video: "h264_rot270.mp4", extra: ["--orientation", "keep"], reported: 270),
        Case(video: "h264_rot180.mp4", extra: ["--orientation", "keep"], reported: 180),
        Case(video: "h264_rot90.mp4", extra: ["--orientation", "portrait"], reported: 90),
        Case(video: "h264_coded_portrait.mp4", extra: [], reported: 0),
        // Re-framed into a landscape frame: encoded upright, no rotation.
        Case(video: "h264_rot90.mp4", extra: ["--orientation", "landscape"], reported: 0),
        Case(video: "h264_rot180.mp4", extra: ["--orientation", "landscape"], reported: 180),
        Case(video: "h264_bframes_aac.mp4", extra: ["--rotate", "90"], reported: 90),
        Case(video: "h264_bframes_aac.mp4", extra: ["--rotate", "180"], reported: 180),
        Case(video: "h264_bframes_aac.mp4", extra: ["--rotate", "270"], reported: 270),
        Case(video: "h264_rot90.mp4", extra: ["--rotate", "0"], reported: 0),
    ]

    @Test("reported rotation matches the written display matrix", arguments: cases)
    func rotation(_ c: Case) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("r.mp4")
        let result = try await MuxCtl.run(
            ["merge", MuxCtl.fixture(c.video), MuxCtl.fixture("aac_2s.m4a"), output, "--json"] + c.extra)
        #expect(result.exited && result.status == 0, "\(result)")
        let report = try #require(jsonObject(result.stdout), "\(result)")
        #expect(number(report["rotation"]).map(Int.init) == c.reported, "\(report)")

        let probe = try #require(try await probeJSON(output))
        let video = (probe["streams"] as? [[String: Any]])?.first { $0["kind"] as? String == "video" }
        let written = number(video?["rotation"]).map(Int.init)
        // `muxctl probe` reads the display matrix back (it agrees with ffprobe's sign convention).
        #expect(written == c.reported, "summary says \(c.reported)°, the file says \(written.map(String.init) ?? "nil")°")
    }
}

/// A portrait phone clip: kept upright by default, with the way to a landscape
/// frame said; re-framed on request, what was done in the summary and --json.
@Suite("merge re-frames on request")
struct MergeReframeTests {
    static let phone = "TestMedia/phone_portrait_h264_aac.mp4"

    @Test func keptUprightByDefaultAndSaysHowToReframe() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let result = try await MuxCtl.run(["merge", Self.phone, "TestMedia/aac_7s.m4a", scratch.output("o.mp4")])
        #expect(result.exited && result.status == 0, "\(result)")
        #expect(result.stdout.contains(
            "rotation 90° (portrait video kept upright (copied; coded 640x360, turned 90°); --orientation landscape re-frames it (encodes))"), "\(result)")
        #expect(result.stdout.contains("copied from \(Self.phone)"), "\(result)")
    }

    @Test func encodingOptionsForACopyAreSaidToGoUnused() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let result = try await MuxCtl.run([
            "merge", Self.phone, "TestMedia/aac_7s.m4a", scratch.output("o.mp4"), "--video-quality", "18",
        ])
        #expect(result.exited && result.status == 0, "\(result)")
        #expect(result.stderr.contains(
            "warning: the video quality (CRF 18) asked for is not used, as the video is copied, not encoded: portrait video kept upright (copied"), "\(result)")
        #expect(result.stdout.contains("copied from \(Self.phone)"), "\(result)")
    }

    @Test func reframedWithEveryChoiceSaid() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let result = try await MuxCtl.run([
            "merge", Self.phone, "TestMedia/aac_7s.m4a", scratch.output("o.mp4"), "--orientation", "landscape", "--fit", "pad",
            "--size", "854x480", "--video-quality", "26", "--video-preset", "ultrafast", "--json",
        ])
        #expect(result.exited && result.status == 0, "\(result)")
        let report = try #require(jsonObject(result.stdout), "\(result)")
        let video = try #require(report["video"] as? [String: Any])
        let reframed = try #require(video["reframed"] as? [String: Any], "\(video)")
        #expect(reframed["frame"] as? String == "854x480" && reframed["fit"] as? String == "pad")
        #expect(reframed["encoder"] as? String == "libx264" && reframed["preset"] as? String == "ultrafast" && number(reframed["quality"]) == 26)
        #expect((reframed["filterGraph"] as? String)?.hasPrefix("[in0]scale=480:270,transpose=clock,pad=854:480:292:0:black") == true, "\(reframed)")
        #expect(number(report["rotation"]) == 0)
        #expect(report["rotationReason"] as? String == "portrait video re-framed upright into a landscape 854x480 frame (encoded)")
        let probe = try #require(try await probeJSON(scratch.output("o.mp4")))
        let stream = (probe["streams"] as? [[String: Any]])?.first { $0["kind"] as? String == "video" }
        #expect(number(stream?["width"]) == 854 && number(stream?["height"]) == 480, "\(probe)")
    }
}

/// What a merge keeps of the video's metadata, and what it leaves out, in
/// the summary and in --json; --no-metadata keeps none.
@Suite("merge reports metadata and streams left out", Samples.required)
struct MergeMetadataReportTests {
    static let iPhone = Samples.path("iphone_hevc_rot90_aac_mebx_0.3s.mp4")

    @Test func jsonListsKeptMetadataAndStreamsNotCopied() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let result = try await MuxCtl.run(
            ["merge", Self.iPhone, MuxCtl.fixture("aac_2s.m4a"), scratch.output("o.mp4"), "--json"])
        #expect(result.exited && result.status == 0, "\(result)")
        let report = try #require(jsonObject(result.stdout), "\(result)")
        let kept = try #require(report["keptMetadata"] as? [String])
        #expect(kept.contains("com.apple.quicktime.location.ISO6709") && kept.contains("com.apple.quicktime.model"), "\(kept)")
        let left = try #require(report["notCopied"] as? [[String: Any]])
        #expect(left.map { $0["stream"] as? Int } == [1, 2, 3, 4])
        #expect(left.first?["reason"] as? String == "the soundtrack replaces the video's own audio")
        #expect(left.dropFirst().allSatisfy { $0["reason"] as? String == "timed metadata is not copied" })
    }

    @Test func noMetadataKeepsNoneAndSaysSo() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let json = try await MuxCtl.run(
            ["merge", Self.iPhone, MuxCtl.fixture("aac_2s.m4a"), scratch.output("o.mp4"), "--json", "--no-metadata"])
        #expect(json.exited && json.status == 0, "\(json)")
        #expect((jsonObject(json.stdout)?["keptMetadata"] as? [String]) == [])
        let text = try await MuxCtl.run(
            ["merge", Self.iPhone, MuxCtl.fixture("aac_2s.m4a"), scratch.output("p.mp4"), "--no-metadata"])
        #expect(text.stdout.contains("  metadata: none kept"), "\(text)")
        #expect(text.stdout.contains("  not copied: data mebx, stream 2 of "), "\(text)")
    }
}
