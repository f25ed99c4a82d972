/// What went wrong reading or patching QuickTime/MP4 boxes.
package enum BoxFailure: Error, CustomStringConvertible {
    /// The boxes do not parse.
    case malformed(String)
    /// They parse, but not as the plan that wrote them says: a defect.
    case layoutMismatch(String)
    /// The file could not be opened, read or written (the system's words).
    case io(String)
    package var description: String {
        switch self {
        case .malformed(let detail): return "malformed movie header (\(detail))"
        case .layoutMismatch(let detail): return "unexpected movie header layout (\(detail))"
        case .io(let detail): return detail
        }
    }
}

/// The top-level `moov` box of a file, read whole (it holds only tables).
package struct MovieBox {
    package var offset: Int
    package var headerSize: Int
    package var bytes: [UInt8]
    /// Room right after the moov that a rewritten moov may take: the size of
    /// a `free` or `skip` box there (a faststart reservation), or unlimited
    /// when the moov ends the file.
    package var roomAfter: RoomAfter

    package enum RoomAfter: Equatable {
        case none
        case freeBox(bytes: Int)
        case endOfFile
    }
}

/// Finds and reads the first top-level moov box, skipping over mdat without reading it.
package func readMovieBox(descriptor: Int32) throws -> MovieBox {
    var offset = 0
    let fileSize = Int(fileLength(descriptor))
    while offset + 8 <= fileSize {
        guard let header = readBytes(descriptor, count: 16, at: Int64(offset)), header.count >= 8 else { break }
        var size = Int(BoxBuffer.be32(header, 0))
        var headerSize = 8
        if size == 1 {
            guard header.count == 16 else { throw BoxFailure.malformed("box at \(offset) runs past the end") }
            size = Int(clamping: BoxBuffer.be64(header, 8))
            headerSize = 16
        } else if size == 0 {
            size = fileSize - offset
        }
        guard size >= headerSize, size <= fileSize - offset else { throw BoxFailure.malformed("box at \(offset) runs past the end") }
        if String(decoding: header[4..<8], as: UTF8.self) == "moov" {
            guard size < 256 << 20 else { throw BoxFailure.malformed("moov of \(size) bytes") }
            guard let bytes = readBytes(descriptor, count: size, at: Int64(offset)), bytes.count == size else {
                throw BoxFailure.io("short read of moov")
            }
            return MovieBox(offset: offset, headerSize: headerSize, bytes: bytes, roomAfter: roomAfter(descriptor, at: offset + size, fileSize: fileSize))
        }
        offset += size
    }
    throw BoxFailure.malformed("no moov box")
}

private func roomAfter(_ descriptor: Int32, at offset: Int, fileSize: Int) -> MovieBox.RoomAfter {
    if offset == fileSize { return .endOfFile }
    guard offset + 8 <= fileSize, let header = readBytes(descriptor, count: 8, at: Int64(offset)), header.count == 8 else { return .none }
    let size = Int(BoxBuffer.be32(header, 0))
    guard ["free", "skip"].contains(String(decoding: header[4..<8], as: UTF8.self)), size >= 8, size <= fileSize - offset else { return .none }
    return .freeBox(bytes: size)
}

