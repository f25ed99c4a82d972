import MediaMuxBase

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
        guard let box = BoxHeader(header, at: 0, extent: Int64(fileSize - offset)) else {
            throw BoxFailure.malformed("box at \(offset) runs past the end")
        }
        let (size, headerSize) = (Int(box.size), box.headerSize)
        guard size >= headerSize, size <= fileSize - offset else { throw BoxFailure.malformed("box at \(offset) runs past the end") }
        if box.type == "moov" {
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
