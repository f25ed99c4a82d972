import MediaMuxBase

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
/// own way) and writes only part of a sample entry and of the metadata.
///
/// The moov is rewritten where it is: over the room a faststart reservation
/// left after it, or at the end of the file. When neither holds it (the
/// reservation was too small) the old one becomes `free` space and the new
/// one goes last. Asked to, it moves a moov at the end to the front, shifting
/// the media data and every chunk offset: faststart for outputs whose moov
/// size could not be known in advance.
struct MovieRewriter {
    let path: String

    /// Returns true when the moov ended up at the end of the file though it
    /// was at the front.
    @discardableResult
    func apply(_ rewrite: MovieRewrite, moveToFront: Bool = false) throws -> Bool {
        try replaceMovieHeader(moveToFront: moveToFront) { tree, _ in try Self.apply(rewrite, to: &tree) }
    }

    /// Replaces the moov with what `change` makes of it (given the file,
    /// open for reading and writing), where it is or at the end, as `apply` does.
    @discardableResult
    func replaceMovieHeader(moveToFront: Bool = false, _ change: (inout MovieTree, Int32) throws -> Void) throws -> Bool {
        try withFileForUpdating(path) { descriptor in
            let moov = try readMovieBox(descriptor: descriptor)
            var tree = try MovieTree(moovBytes: moov.bytes)
            try change(&tree, descriptor)
            if moveToFront, moov.roomAfter == .endOfFile {
                try Self.moveToFront(tree, from: moov, descriptor: descriptor)
                return false
            }
            return try write(tree, replacing: moov, descriptor: descriptor)
        }
    }

