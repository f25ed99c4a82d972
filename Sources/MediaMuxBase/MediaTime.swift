/// An exact point or span of media time: `value / timescale` seconds.
/// Planning compares and converts times without floating point, so a track
/// end computed in one time base lands on the same tick in another.
///
/// MediaMux's one convention for time: every point or span on a media
/// timeline, in options and in results, is a `MediaTime`; wall-clock time
/// (timeouts, waits, how long a call took or has left) is a Swift `Duration`.
/// A literal is seconds: `let start: MediaTime = 1.5`.
///
/// The timescale is always positive; arithmetic saturates instead of
/// trapping, since the values come from files, which may lie.
public struct MediaTime: Sendable, Hashable, Comparable, CustomStringConvertible,
    ExpressibleByFloatLiteral, ExpressibleByIntegerLiteral
{
    public private(set) var value: Int64
    public private(set) var timescale: Int64

    public init(value: Int64, timescale: Int64) {
        precondition(timescale > 0, "MediaTime needs a positive timescale")
        self.value = value
        self.timescale = timescale
    }

    /// `seconds` to the nearest microsecond (or `timescale` tick), saturating
    /// at the largest time either way; not-a-number is zero.
    public init(seconds: Double, timescale: Int64 = 1_000_000) {
        precondition(timescale > 0, "MediaTime needs a positive timescale")
        let ticks = (seconds * Double(timescale)).rounded()
        let value: Int64
        if ticks.isNaN {
            value = 0
        } else if ticks >= 0x1p63 {
            value = .max
        } else if ticks < -0x1p63 {
            value = .min
        } else {
            value = Int64(ticks)
        }
        self.init(value: value, timescale: timescale)
    }

    /// Seconds, to the microsecond: `let at: MediaTime = 2.5`.
    public init(floatLiteral seconds: Double) { self.init(seconds: seconds) }

    /// Whole seconds: `let at: MediaTime = 3`.
    public init(integerLiteral seconds: Int64) { self.init(value: seconds, timescale: 1) }

    /// `count` ticks of `tick` long each (a time base: `1/90000` s), exactly,
    /// saturating where the product overflows.
    public init(ticks count: Int64, of tick: MediaTime) {
        let product = Int128(count) * Int128(tick.value)
        self.init(value: Int64(clamping: product), timescale: tick.timescale)
    }

    public static func zero(_ timescale: Int64 = 1) -> MediaTime { MediaTime(value: 0, timescale: timescale) }

    public var seconds: Double { Double(value) / Double(timescale) }

    public enum Rounding: Sendable { case down, up, nearest }

    /// This time in another timescale, rounded as asked.
    public func converted(to newScale: Int64, rounding: Rounding = .nearest) -> MediaTime {
        if newScale == timescale { return self }
        let quotient = divide(Int128(value) * Int128(newScale), Int128(timescale), rounding)
        return MediaTime(value: Int64(clamping: quotient), timescale: newScale)
    }

    /// How many ticks of `tick` long (a time base) this time is, rounded
    /// once, as asked: `value * tick.timescale / (timescale * tick.value)`,
    /// exactly, saturating at Int64's ends. A tick that is not positive gives 0.
    public func ticks(of tick: MediaTime, rounding: Rounding = .nearest) -> Int64 {
        guard tick.value > 0 else { return 0 }
        let numerator = Int128(value) * Int128(tick.timescale)
        let denominator = Int128(timescale) * Int128(tick.value)
        return Int64(clamping: divide(numerator, denominator, rounding))
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

/// `numerator / denominator` (a positive denominator), rounded once: down
/// and up towards minus and plus infinity, nearest with halves away from zero.
private func divide(_ numerator: Int128, _ denominator: Int128, _ rounding: MediaTime.Rounding) -> Int128 {
    var quotient = numerator / denominator
    let remainder = numerator % denominator
    guard remainder != 0 else { return quotient }
    switch rounding {
    case .down:
        if numerator < 0 { quotient -= 1 }
    case .up:
        if numerator > 0 { quotient += 1 }
    case .nearest:
        if remainder.magnitude * 2 >= denominator.magnitude { quotient += numerator < 0 ? -1 : 1 }
    }
    return quotient
}

extension Int64 {
    /// Sums and products of values read from files: saturating, never trapping.
    package func saturatingAdding(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    package func saturatingSubtracting(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : difference
    }
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
