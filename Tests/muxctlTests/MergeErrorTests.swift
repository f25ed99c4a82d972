import Foundation
import Testing
import TestSupport

/// Checks every failed merge shares: a normal exit in 1...125, no crash, the
/// first stderr line `error: ` naming `path`, nothing on stdout, no output.
func expectCleanFailure(
    _ result: RunResult, status: Int32?, naming path: String, scratch: Scratch,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(result.exited, "did not exit normally: \(result)", sourceLocation: sourceLocation)
    #expect((1...125).contains(result.status), "exit status \(result.status): \(result)", sourceLocation: sourceLocation)
    if let status {
        #expect(result.status == status, "expected exit \(status): \(result)", sourceLocation: sourceLocation)
    }
    #expect(!result.looksLikeCrash, "crash output: \(result)", sourceLocation: sourceLocation)
    #expect(result.firstErrorLine.hasPrefix("error: "), "first stderr line: \(result)", sourceLocation: sourceLocation)
    #expect(result.firstErrorLine.contains(path), "error should name \(path): \(result)", sourceLocation: sourceLocation)
    #expect(result.stdout.isEmpty, "stdout should be empty on error: \(result)", sourceLocation: sourceLocation)
    #expect(scratch.outputFolder.isEmpty, "output folder should be empty: \(scratch.outputFolder)", sourceLocation: sourceLocation)
    #expect(result.stderrLines.count <= 2, "one error line and at most one hint: \(result)", sourceLocation: sourceLocation)
    if result.stderrLines.count == 2 {
        #expect(result.stderrLines[1].hasPrefix("hint: "), "\(result)", sourceLocation: sourceLocation)
    }
}

@Suite("merge rejects bad input")
struct MergeErrorTests {
    /// Where the error must point.
    enum Blame: String, Sendable { case video, audio, output }

    struct Case: CustomTestStringConvertible, Sendable {
        var label: String
        /// Relative to the package root (the working directory), as a user would type them.
        var video = "TestMedia/h264_bframes_aac.mp4"
        var audio = "TestMedia/aac_2s.m4a"
        /// Relative to the scratch output folder.
        var output = "o.mp4"
        var extra: [String] = []
        var blame: Blame
        var status: Int32
        var message: String
        var testDescription: String { label }
        var readsSamples: Bool { [video, audio].contains { $0.hasPrefix(Samples.folder.path) } }
    }

