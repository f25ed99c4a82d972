#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
package import SystemPackage

// The C library's file and process calls that the other modules need, in
// one place beside FileIO.swift (reads and writes): outside MediaMuxBase no
// module imports Glibc or Darwin for files. Calls that report through errno
// leave it set for `systemErrorText()`.

/// Removes a file's name; false (errno set) when it cannot, a missing one included.
@discardableResult
package func removeFile(_ path: String) -> Bool {
    unlink(path) == 0
}

/// Removes an empty folder; false (errno set) when it cannot.
@discardableResult
package func removeFolder(_ path: String) -> Bool {
    rmdir(path) == 0
}

/// Gives `source` the name `target` in one step, replacing what `target`
/// named; false (errno set) when it cannot.
package func renameFile(_ source: String, to target: String) -> Bool {
    rename(source, target) == 0
}

/// A second name for a file (a hard link); false (errno set) when the file
/// system or the folders do not allow one.
package func linkFile(_ source: String, to target: String) -> Bool {
    link(source, target) == 0
}

/// A new file with no name in `folder` (Linux's O_TMPFILE), read-write,
/// rw-r--r-- before the umask: it vanishes with its last descriptor, a
/// killed process's included, unless `linkAnonymousFile` names it. Nil
/// (errno set) where the system or the file system has none.
package func openAnonymousFile(in folder: String) -> Int32? {
    #if os(Linux)
    // O_TMPFILE is a macro Swift does not import: its parts are plain constants.
    let descriptor = open(folder, __O_TMPFILE | O_DIRECTORY | O_RDWR | O_CLOEXEC, 0o644)
    return descriptor >= 0 ? descriptor : nil
    #else
    errno = ENOTSUP
    return nil
    #endif
}

/// Names the anonymous file open as `descriptor` `target`, which must not
/// exist; false (errno set, EEXIST when it does) when it cannot.
package func linkAnonymousFile(_ descriptor: Int32, to target: String) -> Bool {
    #if os(Linux)
    // Through /proc, as linkat(2) describes: AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH.
    return linkat(AT_FDCWD, "/proc/self/fd/\(descriptor)", AT_FDCWD, target, AT_SYMLINK_FOLLOW) == 0
    #else
    errno = ENOTSUP
    return false
    #endif
}

/// What `fstat` says of an open file: its size in bytes; nil (errno set) when it cannot.
package func openFileSize(_ descriptor: Int32) -> Int64? {
    var info = stat()
    return fstat(descriptor, &info) == 0 ? Int64(info.st_size) : nil
}

/// Closes a descriptor this module opened.
package func closeDescriptor(_ descriptor: Int32) {
    close(descriptor)
}

/// Makes a folder (rwxr-xr-x before the umask); true when it exists afterwards as one made now or before.
package func makeFolder(_ path: String) -> Bool {
    mkdir(path, 0o755) == 0 || errno == EEXIST
}

/// A file's size in bytes, following links; 0 when it cannot be read.
package func fileSize(_ path: String) -> Int64 {
    var info = stat()
    return stat(path, &info) == 0 ? Int64(info.st_size) : 0
}

/// What `stat` says of a path, following links.
package struct FileStatus: Sendable, Equatable {
    package var isRegularFile: Bool
    package var isFolder: Bool
    package var size: Int64
    /// Nanoseconds since 1970.
    package var modified: Int64
    /// The file's device and inode: two names with both equal are one file.
    package var identity: FileIdentity
}

/// A file's device and inode numbers.
package struct FileIdentity: Sendable, Hashable {
    package var device: UInt64
    package var inode: UInt64
}

/// The path's status; nil (errno set) when it cannot be read.
package func fileStatus(_ path: String) -> FileStatus? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    #if canImport(Darwin)
    let time = info.st_mtimespec
    #else
    let time = info.st_mtim
    #endif
    return FileStatus(
        isRegularFile: (info.st_mode & S_IFMT) == S_IFREG, isFolder: (info.st_mode & S_IFMT) == S_IFDIR, size: Int64(info.st_size),
        modified: Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec),
        identity: FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
}

/// The error the last failed call here left in errno.
package var lastSystemError: Errno { Errno(rawValue: errno) }

/// Whether this process may read the file (access(2) with R_OK; errno set when not).
package func canRead(_ path: String) -> Bool {
    access(path, R_OK) == 0
}

/// Whether anything is at `path`, following links (access(2) with F_OK).
package func pathExists(_ path: String) -> Bool {
    access(path, F_OK) == 0
}

/// A folder for outputs: made when missing (its parent must exist). True
/// when this call made it.
@discardableResult
package func prepareFolder(_ folder: String) throws -> Bool {
    if let status = fileStatus(folder) {
        guard status.isFolder else { throw MediaMuxError.outputNotWritable(path: folder, reason: "not a folder") }
        return false
    }
    if mkdir(folder, 0o755) == 0 { return true }
    if errno == EEXIST { return false }
    if errno == ENOENT { throw MediaMuxError.outputDirectoryMissing(path: folder) }
    throw MediaMuxError.outputNotWritable(path: folder, reason: systemErrorText())
}

/// Processors online, at least 1.
package var processorCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

/// The signals that ask a process to stop (SIGINT, SIGTERM).
package let stopSignals: [Int32] = [SIGINT, SIGTERM]

