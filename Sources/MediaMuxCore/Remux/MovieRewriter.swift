import MediaMuxBase
import MediaMuxContainers

/// The edit list and durations one output track must end up with, in the
/// movie timescale (durations) and the track's media timescale (media time).
struct TrackTiming: Equatable {
    /// Presentation delay before the track's first sample (an empty edit).
    var delay: Int64
    /// Where in the media the presentation starts.
    var mediaTime: Int64
    /// The whole presentation, delay included: the output's end.
    var end: Int64
}

/// What the finished file's movie header must say beyond what FFmpeg 5.1's
/// mov muxer writes, all from the plan.
struct MovieRewrite {
    var movieEnd: Int64
    /// By output track, in track_ID order (as the muxer writes them).
    var timings: [TrackTiming]
    var sampleEntries: [SampleEntryCarry?]
    var trackBoxes: [TrackBoxCarry?]
    /// Whether players play each track unless told otherwise (tkhd's enabled flag).
    var enabled: [Bool]
    var metadata: MovieMetadataBoxes
}

/// Puts the plan's exact timing and the source's descriptions into a
/// finished file's moov. The muxer derives edit durations from DTS spans and
/// packet durations (which overshoot with B-frames and round start delays its
/// own way) and writes only part of a sample entry and of the metadata. The
/// boxes are changed, and the moov put back in the file, by the containers
/// module (`MovieFile`, `BoxNode`'s edits); this says what the plan wants.
struct MovieRewriter {
    let path: String

    /// Returns true when the moov ended up at the end of the file though it
    /// was at the front.
    @discardableResult
    func apply(_ rewrite: MovieRewrite, moveToFront: Bool = false) throws -> Bool {
        try MovieFile(path: path).replaceMovieHeader(moveToFront: moveToFront) { tree, _ in try Self.apply(rewrite, to: &tree) }
    }

    static func apply(_ rewrite: MovieRewrite, to tree: inout MovieTree) throws {
        guard var children = tree.root.children else { throw BoxFailure.malformed("empty moov") }
        var trackIndex = 0
        for index in children.indices {
            switch children[index].type {
            case "mvhd":
                try children[index].setDuration(rewrite.movieEnd, v0Offset: 16, v1Offset: 24)
            case "trak":
                guard trackIndex < rewrite.timings.count else { throw BoxFailure.layoutMismatch("more tracks than planned") }
                let timing = rewrite.timings[trackIndex]
                try children[index].modify("tkhd") { try $0.setDuration(timing.end, v0Offset: 20, v1Offset: 28) }
                children[index].setEditList(try Self.editList(timing))
                if !rewrite.enabled[trackIndex] {
                    try children[index].modify("tkhd") { tkhd in
                        guard tkhd.head.count >= 4 else { throw BoxFailure.malformed("short tkhd") }
                        tkhd.head[3] &= ~0x01
                    }
                }
                if let carry = rewrite.sampleEntries[trackIndex] {
                    children[index].modify("mdia/minf/stbl/stsd") { stsd in
                        if let first = stsd.children?.first { stsd.children![0] = carry.merged(into: first) }
                    }
                }
                if let carry = rewrite.trackBoxes[trackIndex] { children[index] = carry.merged(into: children[index]) }
                trackIndex += 1
            default:
                break
            }
        }
        guard trackIndex == rewrite.timings.count else { throw BoxFailure.layoutMismatch("found \(trackIndex) tracks, planned \(rewrite.timings.count)") }
        tree.root.children = children
        tree.root.add(rewrite.metadata)
    }

    /// The track's edit list as the plan has it, whatever FFmpeg's muxer
    /// wrote (it rounds a start its own way, and decides from the packets
    /// whether one is needed): an empty edit for a late start, then the
    /// media from `mediaTime` to the end.
    static func editList(_ timing: TrackTiming) throws -> EditList {
        try EditList.delayed(by: timing.delay, mediaFrom: timing.mediaTime, until: timing.end)
    }
}
