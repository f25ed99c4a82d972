/// Reads bits most significant first: an AudioSpecificConfig's fields, an
/// H.264 parameter set's.
struct BitReader {
    private let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// A NAL unit's payload after its header (1 byte in H.264, 2 in HEVC),
    /// its emulation prevention bytes (the 3 of each 0x000003) taken out.
    init(rbsp unit: [UInt8], header: Int = 1) {
        self.init(Self.unescaped(unit, from: header))
    }

    /// The bytes of `unit` from `start` on, without emulation prevention bytes.
    static func unescaped(_ unit: [UInt8], from start: Int) -> [UInt8] {
        var payload: [UInt8] = []
        payload.reserveCapacity(unit.count)
        var zeros = 0
        for byte in unit.dropFirst(start) {
            if zeros >= 2, byte == 3 {
                zeros = 0
                continue
            }
            zeros = byte == 0 ? zeros + 1 : 0
            payload.append(byte)
        }
        return payload
    }

    /// A payload with emulation prevention bytes put in: a 3 after two
    /// zeros that a byte of 0 to 3 follows.
    static func escaped(_ payload: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(payload.count + payload.count / 64)
        var zeros = 0
        for byte in payload {
            if zeros >= 2, byte <= 3 {
                out.append(3)
                zeros = 0
            }
            out.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return out
    }

    /// Bits read so far.
    private(set) var position = 0

    /// Passes over `count` bits; false past the end.
    mutating func skip(_ count: Int) -> Bool {
        guard position + count <= bytes.count * 8 else { return false }
        position += count
        return true
    }

    /// The next `count` bits (at most 32) as an integer, or nil past the end.
    mutating func read(_ count: Int) -> Int? {
        guard position + count <= bytes.count * 8 else { return nil }
        var value = 0
        for _ in 0..<count {
            let bit = (bytes[position >> 3] >> (7 - UInt8(position & 7))) & 1
            value = value << 1 | Int(bit)
            position += 1
        }
        return value
    }

    /// ue(v), an Exp-Golomb code; nil past the end or past 31 bits.
    mutating func readGolomb() -> Int? {
        var zeros = 0
        while true {
            guard let bit = read(1) else { return nil }
            if bit == 1 { break }
            zeros += 1
            guard zeros < 32 else { return nil }
        }
        guard let rest = read(zeros) else { return nil }
        return (1 << zeros) - 1 + rest
    }
}
