import Foundation
import Testing

/// Where the tests' media is, for both test targets: the fixtures generated
/// into TestMedia, and the real files other projects made (phones, encoders,
/// recorders), which stay out of this repository.
public enum TestMedia {
    /// The package root, from this file's path (`Tests/TestSupport/<file>`).
    public static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A generated fixture in TestMedia.
    public static func fixture(_ name: String) -> String {
        packageRoot.appendingPathComponent("TestMedia").appendingPathComponent(name).path
    }
}

/// The real files are read where `MEDIAMUX_SAMPLES` says, by default
/// `../shared/media` beside the package root, as FFmpeg's FATE suite reads
/// its samples through `SAMPLES`. Their sources, licences and box-level notes
/// are in that folder's SOURCES.md.
///
/// A test that reads them carries `Samples.required`: without the folder (a
/// clone elsewhere) it is left out by name, with the reason, and `make test`
/// says so at its end. With the folder, a file missing from it fails the test
/// that opens it. CI (`.ci/run`) stops at once when the folder is missing.
public enum Samples {
    public static let folder: URL = {
        if let configured = ProcessInfo.processInfo.environment["MEDIAMUX_SAMPLES"], !configured.isEmpty {
            return URL(fileURLWithPath: configured, relativeTo: TestMedia.packageRoot).standardizedFileURL
        }
        return TestMedia.packageRoot.appendingPathComponent("../shared/media").standardizedFileURL
    }()

    public static let available: Bool = {
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder) && isFolder.boolValue
    }()

    /// The trait of every test that reads a real file.
    public static var required: ConditionTrait {
        .enabled(if: available, "no samples folder: set MEDIAMUX_SAMPLES")
    }

    /// A real file, by its name in the samples folder.
    public static func path(_ name: String) -> String {
        folder.appendingPathComponent(name).path
    }
}

/// A media file a test case names: a fixture (a string literal), or a real
/// file from the samples folder (`.sample(NAME)`). Tables of cases mix the
/// two; a test runs the fixtures, and its twin with `Samples.required` the
/// samples.
public enum MediaFile: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    case fixture(String)
    case sample(String)

    public init(stringLiteral name: String) { self = .fixture(name) }

    public var path: String {
        switch self {
        case .fixture(let name): TestMedia.fixture(name)
        case .sample(let name): Samples.path(name)
        }
    }

    public var isSample: Bool {
        if case .sample = self { true } else { false }
    }

    public var description: String {
        switch self {
        case .fixture(let name): name
        case .sample(let name): "samples/" + name
        }
    }
}
