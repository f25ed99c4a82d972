import MediaMuxBase
package import CFFmpeg

// The one bridge between FFmpeg's time bases (AVRational: seconds per tick)
// and MediaTime. Every conversion of ticks read from a file into times, and
// of times into a stream's ticks, goes through here: exact in 128 bits,
// saturating, never trapping, whatever the file declares.

extension MediaTime {
    /// One tick of `timeBase`, as a time; a malformed base (a zero or negative
    /// part) is read as 1/1: FFmpeg fills one in for every stream it opens.
    package init(timeBase: AVRational) {
        guard timeBase.num > 0, timeBase.den > 0 else {
            self.init(value: 1, timescale: 1)
            return
        }
        self.init(value: Int64(timeBase.num), timescale: Int64(timeBase.den))
    }

    /// `ticks` of `timeBase`, exactly.
    package init(ticks: Int64, in timeBase: AVRational) {
        self.init(ticks: ticks, of: MediaTime(timeBase: timeBase))
    }

    /// This time in ticks of `timeBase`, rounded once.
    package func ticks(in timeBase: AVRational, rounding: Rounding = .nearest) -> Int64 {
        ticks(of: MediaTime(timeBase: timeBase), rounding: rounding)
    }
}

extension AVRational {
    /// The time base whose tick is `tick` long, reduced; where its parts do
    /// not fit FFmpeg's 32 bits, the nearest that does.
    package init(tick: MediaTime) {
        var num: Int32 = 0
        var den: Int32 = 0
        _ = av_reduce(&num, &den, tick.value, tick.timescale, Int64(Int32.max))
        self.init(num: max(num, 1), den: max(den, 1))
    }
}
