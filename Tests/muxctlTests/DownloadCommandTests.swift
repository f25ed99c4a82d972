import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A static file server for one test: Python's http.server, bound to
/// 127.0.0.1 on a port the kernel picks, serving one folder. It answers 200
/// with Content-Length and Last-Modified, 304 to If-Modified-Since, and 404;
/// slowly on request (`slow`).
final class LoopbackFileServer: @unchecked Sendable {
    private static let script = """
        import functools, http.server, os, sys, time
        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass
            def copyfile(self, source, outputfile):
                slow = os.path.exists(sys.argv[3])
                try:
                    while True:
                        chunk = source.read(1024 if slow else 65536)
                        if not chunk:
                            break
                        outputfile.write(chunk)
                        if slow:
                            outputfile.flush()
                            time.sleep(0.05)
                except (BrokenPipeError, ConnectionResetError):
                    pass
            def log_request(self, code="-", size="-"):
                with open(sys.argv[2], "a") as log:
                    log.write("%s %s %s\\n" % (self.command, self.path, int(code)))
        handler = functools.partial(Quiet, directory=sys.argv[1])
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """

    let process = Process()
    let port: Int
    /// One line per answered request: "METHOD PATH STATUS".
    let requestLog: String
    private let slowMarker: String

    /// Bodies sent 1 KiB every 50 ms (20 KiB/s) while on, so a test has time
    /// to interrupt a transfer.
    var slow: Bool {
        get { FileManager.default.fileExists(atPath: slowMarker) }
        set {
            if newValue { _ = FileManager.default.createFile(atPath: slowMarker, contents: nil) } else { unlink(slowMarker) }
        }
    }

    /// Starts the server, or records an issue (python3 missing, say) and returns nil.
    static func start(serving folder: String, sourceLocation: SourceLocation = #_sourceLocation) -> LoopbackFileServer? {
        do {
            return try LoopbackFileServer(folder: folder)
        } catch {
            Issue.record("could not start a python3 http.server for the CLI download tests: \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    private init(folder: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        requestLog = folder + "/../requests.log"
        slowMarker = folder + "/../slow"
        process.arguments = ["python3", "-c", Self.script, folder, requestLog, slowMarker]
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            process.waitUntilExit()
            let problem = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw HarnessError("python3 http.server did not start (is python3 installed?): \(problem)")
        }
        self.port = port
    }

    func url(_ name: String) -> String { "http://127.0.0.1:\(port)/\(name)" }

    /// The statuses answered for `path`, in order.
    func statuses(_ path: String) -> [String] {
        let text = (try? String(contentsOfFile: requestLog, encoding: .utf8)) ?? ""
        var statuses: [String] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            if fields.count == 3 && fields[1] == path { statuses.append(fields[2]) }
        }
        return statuses
    }

    /// SIGKILL: a child of the test process may inherit a signal mask that blocks SIGTERM.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// `muxctl download`, `muxctl cache` and `muxctl merge` with an audio URL,
/// against a loopback file server.
@Suite("download command", .tags(.network), .skippedByTag)
struct DownloadCommandTests {
    /// A scratch folder whose `in/` holds a copy of aac_7s.m4a, served over HTTP.
    struct Setup {
        var scratch: Scratch
        var server: LoopbackFileServer
        var cache: String
        var audio: Data

        var url: String { server.url("song.m4a") }

        func remove() {
            server.stop()
            scratch.remove()
        }
    }

    static func setUp(sourceLocation: SourceLocation = #_sourceLocation) throws -> Setup? {
        let scratch = try Scratch()
        let audio = try #require(fileBytes(MuxCtl.fixture("aac_7s.m4a")), sourceLocation: sourceLocation)
        try audio.write(to: URL(fileURLWithPath: scratch.input("song.m4a")))
        guard let server = LoopbackFileServer.start(serving: scratch.inputs.path, sourceLocation: sourceLocation) else {
            scratch.remove()
            return nil
        }
        return Setup(scratch: scratch, server: server, cache: scratch.root.appendingPathComponent("cache").path, audio: audio)
    }

    @Test func downloadToAFileWithJSON() async throws {
        guard let setup = try Self.setUp() else { return }
        defer { setup.remove() }
        let output = setup.scratch.output("song.m4a")
        let result = try await MuxCtl.run(["download", setup.url, "-o", output, "--json", "--cache-dir", setup.cache])
        #expect(result.exited && result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        let summary = try #require(jsonObject(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(result)")
        #expect(summary["path"] as? String == output)
        #expect(summary["url"] as? String == setup.url)
        #expect(summary["finalURL"] as? String == setup.url)
        #expect(number(summary["bytes"]) == Double(setup.audio.count))
        #expect(summary["source"] as? String == "network")
        #expect(number(summary["attempts"]) == 1)
        #expect(number(summary["resumedFrom"]) == 0)
        #expect((number(summary["elapsedSeconds"]) ?? -1) >= 0, "\(result)")
        #expect((summary["warnings"] as? [Any])?.isEmpty == true)
        #expect(fileBytes(output) == setup.audio)
        #expect(setup.scratch.outputFolder == ["song.m4a"])

        // Again, to the same file: refused without --force; with it, from the cache.
        let again = try await MuxCtl.run(["download", setup.url, "-o", output, "--json", "--cache-dir", setup.cache])
        #expect(again.status == 2, "\(again)")
        #expect(again.firstErrorLine == "error: \(output): already exists", "\(again)")
        let forced = try await MuxCtl.run(["download", setup.url, "-o", output, "--json", "--force", "--cache-dir", setup.cache])
        #expect(forced.status == 0, "\(forced)")
        #expect(jsonObject(forced.stdout)?["source"] as? String == "revalidatedCache", "\(forced)")
        #expect(fileBytes(output) == setup.audio)
    }