    static let inputProblems: [Case] = {
        var cases: [Case] = []
        func both(_ label: String, _ path: String, _ message: String) {
            cases.append(Case(label: "\(label) as VIDEO", video: path, blame: .video, status: 1, message: message))
            cases.append(Case(label: "\(label) as AUDIO", audio: path, blame: .audio, status: 1, message: message))
        }
        both("missing file", "TestMedia/no_such_file.mp4", "no such file")
        both("a directory", "TestMedia/crafted", "is a directory")
        both("empty file", "TestMedia/empty.m4a", "not a media file")
        both("HTML page", "TestMedia/html_page.m4a", "not a media file")
        both("text file", "TestMedia/text_file.mp4", "not a media file")
        both("random bytes", "TestMedia/random_bytes.mp4", "not a media file")
        cases += [
            Case(label: "fuzzed MP4 (two moov, no mdat) as AUDIO",
                 audio: Samples.path("fuzz_two_moov_no_mdat_bad_timescale.mp4"), blame: .audio, status: 1,
                 message: "the audio stream has no known duration"),
            Case(label: "video-only file as AUDIO", audio: "TestMedia/h264_rot90.mp4", blame: .audio, status: 1,
                 message: "has no audio stream"),
            Case(label: "audio-only file as VIDEO", video: "TestMedia/aac_2s.m4a", blame: .video, status: 1,
                 message: "has no video stream"),
            Case(label: "concat: URL as AUDIO", audio: "concat:TestMedia/aac_2s.m4a|TestMedia/aac_2s.m4a",
                 blame: .audio, status: 1, message: "no such file"),
            Case(label: "concat: URL as VIDEO",
                 video: "concat:TestMedia/h264_bframes_aac.mp4|TestMedia/h264_bframes_aac.mp4",
                 blame: .video, status: 1, message: "no such file"),
            Case(label: "subfile: URL as AUDIO", audio: "subfile:,,start,0,end,100,,:TestMedia/aac_2s.m4a",
                 blame: .audio, status: 1, message: "no such file"),
            // An http AUDIO is downloaded; nothing listens on port 9 of the loopback.
            Case(label: "unreachable http URL as AUDIO", audio: "http://127.0.0.1:9/a.m4a", extra: ["--retries", "0"],
                 blame: .audio, status: 1, message: "connection refused"),
            // `file:` is not stripped: the tool treats every argument as a plain path.
            Case(label: "file: URL as AUDIO", audio: "file:TestMedia/aac_2s.m4a", blame: .audio, status: 1,
                 message: "no such file"),
            Case(label: "file: URL as VIDEO", video: "file:TestMedia/h264_bframes_aac.mp4", blame: .video, status: 1,
                 message: "no such file"),
            Case(label: "--video-stream 5", extra: ["--video-stream", "5"], blame: .video, status: 2,
                 message: "there is no video stream 5"),
            Case(label: "--audio-stream 5", extra: ["--audio-stream", "5"], blame: .audio, status: 2,
                 message: "there is no audio stream 5"),
            Case(label: "--audio-stream 1 on a one-audio file", audio: "TestMedia/aac_7s.m4a",
                 extra: ["--audio-stream", "1"], blame: .audio, status: 2, message: "there is no audio stream 1"),
        ]
        return cases
    }()

    /// Encoding settings: errors name the output they are for.
    static let audioProblems: [Case] = [
        Case(label: "--audio-codec copy of FLAC into MP4", audio: "TestMedia/flac_3s.flac", extra: ["--audio-codec", "copy"],
             blame: .output, status: 2, message: "flac cannot be stored in mp4 without re-encoding"),
        Case(label: "--sample-rate 44000", audio: "TestMedia/flac_3s.flac", extra: ["--sample-rate", "44000"],
             blame: .output, status: 2, message: "AAC cannot be encoded at 44000 Hz"),
        Case(label: "--channels 7", audio: "TestMedia/flac_3s.flac", extra: ["--channels", "7"],
             blame: .output, status: 2, message: "AAC cannot be encoded with 7 channels"),
        Case(label: "--audio-bitrate 2k", extra: ["--audio-bitrate", "2k"],
             blame: .output, status: 2, message: "an AAC bit rate of 2 kb/s is out of range"),
        Case(label: "--audio-codec copy --sample-rate 44100", extra: ["--audio-codec", "copy", "--sample-rate", "44100"],
             blame: .output, status: 2, message: "the audio cannot be copied and resampled to 44100 Hz at once"),
        // The 4 s video, the 2 s soundtrack.
        Case(label: "--audio-offset -2 skips all of it", extra: ["--audio-offset", "-2"],
             blame: .audio, status: 2, message: "an offset of -2.000 s skips all of its 2.000 s"),
        Case(label: "--audio-offset 5 starts it after the video", extra: ["--audio-offset", "5", "--end", "video"],
             blame: .audio, status: 2, message: "starts it at 5.000 s, after the video ends at 4.000 s"),
        Case(label: "--loop-audio --audio-codec copy of AAC", extra: ["--loop-audio", "--audio-codec", "copy"],
             blame: .output, status: 2, message: "AAC cannot repeat by copy"),
        Case(label: "--keep-original-audio of a video without audio", video: "TestMedia/h264_vfr.mp4", extra: ["--keep-original-audio"],
             blame: .video, status: 2, message: "has no audio of its own to keep"),
        Case(label: "--volume with --audio-codec copy", extra: ["--volume", "-3", "--audio-codec", "copy"],
             blame: .output, status: 2, message: "the audio cannot be copied and set to -3.0 dB at once"),
        Case(label: "--volume with --loudness", extra: ["--volume", "-3", "--loudness", "-16"],
             blame: .output, status: 2, message: "a volume and a loudness both set the level; choose one"),
        Case(label: "--fade-out longer than the audio", extra: ["--fade-out", "3"],
             blame: .audio, status: 2, message: "a fade out of 3.000 s is longer than the 2.000 s it plays for"),
    ]

