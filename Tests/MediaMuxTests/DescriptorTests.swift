import Foundation
import Testing
import TestSupport
@testable import MediaMux
@testable import MediaMuxCore
@testable import MediaMuxPreview

/// Every file MediaMux (and FFmpeg for it) holds open is close-on-exec, so
/// a server that starts processes while a merge or a download runs does not
/// hand them its files. Read from /proc/self/fd while the work is under way.
struct DescriptorTests {
    /// The descriptors of this process open on files in `folder`: path and close-on-exec.
    static func descriptors(in folder: String) -> [(path: String, closeOnExec: Bool)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.compactMap { name in
            guard let fd = Int32(name), let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"),
                  target.hasPrefix(folder) else { return nil }
            let flags = fcntl(fd, F_GETFD)
            return flags < 0 ? nil : (target, flags & FD_CLOEXEC != 0)
        }
    }

    final class Seen: Sendable {
        private let entries = Locked<[String: Bool]>([:])
        func record(_ folder: String) {
            let found = DescriptorTests.descriptors(in: folder)
            entries.withLock { for (path, flag) in found { $0[path] = ($0[path] ?? true) && flag } }
        }
        var all: [String: Bool] { entries.withLock { $0 } }
    }

    @Test func mergeDescriptorsAreCloseOnExec() async throws {
        let folder = try TemporaryFolder()
        for name in ["h264_26s_2fps.mp4", "aac_7s.m4a"] {
            try FileManager.default.copyItem(atPath: Fixtures.path(name), toPath: folder.path(name))
        }
        let seen = Seen()
        let root = folder.path("")
        _ = try await MuxEngine().merge(
            video: folder.path("h264_26s_2fps.mp4"), audio: folder.path("aac_7s.m4a"), output: folder.path("out.mp4")
        ) { _ in seen.record(root) }
        // The inputs (FFmpeg's) and the temporary output (ours) were open.
        #expect(seen.all.count >= 2, "\(seen.all)")
        #expect(seen.all.values.allSatisfy { $0 }, "\(seen.all)")
    }

    @Test(.tags(.network), .skippedByTag) func downloadDescriptorsAreCloseOnExec() async throws {
        try await DownloadTests.withServer { server, folder in
            server.serve("/big.mp4", body: DownloadTests.big, contentType: "video/mp4")
            let seen = Seen()
            let root = folder.path("")
            _ = try await MuxEngine().download(server.url("/big.mp4"), options: DownloadTests.options(folder)) { _ in seen.record(root) }
            // The partial body and the cache's lock were open.
            #expect(seen.all.count >= 2, "\(seen.all)")
            #expect(seen.all.values.allSatisfy { $0 }, "\(seen.all)")
        }
    }
}
