#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

/// FFmpeg 5.1's mov muxer derives edit durations from DTS spans and packet
/// durations, which overshoot with B-frames and round start delays to the
/// movie timescale its own way. The plan knows the exact values; this writes
/// them into the finished file's moov in place. Only fixed-size fields change
/// (edit entries, tkhd and mvhd durations), so no box moves.
struct EditListPatcher {
    let path: String

    /// `timings[i]` is for the i-th track (track_ID order, as the muxer writes them).
    func patch(movieEnd: Int64, timings: [TrackTiming]) throws {
        let descriptor = open(path, O_RDWR)
        guard descriptor >= 0 else { throw BoxFailure.malformed("cannot reopen: \(systemErrorText())") }
        defer { close(descriptor) }
        let moov = try readMovieBox(descriptor: descriptor)
        var buffer = BoxBuffer(bytes: moov.bytes)
        var trackIndex = 0
        for child in try buffer.children(of: 0..<moov.bytes.count, headerSize: moov.headerSize) {
            switch child.type {
            case "mvhd":
                try buffer.writeDuration(fullBoxAt: child.payload, v0Offset: 16, v1Offset: 24, value: movieEnd)
            case "trak":
                guard trackIndex < timings.count else { throw BoxFailure.layoutMismatch("more tracks than planned") }
                try patchTrack(&buffer, trak: child, timing: timings[trackIndex])
                trackIndex += 1
            default:
                break
            }
        }
        guard trackIndex == timings.count else { throw BoxFailure.layoutMismatch("found \(trackIndex) tracks, planned \(timings.count)") }
        guard pwrite(descriptor, buffer.bytes, moov.bytes.count, off_t(moov.offset)) == moov.bytes.count else {
            throw BoxFailure.malformed("short write of moov: \(systemErrorText())")
        }
    }

    private func patchTrack(_ buffer: inout BoxBuffer, trak: BoxBuffer.Box, timing: TrackTiming) throws {
        var patchedEdits = false
        for child in try buffer.children(of: trak.payload, headerSize: 0) {
            switch child.type {
            case "tkhd":
                try buffer.writeDuration(fullBoxAt: child.payload, v0Offset: 20, v1Offset: 28, value: timing.end)
            case "edts":
                for edit in try buffer.children(of: child.payload, headerSize: 0) where edit.type == "elst" {
                    try patchEditList(&buffer, elst: edit, timing: timing)
                    patchedEdits = true
                }
            default:
                break
            }
        }
        guard patchedEdits else { throw BoxFailure.layoutMismatch("a track has no edit list") }
    }

    private func patchEditList(_ buffer: inout BoxBuffer, elst: BoxBuffer.Box, timing: TrackTiming) throws {
        let start = elst.payload.lowerBound
        let version = try buffer.uint8(at: start)
        let count = Int(try buffer.uint32(at: start + 4))
        let entrySize = version == 1 ? 20 : 12
        // FFmpeg writes an empty edit when it sees a positive start; it rounds
        // that start its own way, so a one-tick start may get one or not.
        var entry = start + 8
        switch count {
        case 2:
            try buffer.writeEdit(at: entry, version: version, duration: timing.delay, mediaTime: -1)
            entry += entrySize
        case 1 where timing.delay == 0:
            break
        default:
            throw BoxFailure.layoutMismatch("\(count) edits for a track that starts at \(timing.delay)")
        }
        try buffer.writeEdit(at: entry, version: version, duration: timing.end - timing.delay, mediaTime: timing.mediaTime)
    }
}
