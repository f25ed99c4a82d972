import Foundation
import TestSupport

/// Paths into TestMedia, found from the package's location so tests run from any directory.
enum Fixtures {
    static var packageRoot: URL { TestMedia.packageRoot }

    static func path(_ name: String) -> String { TestMedia.fixture(name) }

    /// h264_bframes_aac.mp4 copied to `folder` with its last video frame in
    /// decode order (one no other frame refers to) made undecodable: its
    /// first NAL unit's length says 2 GB. Returns the copy's path.
    static func withADamagedLastFrame(in folder: TemporaryFolder) throws -> String {
        let damaged = folder.path("damaged.mp4")
        try FileManager.default.copyItem(atPath: path("h264_bframes_aac.mp4"), toPath: damaged)
        guard let track = try MP4File(path: damaged).videoTracks.first else { throw CocoaError(.fileReadCorruptFile) }
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: damaged))
        try handle.seek(toOffset: UInt64(track.sampleOffsets[track.sampleCount - 1]))
        handle.write(Data([0x7F, 0xFF, 0xFF, 0xFF]))
        try handle.close()
        return damaged
    }
}

/// A folder of its own for one test, removed when the test is done with it.
final class TemporaryFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("mediamux-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    var contents: [String] { (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [] }

    deinit { try? FileManager.default.removeItem(at: url) }
}