    /// Re-framing settings name the output too; a profile they cannot make names the video.
    static let videoProblems: [Case] = [
        Case(label: "--size of the wrong shape", video: "TestMedia/phone_portrait_h264_aac.mp4", extra: ["--orientation", "landscape", "--size", "720x1280"],
             blame: .output, status: 2, message: "a landscape frame cannot be 720x1280"),
        Case(label: "--size too small", video: "TestMedia/phone_portrait_h264_aac.mp4", extra: ["--orientation", "landscape", "--size", "96x48"],
             blame: .output, status: 2, message: "the frame size must be 64 to 8192 pixels a side"),
        Case(label: "--video-preset unknown", video: "TestMedia/phone_portrait_h264_aac.mp4", extra: ["--orientation", "landscape", "--video-preset", "quick"],
             blame: .output, status: 2, message: "the video preset must be one of ultrafast"),
        Case(label: "--video-quality 60", video: "TestMedia/phone_portrait_h264_aac.mp4", extra: ["--orientation", "landscape", "--video-quality", "60"],
             blame: .output, status: 2, message: "the video quality (CRF) must be 0 to 51, not 60"),
        Case(label: "Dolby Vision profile 5 re-framed", video: "TestMedia/hevc_dv_profile5.mp4", extra: ["--orientation", "portrait"],
             blame: .video, status: 2, message: "the default orientation (keep: upright, copied) keeps it whole"),
    ]

    static let outputProblems: [Case] = [
        // FFmpeg's MOV writer takes AV1 and VP9 in MP4 only; no hint to another container.
        Case(label: "AV1 into .mov", video: "TestMedia/av1.mp4", output: "o.mov", blame: .output, status: 2,
             message: "av1 cannot be stored in mov without re-encoding"),
        Case(label: "output .avi", output: "o.avi", blame: .output, status: 2, message: "unsupported output type (.avi)"),
        Case(label: "output .mkv", output: "o.mkv", blame: .output, status: 2, message: "unsupported output type (.mkv)"),
        Case(label: "output without extension", output: "o", blame: .output, status: 2,
             message: "unsupported output type (no extension)"),
        Case(label: "output in a missing folder", output: "missing/o.mp4", blame: .output, status: 2,
             message: "output folder does not exist"),
        Case(label: "output in a missing folder with --force", output: "missing/deeper/o.mp4", extra: ["--force"],
             blame: .output, status: 2, message: "output folder does not exist"),
    ]

    @Test("input, audio and output problems", arguments: (inputProblems + audioProblems + videoProblems + outputProblems).filter { !$0.readsSamples })
    func badMerge(_ c: Case) async throws {
        try await expectRefused(c)
    }

    @Test("real damaged files", Samples.required, arguments: inputProblems.filter(\.readsSamples))
    func badMergeOfRealFiles(_ c: Case) async throws {
        try await expectRefused(c)
    }

