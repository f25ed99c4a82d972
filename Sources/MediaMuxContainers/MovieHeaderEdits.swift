/// Changes to a movie header's boxes that an output needs beyond what
/// FFmpeg's muxer writes: durations, edit lists, the fragmented movie's
/// length, chunk offsets after a move, metadata.
extension BoxNode {
    /// Writes a duration field of a full box whose position depends on its
    /// version (mvhd: 16 or 24; tkhd: 20 or 28).
    package mutating func setDuration(_ value: Int64, v0Offset: Int, v1Offset: Int) throws {
        let wide = try uint8(at: 0) == 1
        let offset = wide ? v1Offset : v0Offset
        guard offset + (wide ? 8 : 4) <= head.count else { throw BoxFailure.malformed("short \(type)") }
        if wide {
            BoxBuffer.put64(UInt64(bitPattern: value), into: &head, at: offset)
        } else {
            guard let narrow = UInt32(exactly: value) else { throw BoxFailure.layoutMismatch("duration \(value) needs 64 bits") }
            BoxBuffer.put32(narrow, into: &head, at: offset)
        }
    }

    /// Sets an mdhd's duration, widening the box to version 1 where it needs 64 bits.
    package mutating func setMediaDuration(_ duration: Int64) throws {
        let wide = try uint8(at: 0) == 1
        guard head.count >= (wide ? 32 : 20) else { throw BoxFailure.malformed("short mdhd") }
        if wide {
            BoxBuffer.put64(UInt64(duration), into: &head, at: 24)
        } else if let narrow = UInt32(exactly: duration) {
            BoxBuffer.put32(narrow, into: &head, at: 16)
        } else {
            // Version 1: 64-bit creation and modification times and duration.
            let old = head
            let zero: [UInt8] = [0, 0, 0, 0]
            var wider: [UInt8] = [1, old[1], old[2], old[3]]
            wider += zero
            wider += old[4..<8]  // creation time
            wider += zero
            wider += old[8..<12]  // modification time
            wider += old[12..<16]  // timescale
            wider.appendBigEndian(UInt64(duration))
            wider += old[20...]
            head = wider
        }
    }

    /// Gives a trak `edits` in place of its edit list, or a new `edts`
    /// before its `mdia` where it has none (FFmpeg's muxer leaves the edit
    /// list out where it sees none needed).
    package mutating func setEditList(_ edits: EditList) {
        let elst = edits.box
        if first("edts/elst") != nil {
            modify("edts/elst") { $0 = elst }
        } else {
            var boxes = children ?? []
            boxes.insert(BoxNode(type: "edts", head: [], children: [elst]), at: boxes.firstIndex { $0.type == "mdia" } ?? boxes.endIndex)
            children = boxes
        }
    }

    /// Puts a fragmented movie's whole length, in the movie timescale, in
    /// mvex's `mehd` (ISO/IEC 14496-12, 8.8.2), before the `trex` boxes, in
    /// place of any the muxer wrote: players (Media Source Extensions among
    /// them) take the presentation's duration from it. Called on the moov.
    package mutating func declareFragmentedDuration(_ duration: Int64) throws {
        guard let index = children?.firstIndex(where: { $0.type == "mvex" }) else {
            throw BoxFailure.layoutMismatch("a fragmented movie without mvex")
        }
        let others = try BoxNode.parse(children![index].head[...], container: { _, _ in nil }).filter { $0.type != "mehd" }
        let wide = UInt32(exactly: duration) == nil
        let mehd = BoxNode.fullBox("mehd", version: wide ? 1 : 0) { head in
            if wide { head.appendBigEndian(UInt64(duration)) } else { head.appendBigEndian(UInt32(duration)) }
        }
        children![index] = BoxNode(type: "mvex", head: [], children: [mehd] + others)
    }

    /// Adds `shift` to every chunk offset of every track of a moov, widening
    /// a 32-bit table (stco) to 64 bits (co64) where an offset no longer fits.
    package mutating func raiseChunkOffsets(by shift: Int64) throws {
        for index in children!.indices where children![index].type == "trak" {
            try children![index].modify("mdia/minf/stbl") { stbl in
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
                    head.reserveCapacity(8 + count * (widen ? 8 : 4))
                    for offset in offsets {
                        if widen { head.appendBigEndian(UInt64(offset)) } else { head.appendBigEndian(UInt32(offset)) }
                    }
                    return BoxNode(type: widen ? "co64" : "stco", head: head)
                }
            }
        }
    }

    /// Adds the source's metadata boxes to a moov; where the muxer wrote a
    /// box of the same kind (its own ©too), the muxer's stays.
    package mutating func add(_ metadata: MovieMetadataBoxes) {
        guard !metadata.isEmpty else { return }
        if let keyed = metadata.keyedMeta, !all("meta").contains(where: { MovieMetadataBoxes.handler(of: $0) == "mdta" }) {
            children!.append(keyed)
        }
        guard !metadata.userData.isEmpty || !metadata.tagItems.isEmpty else { return }
        if first("udta") == nil { children!.append(BoxNode(type: "udta", head: [], children: [])) }
        modify("udta") { udta in
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
}

extension MovieTree {
    /// The index of the first track whose sample entry has a codec
    /// configuration box too short to hold one: what FFmpeg's muxer writes
    /// when it must derive the configuration from the packets (a VP9 or AV1
    /// stream from Matroska without CodecPrivate) and the first one does
    /// not parse. Nil when every one is whole.
    package var trackWithEmptyConfiguration: Int? {
        // The least payload each configuration record has (the full box's 4 bytes included).
        let least = ["vpcC": 12, "av1C": 4, "avcC": 7, "hvcC": 23]
        let tracks = root.children?.filter { $0.type == "trak" } ?? []
        for (index, trak) in tracks.enumerated() {
            guard let entry = trak.first("mdia/minf/stbl/stsd")?.children?.first else { continue }
            for box in entry.children ?? [] {
                if let needed = least[box.type], box.byteCount - 8 < needed { return index }
            }
        }
        return nil
    }
}