/// Has the process ignore `number` (its default action no longer runs).
package func ignoreSignal(_ number: Int32) {
    signal(number, SIG_IGN)
}

/// Past a file-size limit (`ulimit -f`) a write then fails with EFBIG,
/// reported as a full disk is, instead of SIGXFSZ killing the process.
package func ignoreFileSizeLimitSignal() {
    ignoreSignal(SIGXFSZ)
}

/// Has a write to a pipe whose reader has gone fail with EPIPE, which the
/// writer reports, instead of SIGPIPE ending the process without a word.
package func ignoreBrokenPipeSignal() {
    ignoreSignal(SIGPIPE)
}

/// Whether standard output is a terminal.
package var standardOutputIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

/// Whether standard error is a terminal.
package var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

/// Unbuffered, straight to file descriptor 2: progress and errors must show at once.
package func writeToStandardError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in _ = write(STDERR_FILENO, bytes.baseAddress, bytes.count) }
}

/// The calling thread's id (pthread_self), to tell threads apart.
package var currentThreadID: UInt {
    #if os(Linux)
    return UInt(pthread_self())
    #else
    return UInt(bitPattern: pthread_self())
    #endif
}

/// Ends the process with `status` (exit(3): buffered output is flushed).
package func exitProcess(_ status: Int32) -> Never {
    exit(status)
}

/// Ends the process with SIGABRT, as a crash (what a fuzzer records).
package func abortProcess() -> Never {
    abort()
}

/// This process's id.
package var processID: Int32 { getpid() }

/// Tells the kernel a file will be read from start to end (Linux's
/// read-ahead doubles); nothing elsewhere.
package func adviseSequentialReading(_ file: FileDescriptor) {
    #if os(Linux)
    _ = posix_fadvise(file.rawValue, 0, 0, POSIX_FADV_SEQUENTIAL)
    #endif
}

/// An exclusive flock on `path` (made if missing) when it is free now, else nil.
package func tryLockFile(_ path: String) -> Int32? {
    let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { return nil }
    guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
        close(descriptor)
        return nil
    }
    return descriptor
}

/// Releases a lock `tryLockFile` took.
package func unlockFile(_ descriptor: Int32) {
    flock(descriptor, LOCK_UN)
    close(descriptor)
}

/// Holds an exclusive flock on `lockPath` (made if missing) while `body`
/// runs, waiting in 50 ms steps for other tasks and processes. With
/// `removingAfter`, the holder removes the file when done; a waiter that then
/// holds the lock of a removed file notices (the name no longer leads to it)
/// and locks the new one, so two holders never overlap.
package func withFileLock<T>(
    _ lockPath: String, removingAfter: Bool, failure: (String) -> MediaMuxError, _ body: () async throws -> T
) async throws -> T {
    while true {
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure(systemErrorText()) }
        var locked = false
        defer {
            if locked { flock(descriptor, LOCK_UN) }
            close(descriptor)
        }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else { throw failure(systemErrorText()) }
            try await Task.sleep(for: .milliseconds(50))
        }
        locked = true
        var held = stat()
        var named = stat()
        guard fstat(descriptor, &held) == 0, stat(lockPath, &named) == 0, held.st_ino == named.st_ino, held.st_dev == named.st_dev else {
            continue
        }
        defer { if removingAfter { unlink(lockPath) } }
        return try await body()
    }
}

/// A file's modification time in nanoseconds, or nil if it cannot be read.
package func modificationTime(_ path: String) -> Int64? {
    fileStatus(path)?.modified
}

package func secondsSince1970() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec)
}

/// Copies a whole file between two descriptors. On Linux a reflink shares
/// the blocks where the file system can (btrfs, xfs), else the kernel copies
/// without a trip through user space (sendfile); elsewhere, through a buffer.
package func copyContents(from input: FileDescriptor, to output: FileDescriptor) throws {
    #if os(Linux)
    // FICLONE from linux/fs.h: _IOW(0x94, 9, int).
    let fileCloneRequest: UInt = 0x4004_9409
    if ioctl(output.rawValue, fileCloneRequest, input.rawValue) == 0 { return }
    while true {
        let copied = sendfile(output.rawValue, input.rawValue, nil, 1 << 30)
        if copied == 0 { return }
        if copied < 0 && errno != EINTR { throw Errno(rawValue: errno) }
    }
    #else
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var offset: Int64 = 0
    while true {
        let got = try buffer.withUnsafeMutableBytes { try input.readAll(fromAbsoluteOffset: offset, into: $0) }
        if got == 0 { return }
        try output.writeAll(toAbsoluteOffset: offset, buffer[..<got])
        offset += Int64(got)
    }
    #endif
}


/// A time as "2026-11-26 21:53 UTC".
package func formatDate(_ seconds: Int64) -> String {
    var time = time_t(seconds)
    var parts = tm()
    gmtime_r(&time, &parts)
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)) UTC"
}

/// The system's folder for temporary files: $TMPDIR, or /tmp.
package func temporaryFolder() -> String {
    guard let value = getenv("TMPDIR"), value.pointee != 0 else { return "/tmp" }
    let folder = String(cString: value)
    return folder.count > 1 && folder.hasSuffix("/") ? String(folder.dropLast()) : folder
}