    /// Processes fetching one URL into one cache take turns (a lock per URL):
    /// one transfers the body, the others revalidate it.
    @Test func concurrentProcessesShareOneDownload() async throws {
        guard let setup = try Self.setUp() else { return }
        defer { setup.remove() }
        let results = try await withThrowingTaskGroup(of: RunResult.self) { group in
            for _ in 0..<4 {
                group.addTask { try await MuxCtl.run(["download", setup.url, "--json", "--cache-dir", setup.cache]) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for result in results { #expect(result.exited && result.status == 0, "\(result)") }
        let paths = Set(results.compactMap { jsonObject($0.stdout)?["path"] as? String })
        #expect(paths.count == 1, "\(paths)")
        let sources = results.compactMap { jsonObject($0.stdout)?["source"] as? String }.sorted()
        #expect(sources == ["network", "revalidatedCache", "revalidatedCache", "revalidatedCache"], "\(sources)")
        if let path = paths.first { #expect(fileBytes(path) == setup.audio) }
        #expect(setup.server.statuses("/song.m4a").sorted() == ["200", "304", "304", "304"])
    }

    @Test func downloadIntoTheCacheWithoutATerminal() async throws {
        guard let setup = try Self.setUp() else { return }
        defer { setup.remove() }
        let result = try await MuxCtl.run(["download", setup.url, "--cache-dir", setup.cache])
        #expect(result.exited && result.status == 0, "\(result)")
        // stderr is a pipe, not a TTY: no progress bar.
        #expect(result.stderr.isEmpty, "progress printed without a terminal: \(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let path = try #require(lines.first)
        #expect(path.hasPrefix(setup.cache + "/"), "\(result)")
        #expect(path.hasSuffix("-song.m4a"), "\(result)")
        #expect(fileBytes(path) == setup.audio)
        #expect(lines.dropFirst().first?.contains("downloaded") == true, "\(result)")

        let again = try await MuxCtl.run(["download", setup.url, "--cache-dir", setup.cache])
        #expect(again.status == 0, "\(again)")
        #expect(again.stdout.contains("from the cache (unchanged on the server)"), "\(again)")
    }

    @Test func downloadUsesMUXCTLCacheDir() async throws {
        guard let setup = try Self.setUp() else { return }
        defer { setup.remove() }
        let result = try await MuxCtl.run(["download", setup.url, "--json"])
        #expect(result.status == 0, "\(result)")
        let path = try #require(jsonObject(result.stdout)?["path"] as? String, "\(result)")
        #expect(path.hasPrefix(MuxCtl.testCacheDirectory + "/"), "\(path)")
        let list = try await MuxCtl.run(["cache", "list", "--json"])
        #expect(list.status == 0, "\(list)")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]], "\(list)")
        #expect(entries.contains { $0["url"] as? String == setup.url }, "\(list)")
    }

    @Test func notFoundExitsOne() async throws {
        guard let setup = try Self.setUp() else { return }
        defer { setup.remove() }
        let url = setup.server.url("missing.m4a")
        let output = setup.scratch.output("missing.m4a")
        let result = try await MuxCtl.run(["download", url, "-o", output, "--cache-dir", setup.cache])
        #expect(result.exited && result.status == 1, "\(result)")
        #expect(!result.looksLikeCrash, "\(result)")
        #expect(result.firstErrorLine.hasPrefix("error: \(url): the server answered 404"), "\(result)")
        #expect(result.stderrLines.contains("hint: check the URL"), "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
        #expect(setup.scratch.outputFolder.isEmpty, "\(setup.scratch.outputFolder)")
    }

    /// An option error (`kind` .option), as every other: status 2.
    @Test func unsupportedURLExitsTwo() async throws {
        let result = try await MuxCtl.run(["download", "ftp://127.0.0.1/song.m4a"])
        #expect(result.exited && result.status == 2, "\(result)")
        #expect(result.firstErrorLine.hasPrefix("error: ftp://127.0.0.1/song.m4a: only http and https"), "\(result)")
    }

    @Test func cacheListAndClear() async throws {
        guard let setup = try Self.setUp() else { return }
        defer { setup.remove() }
        let download = try await MuxCtl.run(["download", setup.url, "--json", "--cache-dir", setup.cache])
        #expect(download.status == 0, "\(download)")
        let path = try #require(jsonObject(download.stdout)?["path"] as? String, "\(download)")

        let list = try await MuxCtl.run(["cache", "list", "--json", "--cache-dir", setup.cache])
        #expect(list.status == 0, "\(list)")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]], "\(list)")
        #expect(entries.count == 1, "\(list)")
        #expect(entries.first?["url"] as? String == setup.url)
        #expect(entries.first?["path"] as? String == path)
        #expect(number(entries.first?["bytes"]) == Double(setup.audio.count))

        let text = try await MuxCtl.run(["cache", "list", "--cache-dir", setup.cache])
        #expect(text.stdout.contains(setup.url), "\(text)")

        let clear = try await MuxCtl.run(["cache", "clear", "--json", "--cache-dir", setup.cache])
        #expect(clear.status == 0, "\(clear)")
        #expect(number(jsonObject(clear.stdout)?["removedFiles"]) == 2, "\(clear)")
        #expect(!fileExists(path))

        let after = try await MuxCtl.run(["cache", "list", "--json", "--cache-dir", setup.cache])
        #expect(after.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(after)")
        let empty = try await MuxCtl.run(["cache", "list", "--cache-dir", setup.cache])
        #expect(empty.stdout.contains("the download cache is empty"), "\(empty)")
    }

    @Test func noCacheDownloadLeavesTheCacheAlone() async throws {
        guard let setup = try Self.setUp() else { return }
        defer { setup.remove() }
        let output = setup.scratch.output("song.m4a")
        let result = try await MuxCtl.run(["download", setup.url, "-o", output, "--no-cache", "--json", "--cache-dir", setup.cache])
        #expect(result.status == 0, "\(result)")
        #expect(fileBytes(output) == setup.audio)
        #expect(setup.scratch.outputFolder == ["song.m4a"], "\(setup.scratch.outputFolder)")
        #expect(Scratch.list(setup.cache).isEmpty, "\(Scratch.list(setup.cache))")

        let usage = try await MuxCtl.run(["download", setup.url, "--no-cache"])
        #expect(usage.status == 64, "\(usage)")
    }

    @Test func mergeWithAnAudioURL() async throws {
        guard let setup = try Self.setUp() else { return }
        defer { setup.remove() }
        let output = setup.scratch.output("merged.mp4")
        let result = try await MuxCtl.run(
            ["merge", "TestMedia/h264_rot90.mp4", setup.url, output, "--json", "--cache-dir", setup.cache])
        #expect(result.exited && result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        let report = try #require(jsonObject(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(result)")
        #expect(report["output"] as? String == output)
        let fetched = try #require(report["audioDownload"] as? [String: Any], "no audioDownload in \(report)")
        #expect(fetched["url"] as? String == setup.url)
        #expect(fetched["source"] as? String == "network")
        #expect(number(fetched["bytes"]) == Double(setup.audio.count))
        #expect((number(fetched["elapsedSeconds"]) ?? -1) >= 0, "\(fetched)")
        #expect((fetched["path"] as? String)?.hasPrefix(setup.cache + "/") == true)
        #expect(setup.scratch.outputFolder == ["merged.mp4"], "\(setup.scratch.outputFolder)")

        let probe = try #require(try await probeJSON(output))
        let streams = try #require(probe["streams"] as? [[String: Any]], "\(probe)")
        #expect(streams.contains { $0["kind"] as? String == "audio" && number($0["sampleRate"]) == 44100 }, "\(streams)")

        // Without the cache: the audio goes to a hidden file beside the output, removed afterwards.
        let direct = setup.scratch.output("direct.mp4")
        let uncached = try await MuxCtl.run(
            ["merge", "TestMedia/h264_rot90.mp4", setup.url, direct, "--json", "--no-cache", "--cache-dir", setup.cache])
        #expect(uncached.status == 0, "\(uncached)")
        #expect((jsonObject(uncached.stdout)?["audioDownload"] as? [String: Any])?["source"] as? String == "network", "\(uncached)")
        #expect(setup.scratch.outputFolder == ["direct.mp4", "merged.mp4"], "\(setup.scratch.outputFolder)")
    }

    @Test func mergeWithAMissingAudioURLFails() async throws {
        guard let setup = try Self.setUp() else { return }
        defer { setup.remove() }
        let url = setup.server.url("missing.m4a")
        let output = setup.scratch.output("merged.mp4")
        let result = try await MuxCtl.run(["merge", "TestMedia/h264_rot90.mp4", url, output, "--cache-dir", setup.cache])
        #expect(result.status == 1, "\(result)")
        #expect(result.firstErrorLine.hasPrefix("error: \(url): the server answered 404"), "\(result)")
        #expect(setup.scratch.outputFolder.isEmpty, "\(setup.scratch.outputFolder)")
    }
}
