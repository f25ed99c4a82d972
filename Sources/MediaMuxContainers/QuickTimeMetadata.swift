/// A file's movie-level metadata as its boxes hold it: what a capture
/// device wrote about the recording (place, camera, software, time).
package struct MovieMetadataBoxes: Sendable, Equatable {
    /// QuickTime's `moov/meta` (handler `mdta`: a `keys` box naming each
    /// `ilst` item, such as com.apple.quicktime.location.ISO6709), whole.
    package var keyedMeta: BoxNode?
    /// The children of `moov/udta` other than its `meta`: QuickTime user
    /// data such as ©xyz (location), ©mak, ©mod, XMP_.
    package var userData: [BoxNode]
    /// The items of `moov/udta/meta/ilst`: iTunes-style tags such as ©nam, ©day.
    package var tagItems: [BoxNode]

    package init(keyedMeta: BoxNode? = nil, userData: [BoxNode] = [], tagItems: [BoxNode] = []) {
        self.keyedMeta = keyedMeta
        self.userData = userData
        self.tagItems = tagItems
    }

    package init(moov: BoxNode) {
        keyedMeta = moov.all("meta").first { Self.handler(of: $0) == "mdta" }
        userData = moov.first("udta")?.children?.filter { $0.type != "meta" } ?? []
        tagItems = moov.first("udta")?.all("meta").first { Self.handler(of: $0) == "mdir" }?.first("ilst")?.children ?? []
    }

    package var isEmpty: Bool { keyedMeta == nil && userData.isEmpty && tagItems.isEmpty }

    package var byteCount: Int { (keyedMeta?.byteCount ?? 0) + (userData + tagItems).reduce(0) { $0 + $1.byteCount } }

    /// What a person would call each entry: mdta key names, then box types.
    package var names: [String] {
        var names = keyedMeta.map(Self.keyNames) ?? []
        names += userData.map(\.type)
        names += tagItems.map(\.type)
        return names
    }

    /// The handler type of a `meta` box (ISO's or QuickTime's).
    package static func handler(of meta: BoxNode) -> String? {
        guard let hdlr = meta.first("hdlr"), hdlr.head.count >= 12 else { return nil }
        return BoxNode.typeName(hdlr.head[8..<12])
    }

    /// The key names of a keyed `meta` box, in key order.
    package static func keyNames(_ meta: BoxNode) -> [String] {
        guard let keys = meta.first("keys"), let count = try? keys.uint32(at: 4) else { return [] }
        var names: [String] = []
        var offset = 8
        for _ in 0..<min(Int(count), 10_000) {
            guard let size = try? keys.uint32(at: offset), size >= 8, offset + Int(size) <= keys.head.count else { break }
            names.append(String(decoding: keys.head[(offset + 8)..<(offset + Int(size))], as: UTF8.self))
            offset += Int(size)
        }
        return names
    }
}
