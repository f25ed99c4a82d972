import Foundation
import Testing
@testable import MediaMux
@testable import MediaMuxBase
@testable import MediaMuxCore
@testable import MediaMuxPreview

/// Replacing an existing output: the name holds the old file until the new
/// one takes it, in one step, and nothing is left beside it.
struct TemporaryOutputTests {
    static func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    static func read(_ path: String) -> String? {
        (try? Data(contentsOf: URL(fileURLWithPath: path))).map { String(decoding: $0, as: UTF8.self) }
    }

    /// An anonymous output has no name in its folder while it is written
    /// (Linux's O_TMPFILE: what a killed process leaves is nothing), and
    /// takes its name complete: not over an existing file without
    /// `overwrite`, over it with; dropped, it is gone.
    @Test func anAnonymousOutputHasNoNameUntilComplete() throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        let temporary = TemporaryOutput(anonymous: output)
        #expect(temporary.isAnonymous, "no O_TMPFILE in \(folder.url.path)")
        try Self.write("new!", to: temporary.path)
        #expect(folder.contents.isEmpty, "\(folder.contents)")
        #expect(try temporary.commit(overwrite: false) == 4)
        #expect(Self.read(output) == "new!" && folder.contents == ["out.mp4"])

        let second = TemporaryOutput(anonymous: output)
        try Self.write("newer", to: second.path)
        #expect(throws: MediaMuxError.outputExists(path: output)) { _ = try second.commit(overwrite: false) }
        #expect(try second.commit(overwrite: true) == 5)
        #expect(Self.read(output) == "newer" && folder.contents == ["out.mp4"], "\(folder.contents)")

        let dropped = TemporaryOutput(anonymous: folder.path("gone.mp4"))
        let sink = try dropped.sink()
        try [UInt8]("bytes".utf8).withUnsafeBytes { try sink.write($0) }
        dropped.discard()
        #expect(folder.contents == ["out.mp4"])
    }

    /// Where no anonymous file can be made, a killed process's hidden file
    /// is cleared by the next output of its name, once nothing has written
    /// it for a quarter of an hour; a fresh one (another process's work in
    /// progress) and other outputs' stay.
    @Test func staleHiddenFilesOfTheSameNameAreCleared() throws {
        let folder = try TemporaryFolder()
        let old = folder.path(".out.mp4.mediamux-1a.partial")
        let fresh = folder.path(".out.mp4.mediamux-2b.partial")
        let other = folder.path(".other.mp4.mediamux-3c.partial")
        for path in [old, fresh, other] { try Self.write("part", to: path) }
        let hourAgo = Date(timeIntervalSinceNow: -3600)
        for path in [old, other] { try FileManager.default.setAttributes([.modificationDate: hourAgo], ofItemAtPath: path) }
        TemporaryOutput.removeStaleLeftovers(of: folder.path("out.mp4"))
        #expect(folder.contents == [".other.mp4.mediamux-3c.partial", ".out.mp4.mediamux-2b.partial"], "\(folder.contents)")
    }

    @Test func anExistingFileIsReplaced() throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        try Self.write("old", to: output)
        let temporary = TemporaryOutput(finalPath: output)
        try Self.write("new!", to: temporary.path)
        #expect(try temporary.commit(overwrite: true) == 4)
        #expect(Self.read(output) == "new!")
        #expect(folder.contents == ["out.mp4"])
    }

    @Test func aNewFileIsPlaced() throws {
        let folder = try TemporaryFolder()
        let temporary = TemporaryOutput(finalPath: folder.path("out.mp4"))
        try Self.write("new", to: temporary.path)
        _ = try temporary.commit(overwrite: true)
        #expect(Self.read(folder.path("out.mp4")) == "new")
        #expect(folder.contents == ["out.mp4"])
    }

    /// As rename(2) does: the link is replaced, the file it points to is not touched.
    @Test func aSymbolicLinkIsReplacedNotFollowed() throws {
        let folder = try TemporaryFolder()
        let target = folder.path("target.mp4")
        try Self.write("target", to: target)
        let output = folder.path("out.mp4")
        try FileManager.default.createSymbolicLink(atPath: output, withDestinationPath: target)
        let temporary = TemporaryOutput(finalPath: output)
        try Self.write("new", to: temporary.path)
        _ = try temporary.commit(overwrite: true)
        #expect(Self.read(output) == "new")
        #expect(Self.read(target) == "target")
        #expect(isRegularFile(output))
        #expect(folder.contents.sorted() == ["out.mp4", "target.mp4"])
    }

    /// Another name of the old file keeps the old contents.
    @Test func aHardLinkedOutputLeavesItsOtherNameAlone() throws {
        let folder = try TemporaryFolder()
        let output = folder.path("out.mp4")
        try Self.write("old", to: output)
        try FileManager.default.linkItem(atPath: output, toPath: folder.path("other.mp4"))
        let temporary = TemporaryOutput(finalPath: output)
        try Self.write("new", to: temporary.path)
        _ = try temporary.commit(overwrite: true)
        #expect(Self.read(output) == "new")
        #expect(Self.read(folder.path("other.mp4")) == "old")
        #expect(folder.contents.sorted() == ["other.mp4", "out.mp4"])
    }

    @Test func exchangingNamesSwapsTwoFiles() throws {
        let folder = try TemporaryFolder()
        try Self.write("a", to: folder.path("a"))
        try Self.write("b", to: folder.path("b"))
        #expect(exchangeNames(folder.path("a"), folder.path("b")))
        #expect(Self.read(folder.path("a")) == "b" && Self.read(folder.path("b")) == "a")
        #expect(!exchangeNames(folder.path("a"), folder.path("missing")))
        #expect(Self.read(folder.path("a")) == "b")
    }
}
