import Foundation
import Testing
import TestSupport

@Suite("probe")
struct ProbeTests {
    @Test("the muxctl binary built with the tests runs")
    func binaryRuns() async throws {
        let binary = try #require(MuxCtl.binary, "muxctl not found")
        #expect(binary.lastPathComponent == "muxctl")
        print("[muxctlTests] using \(binary.path) (Bundle.main: \(Bundle.main.bundleURL.path))")
        let result = try await MuxCtl.run(["--help"])
        #expect(result.exited && result.status == 0, "\(result)")
        #expect(result.stdout.contains("merge") && result.stdout.contains("probe"), "\(result)")
    }

    @Test("--version names muxctl's version, the CHANGELOG's latest release, and FFmpeg's")
    func version() async throws {
        let changelog = try String(contentsOf: MuxCtl.packageRoot.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let release = try #require(changelog.firstMatch(of: /\n## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}\n/)?.output.1)
        let result = try await MuxCtl.run(["--version"])
        #expect(result.exited && result.status == 0, "\(result)")
        #expect(result.stdout.hasPrefix("muxctl \(release) (FFmpeg "), "\(result)")
    }

    @Test("FFmpeg's own messages appear with --verbose only", Samples.required)
    func verbose() async throws {
        let path = Samples.path("fuzz_two_moov_no_mdat_bad_timescale.mp4")
        let quiet = try await MuxCtl.run(["probe", path])
        #expect(!quiet.stderr.contains("ffmpeg:") && !quiet.stderr.contains("mdhd"), "\(quiet)")
        let verbose = try await MuxCtl.run(["probe", "--verbose", path])
        #expect(verbose.stderr.contains("ffmpeg: error: Invalid mdhd time scale"), "\(verbose)")
        #expect(verbose.stderr.contains("ffmpeg: warning: Found duplicated MOOV Atom"), "\(verbose)")
        #expect(verbose.status == quiet.status, "\(verbose)")
    }

    @Test("text output lists every stream")
    func text() async throws {
        let path = "TestMedia/h264_bframes_aac.mp4"
        let result = try await MuxCtl.run(["probe", path])
        #expect(result.exited && result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(result)")
        #expect(lines.first?.hasPrefix("\(path): ") == true, "\(result)")
        #expect(lines.first?.contains("4.000 s") == true, "\(result)")
        #expect(lines.dropFirst().first?.contains("#0 video h264") == true, "\(result)")
        #expect(lines.dropFirst().first?.contains("320x240") == true, "\(result)")
        #expect(lines.dropFirst(2).first?.contains("#1 audio aac") == true, "\(result)")
        #expect(lines.dropFirst(2).first?.contains("44100 Hz") == true, "\(result)")
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var file: MediaFile
        var kinds: [String]
        var codecs: [String]
        var testDescription: String { file.description }
    }

    static let cases: [Case] = [
        Case(file: "h264_bframes_aac.mp4", kinds: ["video", "audio"], codecs: ["h264", "aac"]),
        Case(file: "aac_2s.m4a", kinds: ["audio"], codecs: ["aac"]),
        Case(file: "h264_rot90.mp4", kinds: ["video"], codecs: ["h264"]),
        Case(file: "hevc_hev1.mp4", kinds: ["video"], codecs: ["hevc"]),
        Case(file: "h264_aac.mkv", kinds: ["video", "audio"], codecs: ["h264", "aac"]),
        Case(file: "opus_5s.webm", kinds: ["audio"], codecs: ["opus"]),
        Case(file: "mp3_5s.mp3", kinds: ["audio"], codecs: ["mp3"]),
        Case(file: .sample("iphone_hevc_rot90_aac_mebx_0.3s.mp4"), kinds: ["video", "audio", "data", "data", "data"],
             codecs: ["hevc", "aac"]),
        // Fragmented: the moov declares the tracks, the fragments hold the samples.
        Case(file: .sample("fmp4_h264_aac_sidx_seekable.mp4"), kinds: ["video", "audio"], codecs: ["h264", "aac"]),
    ]

    @Test("--json parses and lists streams with kind and codec", arguments: cases.filter { !$0.file.isSample })
    func json(_ c: Case) async throws {
        try await expectJSONStreams(c)
    }

    @Test("--json lists the streams of real files", Samples.required, arguments: cases.filter(\.file.isSample))
    func jsonOfRealFiles(_ c: Case) async throws {
        try await expectJSONStreams(c)
    }

    private func expectJSONStreams(_ c: Case) async throws {
        let path = c.file.path
        let result = try await MuxCtl.run(["probe", path, "--json"])
        #expect(result.exited && result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").count == 1)
        let info = try #require(jsonObject(result.stdout), "not one JSON object: \(result)")
        #expect(info["path"] as? String == path)
        let streams = try #require(info["streams"] as? [[String: Any]], "\(info)")
        #expect(streams.map { $0["kind"] as? String ?? "?" } == c.kinds, "\(streams)")
        #expect(Array(streams.compactMap { $0["codec"] as? String }.prefix(c.codecs.count)) == c.codecs, "\(streams)")
        for (index, stream) in streams.enumerated() {
            #expect(number(stream["index"]).map(Int.init) == index)
        }
    }

    @Test("--quiet prints nothing on success")
    func quiet() async throws {
        let loud = try await MuxCtl.run(["probe", "TestMedia/aac_2s.m4a"])
        #expect(loud.exited && loud.status == 0 && !loud.stdout.isEmpty, "without --quiet: \(loud)")
        let result = try await MuxCtl.run(["probe", "TestMedia/aac_2s.m4a", "--quiet"])
        #expect(result.exited && result.status == 0, "\(result)")
        #expect(result.stdout.isEmpty && result.stderr.isEmpty, "\(result)")
    }

    @Test("bad files give one error line and exit 1", arguments: [
        ("TestMedia/no_such_file.mp4", "no such file"),
        ("TestMedia/crafted", "is a directory"),
        ("TestMedia/empty.m4a", "not a media file"),
        ("TestMedia/text_file.mp4", "not a media file"),
        ("TestMedia/random_bytes.mp4", "not a media file"),
        ("concat:TestMedia/aac_2s.m4a|TestMedia/aac_2s.m4a", "no such file"),
    ], [[], ["--json"]])
    func badFile(_ file: (String, String), _ flags: [String]) async throws {
        let (path, message) = file
        let result = try await MuxCtl.run(["probe", path] + flags)
        #expect(result.exited && result.status == 1, "\(result)")
        #expect(!result.looksLikeCrash, "\(result)")
        #expect(result.firstErrorLine.hasPrefix("error: \(path): "), "\(result)")
        #expect(result.firstErrorLine.contains(message), "\(result)")
        #expect(result.stderrLines.count == 1, "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
    }
}
