#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What went wrong reading or patching QuickTime/MP4 boxes.
enum BoxFailure: Error, CustomStringConvertible {
    case malformed(String)
    case layoutMismatch(String)
    var description: String {
        switch self {
        case .malformed(let detail): return "malformed movie header (\(detail))"
        case .layoutMismatch(let detail): return "unexpected edit list layout (\(detail))"
        }
    }
}

/// The top-level `moov` box of a file, read whole (it holds only tables).
struct MovieBox {
    var offset: Int
    var headerSize: Int
    var bytes: [UInt8]
}

/// Finds and reads the first top-level moov box, skipping over mdat without reading it.
func readMovieBox(descriptor: Int32) throws -> MovieBox {
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
            size = Int(clamping: BoxBuffer.be64(header, 8))
            headerSize = 16
        } else if size == 0 {
            size = fileSize - offset
        }
        guard size >= headerSize, size <= fileSize - offset else { throw BoxFailure.malformed("box at \(offset) runs past the end") }
        if String(decoding: header[4..<8], as: UTF8.self) == "moov" {
            guard size < 256 << 20 else { throw BoxFailure.malformed("moov of \(size) bytes") }
            var bytes = [UInt8](repeating: 0, count: size)
            guard pread(descriptor, &bytes, size, off_t(offset)) == size else { throw BoxFailure.malformed("short read of moov") }
            return MovieBox(offset: offset, headerSize: headerSize, bytes: bytes)
        }
        offset += size
    }
    throw BoxFailure.malformed("no moov box")
}

/// What a file's movie header says about each track's presentation: what
/// players go by, read without FFmpeg's interpretation.
struct MovieHeaderFacts {
    struct Track {
        /// tkhd duration: the sum of the track's edits, in the movie timescale.
        var duration: Int64
        /// Leading empty edits: how late the track starts, in the movie timescale.
        var delay: Int64
        var hasEditList: Bool
        /// Where in the media (track timescale) the first non-empty edit starts
        /// presenting; 0 without an edit list.
        var mediaStart: Int64 = 0
        /// True when the edits are at most some empty ones followed by one
        /// segment played at normal rate: a timeline one output edit can repeat.
        var isSingleSegment = true
        /// Samples in the track's sample table (stsz).
        var sampleCount: Int?
        /// The smallest composition offset (ctts, read as signed in either
        /// version, as writers store negatives in version 0 too); 0 without ctts.
        var leastCompositionOffset: Int64 = 0
    }

    var movieTimescale: Int64
    /// By track_ID.
    var tracks: [Int: Track]

    init(path: String) throws {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw BoxFailure.malformed("cannot open") }
        defer { close(descriptor) }
        let moov = try readMovieBox(descriptor: descriptor)
        let buffer = BoxBuffer(bytes: moov.bytes)
        movieTimescale = 0
        tracks = [:]
        for child in try buffer.children(of: 0..<moov.bytes.count, headerSize: moov.headerSize) {
            if child.type == "mvhd" {
                let version = try buffer.uint8(at: child.payload.lowerBound)
                movieTimescale = Int64(try buffer.uint32(at: child.payload.lowerBound + (version == 1 ? 20 : 12)))
            } else if child.type == "trak" {
                var id: Int?
                var track = Track(duration: 0, delay: 0, hasEditList: false)
                for box in try buffer.children(of: child.payload, headerSize: 0) {
                    if box.type == "tkhd" {
                        let start = box.payload.lowerBound
                        let wide = try buffer.uint8(at: start) == 1
                        id = Int(try buffer.uint32(at: start + (wide ? 20 : 12)))
                        track.duration = wide ? try buffer.int64(at: start + 28) : Int64(try buffer.uint32(at: start + 20))
                    } else if box.type == "edts" {
                        for list in try buffer.children(of: box.payload, headerSize: 0) where list.type == "elst" {
                            try Self.read(edits: buffer.editList(list), into: &track)
                        }
                    } else if box.type == "mdia" {
                        try Self.readSampleTable(buffer, mdia: box, into: &track)
                    }
                }
                if let id { tracks[id] = track }
            }
        }
        guard movieTimescale > 0 else { throw BoxFailure.malformed("no movie timescale") }
    }

    private static func read(edits: [BoxBuffer.Edit], into track: inout Track) throws {
        track.hasEditList = !edits.isEmpty
        var delay: Int64 = 0
        let empty = edits.prefix(while: { $0.mediaTime == -1 })
        for edit in empty {
            let (sum, overflow) = delay.addingReportingOverflow(edit.duration)
            guard !overflow, edit.duration >= 0 else { throw BoxFailure.malformed("edit durations overflow") }
            delay = sum
        }
        track.delay = delay
        let segments = edits.dropFirst(empty.count)
        track.mediaStart = segments.first?.mediaTime ?? 0
        track.isSingleSegment = segments.count <= 1 && segments.allSatisfy { $0.rate == BoxBuffer.Edit.normalRate }
    }

    /// The sample count and least composition offset, from mdia/minf/stbl.
    private static func readSampleTable(_ buffer: BoxBuffer, mdia: BoxBuffer.Box, into track: inout Track) throws {
        for minf in try buffer.children(of: mdia.payload, headerSize: 0) where minf.type == "minf" {
            for stbl in try buffer.children(of: minf.payload, headerSize: 0) where stbl.type == "stbl" {
                for table in try buffer.children(of: stbl.payload, headerSize: 0) {
                    let start = table.payload.lowerBound
                    switch table.type {
                    case "stsz", "stz2":
                        track.sampleCount = Int(try buffer.uint32(at: start + 8))
                    case "ctts":
                        let count = Int(try buffer.uint32(at: start + 4))
                        guard count <= (table.payload.count - 8) / 8 else { throw BoxFailure.malformed("short ctts") }
                        var least: Int64 = 0
                        for index in 0..<count where try buffer.uint32(at: start + 8 + index * 8) > 0 {
                            least = min(least, Int64(Int32(bitPattern: try buffer.uint32(at: start + 12 + index * 8))))
                        }
                        track.leastCompositionOffset = least
                    default:
                        break
                    }
                }
            }
        }
    }
}

