/// An HEVC decoder configuration record, the body of an MP4 sample entry's
/// hvcC box (ISO/IEC 14496-15, 8.3.3.1), with what a smart cut needs: the
/// ids of the parameter sets its arrays hold, and the fields a cut's
/// encoder must match. The arrays may hold several sets of each kind; a
/// decoder activates the ones each slice names by id. Pure.
package struct HEVCConfiguration: Sendable, Equatable {
    /// The 22 bytes after configurationVersion: profile, tier, level,
    /// chroma format, bit depths, frame rate, temporal layers, length size.
    package var header: [UInt8]
    package var arrays: [NALArray]

    package struct NALArray: Sendable, Equatable {
        /// array_completeness, then the NAL unit type in the low 6 bits.
        package var typeByte: UInt8
        package var units: [[UInt8]]
        package var type: Int { Int(typeByte & 0x3F) }
    }

    package static let videoParameterSet = 32
    package static let sequenceParameterSet = 33
    package static let pictureParameterSet = 34

    package init?(_ bytes: [UInt8]) {
        guard bytes.count >= 23, bytes[0] == 1 else { return nil }
        header = Array(bytes[1..<23])
        arrays = []
        var at = 23
        func u16() -> Int? {
            guard at + 2 <= bytes.count else { return nil }
            defer { at += 2 }
            return Int(bytes[at]) << 8 | Int(bytes[at + 1])
        }
        for _ in 0..<Int(bytes[22]) {
            guard at < bytes.count else { return nil }
            let typeByte = bytes[at]
            at += 1
            guard let count = u16() else { return nil }
            var units: [[UInt8]] = []
            for _ in 0..<count {
                guard let length = u16(), length > 0, at + length <= bytes.count else { return nil }
                units.append(Array(bytes[at..<(at + length)]))
                at += length
            }
            arrays.append(NALArray(typeByte: typeByte, units: units))
        }
        guard at == bytes.count else { return nil }
    }

    package var bytes: [UInt8] {
        var header = self.header
        header[21] = UInt8(arrays.count)
        var out: [UInt8] = [1] + header
        for array in arrays {
            out += [array.typeByte, UInt8(array.units.count >> 8), UInt8(array.units.count & 0xFF)]
            for unit in array.units { out += [UInt8(unit.count >> 8), UInt8(unit.count & 0xFF)] + unit }
        }
        return out
    }

    /// general_profile_idc: 1 Main, 2 Main 10.
    package var profile: Int { Int(header[0] & 0x1F) }
    /// general_tier_flag: the High tier.
    package var highTier: Bool { header[0] & 0x20 != 0 }
    /// general_level_idc: 30 times the level.
    package var level: Int { Int(header[11]) }
    package var chromaFormat: Int { Int(header[15] & 0x03) }
    package var bitDepthLuma: Int { Int(header[16] & 0x07) + 8 }
    package var bitDepthChroma: Int { Int(header[17] & 0x07) + 8 }
    package var lengthSize: Int { Int(header[20] & 0x03) + 1 }

    /// The units of one kind, in the record's order.
    package func units(ofType type: Int) -> [[UInt8]] { arrays.filter { $0.type == type }.flatMap(\.units) }

    /// The ids the record's video, sequence and picture parameter sets use; nil when one cannot be read.
    package var usedIDs: (video: Set<Int>, sequence: Set<Int>, picture: Set<Int>)? {
        var video: Set<Int> = []
        var sequence: Set<Int> = []
        var picture: Set<Int> = []
        for unit in units(ofType: Self.videoParameterSet) {
            guard let id = HEVCParameterSets.videoID(unit) else { return nil }
            video.insert(id)
        }
        for unit in units(ofType: Self.sequenceParameterSet) {
            guard let id = HEVCParameterSets.sequenceIDs(unit)?.sequence else { return nil }
            sequence.insert(id)
        }
        for unit in units(ofType: Self.pictureParameterSet) {
            guard let id = HEVCParameterSets.pictureIDs(unit)?.picture else { return nil }
            picture.insert(id)
        }
        return (video, sequence, picture)
    }

    /// This record with one more video, sequence and picture parameter set,
    /// each appended to the array of its kind (the level the highest of the
    /// two); nil when an id is taken.
    package func adding(video vps: [UInt8], sequence sps: [UInt8], picture pps: [UInt8], level: Int) -> HEVCConfiguration? {
        guard let used = usedIDs, let v = HEVCParameterSets.videoID(vps), let s = HEVCParameterSets.sequenceIDs(sps)?.sequence,
              let p = HEVCParameterSets.pictureIDs(pps)?.picture,
              !used.video.contains(v), !used.sequence.contains(s), !used.picture.contains(p)
        else { return nil }
        var joined = self
        for (type, unit) in [(Self.videoParameterSet, vps), (Self.sequenceParameterSet, sps), (Self.pictureParameterSet, pps)] {
            if let index = joined.arrays.firstIndex(where: { $0.type == type }) {
                joined.arrays[index].units.append(unit)
            } else {
                joined.arrays.append(NALArray(typeByte: 0x80 | UInt8(type), units: [unit]))
            }
        }
        joined.header[11] = UInt8(max(self.level, level))
        return joined
    }
}

