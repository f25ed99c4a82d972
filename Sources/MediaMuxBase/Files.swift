import Synchronization

/// A flag the packet loop and FFmpeg's interrupt callback both read, set from
/// Task cancellation on another thread. Atomic, hence Sendable.
package final class CancellationFlag: Sendable {
    private let raised = Atomic<Bool>(false)
    package init() {}
    package func raise() { raised.store(true, ordering: .relaxed) }
    package var isRaised: Bool { raised.load(ordering: .relaxed) }
}

/// Checks the path before FFmpeg sees it, so that the common mistakes get
/// precise messages rather than FFmpeg's generic ones.
package func checkReadableFile(_ path: String) throws {
    guard let status = fileStatus(path) else {
        if [.noSuchFileOrDirectory, .notDirectory].contains(lastSystemError) { throw MediaMuxError.fileNotFound(path: path) }
        throw MediaMuxError.unreadable(path: path, reason: systemErrorText())
    }
    if status.isFolder { throw MediaMuxError.notAFile(path: path) }
    guard canRead(path) else {
        throw MediaMuxError.unreadable(path: path, reason: systemErrorText())
    }
    if status.size == 0 { throw MediaMuxError.notMedia(path: path, detail: "the file is empty") }
}
