import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `muxctl merge VIDEO AUDIO -`: fragmented MP4 on standard output, the
/// summary on standard error; `--fragmented` writes the same bytes to a file;
/// a reader that stops is a one-line error, not a silent death by SIGPIPE.
struct StreamOutputTests {
    static let video = MuxCtl.fixture("h264_bframes_aac.mp4")
    static let audio = MuxCtl.fixture("aac_7s.m4a")

    @Test func standardOutputGetsWhatFragmentedWritesToAFile() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let file = scratch.output("out.mp4")
        let written = try await MuxCtl.run(["merge", Self.video, Self.audio, file, "--fragmented"])
        #expect(written.status == 0, "\(written)")
        let streamed = try await MuxCtl.run(["merge", Self.video, Self.audio, "-"])
        #expect(streamed.status == 0, "\(streamed)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(bytes.count > 10_000 && streamed.stdoutBytes == bytes, "standard output had \(streamed.stdoutBytes.count) bytes, the file \(bytes.count)")
        // The summary goes to standard error, naming the output.
        #expect(streamed.stderr.contains("wrote standard output: 4.000 s") && streamed.stderr.contains("fragmented MP4"), "\(streamed.stderr)")
        // Nothing else appears beside the file.
        #expect(scratch.outputFolder == ["out.mp4"])
    }

    @Test func jsonGoesToStandardErrorWhenTheMergeIsOnStandardOutput() async throws {
        let run = try await MuxCtl.run(["merge", Self.video, Self.audio, "-", "--json"])
        #expect(run.status == 0, "\(run)")
        let line = try #require(run.stderrLines.last)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["output"] as? String == "standard output" && object["layout"] as? String == "fragmented")
        #expect(run.stdoutBytes.count > 10_000 && run.stdoutBytes.prefix(8).suffix(4) == Data("ftyp".utf8))
    }

    /// Standard output is a pipe nobody reads: every write fails with EPIPE.
    @Test func aReaderThatStopsIsAOneLineError() throws {
        let binary = try #require(MuxCtl.binary)
        let pipe = Pipe()
        try pipe.fileHandleForReading.close()
        let errors = Pipe()
        let process = Process()
        process.executableURL = binary
        process.arguments = ["merge", Self.video, Self.audio, "-"]
        process.standardOutput = pipe.fileHandleForWriting
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit, "muxctl was killed by signal \(process.terminationStatus)")
        #expect(process.terminationStatus == 2, "exit status \(process.terminationStatus): \(said)")
        let lines = said.split(separator: "\n")
        #expect(lines.count == 1 && lines.first?.hasPrefix("error: standard output: ") == true, "\(said)")
        #expect(said.contains("broken pipe"), "\(said)")
    }

    @Test func fragmentsPutTheirHeaderFirstAndAreMP4() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let noFaststart = try await MuxCtl.run(["merge", Self.video, Self.audio, "-", "--no-faststart"])
        #expect(noFaststart.status == 64 && noFaststart.stderr.contains("--no-faststart"), "\(noFaststart)")
        #expect(noFaststart.stdoutBytes.isEmpty)
        let mov = try await MuxCtl.run(["merge", Self.video, Self.audio, scratch.output("out.mov"), "--fragmented"])
        #expect(mov.status == 2 && mov.firstErrorLine.contains("fragmented output is MP4"), "\(mov)")
        #expect(scratch.outputFolder.isEmpty)
    }

    /// Binary on a terminal helps nobody: refused before any work, with the way to pipe it.
    @Test func aTerminalIsNoPlaceForTheStream() throws {
        let binary = try #require(MuxCtl.binary)
        let script = "/usr/bin/script"
        try #require(FileManager.default.isExecutableFile(atPath: script), "util-linux's script is not installed")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: script)
        // script gives the command a pseudo-terminal for its standard output, and returns its exit status.
        process.arguments = ["-qec", "'\(binary.path)' merge '\(Self.video)' '\(Self.audio)' -", "/dev/null"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 64, "\(said)")
        #expect(said.contains("standard output is a terminal"), "\(said)")
        #expect(!said.contains("ftyp"), "bytes of the merge reached the terminal")
    }
}
