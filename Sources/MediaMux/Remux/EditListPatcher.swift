import Foundation

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
    enum Failure: Error, CustomStringConvertible {
        case malformed(String)
        case layoutMismatch(String)
        var description: String {
            switch self {
            case .malformed(let detail): return "the written movie header is malformed (\(detail))"
            case .layoutMismatch(let detail): return "the written edit list has an unexpected layout (\(detail))"
            }
        }
    }

    let path: String

    /// `timings[i]` is for the i-th track (track_ID order, as the muxer writes them).
    func patch(movieEnd: Int64, timings: [TrackTiming]) throws {
        let descriptor = Glibc.open(path, O_RDWR)
        guard descriptor >= 0 else { throw Failure.malformed("cannot reopen: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        let moov = try findTopLevelBox("moov", descriptor: descriptor)
        var bytes = [UInt8](repeating: 0, count: moov.size)
        guard pread(descriptor, &bytes, moov.size, off_t(moov.offset)) == moov.size else {
            throw Failure.malformed("short read of moov")
        }
        var buffer = BoxBuffer(bytes: bytes)
        var trackIndex = 0
        for child in try buffer.children(of: 0..<bytes.count, headerSize: moov.headerSize) {
            switch child.type {
            case "mvhd":
                try buffer.writeDuration(fullBoxAt: child.payload, v0Offset: 16, v1Offset: 24, value: movieEnd)
            case "trak":
                guard trackIndex < timings.count else { throw Failure.layoutMismatch("more tracks than planned") }
                try patchTrack(&buffer, trak: child, timing: timings[trackIndex])
                trackIndex += 1
            default:
                break
            }
        }
        guard trackIndex == timings.count else { throw Failure.layoutMismatch("found \(trackIndex) tracks, planned \(timings.count)") }
        guard pwrite(descriptor, buffer.bytes, moov.size, off_t(moov.offset)) == moov.size else {
            throw Failure.malformed("short write of moov: \(String(cString: strerror(errno)))")
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
        guard patchedEdits else { throw Failure.layoutMismatch("a track has no edit list") }
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
            throw Failure.layoutMismatch("\(count) edits for a track that starts at \(timing.delay)")
        }
        try buffer.writeEdit(at: entry, version: version, duration: timing.end - timing.delay, mediaTime: timing.mediaTime)
    }

    private func findTopLevelBox(_ type: String, descriptor: Int32) throws -> (offset: Int, size: Int, headerSize: Int) {
        var offset = 0
        var info = stat()
        fstat(descriptor, &info)
        let fileSize = Int(info.st_size)
        var header = [UInt8](repeating: 0, count: 16)
        while offset + 8 <= fileSize {
            guard pread(descriptor, &header, 16, off_t(offset)) >= 8 else { break }
            var size = Int(BoxBuffer.be32(header, 0))
            var headerSize = 8
            if size == 1 {
                size = Int(BoxBuffer.be64(header, 8))
                headerSize = 16
            } else if size == 0 {
                size = fileSize - offset
            }
            guard size >= headerSize, offset + size <= fileSize else { throw Failure.malformed("box at \(offset) runs past the end") }
            if String(decoding: header[4..<8], as: UTF8.self) == type {
                guard size < 256 << 20 else { throw Failure.malformed("moov of \(size) bytes") }
                return (offset, size, headerSize)
            }
            offset += size
        }
        throw Failure.malformed("no \(type) box")
    }
}

/// A byte buffer holding one box tree, with just the reads and writes the patcher needs.
struct BoxBuffer {
    struct Box {
        var type: String
        /// The bytes after the box header.
        var payload: Range<Int>
    }

    var bytes: [UInt8]

    static func be32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }

    static func be64(_ b: [UInt8], _ i: Int) -> UInt64 {
        UInt64(be32(b, i)) << 32 | UInt64(be32(b, i + 4))
    }

    func uint8(at i: Int) throws -> UInt8 {
        guard i < bytes.count else { throw EditListPatcher.Failure.malformed("read past the end") }
        return bytes[i]
    }

    func uint32(at i: Int) throws -> UInt32 {
        guard i + 4 <= bytes.count else { throw EditListPatcher.Failure.malformed("read past the end") }
        return Self.be32(bytes, i)
    }

    /// The boxes inside `range`, after skipping `headerSize` bytes of the parent's header.
    func children(of range: Range<Int>, headerSize: Int) throws -> [Box] {
        var boxes: [Box] = []
        var offset = range.lowerBound + headerSize
        while offset + 8 <= range.upperBound {
            var size = Int(try uint32(at: offset))
            var header = 8
            if size == 1 {
                guard offset + 16 <= range.upperBound else { throw EditListPatcher.Failure.malformed("truncated box header") }
                size = Int(Self.be64(bytes, offset + 8))
                header = 16
            } else if size == 0 {
                size = range.upperBound - offset
            }
            guard size >= header, offset + size <= range.upperBound else {
                throw EditListPatcher.Failure.malformed("box at \(offset) overruns its parent")
            }
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            boxes.append(Box(type: type, payload: (offset + header)..<(offset + size)))
            offset += size
        }
        return boxes
    }

    mutating func put32(_ value: UInt32, at i: Int) {
        for k in 0..<4 { bytes[i + k] = UInt8(truncatingIfNeeded: value >> (24 - 8 * k)) }
    }

    mutating func put64(_ value: UInt64, at i: Int) {
        put32(UInt32(truncatingIfNeeded: value >> 32), at: i)
        put32(UInt32(truncatingIfNeeded: value), at: i + 4)
    }

    /// Writes a duration field of a full box whose position depends on its version.
    mutating func writeDuration(fullBoxAt payload: Range<Int>, v0Offset: Int, v1Offset: Int, value: Int64) throws {
        let version = try uint8(at: payload.lowerBound)
        let offset = payload.lowerBound + (version == 1 ? v1Offset : v0Offset)
        guard offset + (version == 1 ? 8 : 4) <= payload.upperBound else { throw EditListPatcher.Failure.malformed("short full box") }
        if version == 1 {
            put64(UInt64(value), at: offset)
        } else {
            guard let narrow = UInt32(exactly: value) else { throw EditListPatcher.Failure.layoutMismatch("duration \(value) needs 64 bits") }
            put32(narrow, at: offset)
        }
    }

    mutating func writeEdit(at offset: Int, version: UInt8, duration: Int64, mediaTime: Int64) throws {
        guard duration >= 0 else { throw EditListPatcher.Failure.layoutMismatch("negative edit duration") }
        if version == 1 {
            guard offset + 20 <= bytes.count else { throw EditListPatcher.Failure.malformed("short elst") }
            put64(UInt64(duration), at: offset)
            put64(UInt64(bitPattern: mediaTime), at: offset + 8)
        } else {
            guard offset + 12 <= bytes.count else { throw EditListPatcher.Failure.malformed("short elst") }
            guard let narrowDuration = UInt32(exactly: duration), let narrowTime = Int32(exactly: mediaTime) else {
                throw EditListPatcher.Failure.layoutMismatch("edit values need 64 bits")
            }
            put32(narrowDuration, at: offset)
            put32(UInt32(bitPattern: narrowTime), at: offset + 4)
        }
    }
}