    private func expectRefused(_ c: Case) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output(c.output)
        let args = ["merge", c.video, c.audio, output] + c.extra
        let result = try await MuxCtl.run(args)
        let blamed = switch c.blame { case .video: c.video; case .audio: c.audio; case .output: output }
        expectCleanFailure(result, status: c.status, naming: blamed, scratch: scratch)
        if !c.message.isEmpty {
            #expect(result.firstErrorLine.contains(c.message), "expected “\(c.message)”: \(result)")
        }
        #expect(!fileExists(output))
    }

    /// Errors must look the same with --json (nothing on stdout) and --quiet (still reported).
    @Test("errors are reported with --json and --quiet too", arguments: [["--json"], ["--quiet"], ["-q", "--json"]])
    func errorsWithFlags(_ flags: [String]) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let result = try await MuxCtl.run(
            ["merge", "TestMedia/h264_bframes_aac.mp4", "TestMedia/text_file.mp4", scratch.output("o.mp4")] + flags)
        expectCleanFailure(result, status: 1, naming: "TestMedia/text_file.mp4", scratch: scratch)
    }

    /// Argument-parser errors: these come from swift-argument-parser, which prints
    /// `Error: ` (capital E) plus usage and exits 64 (EX_USAGE), not the README's 2.
    @Test("usage errors", arguments: [
        (["--rotate", "45"], "--rotate"),
        (["--rotate", "-90"], "--rotate"),
        (["--video-stream", "-1"], "--video-stream"),
        (["--audio-stream", "x"], "--audio-stream"),
        (["--orientation", "sideways"], "sideways"),
        (["--fit", "stretch"], "stretch"),
        (["--size", "wide"], "--size"),
        (["--end", "longest"], "longest"),
        (["--audio-offset", "soon"], "--audio-offset"),
        (["--loop-audio", "--end", "audio"], "--loop-audio"),
        (["--fade-in", "-1"], "--fade-in"),
        (["--keep-original-audio", "--mix-original", "-6"], "--mix-original"),
        (["--volume", "loud"], "--volume"),
        (["--no-such-flag"], "--no-such-flag"),
    ])
    func usageErrors(_ extra: [String], _ mentioned: String) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("o.mp4")
        let result = try await MuxCtl.run(
            ["merge", "TestMedia/h264_bframes_aac.mp4", "TestMedia/aac_2s.m4a", output] + extra)
        #expect(result.exited, "\(result)")
        #expect((1...125).contains(result.status), "\(result)")
        #expect(result.status != 0)
        #expect(!result.looksLikeCrash, "\(result)")
        #expect(result.firstErrorLine.lowercased().hasPrefix("error: "), "\(result)")
        #expect(result.stderr.contains(mentioned), "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
        #expect(scratch.outputFolder.isEmpty, "\(scratch.outputFolder)")
    }

    @Test("missing arguments are a usage error", arguments: [["merge"], ["merge", "a.mp4"], ["merge", "a.mp4", "b.m4a"], ["probe"], ["frobnicate"]])
    func missingArguments(_ args: [String]) async throws {
        let result = try await MuxCtl.run(args)
        #expect(result.exited && (1...125).contains(result.status), "\(result)")
        #expect(!result.looksLikeCrash)
        #expect(result.firstErrorLine.lowercased().hasPrefix("error: "), "\(result)")
    }
}

@Suite("merge and existing files")
struct ExistingOutputTests {
    static let sentinel = Data("not a movie, must survive\n".utf8)

