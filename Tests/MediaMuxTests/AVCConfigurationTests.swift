import Foundation
import Testing
import TestSupport
@testable import MediaMuxCore

/// The avcC reading and writing a smart cut relies on, against records and
/// parameter sets taken from real encodes (the fixtures' and x264's).
@Suite struct AVCConfigurationTests {
    /// The fixture's avcC, as its sample entry holds it (without the box header).
    private func fixtureRecord() throws -> [UInt8] {
        let track = try #require(try MP4File(path: TestMedia.fixture("h264_gop2s_aac.mp4")).videoTracks.first)
        return Array(try #require(track.sampleEntryBoxes.first { $0.type == "avcC" }).bytes.dropFirst(8))
    }

    @Test func aRecordReadsAndWritesBackByteForByte() throws {
        let bytes = try fixtureRecord()
        let record = try #require(AVCConfiguration(bytes))
        #expect(record.bytes == bytes)
        #expect(record.profile == 100 && record.lengthSize == 4)
        #expect(record.sequenceSets.count == 1 && record.pictureSets.count == 1)
        let sps = try #require(record.parsedSequenceSets?.first)
        #expect(sps.id == 0 && sps.profile == 100 && sps.chromaFormat == 1 && sps.bitDepthLuma == 8)
        #expect(record.pictureSetIDs == [0])
        #expect(record.freeParameterSetID == 1)
    }

    @Test func anotherPairJoinsUnderTheRulesForSeveralSets() throws {
        let record = try #require(AVCConfiguration(try fixtureRecord()))
        // The fixture's own sets with their ids made 1 (ue(v) 0 is "1", 1 is "010": one more bit,
        // which the SPS's and PPS's following bits absorb when rebuilt here by hand).
        var sps = record.sequenceSets[0]
        // level_idc 51 and constraint_set3, to see the record take the highest level and the flags all share.
        sps[2] = 0x10
        sps[3] = 51
        let spsWithID1 = try #require(Self.withFirstGolomb(sps, offset: 4, value: 1))
        let ppsWithID1 = try #require(Self.withFirstGolomb(record.pictureSets[0], offset: 1, value: 1))
        let joined = try #require(record.adding(sequenceSet: spsWithID1, pictureSet: ppsWithID1))
        #expect(joined.sequenceSets.count == 2 && joined.pictureSets.count == 2)
        #expect(joined.parsedSequenceSets?.map(\.id) == [0, 1])
        #expect(joined.pictureSetIDs == [0, 1])
        #expect(joined.level == 51)
        #expect(joined.compatibility == record.compatibility & 0x10)
        #expect(joined.profile == record.profile)
        #expect(AVCConfiguration(joined.bytes) == joined)
        // The same ids again, or sets of another bit depth, do not join.
        #expect(record.adding(sequenceSet: record.sequenceSets[0], pictureSet: record.pictureSets[0]) == nil)
        #expect(joined.adding(sequenceSet: spsWithID1, pictureSet: ppsWithID1) == nil)
    }

    @Test func annexBUnitsAreFoundBetweenStartCodesOfThreeAndFourBytes() {
        let stream: [UInt8] = [0, 0, 0, 1, 0x67, 1, 2, 0, 0, 1, 0x68, 3, 0, 0, 0, 0, 1, 0x65, 4, 5, 6]
        let units = stream.withUnsafeBufferPointer { AVCConfiguration.annexBUnits($0) }.map { Array(stream[$0]) }
        #expect(units == [[0x67, 1, 2], [0x68, 3], [0x65, 4, 5, 6]])
    }

    @Test func damagedRecordsAreNotRead() throws {
        let bytes = try fixtureRecord()
        #expect(AVCConfiguration(Array(bytes.prefix(10))) == nil)
        #expect(AVCConfiguration([2] + bytes.dropFirst()) == nil)
        #expect(AVCConfiguration([]) == nil)
    }

    /// `unit` with the Exp-Golomb field that begins at byte `offset` (which
    /// must be the single bit "1", value 0) replaced by `value`'s code, the
    /// bits after it shifted along (no emulation prevention bytes in these units).
    private static func withFirstGolomb(_ unit: [UInt8], offset: Int, value: Int) -> [UInt8]? {
        guard unit[offset] & 0x80 != 0 else { return nil }
        var bits: [UInt8] = unit[offset...].flatMap { byte in (0..<8).map { (byte >> (7 - $0)) & 1 } }
        bits.removeFirst()
        let code = value + 1
        let length = Int.bitWidth - code.leadingZeroBitCount
        let golomb: [UInt8] = Array(repeating: 0, count: length - 1) + (0..<length).map { UInt8((code >> (length - 1 - $0)) & 1) }
        bits = golomb + bits
        // Drop the old trailing bits (the last 1 and the zeros after it), then end with a fresh stop bit and padding.
        while bits.last == 0 { bits.removeLast() }
        bits.removeLast()
        bits.append(1)
        while bits.count % 8 != 0 { bits.append(0) }
        let bytes = stride(from: 0, to: bits.count, by: 8).map { start in bits[start..<(start + 8)].reduce(UInt8(0)) { $0 << 1 | $1 } }
        return Array(unit[..<offset]) + bytes
    }
}
