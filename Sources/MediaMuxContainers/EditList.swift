/// An `elst` box's entries (ISO/IEC 14496-12, 8.6.6), widened to 64 bits:
/// read from a file's track, and written into an output's. One model both
/// ways, so that what MediaMux writes reads back as the same list.
package struct EditList: Equatable, Sendable {
    package struct Entry: Equatable, Sendable {
        /// 16.16 fixed point 1.0: the media plays at its own speed.
        package static let normalRate: UInt32 = 0x0001_0000
        /// In the movie timescale.
        package var duration: Int64
        /// Where in the media (its timescale) the edit starts; -1 for an empty edit.
        package var mediaTime: Int64
        /// media_rate_integer and media_rate_fraction as one 16.16 value.
        package var rate: UInt32

        package init(duration: Int64, mediaTime: Int64, rate: UInt32 = Entry.normalRate) {
            self.duration = duration
            self.mediaTime = mediaTime
            self.rate = rate
        }

        /// An empty edit: nothing presented for `duration`.
        package static func empty(_ duration: Int64) -> Entry { Entry(duration: duration, mediaTime: -1) }
    }

    package var entries: [Entry]

    package init(_ entries: [Entry]) {
        self.entries = entries
    }

    /// Reads an `elst` box.
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

    /// A track that starts `delay` late (an empty edit, when positive), then
    /// presents its media from `mediaTime` until `end`: the one shape
    /// MediaMux writes, which every player honours. `delay` and `end` are
    /// in the movie timescale, `mediaTime` in the track's.
    package static func delayed(by delay: Int64, mediaFrom mediaTime: Int64, until end: Int64) throws -> EditList {
        let presented = end - delay
        guard delay >= 0, presented >= 0 else {
            throw BoxFailure.layoutMismatch("a track planned from \(delay) to \(end)")
        }
        return EditList((delay > 0 ? [.empty(delay)] : []) + [Entry(duration: presented, mediaTime: mediaTime)])
    }

    /// The `elst` box: version 1 only where a value needs 64 bits.
    package var box: BoxNode {
        let wide = entries.contains { UInt32(exactly: $0.duration) == nil || Int32(exactly: $0.mediaTime) == nil }
        return BoxNode.table("elst", version: wide ? 1 : 0, entries: entries.count) { head in
            for entry in entries {
                if wide {
                    head.appendBigEndian(UInt64(bitPattern: entry.duration))
                    head.appendBigEndian(UInt64(bitPattern: entry.mediaTime))
                } else {
                    head.appendBigEndian(UInt32(truncatingIfNeeded: entry.duration))
                    head.appendBigEndian(UInt32(bitPattern: Int32(truncatingIfNeeded: entry.mediaTime)))
                }
                head.appendBigEndian(entry.rate)
            }
        }
    }
}
