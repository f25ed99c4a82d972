import CFFmpeg
import Testing
@testable import MediaMuxBase
@testable import MediaMuxCore

/// The one bridge between FFmpeg's time bases and MediaTime, checked against
/// exact fractions computed here, and at the ends of Int64 where values read
/// from hostile files land.
@Suite struct MediaTimeTests {
    /// floor, ceil and round-half-away of n/d by the tests' own arithmetic.
    private func reference(_ n: Int128, _ d: Int128, _ rounding: MediaTime.Rounding) -> Int128 {
        let floor = n >= 0 ? n / d : -((-n + d - 1) / d)
        let ceil = -((-n >= 0 ? -n / d : -((n + d - 1) / d)))
        switch rounding {
        case .down: return floor
        case .up: return ceil
        case .nearest:
            let twice = 2 * n
            // Halves away from zero: compare 2n with (2*floor + 1) * d.
            let midpoint = (2 * floor + 1) * d
            if twice > midpoint || (twice == midpoint && n >= 0) { return floor + 1 }
            return floor
        }
    }

    @Test func ticksRoundOnceAndExactly() {
        var generator = SystemRandomNumberGenerator()
        let ticks: [MediaTime] = [
            MediaTime(value: 1, timescale: 90000), MediaTime(value: 1001, timescale: 30000),
            MediaTime(value: 3, timescale: 100), MediaTime(value: 1, timescale: 44100), MediaTime(value: 512, timescale: 48000),
        ]
        for _ in 0..<2000 {
            let time = MediaTime(
                value: Int64.random(in: -10_000_000...10_000_000, using: &generator),
                timescale: Int64.random(in: 1...1_000_000, using: &generator))
            for tick in ticks {
                for rounding in [MediaTime.Rounding.down, .up, .nearest] {
                    let expected = reference(Int128(time.value) * Int128(tick.timescale), Int128(time.timescale) * Int128(tick.value), rounding)
                    #expect(Int128(time.ticks(of: tick, rounding: rounding)) == expected, "\(time) in ticks of \(tick), \(rounding)")
                }
            }
        }
    }

    @Test func bridgeToFFmpegTimeBases() {
        let ntsc = AVRational(num: 1001, den: 30000)
        #expect(MediaTime(ticks: 30, in: ntsc) == MediaTime(value: 1001, timescale: 1000))
        #expect(MediaTime(seconds: 2).ticks(in: ntsc, rounding: .down) == 59)
        #expect(MediaTime(seconds: 2).ticks(in: ntsc, rounding: .up) == 60)
        // A malformed base from a file is one second a tick, not a trap.
        #expect(MediaTime(timeBase: AVRational(num: 0, den: 0)) == MediaTime(1))
        // Reduced, and brought into 32 bits.
        let reduced = AVRational(tick: MediaTime(value: 2002, timescale: 60000))
        #expect(reduced.num == 1001 && reduced.den == 30000)
        let huge = AVRational(tick: MediaTime(value: 1, timescale: Int64(Int32.max) * 4))
        #expect(huge.num >= 1 && huge.den <= Int32.max && huge.den > 0)
    }

    @Test func hostileValuesSaturate() {
        // A duration of Int64.max ticks of 1001/30000 s, as a fuzzed file may declare.
        let end = MediaTime(ticks: .max, of: MediaTime(value: 1001, timescale: 30000))
        #expect(end.value == .max)
        #expect(MediaTime(ticks: .min, of: MediaTime(value: 7, timescale: 1)).value == .min)
        #expect(MediaTime(value: .max, timescale: 1).ticks(of: MediaTime(value: 1, timescale: 90000)) == .max)
        #expect((MediaTime(value: .max, timescale: 1) + MediaTime(value: 1, timescale: 1)).value == .max)
        #expect(Int64.max.saturatingAdding(1) == .max)
        #expect(Int64.min.saturatingSubtracting(1) == .min)
        #expect(Int64(5).saturatingSubtracting(.min) == .max)
        #expect(MediaTime(ticks: 5, of: MediaTime(value: 0, timescale: 1)).value == 0)
        #expect(MediaTime(seconds: 10).ticks(of: MediaTime(value: 0, timescale: 1)) == 0)
        // Messages name huge times without trapping.
        #expect(MediaTime(value: .max, timescale: 1).secondsText() == "9.223372036854776e+18")
        #expect(MediaTime(value: .min, timescale: 1).secondsText() == "-9.223372036854776e+18")
        #expect(fixedPoint(1e300, decimals: 3) == "1e+300")
        #expect(MediaTime(value: -1_500, timescale: 1000).secondsText() == "-1.500")
    }

    @Test func secondsAndLiterals() {
        let half: MediaTime = 0.5
        let three: MediaTime = 3
        #expect(half == MediaTime(value: 1, timescale: 2))
        #expect(three == MediaTime(value: 3, timescale: 1))
        #expect(MediaTime(seconds: 1.0 / 3).value == 333_333)
        #expect(MediaTime(seconds: .nan).value == 0)
        #expect(MediaTime(seconds: .infinity).value == .max)
        #expect(MediaTime(seconds: -.infinity).value == .min)
        #expect(MediaTime(seconds: 1e300).value == .max)
    }

    @Test func progressThrottleAllowsTenASecond() {
        var throttle = ProgressThrottle()
        let start = ContinuousClock.now
        let due = [0, 50, 99, 100, 150, 200].map { throttle.isDue(at: start + .milliseconds($0)) }
        #expect(due == [true, false, false, true, false, true])
    }
}
