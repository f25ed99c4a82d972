import Foundation
import Testing

// The slow kinds of test, in both test targets, tagged so that a developer can leave them out:
//
//     MEDIAMUX_SKIP_TAGS=browser,gstreamer,network,heavy swift test
//
// runs the pure and fast tests alone (see the README's "Tests"). Each tagged
// suite or test also carries `.skippedByTag`, which reads its tags against
// that list: this toolchain's `swift test` cannot filter by tag yet
// (`--filter tag:NAME` comes with a later Swift Testing).
extension Tag {
    /// Plays or shows an output in headless Chromium (seconds a test).
    @Tag public static var browser: Tag
    /// Decodes or inspects an output with GStreamer's tools.
    @Tag public static var gstreamer: Tag
    /// Downloads from the tests' HTTP server on 127.0.0.1.
    @Tag public static var network: Tag
    /// Encodes pictures, runs many merges at once, or starts and stops
    /// processes: the slowest, under the sanitizers above all.
    @Tag public static var heavy: Tag
}

/// Leaves a test out when `MEDIAMUX_SKIP_TAGS` names one of its tags (its
/// suite's included); a skipped test is reported as skipped, with the reason.
public struct SkippedByTag: SuiteTrait, TestTrait {
    public var isRecursive: Bool { true }

    public func prepare(for test: Test) async throws {
        let skipped = Set((ProcessInfo.processInfo.environment["MEDIAMUX_SKIP_TAGS"] ?? "").split(separator: ",").map {
            String($0).trimmingCharacters(in: .whitespaces)
        })
        let named = test.tags.map { String(describing: $0).trimmingCharacters(in: CharacterSet(charactersIn: ".")) }
        let hit = named.filter(skipped.contains)
        try await ConditionTrait.disabled(if: !hit.isEmpty, "MEDIAMUX_SKIP_TAGS names \(hit.joined(separator: ", "))").prepare(for: test)
    }
}

extension Trait where Self == SkippedByTag {
    /// Left out when `MEDIAMUX_SKIP_TAGS` names one of the test's tags.
    public static var skippedByTag: Self { SkippedByTag() }
}