/// Whether a QuickTime-family file (MP4, M4A, MOV) has a sound track, read
/// from its moov with no FFmpeg: nil when the file does not start like one
/// or its moov cannot be read.
/// A cheap check for downloads, which then need no demuxer in memory.
func quickTimeHasSoundTrack(path: String) -> Bool? {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var head = [UInt8](repeating: 0, count: 8)
    guard pread(descriptor, &head, 8, 0) == 8,
          ["ftyp", "moov", "mdat", "free", "wide", "skip"].contains(String(decoding: head[4..<8], as: UTF8.self)) else { return nil }
    // A movie header that cannot be read is left to FFmpeg's probe, which says what is wrong.
    guard let moov = try? readMovieBox(descriptor: descriptor) else { return nil }
    let buffer = BoxBuffer(bytes: moov.bytes)
    guard let tracks = try? buffer.children(of: 0..<moov.bytes.count, headerSize: moov.headerSize) else { return nil }
    for trak in tracks where trak.type == "trak" {
        for mdia in (try? buffer.children(of: trak.payload, headerSize: 0)) ?? [] where mdia.type == "mdia" {
            for hdlr in (try? buffer.children(of: mdia.payload, headerSize: 0)) ?? [] where hdlr.type == "hdlr" {
                // version and flags, pre_defined, then handler_type.
                let at = hdlr.payload.lowerBound + 8
                if at + 4 <= hdlr.payload.upperBound, String(decoding: moov.bytes[at..<at + 4], as: UTF8.self) == "soun" { return true }
            }
        }
    }
    return false
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
        guard i < bytes.count else { throw BoxFailure.malformed("read past the end") }
        return bytes[i]
    }

    func uint32(at i: Int) throws -> UInt32 {
        guard i + 4 <= bytes.count else { throw BoxFailure.malformed("read past the end") }
        return Self.be32(bytes, i)
    }

    func int64(at i: Int) throws -> Int64 {
        guard i + 8 <= bytes.count else { throw BoxFailure.malformed("read past the end") }
        return Int64(bitPattern: Self.be64(bytes, i))
    }

    /// One elst entry, widened to 64 bits.
    struct Edit {
        /// 16.16 fixed point 1.0: the media plays at its own speed.
        static let normalRate: UInt32 = 0x0001_0000
        var duration: Int64
        var mediaTime: Int64
        /// media_rate_integer and media_rate_fraction as one 16.16 value.
        var rate: UInt32
    }

    /// The entries of an elst box.
    func editList(_ box: Box) throws -> [Edit] {
        let start = box.payload.lowerBound
        let wide = try uint8(at: start) == 1
        let count = Int(try uint32(at: start + 4))
        let size = wide ? 20 : 12
        guard count >= 0, count <= (box.payload.count - 8) / size else { throw BoxFailure.malformed("short elst") }
        return try (0..<count).map { index in
            let entry = start + 8 + index * size
            if wide { return Edit(duration: try int64(at: entry), mediaTime: try int64(at: entry + 8), rate: try uint32(at: entry + 16)) }
            return Edit(
                duration: Int64(try uint32(at: entry)), mediaTime: Int64(Int32(bitPattern: try uint32(at: entry + 4))),
                rate: try uint32(at: entry + 8))
        }
    }

    /// The boxes inside `range`, after skipping `headerSize` bytes of the parent's header.
    func children(of range: Range<Int>, headerSize: Int) throws -> [Box] {
        var boxes: [Box] = []
        var offset = range.lowerBound + headerSize
        while offset + 8 <= range.upperBound {
            var size = Int(try uint32(at: offset))
            var header = 8
            if size == 1 {
                guard offset + 16 <= range.upperBound else { throw BoxFailure.malformed("truncated box header") }
                size = Int(clamping: Self.be64(bytes, offset + 8))
                header = 16
            } else if size == 0 {
                size = range.upperBound - offset
            }
            guard size >= header, size <= range.upperBound - offset else {
                throw BoxFailure.malformed("box at \(offset) overruns its parent")
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
        guard offset + (version == 1 ? 8 : 4) <= payload.upperBound else { throw BoxFailure.malformed("short full box") }
        if version == 1 {
            put64(UInt64(value), at: offset)
        } else {
            guard let narrow = UInt32(exactly: value) else { throw BoxFailure.layoutMismatch("duration \(value) needs 64 bits") }
            put32(narrow, at: offset)
        }
    }

    mutating func writeEdit(at offset: Int, version: UInt8, duration: Int64, mediaTime: Int64) throws {
        guard duration >= 0 else { throw BoxFailure.layoutMismatch("negative edit duration") }
        if version == 1 {
            guard offset + 20 <= bytes.count else { throw BoxFailure.malformed("short elst") }
            put64(UInt64(duration), at: offset)
            put64(UInt64(bitPattern: mediaTime), at: offset + 8)
        } else {
            guard offset + 12 <= bytes.count else { throw BoxFailure.malformed("short elst") }
            guard let narrowDuration = UInt32(exactly: duration), let narrowTime = Int32(exactly: mediaTime) else {
                throw BoxFailure.layoutMismatch("edit values need 64 bits")
            }
            put32(narrowDuration, at: offset)
            put32(UInt32(bitPattern: narrowTime), at: offset + 4)
        }
    }
}
