import MediaMuxBase
import Crypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SHA-256 (swift-crypto's) of bytes and of files, as lowercase hex.
package enum FileDigest {
    package static func sha256(of bytes: [UInt8]) -> String {
        hex(SHA256.hash(data: bytes))
    }

    /// Hashes a file in 1 MiB reads, continuing after signals.
    ///
    /// Throws `MediaMuxError.fileNotFound` when the path does not exist,
    /// `.notAFile` for a directory, and `.unreadable` for any other failure
    /// of open(2) or read(2).
    package static func sha256(file path: String) throws -> String {
        var descriptor: Int32
        repeat {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
        } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else { throw fileError(path: path, code: errno) }
        defer { close(descriptor) }
        #if os(Linux)
        _ = posix_fadvise(descriptor, 0, 0, POSIX_FADV_SEQUENTIAL)
        #endif
        let chunk = 1 << 20
        let storage = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 64)
        defer { storage.deallocate() }
        var hasher = SHA256()
        var offset: Int64 = 0
        while true {
            let got = readFully(descriptor, into: storage, count: chunk, at: offset)
            guard got >= 0 else { throw fileError(path: path, code: errno) }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(start: storage, count: got))
            offset += Int64(got)
            if got < chunk { break }
        }
        return hex(hasher.finalize())
    }

    private static func hex(_ digest: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in digest {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func fileError(path: String, code: Int32) -> MediaMuxError {
        switch code {
        case ENOENT: return .fileNotFound(path: path)
        case EISDIR: return .notAFile(path: path)
        default: return .unreadable(path: path, reason: String(cString: strerror(code)))
        }
    }
}