/// The ids in HEVC parameter sets and slice headers (7.3.2.1-7.3.2.3,
/// 7.3.6.1), read and rewritten: a smart cut's encoder (x265, which has
/// no option for them) writes id 0, which the source's sets use, and its
/// sets and slices are given ids of their own. Units are NAL units, their
/// two-byte header first, with emulation prevention bytes.
package enum HEVCParameterSets {
    /// vps_video_parameter_set_id.
    static func videoID(_ unit: [UInt8]) -> Int? {
        var bits = BitReader(rbsp: unit, header: 2)
        return bits.read(4)
    }

    /// sps_video_parameter_set_id and sps_seq_parameter_set_id, and where
    /// the latter's code begins (bits into the payload).
    static func sequenceIDs(_ unit: [UInt8]) -> (video: Int, sequence: Int, sequenceAt: Int)? {
        var bits = BitReader(rbsp: unit, header: 2)
        guard let video = bits.read(4), let subLayers = bits.read(3), bits.read(1) != nil else { return nil }
        // profile_tier_level(1, sps_max_sub_layers_minus1): the general part, 88 bits and the level's 8.
        guard bits.skip(88), bits.skip(8) else { return nil }
        var profilePresent: [Bool] = []
        var levelPresent: [Bool] = []
        for _ in 0..<subLayers {
            guard let profile = bits.read(1), let level = bits.read(1) else { return nil }
            profilePresent.append(profile == 1)
            levelPresent.append(level == 1)
        }
        if subLayers > 0 {
            for _ in subLayers..<8 { guard bits.skip(2) else { return nil } }
        }
        for index in 0..<subLayers {
            if profilePresent[index] { guard bits.skip(88) else { return nil } }
            if levelPresent[index] { guard bits.skip(8) else { return nil } }
        }
        let at = bits.position
        guard let sequence = bits.readGolomb() else { return nil }
        return (video, sequence, at)
    }

    /// general_level_idc of an SPS's profile_tier_level.
    static func sequenceLevel(_ unit: [UInt8]) -> Int? {
        var bits = BitReader(rbsp: unit, header: 2)
        guard bits.skip(8 + 88) else { return nil }
        return bits.read(8)
    }

    /// pps_pic_parameter_set_id and pps_seq_parameter_set_id.
    static func pictureIDs(_ unit: [UInt8]) -> (picture: Int, sequence: Int)? {
        var bits = BitReader(rbsp: unit, header: 2)
        guard let picture = bits.readGolomb(), let sequence = bits.readGolomb() else { return nil }
        return (picture, sequence)
    }

    /// A VPS with its id `video`.
    static func video(_ unit: [UInt8], id video: Int) -> [UInt8]? {
        guard let payload = BitString(unit: unit, header: 2), video < 16 else { return nil }
        return payload.replacing(at: 0, bits: 4, with: .fixed(video, 4))?.unit(header: Array(unit.prefix(2)))
    }

    /// An SPS with its ids `video` and `sequence`.
    static func sequence(_ unit: [UInt8], video: Int, sequence: Int) -> [UInt8]? {
        guard let ids = sequenceIDs(unit), let payload = BitString(unit: unit, header: 2), video < 16, sequence < 16 else { return nil }
        let width = BitString.golombWidth(ids.sequence)
        return payload.replacing(at: ids.sequenceAt, bits: width, with: .golomb(sequence))?
            .replacing(at: 0, bits: 4, with: .fixed(video, 4))?.unit(header: Array(unit.prefix(2)))
    }

    /// A PPS with its ids `picture` and `sequence`.
    static func picture(_ unit: [UInt8], picture: Int, sequence: Int) -> [UInt8]? {
        guard let ids = pictureIDs(unit), let payload = BitString(unit: unit, header: 2), picture < 64, sequence < 16 else { return nil }
        let pictureWidth = BitString.golombWidth(ids.picture)
        let sequenceWidth = BitString.golombWidth(ids.sequence)
        return payload.replacing(at: pictureWidth, bits: sequenceWidth, with: .golomb(sequence))?
            .replacing(at: 0, bits: pictureWidth, with: .golomb(picture))?.unit(header: Array(unit.prefix(2)))
    }

    /// A slice segment NAL unit (types 0 to 31) naming PPS `picture` where
    /// it named PPS 0. Nil when it is not the first slice segment of its
    /// picture or names another PPS. Going from id 0 (ue(v) "1") to one of
    /// 15 to 30 (nine bits) moves every later bit by exactly 8: the slice
    /// data stays byte-aligned and unchanged.
    static func slice(_ unit: [UInt8], picture: Int) -> [UInt8]? {
        guard unit.count > 2, (15...30).contains(picture), let payload = BitString(unit: unit, header: 2) else { return nil }
        let type = Int(unit[0] >> 1) & 0x3F
        guard type < 32 else { return nil }
        var bits = BitReader(rbsp: unit, header: 2)
        guard bits.read(1) == 1 else { return nil }
        if (16...23).contains(type) { guard bits.skip(1) else { return nil } }
        let at = bits.position
        guard bits.readGolomb() == 0 else { return nil }
        return payload.replacing(at: at, bits: 1, with: .golomb(picture))?.unit(header: Array(unit.prefix(2)))
    }
}

