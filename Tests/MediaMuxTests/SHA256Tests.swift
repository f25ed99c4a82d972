import Foundation
import Testing
@testable import MediaMux
@testable import MediaMuxCore
@testable import MediaMuxPreview
@testable import MediaMuxDownload

/// SHA-256 (swift-crypto's, read from files in 1 MiB steps) against the
/// FIPS 180-4 example vectors and against /usr/bin/sha256sum on files.
struct SHA256Tests {
    static func digest(_ bytes: [UInt8]) -> String {
        FileDigest.sha256(of: bytes)
    }

    /// Deterministic bytes covering all values.
    static func pattern(count: Int, seed: UInt32 = 0x9e37_79b9) -> [UInt8] {
        // A plain loop: a generic `map` over a range asks the runtime for
        // metadata at every element in a debug build, under a lock when
        // ThreadSanitizer is on.
        var x = seed
        var bytes = [UInt8](repeating: 0, count: count)
        var index = 0
        while index < count {
            x = x &* 1_664_525 &+ 1_013_904_223
            bytes[index] = UInt8(truncatingIfNeeded: x >> 24)
            index += 1
        }
        return bytes
    }

    /// Runs /usr/bin/sha256sum on a file and returns its hex digest.
    static func sha256sum(_ path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        let text = String(decoding: output, as: UTF8.self)
        return String(text.prefix(while: { $0 != " " }))
    }

    @Test("FIPS 180-4 example vectors", arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func vectors(message: String, expected: String) {
        #expect(Self.digest(Array(message.utf8)) == expected)
    }

    @Test func oneMillionA() {
        let expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        #expect(Self.digest([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)) == expected)
    }

    @Test func hashFileMatchesMemoryAndSha256sum() throws {
        let folder = try TemporaryFolder()
        // Several 1 MiB reads plus a tail that is not a whole block.
        let bytes = Self.pattern(count: 3 * 1_048_576 + 12_345)
        let path = folder.path("data.bin")
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let fromFile = try FileDigest.sha256(file: path)
        #expect(fromFile == Self.digest(bytes))
        #expect(fromFile == (try Self.sha256sum(path)))
    }

    @Test("Padding boundaries agree with sha256sum", arguments: [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129])
    func paddingBoundaries(length: Int) throws {
        let folder = try TemporaryFolder()
        let bytes = Self.pattern(count: length, seed: UInt32(length))
        let path = folder.path("len\(length).bin")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let expected = try Self.sha256sum(path)
        #expect(Self.digest(bytes) == expected)
        #expect(try FileDigest.sha256(file: path) == expected)
    }

    @Test func hashFileErrors() throws {
        let folder = try TemporaryFolder()
        #expect(throws: MediaMuxError.fileNotFound(path: folder.path("missing"))) {
            try FileDigest.sha256(file: folder.path("missing"))
        }
        #expect(throws: MediaMuxError.notAFile(path: folder.url.path)) {
            try FileDigest.sha256(file: folder.url.path)
        }
    }
}
