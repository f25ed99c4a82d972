/// An exact point or span of media time: `value / timescale` seconds.
/// Planning compares and converts times without floating point, so a track
/// end computed in one time base lands on the same tick in another.
public struct MediaTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var value: Int64
    public var timescale: Int64

    public init(value: Int64, timescale: Int64) {
        precondition(timescale > 0, "MediaTime needs a positive timescale")
        self.value = value
        self.timescale = timescale
    }

    public static func zero(_ timescale: Int64 = 1) -> MediaTime { MediaTime(value: 0, timescale: timescale) }

    public var seconds: Double { Double(value) / Double(timescale) }

    public enum Rounding: Sendable { case down, up, nearest }

    /// This time in another timescale, rounded as asked.
    public func converted(to newScale: Int64, rounding: Rounding = .nearest) -> MediaTime {
        if newScale == timescale { return self }
        let numerator = Int128(value) * Int128(newScale)
        let denominator = Int128(timescale)
        var quotient = numerator / denominator
        let remainder = numerator % denominator
        if remainder != 0 {
            switch rounding {
            case .down:
                if numerator < 0 { quotient -= 1 }
            case .up:
                if numerator > 0 { quotient += 1 }
            case .nearest:
                let twice = remainder.magnitude * 2
                if twice >= denominator.magnitude { quotient += numerator < 0 ? -1 : 1 }
            }
        }
        return MediaTime(value: Int64(clamping: quotient), timescale: newScale)
    }

    public static func < (lhs: MediaTime, rhs: MediaTime) -> Bool {
        Int128(lhs.value) * Int128(rhs.timescale) < Int128(rhs.value) * Int128(lhs.timescale)
    }

    public static func == (lhs: MediaTime, rhs: MediaTime) -> Bool {
        Int128(lhs.value) * Int128(rhs.timescale) == Int128(rhs.value) * Int128(lhs.timescale)
    }

    public func hash(into hasher: inout Hasher) {
        let divisor = gcd(value.magnitude, UInt64(timescale))
        hasher.combine(value / Int64(max(divisor, 1)))
        hasher.combine(timescale / Int64(max(divisor, 1)))
    }

    /// Sum or difference, exact in the finer of the two timescales when one divides the other,
    /// otherwise in their product.
    /// Saturates instead of trapping: durations come from files, which may lie.
    public static func + (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        let scale = commonScale(lhs.timescale, rhs.timescale)
        let (left, right) = (lhs.converted(to: scale).value, rhs.converted(to: scale).value)
        let (sum, overflow) = left.addingReportingOverflow(right)
        return MediaTime(value: overflow ? (right > 0 ? .max : .min) : sum, timescale: scale)
    }

    public static func - (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        lhs + MediaTime(value: rhs.value == .min ? .max : -rhs.value, timescale: rhs.timescale)
    }

    public var description: String { "\(value)/\(timescale)" }
}

private func gcd(_ a: UInt64, _ b: UInt64) -> UInt64 {
    var (x, y) = (a, b)
    while y != 0 { (x, y) = (y, x % y) }
    return x
}

/// The least common multiple of two timescales; the larger one when that overflows.
package func commonScale(_ a: Int64, _ b: Int64) -> Int64 {
    if a % b == 0 { return a }
    if b % a == 0 { return b }
    let divisor = Int64(gcd(UInt64(a), UInt64(b)))
    let (lcm, overflow) = (a / divisor).multipliedReportingOverflow(by: b)
    return overflow ? max(a, b) : lcm
}
