import Testing
@testable import MediaMuxContainers

/// The one box-header reader every box reader measures with: sizes of 32
/// and 64 bits, a size of 0 with and without an extent, and headers cut short.
struct BoxHeaderTests {
    static func bytes(_ words: [UInt32], type: String, trailing: [UInt8] = []) -> [UInt8] {
        var out: [UInt8] = []
        for (index, word) in words.enumerated() {
            out.appendBigEndian(word)
            if index == 0 { out += Array(type.utf8) }
        }
        return out + trailing
    }

    @Test func thirtyTwoBitSize() throws {
        let header = try #require(BoxHeader(Self.bytes([24], type: "moov"), at: 0, extent: 100))
        #expect(header == BoxHeader(type: "moov", size: 24, headerSize: 8))
    }

    @Test func sixtyFourBitSizeAfterTheType() throws {
        // size 1, then the 64-bit size: 2^32 + 16, past what 32 bits hold.
        let bytes = Self.bytes([1, 1, 16], type: "mdat")
        let header = try #require(BoxHeader(bytes, at: 0, extent: nil))
        #expect(header == BoxHeader(type: "mdat", size: (1 << 32) + 16, headerSize: 16))
        // Cut before the 64-bit size ends: no header yet.
        #expect(BoxHeader(Array(bytes.prefix(12)), at: 0, extent: nil) == nil)
    }

    @Test func sizeZeroRunsToTheExtent() throws {
        let bytes = [0, 0, 0, 0] + Self.bytes([8], type: "free") + Self.bytes([0], type: "mdat")
        // At an offset inside a larger run: the type is read from there.
        #expect(BoxHeader(bytes, at: 4, extent: 50)?.size == 8)
        #expect(BoxHeader(bytes, at: 12, extent: 40) == BoxHeader(type: "mdat", size: 40, headerSize: 8))
        #expect(BoxHeader(bytes, at: 12, extent: nil)?.size == 0)
        #expect(BoxHeader(bytes, at: 13, extent: 40) == nil)
    }
}
