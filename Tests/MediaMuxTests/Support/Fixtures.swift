import Foundation
import TestSupport

/// Paths into TestMedia, found from the package's location so tests run from any directory.
enum Fixtures {
    static var packageRoot: URL { TestMedia.packageRoot }

    static func path(_ name: String) -> String { TestMedia.fixture(name) }
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
