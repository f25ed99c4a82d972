import MediaMuxBase
/// The display rotation to write and why, for the summary.
public struct RotationDecision: Sendable, Equatable {
    /// Clockwise degrees: 0, 90, 180 or 270.
    public var degrees: Int
    /// Why these degrees, in words: "coded landscape 1920x1080 shown
    /// portrait by a 90° rotation; wrote 0°".
    public var reason: String
    /// Given by the caller (`MergeOptions.rotation`), not decided by the rule.
    public var chosenByCaller: Bool

    /// A decision as the planner states it; for tests and callers that build plans.
    ///
    /// - Parameters:
    ///   - degrees: Clockwise degrees: 0, 90, 180 or 270.
    ///   - reason: Why, in words.
    ///   - chosenByCaller: True when the caller gave the rotation.
    public init(degrees: Int, reason: String, chosenByCaller: Bool = false) {
        self.degrees = degrees
        self.reason = reason
        self.chosenByCaller = chosenByCaller
    }
}

/// Decides the rotation to write from the source's clockwise display rotation
/// `source` and its coded size.
///
/// Landscape rule: if the picture as displayed is already landscape or square,
/// keep the source rotation; else if the coded picture is landscape (W >= H),
/// write 0; else write source + 90. Portrait is the mirror rule.
func decideRotation(
    source: Int, codedWidth width: Int, codedHeight height: Int,
    orientation: Orientation, override: Int?
) -> RotationDecision {
    if let override {
        return RotationDecision(degrees: override, reason: "set by the caller", chosenByCaller: true)
    }
    switch orientation {
    case .keep:
        return RotationDecision(degrees: source, reason: "kept the source rotation")
    case .landscape:
        return turn(source: source, width: width, height: height, wide: true)
    case .portrait:
        return turn(source: source, width: width, height: height, wide: false)
    }
}

/// The rule for one wanted shape: `wide` for landscape, else portrait.
private func turn(source: Int, width: Int, height: Int, wide: Bool) -> RotationDecision {
    let wanted = wide ? "landscape" : "portrait"
    let other = wide ? "portrait" : "landscape"
    func fits(_ across: Int, _ down: Int) -> Bool { wide ? across >= down : down >= across }
    let sideways = source % 180 != 0
    let (shownWidth, shownHeight) = sideways ? (height, width) : (width, height)
    if fits(shownWidth, shownHeight) {
        let shape = shownWidth == shownHeight ? "square" : wanted
        return RotationDecision(degrees: source, reason: "already \(shape) as displayed; kept \(source)°")
    }
    if fits(width, height) {
        return RotationDecision(degrees: 0, reason: "coded \(wanted) \(width)x\(height) shown \(other) by a \(source)° rotation; wrote 0°")
    }
    let turned = (source + 90) % 360
    return RotationDecision(degrees: turned, reason: "coded \(other) \(width)x\(height); turned \(source)° to \(turned)° to show \(wanted)")
}
