/// The framing of an AV1 packet as the mov muxer reads it: a run of OBUs
/// (open bitstream units, AV1 spec section 5.3), each a header of one or two
/// bytes, then, when its has-size flag is set, its payload size as a LEB128
/// of at most 8 bytes, then the payload. Without the flag the unit runs to
/// the end of the packet.
enum AV1Packet {
    /// True when the units fill `bytes` exactly: no forbidden bit set, no
    /// header cut short, no unit running past the end. The same checks
    /// FFmpeg's OBU filter makes before the mov muxer stores a sample.
    static func isWellFormed(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            guard let length = unitLength(bytes, at: offset) else { return false }
            offset += length
        }
        return true
    }

    /// The length of the unit at `offset`, header included; nil when it is
    /// malformed or runs past the end of `bytes`.
    static func unitLength(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int? {
        let remaining = bytes.count - offset
        // FFmpeg reads the header from at most its 10 possible bytes.
        let headerLimit = min(remaining, 10)
        let first = bytes[offset]
        guard first & 0x80 == 0 else { return nil }  // obu_forbidden_bit
        let hasExtension = first & 0x04 != 0
        let hasSize = first & 0x02 != 0
        var position = 1 + (hasExtension ? 1 : 0)
        guard position <= headerLimit else { return nil }
        let payload: Int
        if hasSize {
            var value: UInt64 = 0
            var index = 0
            while true {
                guard position < headerLimit else { return nil }
                let byte = bytes[offset + position]
                position += 1
                value |= UInt64(byte & 0x7F) << (7 * UInt64(index))
                index += 1
                if byte & 0x80 == 0 || index == 8 { break }
            }
            guard value <= UInt64(remaining) else { return nil }
            payload = Int(value)
        } else {
            payload = remaining - position
        }
        let length = position + payload
        return length <= remaining ? length : nil
    }
}
