import MediaMuxBase
internal import CFFmpeg

/// What a video's packets say around one time of its timeline, read as a
/// copy of it from there reads them (`TrackReader`, placed at that time):
/// the keyframes and frames either side, for a composition's planner to
/// decide where a cut can fall and what a copy from it decodes. Reads from
/// the keyframe at or before the time to the one at or after it, no further.
package struct CutScan: Sendable, Equatable {
    /// The time asked about, on the video's timeline (its first frame shown at zero).
    package var time: MediaTime
    /// Where the keyframe shown at or before `time` is shown.
    package var keyframe: MediaTime
    /// Where the frame on screen at `time` is shown from.
    package var frameStart: MediaTime
    /// Frames shown from `keyframe` on before `frameStart`: those a copy
    /// starting at `time` would have to encode anew.
    package var framesBefore: Int
    /// Where the first of the frames decoded after `keyframe` but shown
    /// before it (an open GOP's leading pictures) is shown, or `keyframe`
    /// when it has none: a copy that ends before the keyframe's GOP ends
    /// there (every frame decoded before the keyframe is shown before its
    /// leading pictures), and an encoded end begins there.
    package var keyframeGroupStart: MediaTime
    /// Frames shown from `keyframeGroupStart` on and before `time`: those
    /// an encoded end from there holds.
    package var framesFromKeyframeGroup = 0
    /// Frames shown from `frameStart` on and before `nextKeyframe`: those an
    /// encoded start up to the next keyframe holds.
    package var framesToNextKeyframe = 0
    /// Where the first packet is decoded that comes after every frame shown
    /// before `time`, when no frame shown from `time` on is decoded before
    /// one shown before it: a copy then ends after the frames shown before
    /// `time` without dragging a later one in. Nil when it would (a B-frame
    /// shown before `time` waits for a frame shown after it).
    package var decodedAfterShown: MediaTime?
    /// Where the first frame shown at or after `time` is shown; nil past the last.
    package var frameAtOrAfter: MediaTime?
    /// Where the first keyframe shown at or after `time` is shown; nil when none is.
    package var nextKeyframe: MediaTime?
    /// Frames decoded after `nextKeyframe` but shown before it (an open
    /// GOP's leading pictures): ending a copy there would lose them.
    package var leadingPictures: Int
    /// A copy may begin a clip in the middle of a track at `keyframe`, and
    /// at `nextKeyframe` (an H.264 IDR picture, any HEVC IRAP picture; see
    /// `RandomAccess.joins`).
    package var keyframeJoins = true
    package var nextKeyframeJoins = true
    /// How long before it is shown `keyframe` itself is decoded, and
    /// `nextKeyframe`: where a copy begins or ends at one, the decode times
    /// of the clips either side meet there (see `MergePlan.Span.Join`).
    package var keyframeLead: MediaTime = .zero()
    package var nextKeyframeLead: MediaTime?
    /// Read to the end of the file: where the last packet's decode time and
    /// duration end, on the video's timeline; nil when reading stopped before.
    package var decodeEnd: MediaTime?

    package init(
        time: MediaTime, keyframe: MediaTime, frameStart: MediaTime, framesBefore: Int,
        frameAtOrAfter: MediaTime?, nextKeyframe: MediaTime?, leadingPictures: Int
    ) {
        self.time = time
        self.keyframe = keyframe
        self.frameStart = frameStart
        self.framesBefore = framesBefore
        self.frameAtOrAfter = frameAtOrAfter
        self.nextKeyframe = nextKeyframe
        self.leadingPictures = leadingPictures
        keyframeGroupStart = keyframe
    }

    /// Reads `track`'s packets around `time` (on the track's timeline, from
    /// its first frame). The track is a copied video's, as
    /// `MergePlanner.track` makes it.
    static func scan(_ track: MergePlan.Track, at time: MediaTime, cancellation: CancellationFlag) throws -> CutScan {
        var view = track
        view.origin = track.origin + time
        view.sourceStart = .zero()
        view.sourceEnd = track.sourceEnd - time
        view.end = view.sourceEnd
        view.leadIn = .zero()
        view.spans = []
        let inputs = try SpanInputs(track: view, cancellation: cancellation)
        let reader = try TrackReader(demuxer: inputs.own, track: view, end: max(view.sourceEnd, MediaTime(value: 1, timescale: 1000)), joining: true)
        let tick = track.timeBase
        func at(_ ticks: Int64) -> MediaTime { time + MediaTime(ticks: ticks, of: tick) }

        var keyframe: (pts: Int64, dts: Int64)?
        var shownBefore: [Int64] = []
        var atOrAfter: Int64?
        var next: (pts: Int64, dts: Int64)?
        var leading = 0
        var keyframeJoins = true
        var nextJoins = true
        var nextLead: Int64?
        var lastDecodeEnd: Int64?
        var stoppedEarly = false
        var shown: [Int64] = []
        var laterDecoded: Int64?
        var laterFirst = false
        var keyframeLeading: Int64?
        while let buffer = try reader.next() {
            let packet = buffer.pointer.pointee
            defer { reader.reuse(buffer) }
            let isKey = (packet.flags & AV_PKT_FLAG_KEY) != 0
            if keyframe == nil {
                // The reader keeps what decodes the frame at the time: it starts at a keyframe.
                guard isKey, packet.pts <= 0 else {
                    throw MediaMuxError.damaged(
                        path: track.path, detail: "no keyframe is shown at or before \(time.secondsText()) s of its video")
                }
                keyframe = (packet.pts, packet.dts)
                keyframeJoins = reader.joins(buffer.pointer)
            }
            shown.append(packet.pts)
            if let first = keyframe, packet.pts < first.pts { keyframeLeading = min(keyframeLeading ?? .max, packet.pts) }
            if packet.pts < 0, laterDecoded != nil { laterFirst = true }
            if packet.pts >= 0, laterDecoded == nil { laterDecoded = packet.dts }
            if packet.pts <= 0 {
                shownBefore.append(packet.pts)
            } else {
                atOrAfter = min(atOrAfter ?? packet.pts, packet.pts)
            }
            if packet.pts == 0 { atOrAfter = 0 }
            if let found = next {
                if packet.pts < found.pts { leading += 1 }
            } else if isKey, packet.pts >= 0 {
                next = (packet.pts, packet.dts)
                nextJoins = reader.joins(buffer.pointer)
                nextLead = packet.pts - packet.dts
            }
            // Nothing decoded from here on is shown before the next keyframe,
            // nor at or before the time (no frame is shown before it is decoded).
            lastDecodeEnd = max(lastDecodeEnd ?? .min, packet.dts.saturatingAdding(max(packet.duration, 0)))
            if let found = next, packet.dts >= found.pts, packet.dts > 0 {
                stoppedEarly = true
                break
            }
        }
        guard let keyframe else {
            throw MediaMuxError.damaged(path: track.path, detail: "its video has no packet at \(time.secondsText()) s")
        }
        let frameStart = shownBefore.max() ?? keyframe.pts
        let framesBefore = shownBefore.filter { $0 >= keyframe.pts && $0 < frameStart }.count
        var scan = CutScan(
            time: time, keyframe: at(keyframe.pts),
            frameStart: at(frameStart), framesBefore: framesBefore, frameAtOrAfter: atOrAfter.map(at), nextKeyframe: next.map { at($0.pts) },
            leadingPictures: leading)
        scan.keyframeJoins = keyframeJoins
        scan.nextKeyframeJoins = nextJoins
        scan.keyframeLead = MediaTime(ticks: keyframe.pts - keyframe.dts, of: tick)
        scan.nextKeyframeLead = nextLead.map { MediaTime(ticks: $0, of: tick) }
        scan.decodeEnd = stoppedEarly ? nil : lastDecodeEnd.map(at)
        let groupStart = keyframeLeading ?? keyframe.pts
        scan.keyframeGroupStart = at(groupStart)
        scan.framesFromKeyframeGroup = shown.filter { $0 >= groupStart && $0 < 0 }.count
        scan.framesToNextKeyframe = shown.filter { $0 >= frameStart && $0 < (next?.pts ?? .max) }.count
        scan.decodedAfterShown = laterFirst ? nil : laterDecoded.map(at)
        return scan
    }
}