    @Test("an existing output is kept without --force")
    func existingWithoutForce() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("exists.mp4")
        try Self.sentinel.write(to: URL(fileURLWithPath: output))
        let result = try await MuxCtl.run(["merge", "TestMedia/h264_bframes_aac.mp4", "TestMedia/aac_2s.m4a", output])
        #expect(result.exited && result.status == 2, "\(result)")
        #expect(!result.looksLikeCrash)
        #expect(result.firstErrorLine == "error: \(output): already exists", "\(result)")
        #expect(result.stderr.contains("--force"), "a hint should mention --force: \(result)")
        #expect(result.stdout.isEmpty)
        #expect(fileBytes(output) == Self.sentinel, "existing file changed")
        #expect(scratch.outputFolder == ["exists.mp4"], "stray files: \(scratch.outputFolder)")
    }

    @Test("--force and -y replace an existing output", arguments: ["--force", "-y"])
    func existingWithForce(_ flag: String) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("exists.mp4")
        try Self.sentinel.write(to: URL(fileURLWithPath: output))
        let result = try await MuxCtl.run(
            ["merge", "TestMedia/h264_bframes_aac.mp4", "TestMedia/aac_2s.m4a", output, flag, "--json"])
        #expect(result.exited && result.status == 0, "\(result)")
        #expect(fileBytes(output) != Self.sentinel, "not replaced")
        #expect(scratch.outputFolder == ["exists.mp4"], "stray files: \(scratch.outputFolder)")
        let probe = try #require(try await probeJSON(output))
        #expect(abs((number(probe["containerDuration"]) ?? -1) - 2.0) < 0.001, "\(probe)")
    }

    @Test("--force onto a directory fails cleanly")
    func forceOntoDirectory() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("folder.mp4")
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: false)
        let result = try await MuxCtl.run(
            ["merge", "TestMedia/h264_bframes_aac.mp4", "TestMedia/aac_2s.m4a", output, "--force"])
        #expect(result.exited && result.status == 2, "\(result)")
        #expect(!result.looksLikeCrash)
        #expect(result.firstErrorLine.hasPrefix("error: \(output): "), "\(result)")
        #expect(scratch.outputFolder == ["folder.mp4"], "stray files: \(scratch.outputFolder)")
        #expect(Scratch.list(output).isEmpty)
    }

    enum Alias: String, CaseIterable, Sendable { case samePath, hardLink, symlinkOutput, symlinkInput }

    /// OUTPUT must never overwrite one of the inputs, whatever the spelling, even with --force.
    @Test("output that is an input is refused",
          arguments: Alias.allCases, [false, true])
    func outputIsInput(_ alias: Alias, _ force: Bool) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let video = scratch.output("v.mp4")
        try FileManager.default.copyItem(atPath: MuxCtl.fixture("h264_bframes_aac.mp4"), toPath: video)
        let original = try #require(fileBytes(video))
        var videoArg = video
        var output = video
        switch alias {
        case .samePath: break
        case .hardLink:
            output = scratch.output("hard.mp4")
            try FileManager.default.linkItem(atPath: video, toPath: output)
        case .symlinkOutput:
            output = scratch.output("link.mp4")
            try FileManager.default.createSymbolicLink(atPath: output, withDestinationPath: "v.mp4")
        case .symlinkInput:
            videoArg = scratch.output("link.mp4")
            try FileManager.default.createSymbolicLink(atPath: videoArg, withDestinationPath: "v.mp4")
        }
        let before = scratch.outputFolder
        let result = try await MuxCtl.run(
            ["merge", videoArg, MuxCtl.fixture("aac_2s.m4a"), output] + (force ? ["--force"] : []))
        #expect(result.exited && result.status == 2, "\(result)")
        #expect(!result.looksLikeCrash)
        #expect(result.firstErrorLine.hasPrefix("error: \(output): "), "\(result)")
        #expect(result.firstErrorLine.contains("input"), "\(result)")
        #expect(fileBytes(video) == original, "the input was modified")
        #expect(scratch.outputFolder == before, "stray files: \(scratch.outputFolder)")
    }
}

