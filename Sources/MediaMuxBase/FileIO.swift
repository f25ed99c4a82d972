#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads up to `count` bytes at `offset` into `buffer`, going on after short
/// reads and signals (EINTR) until the count or the end of the file. Returns
/// the bytes read, or -1 with errno set.
package func readFully(_ descriptor: Int32, into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int64) -> Int {
    var done = 0
    while done < count {
        let got = pread(descriptor, buffer + done, count - done, off_t(offset) + off_t(done))
        if got < 0 {
            if errno == EINTR { continue }
            return -1
        }
        if got == 0 { break }
        done += got
    }
    return done
}

/// Reads exactly `count` bytes at `offset`, or fewer at the end of the file; nil on an error.
package func readBytes(_ descriptor: Int32, count: Int, at offset: Int64) -> [UInt8]? {
    var bytes = [UInt8](repeating: 0, count: count)
    let got = bytes.withUnsafeMutableBytes { readFully(descriptor, into: $0.baseAddress!, count: count, at: offset) }
    guard got >= 0 else { return nil }
    bytes.removeLast(count - got)
    return bytes
}

/// Writes all of `bytes` at `offset`, going on after short writes and
/// signals. False with errno set when the system refuses (a full disk).
package func writeFully(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) -> Bool {
    var done = 0
    while done < bytes.count {
        let wrote = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
        if wrote < 0 {
            if errno == EINTR { continue }
            return false
        }
        if wrote == 0 {
            errno = EIO
            return false
        }
        done += wrote
    }
    return true
}

package func writeFully(_ descriptor: Int32, _ bytes: [UInt8], at offset: Int64) -> Bool {
    bytes.withUnsafeBytes { writeFully(descriptor, $0, at: offset) }
}
