/// An H.264 decoder configuration record, the body of an MP4 sample entry's
/// avcC box (ISO/IEC 14496-15, 5.3.3.1), with what a smart cut needs of the
/// parameter sets it holds: their ids, and the profile, level, chroma format
/// and bit depth of each sequence parameter set. The record may hold several
/// of each; a decoder activates the ones each slice names by id. Pure.
package struct AVCConfiguration: Sendable, Equatable {
    /// AVCProfileIndication: a profile every parameter set conforms to.
    package var profile: UInt8
    /// profile_compatibility: the constraint flags all the sequence parameter sets share.
    package var compatibility: UInt8
    /// AVCLevelIndication: at least the highest level of the sets.
    package var level: UInt8
    /// Bytes of each NAL unit's length in the samples: 1, 2 or 4.
    package var lengthSize: Int
    /// The sequence and picture parameter set NAL units (header byte included).
    package var sequenceSets: [[UInt8]]
    package var pictureSets: [[UInt8]]
    /// For the High profiles: the record's closing fields (chroma format, bit
    /// depths and SPS extensions), kept as they are.
    package var highProfileFields: [UInt8]

    package init?(_ bytes: [UInt8]) {
        var reader = ByteReader(bytes)
        guard reader.byte() == 1, let profile = reader.byte(), let compatibility = reader.byte(), let level = reader.byte(),
              let sizeByte = reader.byte(), let spsCount = reader.byte()
        else { return nil }
        self.profile = profile
        self.compatibility = compatibility
        self.level = level
        lengthSize = Int(sizeByte & 0x03) + 1
        guard lengthSize != 3 else { return nil }
        sequenceSets = []
        for _ in 0..<Int(spsCount & 0x1F) {
            guard let unit = reader.unit() else { return nil }
            sequenceSets.append(unit)
        }
        pictureSets = []
        guard let ppsCount = reader.byte() else { return nil }
        for _ in 0..<Int(ppsCount) {
            guard let unit = reader.unit() else { return nil }
            pictureSets.append(unit)
        }
        highProfileFields = reader.rest()
    }

    /// The record's bytes.
    package var bytes: [UInt8] {
        var out: [UInt8] = [1, profile, compatibility, level, 0xFC | UInt8(lengthSize - 1), 0xE0 | UInt8(sequenceSets.count)]
        for unit in sequenceSets { out += [UInt8(unit.count >> 8), UInt8(unit.count & 0xFF)] + unit }
        out.append(UInt8(pictureSets.count))
        for unit in pictureSets { out += [UInt8(unit.count >> 8), UInt8(unit.count & 0xFF)] + unit }
        return out + highProfileFields
    }

    /// The sequence parameter sets, parsed; nil when one cannot be.
    package var parsedSequenceSets: [AVCSequenceSet]? {
        let parsed = sequenceSets.compactMap(AVCSequenceSet.init)
        return parsed.count == sequenceSets.count ? parsed : nil
    }

    /// The ids of the picture parameter sets; nil when one cannot be read.
    package var pictureSetIDs: [Int]? {
        let ids = pictureSets.compactMap { unit -> Int? in
            var bits = BitReader(rbsp: unit)
            return bits.readGolomb()
        }
        return ids.count == pictureSets.count ? ids : nil
    }

    /// This record with one more sequence and picture parameter set pair,
    /// under the rules of 14496-15 for a record holding several: the
    /// profile stays this record's (the added set must conform to it), the
    /// compatibility flags are those every set has, the level the highest.
    /// Nil when the added set has another chroma format or bit depth (which
    /// a High profile record states once for all), or shares an id.
    package func adding(sequenceSet sps: [UInt8], pictureSet pps: [UInt8]) -> AVCConfiguration? {
        guard let added = AVCSequenceSet(sps), let own = parsedSequenceSets, let first = own.first,
              own.allSatisfy({ $0.id != added.id }), let ppsIDs = pictureSetIDs,
              let newPPS = AVCConfiguration.pictureSetID(pps), !ppsIDs.contains(newPPS),
              added.chromaFormat == first.chromaFormat, added.bitDepthLuma == first.bitDepthLuma,
              added.bitDepthChroma == first.bitDepthChroma, sequenceSets.count < 31, pictureSets.count < 255
        else { return nil }
        var joined = self
        joined.sequenceSets.append(sps)
        joined.pictureSets.append(pps)
        joined.compatibility = own.reduce(added.constraints) { $0 & $1.constraints }
        joined.level = max(own.map(\.level).max() ?? 0, added.level)
        return joined
    }

    /// A picture parameter set's id.
    package static func pictureSetID(_ unit: [UInt8]) -> Int? {
        var bits = BitReader(rbsp: unit)
        return bits.readGolomb()
    }

    /// The smallest id neither a sequence nor a picture parameter set of this
    /// record uses (x264 gives its picture parameter set the id of its
    /// sequence parameter set); nil when none is free up to 31.
    package var freeParameterSetID: Int? {
        guard let sequenceIDs = parsedSequenceSets?.map(\.id), let pictureIDs = pictureSetIDs else { return nil }
        return (0...31).first { !sequenceIDs.contains($0) && !pictureIDs.contains($0) }
    }

    /// The NAL units of an Annex B byte stream (start codes between them), as
    /// an encoder's extradata and packets hold them, without the start codes
    /// and the zero bytes before them.
    package static func annexBUnits(_ bytes: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        var units: [Range<Int>] = []
        var start: Int?
        var index = 0
        while index + 2 < bytes.count {
            if bytes[index] == 0, bytes[index + 1] == 0, bytes[index + 2] == 1 {
                if let begun = start {
                    var end = index
                    while end > begun, bytes[end - 1] == 0 { end -= 1 }
                    if end > begun { units.append(begun..<end) }
                }
                index += 3
                start = index
            } else {
                index += 1
            }
        }
        if let begun = start, begun < bytes.count { units.append(begun..<bytes.count) }
        return units
    }
}

