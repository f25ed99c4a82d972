/// One QuickTime/MP4 box, parsed down to the boxes MediaMux reads or
/// rewrites and kept byte for byte everywhere else: serializing an unchanged
/// tree gives back the bytes it was parsed from.
package struct BoxNode: Sendable, Equatable {
    /// The four type bytes, one Unicode scalar per byte (so `©xyz` is "\u{A9}xyz").
    package var type: String
    /// The payload before the children: a full box's version and flags, the
    /// entry count of `stsd`, the fixed fields of a sample entry. A leaf's whole payload.
    package var head: [UInt8]
    /// nil for a leaf.
    package var children: [BoxNode]?
    /// Bytes after the last child too short to be a box (QuickTime ends some
    /// `udta` boxes with four zero bytes).
    package var tail: [UInt8] = []

    package init(type: String, head: [UInt8], children: [BoxNode]? = nil, tail: [UInt8] = []) {
        self.type = type
        self.head = head
        self.children = children
        self.tail = tail
    }

    /// Boxes whose payload is only boxes, wherever they appear in a movie header.
    package static let plainContainers: Set<String> = ["moov", "trak", "mdia", "minf", "stbl", "edts", "udta", "dinf", "tref", "ilst", "wave"]

    /// How deep containers are opened. Real movie headers nest about ten
    /// deep (moov/trak/mdia/minf/stbl/stsd/mp4a/wave/...); a hostile one
    /// could nest a million `udta` boxes in 8 MB, each a level of recursion.
    /// Below this depth boxes are kept whole, as leaves.
    package static let deepestContainer = 24

    /// Parses the boxes in `bytes`. `container` returns, for a box type and
    /// payload, how many head bytes come before its children, or nil for a leaf.
    /// A container whose contents do not parse as boxes is kept as a leaf.
    package static func parse(_ bytes: ArraySlice<UInt8>, container: (String, ArraySlice<UInt8>) -> Int?) throws -> [BoxNode] {
        try parse(bytes, depth: 0, container: container)
    }

    private static func parse(_ bytes: ArraySlice<UInt8>, depth: Int, container: (String, ArraySlice<UInt8>) -> Int?) throws -> [BoxNode] {
        var nodes: [BoxNode] = []
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            guard bytes.endIndex - offset >= 8 else { throw BoxFailure.malformed("\(bytes.endIndex - offset) stray bytes") }
            guard let box = BoxHeader(bytes, at: offset, extent: Int64(bytes.endIndex - offset)) else {
                throw BoxFailure.malformed("truncated box header")
            }
            let size = Int(box.size)
            guard size >= box.headerSize, size <= bytes.endIndex - offset else { throw BoxFailure.malformed("a box overruns its parent") }
            let payload = bytes[(offset + box.headerSize)..<(offset + size)]
            nodes.append(node(type: box.type, payload: payload, depth: depth, container: container))
            offset += size
        }
        return nodes
    }

    private static func node(type: String, payload: ArraySlice<UInt8>, depth: Int = 0, container: (String, ArraySlice<UInt8>) -> Int?) -> BoxNode {
        guard depth < deepestContainer, let headSize = container(type, payload), headSize <= payload.count else {
            return BoxNode(type: type, head: Array(payload))
        }
        let body = payload.dropFirst(headSize)
        // Children up to the last whole box; fewer than 8 bytes left over are a tail.
        var end = body.startIndex
        while body.endIndex - end >= 8 {
            let size = Int(BoxBuffer.be32(body, end))
            guard size >= 8, size <= body.endIndex - end else { break }
            end += size
        }
        guard body.endIndex - end < 8, let children = try? parse(body[..<end], depth: depth + 1, container: container) else {
            return BoxNode(type: type, head: Array(payload))
        }
        return BoxNode(type: type, head: Array(payload.prefix(headSize)), children: children, tail: Array(body[end...]))
    }

    /// ISO's meta is a full box (version and flags first); QuickTime's is
    /// not, and starts with its first child's size, never zero.
    package static func metaHeadSize(_ payload: ArraySlice<UInt8>) -> Int {
        payload.prefix(4).elementsEqual([0, 0, 0, 0]) ? 4 : 0
    }

    package static func typeName(_ bytes: ArraySlice<UInt8>) -> String {
        String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    package static func typeBytes(_ type: String) -> [UInt8] {
        let scalars = type.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }
        return Array((scalars + [0, 0, 0, 0]).prefix(4))
    }

    /// The box's bytes, header included, sizes recomputed.
    package var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(byteCount)
        append(to: &out)
        return out
    }

    package var byteCount: Int {
        let payload = head.count + (children?.reduce(0) { $0 + $1.byteCount } ?? 0) + tail.count
        return payload + (payload + 8 > Int(UInt32.max) ? 16 : 8)
    }

    package func append(to out: inout [UInt8]) {
        out += header
        out += head
        for child in children ?? [] { child.append(to: &out) }
        out += tail
    }

    /// The box's bytes in order, a header or a payload part at a time, not
    /// joined: a large box (a moov with long sample tables) is written
    /// without a copy of it whole.
    package func forEachPiece(_ body: ([UInt8]) throws -> Void) rethrows {
        try body(header)
        if !head.isEmpty { try body(head) }
        for child in children ?? [] { try child.forEachPiece(body) }
        if !tail.isEmpty { try body(tail) }
    }

    /// Size and type, 16 bytes when the size needs 64 bits.
    private var header: [UInt8] {
        let size = byteCount
        var out: [UInt8] = []
        if size > Int(UInt32.max) {
            out += [0, 0, 0, 1] + Self.typeBytes(type)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: UInt64(size) >> UInt64(shift))) }
        } else {
            for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: UInt32(size) >> UInt32(shift))) }
            out += Self.typeBytes(type)
        }
        return out
    }

    /// The first descendant along a slash-separated path of types, such as "mdia/minf/stbl".
    package func first(_ path: String) -> BoxNode? {
        var node = self
        for type in path.split(separator: "/") {
            guard let next = node.children?.first(where: { $0.type == type }) else { return nil }
            node = next
        }
        return node
    }

    /// Every child of this type.
    package func all(_ type: String) -> [BoxNode] { children?.filter { $0.type == type } ?? [] }

    /// Changes the first descendant along `path`; false when there is none.
    @discardableResult
    package mutating func modify(_ path: Substring, _ change: (inout BoxNode) throws -> Void) rethrows -> Bool {
        guard !path.isEmpty else {
            try change(&self)
            return true
        }
        let parts = path.split(separator: "/", maxSplits: 1)
        guard let index = children?.firstIndex(where: { $0.type == parts[0] }) else { return false }
        return try children![index].modify(parts.count > 1 ? parts[1] : "", change)
    }

    // Reads from the head, for fixed fields of full boxes and leaves.

    package func uint8(at i: Int) throws -> UInt8 {
        guard i >= 0, i < head.count else { throw BoxFailure.malformed("\(type) too short") }
        return head[i]
    }

    package func uint16(at i: Int) throws -> UInt16 {
        UInt16(try uint8(at: i)) << 8 | UInt16(try uint8(at: i + 1))
    }

    package func uint32(at i: Int) throws -> UInt32 {
        guard i >= 0, i + 4 <= head.count else { throw BoxFailure.malformed("\(type) too short") }
        return BoxBuffer.be32(head, i)
    }

    package func int64(at i: Int) throws -> Int64 {
        guard i >= 0, i + 8 <= head.count else { throw BoxFailure.malformed("\(type) too short") }
        return Int64(bitPattern: BoxBuffer.be64(head, i))
    }
}

