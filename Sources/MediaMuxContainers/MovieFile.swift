import MediaMuxBase
import SystemPackage

/// A finished MP4/MOV file whose movie header is replaced in place.
///
/// The moov is rewritten where it is: over the room a faststart reservation
/// left after it, or at the end of the file. When neither holds it (the
/// reservation was too small) the old one becomes `free` space and the new
/// one goes last. Asked to, it moves a moov at the end to the front, shifting
/// the media data and every chunk offset: faststart for outputs whose moov
/// size could not be known in advance.
package struct MovieFile {
    package let path: String

    package init(path: String) {
        self.path = path
    }

    /// Replaces the moov with what `change` makes of it (given the file,
    /// open for reading and writing), where it is or at the end. Returns
    /// true when the moov ended up at the end of the file though it was at
    /// the front. Throws `BoxFailure.io` with the system's words when the
    /// file cannot be opened or written.
    @discardableResult
    package func replaceMovieHeader(moveToFront: Bool = false, _ change: (inout MovieTree, Int32) throws -> Void) throws -> Bool {
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(FilePath(path), .readWrite, options: [.closeOnExec])
        } catch {
            throw BoxFailure.io("cannot reopen: \(systemErrorText(error))")
        }
        defer { try? file.close() }
        let descriptor = file.rawValue
        let moov = try readMovieBox(descriptor: descriptor)
        var tree = try MovieTree(moovBytes: moov.bytes)
        try change(&tree, descriptor)
        if moveToFront, moov.roomAfter == .endOfFile {
            try Self.moveToFront(tree, from: moov, descriptor: descriptor)
            return false
        }
        return try Self.write(tree, replacing: moov, descriptor: descriptor)
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
            try shifted.root.raiseChunkOffsets(by: Int64(shift))
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

    // MARK: Writing in place

    private static func write(_ tree: MovieTree, replacing moov: MovieBox, descriptor: Int32) throws -> Bool {
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
            if room > 0 { try put(BoxNode.freeBoxHeader(size: room), at: moov.offset + count) }
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
