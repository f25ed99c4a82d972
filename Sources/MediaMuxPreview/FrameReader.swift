import MediaMuxBase
import MediaMuxCore
internal import CFFmpeg

/// Carries out a frame plan: yields the frame shown at each planned moment,
/// or every frame of a range, one `next()` at a time. A moment is reached by
/// seeking to the keyframe before it and decoding forward, unless decoding
/// forward from where the decoder already is reaches it sooner.
final class FrameReader {
    let plan: FramePlan
    private let source: VideoFrameSource
    private var converter: PictureConverter?
    private let cancellation: CancellationFlag
    /// The latest decoded frame and the one after it, when already decoded.
    private var current: FrameBuffer
    private var lookahead: FrameBuffer
    private var currentTimestamp: Int64?
    private var lookaheadTimestamp: Int64?
    private var atEnd = false
    private var nextMoment = 0
    private var started = false

    /// `threads`: the decoder's (0 lets FFmpeg choose; see `MediaRuntime.decodingThreads`).
    init(plan: FramePlan, threads: Int, cancellation: CancellationFlag) throws {
        self.plan = plan
        self.cancellation = cancellation
        source = try VideoFrameSource(
            path: plan.path, streamIndex: plan.streamIndex, zero: (plan.mediaStart ?? plan.zero) + plan.readerLateness,
            ignoringEditLists: plan.mediaStart != nil, threads: threads, cancellation: cancellation)
        current = try FrameBuffer()
        lookahead = try FrameBuffer()
    }

    /// The video stream read.
    var stream: UnsafeMutablePointer<AVStream> { source.stream }

    /// Frames decoded so far, for reports and for checking that seeking works.
    private(set) var framesDecoded = 0

    /// The next planned frame, upright and scaled.
    func next() throws -> PreviewFrame? {
        guard let (frame, time) = try nextDecoded() else { return nil }
        if converter == nil { converter = try PictureConverter(plan: plan) }
        return try converter?.picture(frame, time: time)
    }

    /// The next planned frame as decoded, and its time. The frame stays
    /// valid until the following call.
    func nextDecoded() throws -> (frame: FrameBuffer, time: MediaTime)? {
        if cancellation.isRaised { throw MediaMuxError.cancelled(path: plan.path) }
        switch plan.moments {
        case .at(let times):
            guard nextMoment < times.count else { return nil }
            let time = times[nextMoment]
            nextMoment += 1
            try reach(source.timestamp(time))
            guard currentTimestamp != nil else {
                throw MediaMuxError.damaged(path: plan.path, detail: "no picture could be decoded near \(fixedPoint(time, decimals: 3)) s")
            }
        case .every(let from, let to):
            if !started {
                started = true
                try reach(source.timestamp(from))
            } else {
                guard try advance(), let shown = currentTimestamp, shown < source.timestamp(to) else { return nil }
            }
        }
        guard let shown = currentTimestamp else { return nil }
        // A frame on screen when the video starts (an edit that begins
        // between two frames) counts from the start.
        let time = source.time(shown)
        return (current, max(time, .zero(time.timescale)))
    }

    /// Makes `current` the frame shown at `target`: the last one presented at
    /// or before it (the first frame, for a target before it).
    private func reach(_ target: Int64) throws {
        if currentTimestamp == nil || shouldSeek(to: target) {
            try seek(before: target)
        }
        while true {
            if let ahead = lookaheadTimestamp {
                guard ahead <= target else { return }
                promoteLookahead()
                continue
            }
            guard try decodeLookahead() else { return }
        }
    }

    /// Seeking pays when the keyframe before the target lies beyond the
    /// frame the decoder is at, or the target lies behind it.
    private func shouldSeek(to target: Int64) -> Bool {
        guard let position = currentTimestamp else { return true }
        if target < position { return true }
        if let keyframe = source.keyframe(atOrBefore: target) { return keyframe > (lookaheadTimestamp ?? position) }
        // Without an index: decode forward across short gaps, seek across long ones.
        return source.time(target).seconds - source.time(position).seconds > 2
    }

    /// Seeks to a keyframe at or before `target` and decodes its first frame.
    /// A keyframe found by its decode time may still be presented after the
    /// target (B-frames); then it seeks further back, doubling the step.
    private func seek(before target: Int64) throws {
        var point = max(target, source.zero)
        // One second in ticks, at least one tick; doubled (never past Int64) on each retry.
        var step = max(1, source.timestamp(1) - source.zero)
        while true {
            try source.seek(to: point)
            currentTimestamp = nil
            lookaheadTimestamp = nil
            atEnd = false
            guard try decodeLookahead(), let first = lookaheadTimestamp else { return }
            if first <= target || point <= source.zero {
                promoteLookahead()
                return
            }
            let (back, overflow) = min(point, first).subtractingReportingOverflow(step)
            point = overflow ? source.zero : max(source.zero, back)
            step = step > Int64.max / 2 ? Int64.max : step * 2
        }
    }

    /// Moves to the next frame. False at the end.
    private func advance() throws -> Bool {
        if lookaheadTimestamp == nil {
            guard try decodeLookahead() else { return false }
        }
        promoteLookahead()
        return true
    }

    private func promoteLookahead() {
        swap(&current, &lookahead)
        currentTimestamp = lookaheadTimestamp
        lookaheadTimestamp = nil
    }

    /// Decodes the next frame into `lookahead`; false at the end.
    private func decodeLookahead() throws -> Bool {
        guard !atEnd else { return false }
        while true {
            if cancellation.isRaised { throw MediaMuxError.cancelled(path: plan.path) }
            guard try source.next(into: lookahead) else {
                atEnd = true
                return false
            }
            framesDecoded += 1
            // A frame without any timestamp cannot be placed; skip it.
            if let timestamp = lookahead.timestamp {
                lookaheadTimestamp = timestamp
                return true
            }
        }
    }
}
