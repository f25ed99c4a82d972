import MediaMuxBase

/// The CodecID of each track of a Matroska or WebM file ("V_MPEGI/ISO/VVC"),
/// in the order of the track entries, read from the Segment's Tracks element: what names a
/// codec FFmpeg has no id for, which its demuxer only logs.
///
/// EBML (RFC 8794): an element is an ID (1-4 bytes, its length marker
/// kept), a size (1-8 bytes, marker removed; all ones: unknown), then its
/// data. Only the EBML header, the Segment and the elements before Tracks
/// are walked; a Cluster of unknown size before Tracks ends the search.
package enum MatroskaTracks {
    static let segment: UInt32 = 0x1853_8067
    static let tracks: UInt32 = 0x1654_AE6B
    static let trackEntry: UInt32 = 0xAE
    static let codecID: UInt32 = 0x86
    /// Tracks larger than this is not a header a writer makes.
    static let largestTracks = 16 << 20

    /// Each track entry's CodecID ("" where it has none); empty when the
    /// file is not Matroska or its Tracks cannot be found or read.
    package static func codecIDs(descriptor: Int32) -> [String] {
        let fileSize = fileLength(descriptor)
        var offset: Int64 = 0
        var end = fileSize
        while offset < end {
            guard let head = readBytes(descriptor, count: Int(min(12, end - offset)), at: offset),
                let (id, size, headerLength) = element(head[...])
            else { return [] }
            let dataStart = offset + Int64(headerLength)
            switch id {
            case segment:
                // Its children follow; an unknown size runs to the file's end.
                end = size.map { min(dataStart + $0, fileSize) } ?? fileSize
                offset = dataStart
            case tracks:
                guard let size, size <= largestTracks, let data = readBytes(descriptor, count: Int(size), at: dataStart) else { return [] }
                return entries(data[...])
            default:
                guard let size else { return [] }
                offset = dataStart + size
            }
        }
        return []
    }

    /// The TrackEntry elements of a Tracks element's data.
    static func entries(_ data: ArraySlice<UInt8>) -> [String] {
        children(data).filter { $0.0 == trackEntry }.map { _, entry in
            let value = children(entry).first { $0.0 == codecID }?.1 ?? []
            return String(decoding: value.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// The (ID, data) of each element in `data`, up to the first that does not fit.
    static func children(_ data: ArraySlice<UInt8>) -> [(UInt32, ArraySlice<UInt8>)] {
        var result: [(UInt32, ArraySlice<UInt8>)] = []
        var at = data.startIndex
        while at < data.endIndex, let (id, size, headerLength) = element(data[at...]), let size,
            size <= Int64(data.endIndex - at - headerLength) {
            let start = at + headerLength
            result.append((id, data[start..<start + Int(size)]))
            at = start + Int(size)
        }
        return result
    }

    /// An element's ID, data size (nil: unknown) and header length.
    static func element(_ bytes: ArraySlice<UInt8>) -> (UInt32, Int64?, Int)? {
        guard let (idLength, _) = vint(bytes, maxLength: 4) else { return nil }
        let id = bytes.prefix(idLength).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard let (sizeLength, size) = vint(bytes.dropFirst(idLength), maxLength: 8) else { return nil }
        let unknown = size == (Int64(1) << (7 * sizeLength)) - 1
        return (id, unknown ? nil : size, idLength + sizeLength)
    }

    /// A variable-length integer's length and value (its marker removed).
    static func vint(_ bytes: ArraySlice<UInt8>, maxLength: Int) -> (Int, Int64)? {
        guard let first = bytes.first, first != 0 else { return nil }
        let length = first.leadingZeroBitCount + 1
        guard length <= maxLength, bytes.count >= length else { return nil }
        var value = Int64(first & (0xFF >> length))
        for byte in bytes.dropFirst().prefix(length - 1) { value = value << 8 | Int64(byte) }
        return (length, value)
    }
}
