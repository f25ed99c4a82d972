/// The arrays of an hvcC box (ISO 14496-15, 8.3.3.1), read by the tests:
/// 8 bytes of box header, 22 of profile and sizes, the array count, then
/// each array's completeness bit and NAL unit type, its unit count, and the
/// units with 16-bit lengths.
enum HEVCConfigurationArrays {
    struct Array: Equatable, CustomStringConvertible {
        var type: Int
        var complete: Bool
        /// Where its first byte is in the box.
        var offset: Int
        var description: String { "\(type)\(complete ? " complete" : "")" }
    }

    static func read(_ box: [UInt8]) -> [Array] {
        guard box.count > 30 else { return [] }
        var arrays: [Array] = []
        var at = 31
        for _ in 0..<Int(box[30]) {
            guard at + 3 <= box.count else { return arrays }
            arrays.append(Array(type: Int(box[at] & 0x3F), complete: box[at] & 0x80 != 0, offset: at))
            let units = Int(box[at + 1]) << 8 | Int(box[at + 2])
            at += 3
            for _ in 0..<units where at + 2 <= box.count {
                at += 2 + (Int(box[at]) << 8 | Int(box[at + 1]))
            }
        }
        return arrays
    }

    static func withCompletenessCleared(_ box: [UInt8]) -> [UInt8] {
        var cleared = box
        for array in read(box) { cleared[array.offset] &= 0x7F }
        return cleared
    }
}
