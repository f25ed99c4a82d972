/// The display rotation to write and why, for the summary.
public struct RotationDecision: Sendable, Equatable {
    /// Clockwise degrees: 0, 90, 180 or 270.
    public var degrees: Int
    public var reason: String
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
        return RotationDecision(degrees: override, reason: "set by --rotate")
    }
    let sideways = source % 180 != 0
    let shownWidth = sideways ? height : width
    let shownHeight = sideways ? width : height
    switch orientation {
    case .keep:
        return RotationDecision(degrees: source, reason: "kept the source rotation")
    case .landscape:
        if shownWidth >= shownHeight {
            let shape = shownWidth == shownHeight ? "square" : "landscape"
            return RotationDecision(degrees: source, reason: "already \(shape) as displayed; kept \(source)°")
        }
        if width >= height {
            return RotationDecision(degrees: 0, reason: "coded landscape \(width)x\(height) shown portrait by a \(source)° rotation; wrote 0°")
        }
        let turned = (source + 90) % 360
        return RotationDecision(degrees: turned, reason: "coded portrait \(width)x\(height); turned \(source)° to \(turned)° to show landscape")
    case .portrait:
        if shownHeight >= shownWidth {
            let shape = shownWidth == shownHeight ? "square" : "portrait"
            return RotationDecision(degrees: source, reason: "already \(shape) as displayed; kept \(source)°")
        }
        if height >= width {
            return RotationDecision(degrees: 0, reason: "coded portrait \(width)x\(height) shown landscape by a \(source)° rotation; wrote 0°")
        }
        let turned = (source + 90) % 360
        return RotationDecision(degrees: turned, reason: "coded landscape \(width)x\(height); turned \(source)° to \(turned)° to show portrait")
    }
}
