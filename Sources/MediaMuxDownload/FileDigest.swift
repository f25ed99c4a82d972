import MediaMuxBase
import Crypto
import SystemPackage

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
        do {
            let file = try FileDescriptor.open(FilePath(path), .readOnly, options: .closeOnExec)
            return try file.closeAfter {
                adviseSequentialReading(file)
                let chunk = 1 << 20
                let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 64)
                defer { storage.deallocate() }
                var hasher = SHA256()
                var offset: Int64 = 0
                while true {
                    let got = try file.readAll(fromAbsoluteOffset: offset, into: storage)
                    hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: storage[..<got]))
                    offset += Int64(got)
                    if got < chunk { break }
                }
                return hex(hasher.finalize())
            }
        } catch let error as Errno {
            throw fileError(path: path, code: error)
        }
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

    private static func fileError(path: String, code: Errno) -> MediaMuxError {
        switch code {
        case .noSuchFileOrDirectory: return .fileNotFound(path: path)
        case .isDirectory: return .notAFile(path: path)
        default: return .unreadable(path: path, reason: systemErrorText(code))
        }
    }
}