/// What a smart cut reads of an H.264 sequence parameter set (7.3.2.1.1).
package struct AVCSequenceSet: Sendable, Equatable {
    package var profile: UInt8
    /// constraint_set0..5 flags and the two reserved bits: the byte after profile_idc.
    package var constraints: UInt8
    package var level: UInt8
    package var id: Int
    /// 1 (4:2:0) unless a High profile's set says otherwise.
    package var chromaFormat = 1
    package var bitDepthLuma = 8
    package var bitDepthChroma = 8

    /// The profiles whose sets state chroma format and bit depth.
    private static let statingChroma: Set<UInt8> = [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]

    /// Parses a NAL unit (its header byte first); nil when it is not a sequence parameter set.
    package init?(_ unit: [UInt8]) {
        guard unit.count >= 5, unit[0] & 0x1F == 7 else { return nil }
        var bits = BitReader(rbsp: unit)
        guard let profile = bits.read(8), let constraints = bits.read(8), let level = bits.read(8), let id = bits.readGolomb(), id < 32 else {
            return nil
        }
        self.profile = UInt8(profile)
        self.constraints = UInt8(constraints)
        self.level = UInt8(level)
        self.id = id
        if Self.statingChroma.contains(self.profile) {
            guard let chroma = bits.readGolomb() else { return nil }
            if chroma == 3 { guard bits.read(1) != nil else { return nil } }
            guard let luma = bits.readGolomb(), let chromaDepth = bits.readGolomb() else { return nil }
            chromaFormat = chroma
            bitDepthLuma = luma + 8
            bitDepthChroma = chromaDepth + 8
        }
    }
}

/// Bytes read in order.
private struct ByteReader {
    let bytes: [UInt8]
    var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func byte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A 16-bit length, then that many bytes.
    mutating func unit() -> [UInt8]? {
        guard let high = byte(), let low = byte() else { return nil }
        let length = Int(high) << 8 | Int(low)
        guard length > 0, offset + length <= bytes.count else { return nil }
        defer { offset += length }
        return Array(bytes[offset..<(offset + length)])
    }

    mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[min(offset, bytes.count)...])
    }
}
