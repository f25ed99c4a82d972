#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
package import SystemPackage

// The one read and write path for files MediaMux patches or records, on
// swift-system: its calls retry after signals (EINTR) and `writeAll` goes on
// after short writes. Callers that hold a raw descriptor (FFmpeg's owners in
// the core) keep these errno-style functions; new code can throw `Errno`.

extension FilePermissions {
    /// rw-r--r-- (before the umask): what MediaMux's files are created with.
    package static var createdFile: FilePermissions { [.ownerReadWrite, .groupRead, .otherRead] }
}

extension FileDescriptor {
    /// Reads from `offset` until `buffer` is full or the file ends, going on
    /// after short reads; returns the bytes read.
    package func readAll(fromAbsoluteOffset offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var done = 0
        while done < buffer.count {
            let got = try read(fromAbsoluteOffset: offset + Int64(done), into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]))
            if got == 0 { break }
            done += got
        }
        return done
    }
}

/// What a failed call says, as strerror(3) words it for an `Errno`.
package func systemErrorText(_ error: any Error) -> String {
    (error as? Errno).map { systemErrorText($0.rawValue) } ?? String(describing: error)
}

/// Reads up to `count` bytes at `offset` into `buffer`, going on after short
/// reads and signals until the count or the end of the file. Returns the
/// bytes read, or -1 with errno set.
package func readFully(_ descriptor: Int32, into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int64) -> Int {
    do {
        return try FileDescriptor(rawValue: descriptor).readAll(
            fromAbsoluteOffset: offset, into: UnsafeMutableRawBufferPointer(start: buffer, count: count))
    } catch {
        recordErrno(error)
        return -1
    }
}

/// The size of an open file in bytes; 0 when it cannot be known.
package func fileLength(_ descriptor: Int32) -> Int64 {
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { return 0 }
    return Int64(info.st_size)
}

/// Reads exactly `count` bytes at `offset`, or fewer at the end of the file; nil on an error.
package func readBytes(_ descriptor: Int32, count: Int, at offset: Int64) -> [UInt8]? {
    var bytes = [UInt8](repeating: 0, count: count)
    let got = bytes.withUnsafeMutableBytes { buffer in
        Result { try FileDescriptor(rawValue: descriptor).readAll(fromAbsoluteOffset: offset, into: buffer) }
    }
    switch got {
    case .success(let count):
        bytes.removeLast(bytes.count - count)
        return bytes
    case .failure(let error):
        recordErrno(error)
        return nil
    }
}

/// Opens a file to read (close-on-exec); nil (errno set) when it cannot.
package func openForReading(_ path: String) -> FileDescriptor? {
    do {
        return try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
    } catch {
        recordErrno(error)
        return nil
    }
}

/// `body`'s result over `path` opened for reading (closed after); nil when it cannot be opened.
package func withFileForReading<T>(_ path: String, _ body: (Int32) throws -> T) rethrows -> T? {
    guard let file = openForReading(path) else { return nil }
    defer { try? file.close() }
    return try body(file.rawValue)
}

/// Cuts a file to `length` bytes; false (errno set) when it cannot.
package func truncateFile(_ descriptor: Int32, to length: Int64) -> Bool {
    ftruncate(descriptor, off_t(length)) == 0
}

/// A whole file of at most `limit` bytes; nil when it cannot be read or is larger.
package func readWholeFile(_ path: String, limit: Int = 1 << 30) -> [UInt8]? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var info = stat()
    guard fstat(descriptor, &info) == 0, info.st_size <= limit else { return nil }
    return readBytes(descriptor, count: Int(info.st_size), at: 0)
}

/// Writes all of `bytes` at `offset`, going on after short writes and
/// signals. False with errno set when the system refuses (a full disk).
package func writeFully(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) -> Bool {
    do {
        try FileDescriptor(rawValue: descriptor).writeAll(toAbsoluteOffset: offset, bytes)
        return true
    } catch {
        recordErrno(error)
        return false
    }
}

package func writeFully(_ descriptor: Int32, _ bytes: [UInt8], at offset: Int64) -> Bool {
    bytes.withUnsafeBytes { writeFully(descriptor, $0, at: offset) }
}

/// Makes `path` a file of `bytes` alone (created rw-r--r-- before the
/// umask, or cut to nothing first); false (errno set) when it cannot.
package func writeWholeFile(_ path: String, _ bytes: [UInt8]) -> Bool {
    let file: FileDescriptor
    do {
        file = try FileDescriptor.open(FilePath(path), .writeOnly, options: [.create, .truncate, .closeOnExec], permissions: [.ownerReadWrite, .groupRead, .otherRead])
    } catch {
        recordErrno(error)
        return false
    }
    defer { try? file.close() }
    return writeFully(file.rawValue, bytes, at: 0)
}

/// Leaves `error`'s code in errno, as the functions above promise.
private func recordErrno(_ error: any Error) {
    errno = (error as? Errno)?.rawValue ?? EIO
}