/// A movie header (`moov`) as a tree: the containers of tracks, sample
/// tables and metadata opened, sample entries opened by their track's handler.
package struct MovieTree: Sendable, Equatable {
    /// The box types a QuickTime-family file (MP4, M4A, MOV) starts with.
    package static let leadingBoxTypes: Set<String> = ["ftyp", "moov", "mdat", "free", "wide", "skip"]

    package var root: BoxNode

    package init(moovBytes: [UInt8]) throws {
        let nodes = try BoxNode.parse(moovBytes[...], container: Self.headSize)
        guard nodes.count == 1, nodes[0].type == "moov", nodes[0].children != nil else { throw BoxFailure.malformed("no moov box") }
        root = nodes[0]
        for index in root.children!.indices where root.children![index].type == "trak" {
            Self.openSampleEntries(&root.children![index])
        }
    }

    private static func headSize(_ type: String, _ payload: ArraySlice<UInt8>) -> Int? {
        if BoxNode.plainContainers.contains(type) { return 0 }
        switch type {
        case "stsd": return 8
        case "meta": return BoxNode.metaHeadSize(payload)
        default: return nil
        }
    }

    /// The handler type of a track: "vide", "soun", "meta", "tmcd"...
    package static func handler(of trak: BoxNode) -> String? {
        guard let hdlr = trak.first("mdia/hdlr"), hdlr.head.count >= 12 else { return nil }
        return BoxNode.typeName(hdlr.head[8..<12])
    }

    /// Sample entries become containers of their boxes, after their fixed
    /// fields: 78 bytes for video, 28 for sound (plus 16 or 36 in QuickTime's
    /// versions 1 and 2).
    private static func openSampleEntries(_ trak: inout BoxNode) {
        let handler = Self.handler(of: trak)
        trak.modify("mdia/minf/stbl/stsd") { stsd in
            guard let entries = stsd.children else { return }
            stsd.children = entries.map { entry in
                guard entry.children == nil, let fixed = sampleEntryHeadSize(entry, handler: handler) else { return entry }
                let reopened = BoxNode.parse(entryBytes: entry, headSize: fixed)
                return reopened ?? entry
            }
        }
    }

    private static func sampleEntryHeadSize(_ entry: BoxNode, handler: String?) -> Int? {
        switch handler {
        case "vide": return 78
        case "soun":
            guard let version = try? entry.uint16(at: 8) else { return nil }
            switch version {
            case 0: return 28
            case 1: return 44
            case 2: return 64
            default: return nil
            }
        default: return nil
        }
    }

    /// Sample entries of a track, in stsd order.
    package static func sampleEntries(of trak: BoxNode) -> [BoxNode] {
        trak.first("mdia/minf/stbl/stsd")?.children ?? []
    }

    package var tracks: [BoxNode] { root.all("trak") }

    package var bytes: [UInt8] { root.bytes }
}

extension BoxNode {
    /// A leaf re-read as a container whose children start after `headSize` bytes.
    package static func parse(entryBytes entry: BoxNode, headSize: Int) -> BoxNode? {
        guard entry.children == nil, headSize <= entry.head.count else { return nil }
        let reopened = node(type: entry.type, payload: entry.head[...]) { type, _ in
            type == entry.type ? headSize : (plainContainers.contains(type) ? 0 : nil)
        }
        return reopened.children == nil ? nil : reopened
    }
}