/// What a file's movie header says about each track's presentation: what
/// players go by, read without FFmpeg's interpretation.
package struct MovieHeaderFacts {
    package struct Track {
        /// tkhd duration: the sum of the track's edits, in the movie timescale.
        package var duration: Int64
        /// Leading empty edits: how late the track starts, in the movie timescale.
        package var delay: Int64
        package var hasEditList: Bool
        /// Where in the media (track timescale) the first non-empty edit starts
        /// presenting; 0 without an edit list.
        package var mediaStart: Int64 = 0
        /// True when the edits are at most some empty ones followed by one
        /// segment played at normal rate: a timeline one output edit can repeat.
        package var isSingleSegment = true
        /// Samples in the track's sample table (stsz).
        package var sampleCount: Int?
        /// The smallest composition offset (ctts, read as signed in either
        /// version, as writers store negatives in version 0 too); 0 without ctts.
        package var leastCompositionOffset: Int64 = 0
        /// The first sample entry, with the boxes inside it (codec
        /// configuration, colour, aspect...) as the file has them.
        package var sampleEntry: BoxNode?
        /// How many sample entries the track has (fragments choose one by index).
        package var sampleEntryCount = 0
        /// The first entry is encrypted (Common Encryption renames it `encv`,
        /// `enca`...): its samples need the key information the fragments carry beside them.
        package var isProtected = false
        /// The track's boxes besides its header, edits and media (tapt,
        /// tgas, tref, udta...), as the file has them.
        package var otherBoxes: [BoxNode] = []
        /// mdhd's timescale: ticks per second of the media's times.
        package var mediaTimescale: Int64 = 0
        /// Fragmented files: the span the sample table's own samples are
        /// presented for, and the decode time after them, in the media timescale.
        package var tableSpan: SampleSpan?
        package var tableDecodeEnd: Int64 = 0
    }

    package var movieTimescale: Int64
    /// mvhd's duration, in the movie timescale: the longest track's (0 when
    /// the writer left it so, as fragmenting muxers do).
    package var movieDuration: Int64
    /// By track_ID.
    package var tracks: [Int: Track]
    /// The movie-level metadata boxes: QuickTime's `meta` (mdta keys) and the children of `udta`.
    package var metadata: MovieMetadataBoxes
    /// The samples of the movie fragments, for a movie that declares them
    /// (an `mvex` box); nil otherwise.
    package var fragments: MovieFragments?

    package init(path: String) throws {
        guard let file = openForReading(path) else { throw BoxFailure.io("cannot open: \(systemErrorText())") }
        defer { try? file.close() }
        let descriptor = file.rawValue
        let tree = try MovieTree(moovBytes: readMovieBox(descriptor: descriptor).bytes)
        try self.init(tree: tree)
        if tree.root.first("mvex") != nil {
            fragments = try MovieFragments(descriptor: descriptor, moov: tree, decodeStarts: tracks.mapValues(\.tableDecodeEnd))
        }
    }

    /// Where a track's samples are presented, in its media timescale: those
    /// of the sample table and of the fragments together. Nil when the movie
    /// is not fragmented or the track has no samples.
    package func fragmentedSpan(of trackID: Int) -> SampleSpan? {
        guard let fragments, let track = tracks[trackID] else { return nil }
        guard let span = fragments.tracks[trackID]?.presentation else { return track.tableSpan }
        return span.union(track.tableSpan)
    }

    /// A fragmented track's samples: the sample table's and the fragments' whole ones.
    package func fragmentedSampleCount(of trackID: Int) -> Int? {
        guard let fragments, let track = tracks[trackID] else { return nil }
        return (track.sampleCount ?? 0) + (fragments.tracks[trackID]?.sampleCount ?? 0)
    }

    package init(tree: MovieTree) throws {
        guard let mvhd = tree.root.first("mvhd") else { throw BoxFailure.malformed("no mvhd") }
        let wideHeader = try mvhd.uint8(at: 0) == 1
        movieTimescale = Int64(try mvhd.uint32(at: wideHeader ? 20 : 12))
        guard movieTimescale > 0 else { throw BoxFailure.malformed("no movie timescale") }
        movieDuration = wideHeader ? try mvhd.int64(at: 24) : Int64(try mvhd.uint32(at: 16))
        tracks = [:]
        for trak in tree.tracks {
            guard let tkhd = trak.first("tkhd") else { continue }
            let wide = try tkhd.uint8(at: 0) == 1
            let id = try tkhd.trackID()
            var track = Track(duration: wide ? try tkhd.int64(at: 28) : Int64(try tkhd.uint32(at: 20)), delay: 0, hasEditList: false)
            if let elst = trak.first("edts/elst") { try Self.read(edits: EditList(elst).entries, into: &track) }
            if let mdhd = trak.first("mdia/mdhd") { track.mediaTimescale = Int64(try mdhd.uint32(at: try mdhd.uint8(at: 0) == 1 ? 20 : 12)) }
            if let stbl = trak.first("mdia/minf/stbl") {
                try Self.readSampleTable(stbl, into: &track)
                if tree.root.first("mvex") != nil { try Self.readSampleTimes(stbl, into: &track) }
            }
            let entries = MovieTree.sampleEntries(of: trak)
            track.sampleEntry = entries.first
            track.sampleEntryCount = entries.count
            track.isProtected = entries.first.map { ["encv", "enca", "encs", "enct"].contains($0.type) } ?? false
            track.otherBoxes = trak.children?.filter { !["tkhd", "edts", "mdia"].contains($0.type) } ?? []
            tracks[id] = track
        }
        metadata = MovieMetadataBoxes(moov: tree.root)
    }

    private static func read(edits: [EditList.Entry], into track: inout Track) throws {
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
        track.isSingleSegment = segments.count <= 1 && segments.allSatisfy { $0.rate == EditList.Entry.normalRate }
    }

    /// The sample count and least composition offset.
    private static func readSampleTable(_ stbl: BoxNode, into track: inout Track) throws {
        if let sizes = stbl.first("stsz") ?? stbl.first("stz2") { track.sampleCount = Int(try sizes.uint32(at: 8)) }
        guard let ctts = stbl.first("ctts") else { return }
        let count = Int(try ctts.uint32(at: 4))
        guard count <= (ctts.head.count - 8) / 8 else { throw BoxFailure.malformed("short ctts") }
        var least: Int64 = 0
        for index in 0..<count where try ctts.uint32(at: 8 + index * 8) > 0 {
            least = min(least, Int64(Int32(bitPattern: try ctts.uint32(at: 12 + index * 8))))
        }
        track.leastCompositionOffset = least
    }
}

