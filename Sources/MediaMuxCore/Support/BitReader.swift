/// Reads bits most significant first: an AudioSpecificConfig's fields, an
/// H.264 parameter set's.
struct BitReader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// A NAL unit's payload after its one-byte header, its emulation
    /// prevention bytes (the 3 of each 0x000003) taken out.
    init(rbsp unit: [UInt8]) {
        var payload: [UInt8] = []
        var zeros = 0
        for byte in unit.dropFirst() {
            if zeros >= 2, byte == 3 {
                zeros = 0
                continue
            }
            zeros = byte == 0 ? zeros + 1 : 0
            payload.append(byte)
        }
        self.init(payload)
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