/// Damaged inputs whose headers promise more media than the file holds.
/// A clear error or a correct, shorter output would both be acceptable; the
/// tool reports an error, so that is what is pinned here. Either way: no crash,
/// no temporary file left, and never an output claiming media it does not hold.
@Suite("merge with damaged input")
struct DamagedInputTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var label: String
        var video = "TestMedia/h264_rot90.mp4"
        var audio = "TestMedia/aac_7s.m4a"
        var extra: [String] = []
        /// Which input is damaged ("video"/"audio"), and the length of one of its packets.
        var damaged: String
        var packetSeconds: Double
        var testDescription: String { label }
        var damagedPath: String { damaged == "video" ? video : audio }
        var readsSamples: Bool { damagedPath.hasPrefix(Samples.folder.path) }
    }

    static let cases: [Case] = [
        Case(label: "truncated_h264.mp4 as VIDEO", video: "TestMedia/truncated_h264.mp4", audio: "TestMedia/aac_2s.m4a",
             damaged: "video", packetSeconds: 1.0 / 30),
        Case(label: "truncated_h264.mp4 as AUDIO", audio: "TestMedia/truncated_h264.mp4",
             damaged: "audio", packetSeconds: 1024.0 / 44100),
        Case(label: "truncated_h264.mp4 as both", video: "TestMedia/truncated_h264.mp4", audio: "TestMedia/truncated_h264.mp4",
             damaged: "video", packetSeconds: 1.0 / 30),
        Case(label: "fuzzed MP4 (two moov, no mdat) as VIDEO",
             video: Samples.path("fuzz_two_moov_no_mdat_bad_timescale.mp4"), audio: "TestMedia/aac_2s.m4a",
             damaged: "video", packetSeconds: 1.0 / 24),
    ]

    @Test("no crash, no leftovers, and an honest result", arguments: cases.filter { !$0.readsSamples }, [["--json"], []])
    func damaged(_ c: Case, _ flags: [String]) async throws {
        try await expectHonest(c, flags)
    }

    @Test("real damaged files: no crash, no leftovers, and an honest result", Samples.required,
          arguments: cases.filter(\.readsSamples), [["--json"], []])
    func damagedRealFiles(_ c: Case, _ flags: [String]) async throws {
        try await expectHonest(c, flags)
    }

    private func expectHonest(_ c: Case, _ flags: [String]) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("d.mp4")
        let result = try await MuxCtl.run(["merge", c.video, c.audio, output] + flags + c.extra)

        // Required whatever the tool decides.
        #expect(result.exited, "\(result)")
        #expect(!result.looksLikeCrash, "\(result)")
        #expect(Scratch.partials(in: scratch.outputs.path).isEmpty, "leftover temporary file: \(scratch.outputFolder)")
        if result.status == 0, let report = jsonObject(result.stdout), let track = report[c.damaged] as? [String: Any] {
            let packets = number(track["packets"]) ?? 0
            let duration = number(track["duration"]) ?? .infinity
            #expect(duration <= packets * c.packetSeconds + 0.05,
                    "\(c.damaged) claims \(duration) s but its \(Int(packets)) packets cover only \(packets * c.packetSeconds) s")
        }

        // What the tool does: a clear error about the damaged input, nothing written.
        expectCleanFailure(result, status: 1, naming: c.damagedPath, scratch: scratch)
        #expect(result.firstErrorLine.hasPrefix("error: \(c.damagedPath): "), "\(result)")
        #expect(result.firstErrorLine.contains("damaged or truncated"), "\(result)")
    }
}

@Suite("merge with a fragmented file cut short")
struct CutFragmentTests {
    /// Core Media's fragmented MP4 cut inside its one fragment: the merge
    /// keeps the 7 whole AAC samples, says on stderr and in --json how many
    /// were lost, and succeeds, with or without faststart.
    @Test(Samples.required, arguments: [[], ["--no-faststart"]])
    func keepsTheWholeSamplesAndWarns(_ extra: [String]) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let cut = Samples.path("truncated_coremedia_fmp4_aac.mp4")
        let output = scratch.output("d.mp4")
        let result = try await MuxCtl.run(["merge", "TestMedia/h264_rot90.mp4", cut, output, "--json"] + extra)
        #expect(result.status == 0, "\(result)")
        let warning = "\(cut): the file is cut short inside a fragment: 4081 audio samples it declares are missing; the whole ones before the cut are kept"
        #expect(result.firstErrorLine == "warning: \(warning)", "\(result)")
        let report = try #require(jsonObject(result.stdout))
        #expect(report["warnings"] as? [String] == [warning])
        let audio = try #require(report["audio"] as? [String: Any])
        #expect(number(audio["packets"]) == 7)
        #expect(abs((number(audio["duration"]) ?? 0) - 7 * 1024.0 / 48000) < 0.001)
        #expect(Scratch.partials(in: scratch.outputs.path).isEmpty)
    }
}
