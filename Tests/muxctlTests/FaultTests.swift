import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Disks that fill up and folders that cannot be written: muxctl says which
/// file could not be written and why, exits 2, and leaves nothing
/// half-written. A full disk is a limit on the size of the files muxctl may
/// write (`ulimit -f`): a write past it fails as one past the end of a full
/// disk does (EFBIG instead of ENOSPC), with no mount needed.
@Suite("faults", .tags(.heavy), .skippedByTag)
struct FaultTests {
    /// ThreadSanitizer's runtime takes a bus error in its own shadow memory
    /// under a file-size limit, in muxctl's first thread, before any of
    /// muxctl's code runs: the limited runs are the plain suite's to make.
    #if MEDIAMUX_SANITIZER_THREAD
    static let fileSizeLimitWorks = false
    #else
    static let fileSizeLimitWorks = true
    #endif
    static let limitCondition = Testing.ConditionTrait.enabled(
        if: fileSizeLimitWorks, "ThreadSanitizer's runtime faults under a file-size limit (SIGBUS in its shadow memory)")

    /// Writes fail at 16 KB; each output here is larger.
    static let limited = MuxCtl.fileSizeLimit(kilobytes: 16)

    static func expectRefusedCleanly(_ result: RunResult, output: String, scratch: Scratch, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.exited && result.status == 2, "\(result)", sourceLocation: sourceLocation)
        #expect(!result.looksLikeCrash, "\(result)", sourceLocation: sourceLocation)
        #expect(result.firstErrorLine.hasPrefix("error: \(output): cannot be written ("), "\(result)", sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, "\(result)", sourceLocation: sourceLocation)
        #expect(scratch.outputFolder.isEmpty, "left behind: \(scratch.outputFolder)", sourceLocation: sourceLocation)
    }

    @Test(limitCondition) func aMergeThatFillsTheDiskLeavesNothing() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("full.mp4")
        let result = try await MuxCtl.run(
            ["merge", MuxCtl.fixture("h264_bframes_aac.mp4"), MuxCtl.fixture("aac_7s.m4a"), output, "--quiet"], launcher: Self.limited)
        Self.expectRefusedCleanly(result, output: output, scratch: scratch)
        #expect(result.firstErrorLine.contains("File too large"), "\(result)")

        // The same merge without the limit: the refusal was the disk's, not the inputs'.
        let unlimited = try await MuxCtl.run(["merge", MuxCtl.fixture("h264_bframes_aac.mp4"), MuxCtl.fixture("aac_7s.m4a"), output, "--quiet"])
        #expect(unlimited.status == 0 && (fileBytes(output)?.count ?? 0) > 16 * 1024, "\(unlimited)")
    }

    /// A preview clip and a contact sheet: `OUT` stands for the output.
    @Test(limitCondition, arguments: [
        ("clip.mp4", ["--clip", "OUT", "--seconds", "3"]),
        ("sheet.png", ["--sheet", "OUT", "--size", "320"]),
    ])
    func aPreviewThatFillsTheDiskLeavesNothing(_ name: String, _ arguments: [String]) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output(name)
        let result = try await MuxCtl.run(
            ["preview", MuxCtl.fixture("h264_bframes_aac.mp4")] + arguments.map { $0 == "OUT" ? output : $0 }, launcher: Self.limited)
        Self.expectRefusedCleanly(result, output: output, scratch: scratch)
    }

    /// A folder muxctl may not write in (run as `nobody` when the tests are
    /// root, whom permissions do not stop).
    @Test func aReadOnlyOutputFolderIsRefusedNamingTheOutput() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        #expect(chmod(scratch.outputs.path, 0o555) == 0)
        defer { chmod(scratch.outputs.path, 0o755) }
        let output = scratch.output("merged.mp4")
        let merge = try await MuxCtl.run(
            ["merge", MuxCtl.fixture("h264_bframes_aac.mp4"), MuxCtl.fixture("aac_7s.m4a"), output, "--quiet"], launcher: MuxCtl.asUnprivileged)
        Self.expectRefusedCleanly(merge, output: output, scratch: scratch)
        #expect(merge.firstErrorLine.contains("Permission denied"), "\(merge)")

        let clip = scratch.output("clip.mp4")
        let preview = try await MuxCtl.run(
            ["preview", MuxCtl.fixture("h264_bframes_aac.mp4"), "--clip", clip, "--seconds", "1"], launcher: MuxCtl.asUnprivileged)
        Self.expectRefusedCleanly(preview, output: clip, scratch: scratch)
    }

    /// The cache holds one copy of the song; the server's copy changes, and
    /// the new one does not fit: the download fails naming the cache file,
    /// and the copy cached before is still there, whole, and still served.
    @Test(limitCondition) func aCacheThatFillsUpMidDownloadKeepsThePreviousCopy() async throws {
        guard let setup = try DownloadCommandTests.setUp() else { return }
        defer { setup.remove() }
        let small = try #require(fileBytes(MuxCtl.fixture("aac_2s.m4a")))
        let song = setup.scratch.input("song.m4a")
        try small.write(to: URL(fileURLWithPath: song))
        let first = try await MuxCtl.run(["download", setup.url, "--json", "--cache-dir", setup.cache])
        #expect(first.status == 0, "\(first)")
        let cached = try #require(jsonObject(first.stdout)?["path"] as? String, "\(first)")
        #expect(fileBytes(cached) == small)

        // A newer, larger song (31 KB) on the server; the disk takes 16 KB a file.
        try setup.audio.write(to: URL(fileURLWithPath: song))
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(60)], ofItemAtPath: song)
        let full = try await MuxCtl.run(["download", setup.url, "--json", "--cache-dir", setup.cache], launcher: Self.limited)
        #expect(full.exited && full.status != 0, "\(full)")
        #expect(!full.looksLikeCrash, "\(full)")
        #expect(full.firstErrorLine.hasPrefix("error: \(setup.cache)/"), "\(full)")
        #expect(full.firstErrorLine.contains("File too large"), "\(full)")
        #expect(fileBytes(cached) == small, "the cached copy changed")

        // Listed as it was; the next download with room replaces it.
        let list = try await MuxCtl.run(["cache", "list", "--json", "--cache-dir", setup.cache])
        let entries = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]]
        #expect(entries?.count == 1 && number(entries?.first?["bytes"]) == Double(small.count), "\(list)")
        let again = try await MuxCtl.run(["download", setup.url, "--json", "--cache-dir", setup.cache])
        #expect(again.status == 0, "\(again)")
        let path = try #require(jsonObject(again.stdout)?["path"] as? String, "\(again)")
        #expect(fileBytes(path) == setup.audio)
    }
}
