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
    /// The number of ticks: the time is `value / timescale` seconds.
    public private(set) var value: Int64
    /// Ticks per second; always positive.
    public private(set) var timescale: Int64

    /// `value / timescale` seconds, exactly.
    ///
    /// - Parameters:
    ///   - value: The number of ticks; negative for a time before zero.
    ///   - timescale: Ticks per second. It must be positive: zero or less
    ///     stops the program (a precondition), since no time has that scale.
    public init(value: Int64, timescale: Int64) {
        precondition(timescale > 0, "MediaTime needs a positive timescale")
        self.value = value
        self.timescale = timescale
    }

    /// `seconds` to the nearest microsecond (or `timescale` tick), saturating
    /// at the largest time either way; not-a-number is zero.
    ///
    /// - Parameters:
    ///   - seconds: The time in seconds, as a caller or a user typed it.
    ///   - timescale: Ticks per second of the result; microseconds unless
    ///     told otherwise. It must be positive (a precondition).
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
    ///
    /// - Parameter seconds: The literal, in seconds.
    public init(floatLiteral seconds: Double) { self.init(seconds: seconds) }

    /// Whole seconds: `let at: MediaTime = 3`.
    ///
    /// - Parameter seconds: The literal, in whole seconds.
    public init(integerLiteral seconds: Int64) { self.init(value: seconds, timescale: 1) }

    /// `count` ticks of `tick` long each (a time base: `1/90000` s), exactly,
    /// saturating where the product overflows.
    ///
    /// - Parameters:
    ///   - count: How many ticks, as a packet's timestamp counts them.
    ///   - tick: The length of one tick: the stream's time base.
    public init(ticks count: Int64, of tick: MediaTime) {
        let product = Int128(count) * Int128(tick.value)
        self.init(value: Int64(clamping: product), timescale: tick.timescale)
    }

    /// Time zero, in the timescale given: the start of a timeline, or a span
    /// of no length.
    ///
    /// - Parameter timescale: Ticks per second of the result; it must be positive.
    /// - Returns: A time of value 0.
    public static func zero(_ timescale: Int64 = 1) -> MediaTime { MediaTime(value: 0, timescale: timescale) }

    /// The time in seconds, as a `Double`: for display and for arithmetic
    /// where a rounding error does not matter. Planning compares `MediaTime`s
    /// instead.
    public var seconds: Double { Double(value) / Double(timescale) }

    /// How a conversion rounds a time that falls between two ticks.
    public enum Rounding: Sendable {
        /// `down` towards minus infinity, `up` towards plus infinity,
        /// `nearest` to the closer tick, halves away from zero.
        case down, up, nearest
    }

    /// This time in another timescale, rounded as asked.
    ///
    /// - Parameters:
    ///   - newScale: Ticks per second of the result; it must be positive.
    ///   - rounding: How a time between two ticks of `newScale` rounds.
    /// - Returns: The time in `newScale`, saturating at Int64's ends.
    public func converted(to newScale: Int64, rounding: Rounding = .nearest) -> MediaTime {
        if newScale == timescale { return self }
        let quotient = divide(Int128(value) * Int128(newScale), Int128(timescale), rounding)
        return MediaTime(value: Int64(clamping: quotient), timescale: newScale)
    }

    /// How many ticks of `tick` long (a time base) this time is, rounded
    /// once, as asked: `value * tick.timescale / (timescale * tick.value)`,
    /// exactly, saturating at Int64's ends. A tick that is not positive gives 0.
    ///
    /// - Parameters:
    ///   - tick: The length of one tick: a stream's time base.
    ///   - rounding: How a time between two ticks rounds.
    /// - Returns: The number of ticks.
    public func ticks(of tick: MediaTime, rounding: Rounding = .nearest) -> Int64 {
        guard tick.value > 0 else { return 0 }
        let numerator = Int128(value) * Int128(tick.timescale)
        let denominator = Int128(timescale) * Int128(tick.value)
        return Int64(clamping: divide(numerator, denominator, rounding))
    }

    /// Whether `lhs` comes before `rhs`, compared exactly whatever their timescales.
    public static func < (lhs: MediaTime, rhs: MediaTime) -> Bool {
        Int128(lhs.value) * Int128(rhs.timescale) < Int128(rhs.value) * Int128(lhs.timescale)
    }

    /// Whether the two are the same time, whatever their timescales: `1/2` equals `45000/90000`.
    public static func == (lhs: MediaTime, rhs: MediaTime) -> Bool {
        Int128(lhs.value) * Int128(rhs.timescale) == Int128(rhs.value) * Int128(lhs.timescale)
    }

    /// Hashes the time in lowest terms, so that equal times hash alike.
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        let divisor = gcd(value.magnitude, UInt64(timescale))
        hasher.combine(value / Int64(max(divisor, 1)))
        hasher.combine(timescale / Int64(max(divisor, 1)))
    }

    /// Sum or difference, exact in the finer of the two timescales when one divides the other,
    /// otherwise in their product.
    /// Saturates instead of trapping: durations come from files, which may lie.
    ///
    /// - Parameters:
    ///   - lhs: A time or span.
    ///   - rhs: The span to add.
    /// - Returns: The sum, in the common timescale (the larger of the two
    ///   when their product would overflow).
    public static func + (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        let scale = commonScale(lhs.timescale, rhs.timescale)
        let (left, right) = (lhs.converted(to: scale).value, rhs.converted(to: scale).value)
        let (sum, overflow) = left.addingReportingOverflow(right)
        return MediaTime(value: overflow ? (right > 0 ? .max : .min) : sum, timescale: scale)
    }

    /// The difference, exact and saturating as `+` is.
    ///
    /// - Parameters:
    ///   - lhs: A time or span.
    ///   - rhs: The span to take away.
    /// - Returns: The difference, in the common timescale.
    public static func - (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        lhs + MediaTime(value: rhs.value == .min ? .max : -rhs.value, timescale: rhs.timescale)
    }

    /// The exact fraction, `value/timescale` ("3003/90000"); `secondsText` is for people.
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
