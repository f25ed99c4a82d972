import Testing
@testable import MediaMux
@testable import MediaMuxCore
@testable import MediaMuxPreview

/// The orientation rule as a table: (source clockwise rotation, coded W, H, orientation) -> rotation written.
struct RotationRuleTests {
    static let cases: [(Int, Int, Int, Orientation, Int)] = [
        // Landscape: already landscape as displayed -> keep.
        (0, 1920, 1080, .landscape, 0),
        (180, 1920, 1080, .landscape, 180),
        (90, 1080, 1920, .landscape, 90),
        (270, 1080, 1920, .landscape, 270),
        // Square keeps whatever it has.
        (90, 640, 640, .landscape, 90),
        (0, 640, 640, .landscape, 0),
        // Coded landscape shown portrait (phone held upright) -> 0.
        (90, 1920, 1080, .landscape, 0),
        (270, 1920, 1080, .landscape, 0),
        // Coded portrait shown portrait -> R + 90.
        (0, 1080, 1920, .landscape, 90),
        (180, 1080, 1920, .landscape, 270),
        // Portrait is the mirror rule.
        (90, 1920, 1080, .portrait, 90),
        (0, 1080, 1920, .portrait, 0),
        (0, 1920, 1080, .portrait, 90),
        (180, 1920, 1080, .portrait, 270),
        (90, 1080, 1920, .portrait, 0),
        (0, 640, 640, .portrait, 0),
        // Keep writes the source.
        (90, 1920, 1080, .keep, 90),
        (270, 1080, 1920, .keep, 270),
    ]

    @Test(arguments: cases)
    func rule(_ example: (Int, Int, Int, Orientation, Int)) {
        let (source, width, height, orientation, expected) = example
        let decision = decideRotation(source: source, codedWidth: width, codedHeight: height, orientation: orientation, override: nil)
        #expect(decision.degrees == expected, "source \(source)° \(width)x\(height) \(orientation)")
        #expect(!decision.reason.isEmpty)
    }

    @Test func overrideWins() {
        let decision = decideRotation(source: 90, codedWidth: 1920, codedHeight: 1080, orientation: .landscape, override: 180)
        #expect(decision == RotationDecision(degrees: 180, reason: "set by the caller", chosenByCaller: true))
    }
}