extension MovieHeaderFacts {
    /// The span the sample table's samples are presented for and the decode
    /// time after them, from stts and ctts, a run of equal durations and
    /// offsets at a time.
    fileprivate static func readSampleTimes(_ stbl: BoxNode, into track: inout Track) throws {
        func runs(_ box: BoxNode?) throws -> [(count: Int64, value: Int64)] {
            guard let box else { return [] }
            let count = Int(try box.uint32(at: 4))
            guard count <= (box.head.count - 8) / 8 else { throw BoxFailure.malformed("short \(box.type)") }
            return try (0..<count).map { index in
                (Int64(try box.uint32(at: 8 + index * 8)), Int64(try box.uint32(at: 12 + index * 8)))
            }
        }
        let durations = try runs(stbl.first("stts"))
        // Offsets read as signed in either version, as in `readSampleTable`.
        var offsets = try runs(stbl.first("ctts")).map { ($0.count, Int64(Int32(truncatingIfNeeded: $0.value))) }[...]
        var decode: Int64 = 0
        var span: SampleSpan?
        for var run in durations {
            while run.count > 0 {
                let offset = offsets.first?.1 ?? 0
                let count = min(run.count, offsets.first?.0 ?? run.count)
                let (length, long) = count.multipliedReportingOverflow(by: run.value)
                let (end, late) = decode.addingReportingOverflow(length)
                guard !long, !late, !end.addingReportingOverflow(offset).overflow else { throw BoxFailure.malformed("sample times overflow") }
                span = SampleSpan(start: decode + offset, end: end + offset).union(span)
                decode = end
                run.count -= count
                if let first = offsets.first {
                    if first.0 > count { offsets[offsets.startIndex].0 -= count } else { offsets.removeFirst() }
                }
            }
        }
        track.tableSpan = span
        track.tableDecodeEnd = decode
    }
}

/// Whether a QuickTime-family file (MP4, M4A, MOV) has a sound track, read
/// from its moov with no FFmpeg: nil when the file does not start like one
/// or its moov cannot be read.
/// A cheap check for downloads, which then need no demuxer in memory.
package func quickTimeHasSoundTrack(path: String) -> Bool? {
    guard let file = openForReading(path) else { return nil }
    defer { try? file.close() }
    let descriptor = file.rawValue
    guard let head = readBytes(descriptor, count: 8, at: 0), head.count == 8,
          MovieTree.leadingBoxTypes.contains(String(decoding: head[4..<8], as: UTF8.self)) else { return nil }
    // A movie header that cannot be read is left to FFmpeg's probe, which says what is wrong.
    guard let moov = try? readMovieBox(descriptor: descriptor), let tree = try? MovieTree(moovBytes: moov.bytes) else { return nil }
    return tree.tracks.contains { MovieTree.handler(of: $0) == "soun" }
}

/// The entries of an `elst` box, widened to 64 bits.
package struct EditList {
    package struct Entry: Equatable {
        /// 16.16 fixed point 1.0: the media plays at its own speed.
        package static let normalRate: UInt32 = 0x0001_0000
        package var duration: Int64
        package var mediaTime: Int64
        /// media_rate_integer and media_rate_fraction as one 16.16 value.
        package var rate: UInt32
    }

    package var entries: [Entry]

    package init(_ elst: BoxNode) throws {
        let wide = try elst.uint8(at: 0) == 1
        let count = Int(try elst.uint32(at: 4))
        let size = wide ? 20 : 12
        guard count >= 0, count <= (elst.head.count - 8) / size else { throw BoxFailure.malformed("short elst") }
        entries = try (0..<count).map { index in
            let entry = 8 + index * size
            if wide { return Entry(duration: try elst.int64(at: entry), mediaTime: try elst.int64(at: entry + 8), rate: try elst.uint32(at: entry + 16)) }
            return Entry(
                duration: Int64(try elst.uint32(at: entry)), mediaTime: Int64(Int32(bitPattern: try elst.uint32(at: entry + 4))),
                rate: try elst.uint32(at: entry + 8))
        }
    }
}

/// Big-endian reads and writes of the integers boxes are made of.
package enum BoxBuffer {
    package static func be32<Bytes: RandomAccessCollection<UInt8>>(_ b: Bytes, _ i: Bytes.Index) -> UInt32 where Bytes.Index == Int {
        UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }

    package static func be64<Bytes: RandomAccessCollection<UInt8>>(_ b: Bytes, _ i: Bytes.Index) -> UInt64 where Bytes.Index == Int {
        UInt64(be32(b, i)) << 32 | UInt64(be32(b, i + 4))
    }

    package static func put32(_ value: UInt32, into bytes: inout [UInt8], at i: Int) {
        for k in 0..<4 { bytes[i + k] = UInt8(truncatingIfNeeded: value >> (24 - 8 * k)) }
    }

    package static func put64(_ value: UInt64, into bytes: inout [UInt8], at i: Int) {
        put32(UInt32(truncatingIfNeeded: value >> 32), into: &bytes, at: i)
        put32(UInt32(truncatingIfNeeded: value), into: &bytes, at: i + 4)
    }
}

extension BoxNode {
    /// A `tkhd`'s track_ID (after version 1's 64-bit times, or version 0's 32-bit ones).
    package func trackID() throws -> Int {
        Int(try uint32(at: try uint8(at: 0) == 1 ? 20 : 12))
    }
}
