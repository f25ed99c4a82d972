import Foundation
import Testing
import TestSupport
@testable import MediaMuxCore

/// The hvcC reading and writing, and the parameter-set and slice-header
/// rewrites a smart cut of HEVC relies on, against x265's own output (the
/// fixture's hvcC and samples), read back with the same readers and by
/// FFmpeg in the composition tests.
@Suite struct HEVCConfigurationTests {
    private func fixture() throws -> (record: [UInt8], track: MP4File.Track) {
        let track = try #require(try MP4File(path: TestMedia.fixture("hevc_hlg10_opengop_aac.mp4")).videoTracks.first)
        return (Array(try #require(track.sampleEntryBoxes.first { $0.type == "hvcC" }).bytes.dropFirst(8)), track)
    }

    @Test func aRecordReadsAndWritesBackByteForByte() throws {
        let (bytes, _) = try fixture()
        let record = try #require(HEVCConfiguration(bytes))
        #expect(record.bytes == bytes)
        #expect(record.profile == 2 && record.bitDepthLuma == 10 && record.chromaFormat == 1 && record.lengthSize == 4)
        let ids = try #require(record.usedIDs)
        #expect(ids.video == [0] && ids.sequence == [0] && ids.picture == [0])
        #expect(HEVCConfiguration(Array(bytes.dropLast())) == nil)
    }

    @Test func parameterSetsTakeNewIDsAndKeepEverythingElse() throws {
        let record = try #require(HEVCConfiguration(try fixture().record))
        let vps = try #require(record.units(ofType: 32).first)
        let sps = try #require(record.units(ofType: 33).first)
        let pps = try #require(record.units(ofType: 34).first)
        let newVPS = try #require(HEVCParameterSets.video(vps, id: 1))
        let newSPS = try #require(HEVCParameterSets.sequence(sps, video: 1, sequence: 1))
        let newPPS = try #require(HEVCParameterSets.picture(pps, picture: 15, sequence: 1))
        #expect(HEVCParameterSets.videoID(newVPS) == 1)
        #expect(HEVCParameterSets.sequenceIDs(newSPS).map { [$0.video, $0.sequence] } == [1, 1])
        #expect(HEVCParameterSets.pictureIDs(newPPS).map { [$0.picture, $0.sequence] } == [15, 1])
        #expect(HEVCParameterSets.sequenceLevel(newSPS) == HEVCParameterSets.sequenceLevel(sps))
        // The VPS's id is 4 fixed bits: nothing else moves.
        #expect(newVPS.count == vps.count && zip(newVPS, vps).filter { $0 != $1 }.count == 1)
        // Back to id 0, each is the source's again, byte for byte.
        #expect(HEVCParameterSets.video(newVPS, id: 0) == vps)
        #expect(HEVCParameterSets.sequence(newSPS, video: 0, sequence: 0) == sps)
        #expect(HEVCParameterSets.picture(newPPS, picture: 0, sequence: 0) == pps)
        let joined = try #require(record.adding(video: newVPS, sequence: newSPS, picture: newPPS, level: record.level))
        #expect(joined.units(ofType: 33).count == 2 && joined.units(ofType: 34).count == 2)
        #expect(HEVCConfiguration(joined.bytes) == joined)
        #expect(record.adding(video: vps, sequence: sps, picture: pps, level: record.level) == nil, "ids taken")
    }

    @Test func aSliceHeaderGrowsByOneByteAndItsDataIsUntouched() throws {
        let (_, track) = try fixture()
        // Every picture of the fixture: one slice segment each, after 4-byte lengths.
        var slices = 0
        for index in 0..<track.sampleCount {
            let sample = [UInt8](try track.sampleData(index))
            var at = 0
            while at + 4 <= sample.count {
                let length = sample[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) }
                let unit = Array(sample[(at + 4)..<(at + 4 + length)])
                at += 4 + length
                guard (Int(unit[0] >> 1) & 0x3F) < 32 else { continue }
                slices += 1
                let renamed = try #require(HEVCParameterSets.slice(unit, picture: 15))
                // Without emulation prevention, one byte more; the last bytes (the slice data's) as they were.
                let before = BitReader.unescaped(unit, from: 2)
                let after = BitReader.unescaped(renamed, from: 2)
                #expect(after.count == before.count + 1)
                #expect(Array(after.suffix(before.count - 8)) == Array(before.suffix(before.count - 8)))
                #expect(HEVCParameterSets.slice(renamed, picture: 16) == nil, "it no longer names PPS 0")
            }
        }
        #expect(slices == 150)
    }

    @Test func emulationPreventionRoundTrips() {
        let payload: [UInt8] = [0, 0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 4, 0, 0]
        let escaped = BitReader.escaped(payload)
        #expect(escaped == [0, 0, 3, 0, 1, 0, 0, 3, 2, 0, 0, 3, 3, 0, 0, 4, 0, 0])
        #expect(BitReader.unescaped([0x40, 0x01] + escaped, from: 2) == payload)
    }
}