/// A NAL unit's payload as bits (emulation prevention taken out), to
/// rewrite fields of parameter sets and slice headers and write it back.
/// Its rbsp trailing bits (the stop bit, the zeros after it, a slice's
/// cabac_zero_words) are taken off and written anew after the last bit: a
/// field that grows by whole bytes leaves a slice's data byte-aligned as it was.
struct BitString {
    /// The payload, emulation prevention taken out; its first `count` bits
    /// are the fields, the rest its trailing bits.
    private var bytes: [UInt8]
    /// The bits before the stop bit.
    private var count: Int

    enum Field {
        case fixed(Int, Int)
        case golomb(Int)
    }

    init?(unit: [UInt8], header: Int) {
        bytes = BitReader.unescaped(unit, from: header)
        var last = bytes.count - 1
        while last >= 0, bytes[last] == 0 { last -= 1 }
        guard last >= 0 else { return nil }
        count = last * 8 + 7 - bytes[last].trailingZeroBitCount
    }

    private init(writer: BitWriter) {
        bytes = writer.bytes
        count = writer.count
    }

    static func golombWidth(_ value: Int) -> Int { 2 * (Int.bitWidth - (value + 1).leadingZeroBitCount) - 1 }

    /// The `width` bits at `position` replaced by `field`'s code.
    func replacing(at position: Int, bits width: Int, with field: Field) -> BitString? {
        guard position + width <= count else { return nil }
        var writer = BitWriter(capacity: bytes.count + 2)
        writer.append(bytes, bits: 0..<position)
        switch field {
        case .fixed(let value, let bits):
            writer.write(value, width: bits)
        case .golomb(let value):
            let word = value + 1
            let length = Int.bitWidth - word.leadingZeroBitCount
            writer.write(0, width: length - 1)
            writer.write(word, width: length)
        }
        writer.append(bytes, bits: (position + width)..<count)
        return BitString(writer: writer)
    }

    /// The NAL unit: `header`, then the payload with its stop bit and
    /// alignment zeros, emulation prevention put back.
    func unit(header: [UInt8]) -> [UInt8] {
        var writer = BitWriter(capacity: bytes.count + 1)
        writer.append(bytes, bits: 0..<count)
        writer.write(1, width: 1)
        return header + BitReader.escaped(writer.bytes)
    }
}

/// Bits written most significant first into bytes; the last byte's unused
/// bits are zeros.
private struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private(set) var count = 0

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    /// The low `width` bits of `value`, the highest first.
    mutating func write(_ value: Int, width: Int) {
        var left = width
        while left > 0 {
            left -= 1
            put(UInt8(truncatingIfNeeded: value >> left) & 1)
        }
    }

    /// The bits of `source` in `range`: byte by byte where the source and
    /// this writer are at the same place in a byte (a slice's data after a
    /// field that grew by whole bytes), else bit by bit.
    mutating func append(_ source: [UInt8], bits range: Range<Int>) {
        var at = range.lowerBound
        if at % 8 == count % 8 {
            while at < range.upperBound, at % 8 != 0 {
                put(Self.bit(source, at))
                at += 1
            }
            let whole = (range.upperBound - at) / 8
            if whole > 0 {
                bytes.append(contentsOf: source[(at / 8)..<(at / 8 + whole)])
                count += whole * 8
                at += whole * 8
            }
        }
        while at < range.upperBound {
            put(Self.bit(source, at))
            at += 1
        }
    }

    private static func bit(_ source: [UInt8], _ at: Int) -> UInt8 {
        (source[at / 8] >> UInt8(7 - at % 8)) & 1
    }

    private mutating func put(_ bit: UInt8) {
        if count % 8 == 0 { bytes.append(0) }
        bytes[bytes.count - 1] |= bit << UInt8(7 - count % 8)
        count += 1
    }
}
