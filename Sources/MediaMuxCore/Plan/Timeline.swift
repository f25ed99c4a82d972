import MediaMuxBase

/// Pure: where the soundtrack sits on the output's timeline and where each
/// track and the output end.
extension MergePlanner {
    /// How much of a skipped beginning is kept before the output's zero to
    /// prime the decoder: one frame for AAC's overlap, 80 ms for Opus, a few
    /// frames of MP3's bit reservoir. The edit list hides it.
    package static let leadIn = MediaTime(value: 1, timescale: 10)

    /// Codecs whose every packet decodes alone, with no priming and no
    /// overlap with its neighbours: their packets can be repeated by copy.
    package static func repeatsByCopy(_ codec: String) -> Bool {
        codec == "alac" || codec.hasPrefix("pcm_")
    }

    /// The soundtrack on the output's timeline: moved by the offset, ending
    /// as the end policy says, looped if asked; and the output's end.
    static func placeSoundtrack(
        _ track: MergePlan.Track, beside video: MergePlan.Track, options: MergeOptions, output: String
    ) throws -> (MergePlan.Track, Ending) {
        let period = track.sourceEnd - track.sourceStart
        var audio = try offset(track, by: options.audio.offset, path: track.path)
        let ending = try ending(video: video, audio: audio, period: period, policy: options.end, loops: options.audio.loops, path: output)
        guard audio.sourceStart < ending.end else {
            let offset = options.audio.offset
            if offset.value != 0 {
                throw MediaMuxError.invalidOption(option: "MergeOptions.audio.offset", message:
                    "\(track.path): an offset of \(offset.secondsText()) s starts it at \(audio.sourceStart.secondsText()) s, after the video ends at \(ending.end.secondsText()) s")
            }
            throw MediaMuxError.damaged(path: track.path, detail: "the audio starts at \(audio.sourceStart.secondsText()) s, after the video ends")
        }
        audio.end = ending.audioEnd
        return (audio, ending)
    }

    /// The soundtrack moved by `offset`: later (the edit list's empty edit
    /// waits), or earlier by skipping its beginning.
    static func offset(_ track: MergePlan.Track, by offset: MediaTime, path: String) throws -> MergePlan.Track {
        guard offset.value != 0 else { return track }
        var moved = track
        moved.origin = track.origin - offset
        moved.sourceEnd = track.sourceEnd + offset
        let start = track.sourceStart + offset
        guard moved.sourceEnd > .zero() else {
            throw MediaMuxError.invalidOption(option: "MergeOptions.audio.offset", message:
                "\(path): an offset of \(offset.secondsText()) s skips all of its \((track.sourceEnd - track.sourceStart).secondsText()) s")
        }
        if start < .zero() {
            moved.sourceStart = .zero()
            moved.leadIn = leadIn
        } else {
            moved.sourceStart = start
        }
        return moved
    }

    /// The output's end, why, and how the soundtrack reaches it.
    struct Ending: Equatable {
        var end: MediaTime
        var reason: MergePlan.EndReason
        /// Where the soundtrack's presentation ends.
        var audioEnd: MediaTime
        /// How the soundtrack repeats to reach the end; nil when it plays once.
        var loop: Loop?
    }

    /// A soundtrack played again and again.
    struct Loop: Equatable {
        /// One play's length: each repeat starts this long after the one before.
        var period: MediaTime
        /// Plays begun before the track's end, the first one included.
        var plays: Int
    }

    /// Decides the end from the tracks as placed. `period` is one play of the
    /// soundtrack, for repeating it.
    static func ending(
        video: MergePlan.Track, audio: MergePlan.Track, period: MediaTime, policy: EndPolicy, loops: Bool, path: String
    ) throws -> Ending {
        let videoEnd = video.sourceEnd
        let audioEnd = audio.sourceEnd
        if loops && policy == .audio {
            throw MediaMuxError.invalidOption(option: "MergeOptions.audio.loops", message:
                "\(path): the audio can repeat only up to the end of the video, not when the output ends with the audio")
        }
        if audioEnd == videoEnd {
            return Ending(end: videoEnd, reason: .sameLength, audioEnd: audioEnd)
        }
        if videoEnd < audioEnd {
            switch policy {
            case .shortest, .video: return Ending(end: videoEnd, reason: .videoEndsFirst, audioEnd: videoEnd)
            case .audio: return Ending(end: audioEnd, reason: .lastFrameHeld, audioEnd: audioEnd)
            }
        }
        // The soundtrack ends first.
        if loops {
            // The first play ends at `audioEnd`; each repeat adds a period.
            let plays = 1 + Int((videoEnd - audioEnd).ticks(of: period, rounding: .up))
            return Ending(end: videoEnd, reason: .audioRepeated, audioEnd: videoEnd, loop: Loop(period: period, plays: plays))
        }
        switch policy {
        case .shortest, .audio: return Ending(end: audioEnd, reason: .audioEndsFirst, audioEnd: audioEnd)
        case .video: return Ending(end: videoEnd, reason: .audioStopsEarly, audioEnd: audioEnd)
        }
    }

    /// A track's timeline as spans: its source from its first sample, each
    /// repeat of a loop placed where the play before ends, and for a video
    /// that stops before the end, its last frame held. A soundtrack with the
    /// video's own audio mixed in is one encoded span to the end, whenever
    /// its source stops.
    static func spans(of track: MergePlan.Track, loop: Loop? = nil, reason: String) -> [MergePlan.Span] {
        let source = MergePlan.Span.Source(path: track.path, streamIndex: track.streamIndex)
        let decision: MergePlan.Span.Decision = track.isCopied ? .copy : .encode
        let played = min(track.sourceEnd, track.end)
        let holds = track.role == .video && track.end > track.sourceEnd
        let firstEnd = loop != nil || holds ? played : track.end
        var spans = [MergePlan.Span(
            source: source, sourceRange: (track.sourceStart + track.origin)..<(played + track.origin), place: track.sourceStart,
            duration: firstEnd - track.sourceStart, decision: decision, reason: reason)]
        if let loop {
            // The source's first sample, on its own timeline.
            let first = track.sourceEnd - loop.period + track.origin
            for play in 1..<max(loop.plays, 1) {
                let place = track.sourceEnd + MediaTime(ticks: Int64(play - 1), of: loop.period)
                let duration = min(loop.period, track.end - place)
                spans.append(MergePlan.Span(
                    source: source, sourceRange: first..<(first + duration), place: place, duration: duration, decision: decision,
                    reason: "\(reason), played again (\(play + 1) of \(loop.plays))"))
            }
        } else if holds {
            spans.append(MergePlan.Span(
                source: nil, sourceRange: nil, place: track.sourceEnd, duration: track.end - track.sourceEnd, decision: .hold,
                reason: "its last frame, on screen until the soundtrack ends"))
        }
        return spans
    }
}
