import Foundation
import Testing
@testable import MediaMux
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