    static func apply(_ rewrite: MovieRewrite, to tree: inout MovieTree) throws {
        guard var children = tree.root.children else { throw BoxFailure.malformed("empty moov") }
        var trackIndex = 0
        for index in children.indices {
            switch children[index].type {
            case "mvhd":
                try writeDuration(&children[index], v0Offset: 16, v1Offset: 24, value: rewrite.movieEnd)
            case "trak":
                guard trackIndex < rewrite.timings.count else { throw BoxFailure.layoutMismatch("more tracks than planned") }
                try patchTiming(&children[index], timing: rewrite.timings[trackIndex])
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
        add(rewrite.metadata, to: &tree.root)
    }

    // MARK: Timing

    private static func patchTiming(_ trak: inout BoxNode, timing: TrackTiming) throws {
        try trak.modify("tkhd") { try writeDuration(&$0, v0Offset: 20, v1Offset: 28, value: timing.end) }
        let elst = try editList(timing)
        if trak.first("edts/elst") != nil {
            trak.modify("edts/elst") { $0 = elst }
        } else {
            // FFmpeg's muxer leaves the edit list out where it sees none needed.
            var children = trak.children ?? []
            children.insert(BoxNode(type: "edts", head: [], children: [elst]), at: children.firstIndex { $0.type == "mdia" } ?? children.endIndex)
            trak.children = children
        }
    }

    /// The track's edit list as the plan has it, whatever FFmpeg's muxer
    /// wrote (it rounds a start its own way, and decides from the packets
    /// whether one is needed): an empty edit for a late start, then the
    /// media from `mediaTime` to the end; version 1 only where a value
    /// needs 64 bits.
    static func editList(_ timing: TrackTiming) throws -> BoxNode {
        let presented = timing.end - timing.delay
        guard timing.delay >= 0, presented >= 0 else {
            throw BoxFailure.layoutMismatch("a track planned from \(timing.delay) to \(timing.end)")
        }
        var edits: [(duration: Int64, mediaTime: Int64)] = timing.delay > 0 ? [(duration: timing.delay, mediaTime: Int64(-1))] : []
        edits.append((presented, timing.mediaTime))
        let wide = edits.contains { UInt32(exactly: $0.duration) == nil || Int32(exactly: $0.mediaTime) == nil }
        var head: [UInt8] = [wide ? 1 : 0, 0, 0, 0, 0, 0, 0, 0]
        BoxBuffer.put32(UInt32(edits.count), into: &head, at: 4)
        for edit in edits {
            let at = head.count
            head += [UInt8](repeating: 0, count: wide ? 20 : 12)
            if wide {
                BoxBuffer.put64(UInt64(edit.duration), into: &head, at: at)
                BoxBuffer.put64(UInt64(bitPattern: edit.mediaTime), into: &head, at: at + 8)
            } else {
                BoxBuffer.put32(UInt32(edit.duration), into: &head, at: at)
                BoxBuffer.put32(UInt32(bitPattern: Int32(edit.mediaTime)), into: &head, at: at + 4)
            }
            head[at + (wide ? 16 : 8) + 1] = 1  // media rate 1.0 (16.16)
        }
        return BoxNode(type: "elst", head: head)
    }

    /// Writes a duration field of a full box whose position depends on its version.
    private static func writeDuration(_ box: inout BoxNode, v0Offset: Int, v1Offset: Int, value: Int64) throws {
        let wide = try box.uint8(at: 0) == 1
        let offset = wide ? v1Offset : v0Offset
        guard offset + (wide ? 8 : 4) <= box.head.count else { throw BoxFailure.malformed("short \(box.type)") }
        if wide {
            BoxBuffer.put64(UInt64(bitPattern: value), into: &box.head, at: offset)
        } else {
            guard let narrow = UInt32(exactly: value) else { throw BoxFailure.layoutMismatch("duration \(value) needs 64 bits") }
            BoxBuffer.put32(narrow, into: &box.head, at: offset)
        }
    }

    /// Puts a fragmented movie's whole length, in the movie timescale, in
    /// mvex's `mehd` (ISO 14496-12 8.8.2), before the `trex` boxes, in place
    /// of any the muxer wrote: players (Media Source Extensions among them)
    /// take the presentation's duration from it.
    static func declareFragmentedDuration(_ duration: Int64, in moov: inout BoxNode) throws {
        guard let index = moov.children?.firstIndex(where: { $0.type == "mvex" }) else {
            throw BoxFailure.layoutMismatch("a fragmented movie without mvex")
        }
        let others = try BoxNode.parse(moov.children![index].head[...], container: { _, _ in nil }).filter { $0.type != "mehd" }
        let wide = UInt32(exactly: duration) == nil
        var head: [UInt8] = [wide ? 1 : 0, 0, 0, 0] + [UInt8](repeating: 0, count: wide ? 8 : 4)
        if wide { BoxBuffer.put64(UInt64(duration), into: &head, at: 4) } else { BoxBuffer.put32(UInt32(duration), into: &head, at: 4) }
        moov.children![index] = BoxNode(type: "mvex", head: [], children: [BoxNode(type: "mehd", head: head)] + others)
    }

    /// The index of the first track whose sample entry has a codec
    /// configuration box too short to hold one: what FFmpeg's muxer writes
    /// when it must derive the configuration from the packets (a VP9 or AV1
    /// stream from Matroska without CodecPrivate) and the first one does
    /// not parse. Nil when every one is whole.
    static func trackWithEmptyConfiguration(in tree: MovieTree) -> Int? {
        // The least payload each configuration record has (the full box's 4 bytes included).
        let least = ["vpcC": 12, "av1C": 4, "avcC": 7, "hvcC": 23]
        let tracks = tree.root.children?.filter { $0.type == "trak" } ?? []
        for (index, trak) in tracks.enumerated() {
            guard let entry = trak.first("mdia/minf/stbl/stsd")?.children?.first else { continue }
            for box in entry.children ?? [] {
                if let needed = least[box.type], box.byteCount - 8 < needed { return index }
            }
        }
        return nil
    }

    // MARK: Metadata

    /// Adds the source's metadata boxes; where the muxer wrote a box of the
    /// same kind (its own ©too), the muxer's stays.
    private static func add(_ metadata: MovieMetadataBoxes, to moov: inout BoxNode) {
        guard !metadata.isEmpty else { return }
        if let keyed = metadata.keyedMeta, !moov.all("meta").contains(where: { MovieMetadataBoxes.handler(of: $0) == "mdta" }) {
            moov.children!.append(keyed)
        }
        guard !metadata.userData.isEmpty || !metadata.tagItems.isEmpty else { return }
        if moov.first("udta") == nil { moov.children!.append(BoxNode(type: "udta", head: [], children: [])) }
        moov.modify("udta") { udta in
            udta.children = udta.children ?? []
            let present = Set(udta.children!.map(\.type))
            udta.children! += metadata.userData.filter { !present.contains($0.type) }
            guard !metadata.tagItems.isEmpty else { return }
            if !udta.all("meta").contains(where: { MovieMetadataBoxes.handler(of: $0) == "mdir" }) {
                udta.children!.append(Self.emptyTagMeta())
            }
            let index = udta.children!.firstIndex { $0.type == "meta" && MovieMetadataBoxes.handler(of: $0) == "mdir" }!
            udta.children![index].modify("ilst") { ilst in
                let present = Set(ilst.children?.map(\.type) ?? [])
                ilst.children = (ilst.children ?? []) + metadata.tagItems.filter { !present.contains($0.type) }
            }
        }
    }

    /// An ISO `meta` box with an iTunes-style (`mdir`) handler and no items.
    private static func emptyTagMeta() -> BoxNode {
        let hdlr = BoxNode(type: "hdlr", head: [0, 0, 0, 0, 0, 0, 0, 0] + Array("mdirappl".utf8) + [UInt8](repeating: 0, count: 9))
        return BoxNode(type: "meta", head: [0, 0, 0, 0], children: [hdlr, BoxNode(type: "ilst", head: [], children: [])])
    }

    // MARK: Moving to the front

    /// Puts the moov right after the boxes before the media data (ftyp),
    /// moving everything between there and the old moov later by the moov's
    /// size, from the end backwards so that nothing is overwritten unread.
    private static func moveToFront(_ tree: MovieTree, from moov: MovieBox, descriptor: Int32) throws {
        let insertAt = try firstBoxAfterFileType(descriptor: descriptor, before: moov.offset)
        // Raising offsets may widen a 32-bit table to 64 bits, which grows the
        // moov and so the shift: at most once per table, so this settles.
        var shift = tree.root.byteCount
        var bytes: [UInt8]?
        for _ in 0..<3 where bytes == nil {
            var shifted = tree
            try raiseChunkOffsets(&shifted.root, by: Int64(shift))
            if shifted.root.byteCount == shift { bytes = shifted.root.bytes } else { shift = shifted.root.byteCount }
        }
        guard let bytes else { throw BoxFailure.layoutMismatch("chunk offsets do not settle") }
        let block = 1 << 20
        var buffer = [UInt8](repeating: 0, count: block)
        var end = moov.offset
        while end > insertAt {
            let start = max(insertAt, end - block)
            let count = end - start
            let got = buffer.withUnsafeMutableBytes { readFully(descriptor, into: $0.baseAddress!, count: count, at: Int64(start)) }
            guard got == count, buffer.withUnsafeBytes({ writeFully(descriptor, UnsafeRawBufferPointer(rebasing: $0[0..<count]), at: Int64(start + shift)) }) else {
                throw BoxFailure.io("moving the media data failed: \(systemErrorText())")
            }
            end = start
        }
        guard writeFully(descriptor, bytes, at: Int64(insertAt)) else {
            throw BoxFailure.io("short write of moov: \(systemErrorText())")
        }
        guard truncateFile(descriptor, to: Int64(moov.offset + shift)) else {
            throw BoxFailure.io("cannot shorten the file: \(systemErrorText())")
        }
    }

    private static func firstBoxAfterFileType(descriptor: Int32, before limit: Int) throws -> Int {
        guard let header = readBytes(descriptor, count: 8, at: 0), header.count == 8,
              String(decoding: header[4..<8], as: UTF8.self) == "ftyp" else { return 0 }
        let size = Int(BoxBuffer.be32(header, 0))
        guard size >= 8, size <= limit else { throw BoxFailure.malformed("ftyp overruns the file") }
        return size
    }

    /// Adds `shift` to every chunk offset of every track, widening a 32-bit
    /// table (stco) to 64 bits (co64) where an offset no longer fits.
    static func raiseChunkOffsets(_ moov: inout BoxNode, by shift: Int64) throws {
        for index in moov.children!.indices where moov.children![index].type == "trak" {
            try moov.children![index].modify("mdia/minf/stbl") { stbl in
                guard let tables = stbl.children else { return }
                stbl.children = try tables.map { table in
                    guard table.type == "stco" || table.type == "co64" else { return table }
                    let wide = table.type == "co64"
                    let count = Int(try table.uint32(at: 4))
                    guard count <= (table.head.count - 8) / (wide ? 8 : 4) else { throw BoxFailure.malformed("short \(table.type)") }
                    let offsets = try (0..<count).map { i in
                        (wide ? try table.int64(at: 8 + i * 8) : Int64(try table.uint32(at: 8 + i * 4))) + shift
                    }
                    let widen = wide || offsets.contains { $0 > Int64(UInt32.max) }
                    var head = Array(table.head.prefix(8))
                    head += [UInt8](repeating: 0, count: count * (widen ? 8 : 4))
                    for (i, offset) in offsets.enumerated() {
                        if widen { BoxBuffer.put64(UInt64(offset), into: &head, at: 8 + i * 8) } else { BoxBuffer.put32(UInt32(offset), into: &head, at: 8 + i * 4) }
                    }
                    return BoxNode(type: widen ? "co64" : "stco", head: head)
                }
            }
        }
    }

    // MARK: Writing

    private func write(_ tree: MovieTree, replacing moov: MovieBox, descriptor: Int32) throws -> Bool {
        let old = moov.bytes.count
        let count = tree.root.byteCount
        func put(_ data: [UInt8], at offset: Int) throws {
            guard writeFully(descriptor, data, at: Int64(offset)) else {
                throw BoxFailure.io("short write of moov: \(systemErrorText())")
            }
        }
        // A piece at a time: the moov is never copied whole.
        func put(_ tree: MovieTree, at offset: Int) throws {
            var at = offset
            try tree.root.forEachPiece { piece in
                try put(piece, at: at)
                at += piece.count
            }
        }
        switch moov.roomAfter {
        case _ where count == old:
            try put(tree, at: moov.offset)
            return false
        case .endOfFile:
            try put(tree, at: moov.offset)
            if count < old, !truncateFile(descriptor, to: Int64(moov.offset + count)) {
                throw BoxFailure.io("cannot shorten the file: \(systemErrorText())")
            }
            return false
        case .freeBox(let free) where count == old + free || count + 8 <= old + free:
            let room = old + free - count
            try put(tree, at: moov.offset)
            if room > 0 {
                var padding = [0, 0, 0, 0] + Array("free".utf8)
                BoxBuffer.put32(UInt32(room), into: &padding, at: 0)
                try put(padding, at: moov.offset + count)
            }
            return false
        default:
            // No room: the old moov becomes free space and the new one goes last.
            let size = fileLength(descriptor)
            guard size > 0 else { throw BoxFailure.io("cannot read the file size: \(systemErrorText())") }
            try put(tree, at: Int(size))
            try put(Array("free".utf8), at: moov.offset + 4)
            return true
        }
    }
}
