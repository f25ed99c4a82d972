import MediaMuxBase

/// How the output's picture is shown and why, for the summary: copied with a
/// display rotation, or re-framed (encoded upright, rotation 0).
public struct RotationDecision: Sendable, Equatable {
    /// Clockwise degrees written: 0, 90, 180 or 270.
    public var degrees: Int
    /// Why, in words: "portrait as shown (coded 1920x1080, turned 90°); kept upright (copied)".
    public var reason: String
    /// Given by the caller (`MergeOptions.rotation`), not decided by the rule.
    public var chosenByCaller: Bool
    /// The source's whole display matrix is written, mirrors included, not
    /// just a rotation of `degrees`.
    public var keepsSourceMatrix: Bool
    /// For a video kept in the shape it is shown in: the orientation that
    /// would re-frame it into the other shape (by encoding); nil otherwise.
    public var reframedBy: Orientation?

    /// A decision as the planner states it; for tests and callers that build plans.
    ///
    /// - Parameters:
    ///   - degrees: Clockwise degrees: 0, 90, 180 or 270.
    ///   - reason: Why, in words.
    ///   - chosenByCaller: True when the caller gave the rotation.
    ///   - keepsSourceMatrix: True when the source's matrix is written as it is.
    ///   - reframedBy: The orientation that would re-frame the video, when it is kept.
    public init(
        degrees: Int, reason: String, chosenByCaller: Bool = false, keepsSourceMatrix: Bool = false, reframedBy: Orientation? = nil
    ) {
        self.degrees = degrees
        self.reason = reason
        self.chosenByCaller = chosenByCaller
        self.keepsSourceMatrix = keepsSourceMatrix
        self.reframedBy = reframedBy
    }

    /// What shows the written video upright, copied from `source`: the
    /// source's own turn where its matrix is written as it is, else a pure
    /// rotation of `degrees` (none for a video re-framed upright).
    package func turn(of source: StreamInfo) -> PictureTurn {
        keepsSourceMatrix ? source.uprightTurn : PictureTurn(clockwise: degrees)
    }
}

/// The shape of a picture as players show it. Square counts as landscape.
enum PictureShape: String, Sendable {
    case landscape, portrait, square

    init(shown size: VideoSize) {
        self = size.width == size.height ? .square : size.width > size.height ? .landscape : .portrait
    }

    /// Whether a frame of this orientation shows the picture as it is.
    func fits(_ orientation: Orientation) -> Bool {
        switch orientation {
        case .keep: true
        case .landscape: self != .portrait
        case .portrait: self == .portrait
        }
    }
}

/// What the orientation rule decides for the video: copied as it is shown
/// (with a display rotation), or re-framed into a frame of the other shape.
enum Framing: Equatable {
    case copied(RotationDecision)
    case reframed(into: Orientation, shape: PictureShape)
}

/// The orientation rule. The picture always comes out upright: copied with
/// the source's own display matrix (so players turn it as the camera
/// recorded it), unless the caller gives a rotation (written by copy, for a
/// file whose matrix is wrong) or asks for a shape the picture is not shown
/// in (encoded into such a frame). Square counts as landscape.
func decideFraming(
    shown: VideoSize, codedWidth width: Int, codedHeight height: Int, sourceRotation source: Int,
    orientation: Orientation, override: Int?
) -> Framing {
    if let override {
        return .copied(RotationDecision(degrees: override, reason: "set by the caller", chosenByCaller: true))
    }
    let shape = PictureShape(shown: shown)
    guard shape.fits(orientation) else { return .reframed(into: orientation, shape: shape) }
    let coded = "coded \(width)x\(height)" + (source == 0 ? "" : ", turned \(source)°")
    if shape == .portrait && orientation == .keep {
        return .copied(RotationDecision(
            degrees: source, reason: "portrait video kept upright (copied; \(coded))", keepsSourceMatrix: true, reframedBy: .landscape))
    }
    return .copied(RotationDecision(degrees: source, reason: "\(shape.rawValue) video kept as shown (copied; \(coded))", keepsSourceMatrix: true))
}

extension StreamInfo {
    /// What shows the coded picture upright: the display matrix's turn and
    /// mirror, or for a matrix that skews or scales, its rotation alone.
    /// Every picture MediaMux encodes is turned by it (a merge's re-framing,
    /// a preview clip).
    package var uprightTurn: PictureTurn {
        displayMatrix.flatMap(PictureTurn.init(matrix:)) ?? PictureTurn(clockwise: rotation)
    }
}

/// The turn, and mirror, that shows a coded picture upright: one of the
/// eight a display matrix of quarter turns and mirrors can make, read from
/// its signs (a, b, c, d: a coded point (x, y) is shown at (ax + cy, bx + dy)).
public enum PictureTurn: String, Sendable, Equatable, CaseIterable {
    case none, clockwise90, half, clockwise270
    /// Mirrored left to right; top to bottom; across the main diagonal
    /// (x and y swapped); across the other diagonal.
    case mirrored, flipped, transposed, antitransposed

    /// nil for a matrix that is not a quarter turn or mirror (a skew, a scale).
    init?(matrix: [Int32]) {
        guard matrix.count >= 5 else { return nil }
        let (a, b, c, d) = (matrix[0].signum(), matrix[1].signum(), matrix[3].signum(), matrix[4].signum())
        switch (a, b, c, d) {
        case (1, 0, 0, 1): self = .none
        case (0, 1, -1, 0): self = .clockwise90
        case (-1, 0, 0, -1): self = .half
        case (0, -1, 1, 0): self = .clockwise270
        case (-1, 0, 0, 1): self = .mirrored
        case (1, 0, 0, -1): self = .flipped
        case (0, 1, 1, 0): self = .transposed
        case (0, -1, -1, 0): self = .antitransposed
        default: return nil
        }
    }

    /// A pure rotation of `degrees` clockwise.
    package init(clockwise degrees: Int) {
        switch (degrees % 360 + 360) % 360 {
        case 90: self = .clockwise90
        case 180: self = .half
        case 270: self = .clockwise270
        default: self = .none
        }
    }

    /// Whether the turn swaps width and height.
    package var swapsSides: Bool { [.clockwise90, .clockwise270, .transposed, .antitransposed].contains(self) }

    /// libavfilter's filters that make it ("" for none).
    var filters: String {
        switch self {
        case .none: ""
        case .clockwise90: "transpose=clock"
        case .half: "hflip,vflip"
        case .clockwise270: "transpose=cclock"
        case .mirrored: "hflip"
        case .flipped: "vflip"
        case .transposed: "transpose=cclock_flip"
        case .antitransposed: "transpose=clock_flip"
        }
    }
}
