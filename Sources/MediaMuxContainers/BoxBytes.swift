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

/// A box's header, as the bytes at the start of a box give it: every box
/// MediaMux reads (a tree, the moov found in a file, a fragment, the muxer's
/// own stream) is measured here.
package struct BoxHeader: Equatable, Sendable {
    /// The four characters, each byte one character.
    package var type: String
    /// The whole box, header included.
    package var size: Int64
    /// 8, or 16 with a 64-bit size.
    package var headerSize: Int

    package init(type: String, size: Int64, headerSize: Int) {
        (self.type, self.size, self.headerSize) = (type, size, headerSize)
    }

    /// The header at `offset` in `bytes`; nil when the bytes end inside it.
    /// A size of 0 (the box runs to the end of what holds it) becomes
    /// `extent`, the bytes from `offset` to that end; with no extent known
    /// it stays 0. The size is not checked against anything: each reader
    /// says what it makes of a box too small or past the end.
    package init?<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, at offset: Int, extent: Int64?) where Bytes.Index == Int {
        guard bytes.endIndex - offset >= 8 else { return nil }
        var size = Int64(BoxBuffer.be32(bytes, offset))
        headerSize = 8
        if size == 1 {
            guard bytes.endIndex - offset >= 16 else { return nil }
            size = Int64(clamping: BoxBuffer.be64(bytes, offset + 8))
            headerSize = 16
        } else if size == 0, let extent {
            size = extent
        }
        self.size = size
        type = String(String.UnicodeScalarView((offset + 4..<offset + 8).map { Unicode.Scalar(bytes[$0]) }))
    }
}

/// Big-endian reads and in-place writes of the integers boxes are made of.
/// Boxes are built with `[UInt8].appendBigEndian` and `BoxNode.fullBox`
/// below: every byte MediaMux writes into a box goes through this file.
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

extension Array where Element == UInt8 {
    /// Appends `value` as four big-endian bytes.
    package mutating func appendBigEndian(_ value: UInt32) {
        append(contentsOf: [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)])
    }

    /// Appends `value` as eight big-endian bytes.
    package mutating func appendBigEndian(_ value: UInt64) {
        appendBigEndian(UInt32(truncatingIfNeeded: value >> 32))
        appendBigEndian(UInt32(truncatingIfNeeded: value))
    }
}

extension BoxNode {
    /// A full box (ISO/IEC 14496-12, 4.2): its version, flags 0, then what `body` appends.
    package static func fullBox(_ type: String, version: UInt8 = 0, _ body: (inout [UInt8]) -> Void) -> BoxNode {
        var head: [UInt8] = [version, 0, 0, 0]
        body(&head)
        return BoxNode(type: type, head: head)
    }

    /// A table box: a full box whose payload is an entry count, then what `entries` appends.
    package static func table(_ type: String, version: UInt8 = 0, entries count: Int, _ entries: (inout [UInt8]) -> Void) -> BoxNode {
        fullBox(type, version: version) { head in
            head.appendBigEndian(UInt32(count))
            entries(&head)
        }
    }

    /// The 8-byte header of a `free` box `size` bytes long (its payload follows it).
    package static func freeBoxHeader(size: Int) -> [UInt8] {
        var header: [UInt8] = []
        header.appendBigEndian(UInt32(size))
        return header + typeBytes("free")
    }
}
