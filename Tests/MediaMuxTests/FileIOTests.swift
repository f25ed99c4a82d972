import Foundation
import MediaMuxBase
import Testing

/// The one read and write path for files MediaMux patches or records:
/// whole buffers or an error, never a silent short count.
struct FileIOTests {
    @Test func roundTripAndShortReadAtTheEnd() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("data")
        let bytes = SHA256Tests.pattern(count: 3 << 20)
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        #expect(writeFully(descriptor, bytes, at: 0))
        #expect(writeFully(descriptor, [1, 2, 3], at: Int64(bytes.count)))
        #expect(readBytes(descriptor, count: bytes.count, at: 0) == bytes)
        // Past the end: what there is, not an error.
        #expect(readBytes(descriptor, count: 10, at: Int64(bytes.count)) == [1, 2, 3])
        #expect(readBytes(descriptor, count: 10, at: Int64(bytes.count) + 3) == [])
    }

    /// A device that is always full: the write fails with the system's reason.
    @Test func aFullDeviceIsAnError() throws {
        let descriptor = open("/dev/full", O_WRONLY | O_CLOEXEC)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        #expect(!writeFully(descriptor, [UInt8](repeating: 7, count: 4096), at: 0))
        #expect(errno == ENOSPC)
    }
}
