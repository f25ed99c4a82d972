import Foundation

/// Pictures as the tests see them, with no help from FFmpeg or MediaMux: a
/// PNG reader (chunks, CRCs, zlib inflate, row filters), a JPEG header
/// reader, quarter turns, comparisons, and the frame-index fixture's bits.
struct Picture: Equatable, CustomStringConvertible {
    var width: Int
    var height: Int
    /// 3 (RGB) or 4 (RGBA).
    var channels: Int
    /// Rows top to bottom, no padding.
    var pixels: [UInt8]

    var description: String { "\(width)x\(height)x\(channels)" }

    func pixel(_ x: Int, _ y: Int) -> ArraySlice<UInt8> {
        let at = (y * width + x) * channels
        return pixels[at..<at + channels]
    }

    /// The picture turned clockwise by `degrees` (0, 90, 180, 270). Written
    /// as "where does each source pixel go", the opposite direction to the
    /// library's "where does each output pixel come from".
    func turned(clockwise degrees: Int) -> Picture {
        let quarter = degrees % 180 != 0
        let (outWidth, outHeight) = quarter ? (height, width) : (width, height)
        var out = [UInt8](repeating: 0, count: pixels.count)
        for y in 0..<height {
            for x in 0..<width {
                let (toX, toY): (Int, Int)
                switch degrees {
                case 90: (toX, toY) = (height - 1 - y, x)  // the top row becomes the right-hand column
                case 180: (toX, toY) = (width - 1 - x, height - 1 - y)
                case 270: (toX, toY) = (y, width - 1 - x)  // the top row becomes the left-hand column
                default: (toX, toY) = (x, y)
                }
                let from = (y * width + x) * channels
                let to = (toY * outWidth + toX) * channels
                for c in 0..<channels { out[to + c] = pixels[from + c] }
            }
        }
        return Picture(width: outWidth, height: outHeight, channels: channels, pixels: out)
    }

    /// Mean absolute difference per byte; infinity when the shapes differ.
    func meanDifference(to other: Picture) -> Double {
        guard width == other.width, height == other.height, channels == other.channels, !pixels.isEmpty else { return .infinity }
        var total = 0
        for i in pixels.indices { total += abs(Int(pixels[i]) - Int(other.pixels[i])) }
        return Double(total) / Double(pixels.count)
    }

    /// Population variance of all colour bytes (alpha left out).
    var variance: Double {
        var sum = 0.0, squares = 0.0, n = 0.0
        for i in pixels.indices where channels == 3 || i % 4 != 3 {
            let v = Double(pixels[i])
            sum += v
            squares += v * v
            n += 1
        }
        guard n > 0 else { return 0 }
        let mean = sum / n
        return squares / n - mean * mean
    }
}

/// TestMedia/h264_frame_index.mp4: eight equal columns across the displayed
/// picture; column k (k = 0 leftmost) is white when bit k of the frame's
/// index is set, black otherwise.
enum FrameIndex {
    /// The index shown in the rectangle (`x`, `y`, `width`, `height`) of
    /// `picture`, read at the column centres of its middle row (any channel
    /// above 128 is a set bit); nil when a centre is neither clearly dark nor
    /// clearly light, so a smeared or blended picture cannot pass as a number.
    static func read(_ picture: Picture, x: Int = 0, y: Int = 0, width: Int? = nil, height: Int? = nil) -> Int? {
        let w = width ?? picture.width
        let h = height ?? picture.height
        var index = 0
        for bit in 0..<8 {
            let centreX = x + (2 * bit + 1) * w / 16
            let value = picture.pixel(centreX, y + h / 2).prefix(3)
            guard value.allSatisfy({ $0 < 64 || $0 > 192 }) else { return nil }
            if value.contains(where: { $0 > 128 }) { index |= 1 << bit }
        }
        return index
    }
}

// MARK: - PNG

enum PNG {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    struct Header: Equatable {
        var width: Int
        var height: Int
        var bitDepth: Int
        var colourType: Int
        var interlace: Int
    }

    /// The IHDR chunk, which the format puts first, right after the signature.
    static func header(_ bytes: [UInt8]) throws -> Header {
        guard bytes.count >= 33, Array(bytes[0..<8]) == signature else { throw Failure("no PNG signature") }
        guard PNG.bigEndian(bytes, 8, 4) == 13, String(decoding: bytes[12..<16], as: UTF8.self) == "IHDR" else {
            throw Failure("the first chunk is not a 13-byte IHDR")
        }
        return Header(
            width: PNG.bigEndian(bytes, 16, 4), height: PNG.bigEndian(bytes, 20, 4),
            bitDepth: Int(bytes[24]), colourType: Int(bytes[25]), interlace: Int(bytes[28]))
    }

    /// Decodes an 8-bit, non-interlaced RGB or RGBA PNG, checking every
    /// chunk's CRC and the zlib stream's Adler-32.
    static func decode(_ bytes: [UInt8]) throws -> Picture {
        let header = try header(bytes)
        guard header.bitDepth == 8, header.interlace == 0, [2, 6].contains(header.colourType) else {
            throw Failure("unexpected IHDR \(header)")
        }
        var at = 8
        var compressed: [UInt8] = []
        var sawEnd = false
        while at + 12 <= bytes.count {
            let length = PNG.bigEndian(bytes, at, 4)
            guard at + 12 + length <= bytes.count else { throw Failure("chunk at \(at) runs past the end") }
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            let crc = UInt32(PNG.bigEndian(bytes, at + 8 + length, 4))
            guard crc == crc32(bytes[(at + 4)..<(at + 8 + length)]) else { throw Failure("bad CRC on \(type)") }
            if type == "IDAT" { compressed += bytes[(at + 8)..<(at + 8 + length)] }
            at += 12 + length
            if type == "IEND" {
                sawEnd = true
                break
            }
        }
        guard sawEnd, at == bytes.count else { throw Failure("no IEND at the end") }
        let channels = header.colourType == 6 ? 4 : 3
        let stride = header.width * channels
        let raw = try Zlib.inflate(compressed)
        guard raw.count == header.height * (stride + 1) else {
            throw Failure("inflated \(raw.count) bytes for \(header.height) rows of \(stride + 1)")
        }
        var pixels = [UInt8](repeating: 0, count: header.height * stride)
        for row in 0..<header.height {
            let filter = raw[row * (stride + 1)]
            let line = row * (stride + 1) + 1
            for i in 0..<stride {
                let a = i >= channels ? Int(pixels[row * stride + i - channels]) : 0
                let b = row > 0 ? Int(pixels[(row - 1) * stride + i]) : 0
                let c = row > 0 && i >= channels ? Int(pixels[(row - 1) * stride + i - channels]) : 0
                let predicted: Int
                switch filter {
                case 0: predicted = 0
                case 1: predicted = a
                case 2: predicted = b
                case 3: predicted = (a + b) / 2
                case 4:
                    let p = a + b - c
                    let (pa, pb, pc) = (abs(p - a), abs(p - b), abs(p - c))
                    predicted = pa <= pb && pa <= pc ? a : pb <= pc ? b : c
                default: throw Failure("row \(row) has filter type \(filter)")
                }
                pixels[row * stride + i] = UInt8((Int(raw[line + i]) + predicted) & 0xFF)
            }
        }
        return Picture(width: header.width, height: header.height, channels: channels, pixels: pixels)
    }

    private static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes { c = crcTable[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}

extension PNG {
    /// `count` bytes at `at` as a big-endian number.
    static func bigEndian(_ bytes: [UInt8], _ at: Int, _ count: Int) -> Int {
        bytes[at..<at + count].reduce(0) { $0 << 8 | Int($1) }
    }
}

/// RFC 1950/1951 decompression, after zlib's `puff.c`.
enum Zlib {
    private struct Bits {
        let bytes: [UInt8]
        var at = 0
        var buffer = 0
        var count = 0

        mutating func take(_ need: Int) throws -> Int {
            var value = buffer
            while count < need {
                guard at < bytes.count else { throw PNG.Failure("deflate data ends early") }
                value |= Int(bytes[at]) << count
                at += 1
                count += 8
            }
            buffer = value >> need
            count -= need
            return value & ((1 << need) - 1)
        }

        mutating func alignToByte() {
            buffer = 0
            count = 0
        }
    }

    private struct Huffman {
        var counts = [Int](repeating: 0, count: 16)
        var symbols: [Int]

        init(lengths: [Int]) {
            symbols = [Int](repeating: 0, count: lengths.count)
            for length in lengths { counts[length] += 1 }
            var offsets = [Int](repeating: 0, count: 16)
            for length in 1..<15 { offsets[length + 1] = offsets[length] + counts[length] }
            for (symbol, length) in lengths.enumerated() where length != 0 {
                symbols[offsets[length]] = symbol
                offsets[length] += 1
            }
        }

        func decode(_ bits: inout Bits) throws -> Int {
            var code = 0, first = 0, index = 0
            for length in 1...15 {
                code |= try bits.take(1)
                let count = counts[length]
                if code - count < first { return symbols[index + code - first] }
                index += count
                first = (first + count) << 1
                code <<= 1
            }
            throw PNG.Failure("bad Huffman code")
        }
    }

    private static let lengthBase = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    private static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    private static let distanceBase = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]
    private static let distanceExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]
    private static let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

    static func inflate(_ stream: [UInt8]) throws -> [UInt8] {
        guard stream.count >= 6, stream[0] & 0x0F == 8, (Int(stream[0]) << 8 | Int(stream[1])) % 31 == 0, stream[1] & 0x20 == 0 else {
            throw PNG.Failure("not a zlib stream")
        }
        var bits = Bits(bytes: stream, at: 2)
        var out: [UInt8] = []
        var last = false
        while !last {
            last = try bits.take(1) == 1
            switch try bits.take(2) {
            case 0:
                bits.alignToByte()
                guard bits.at + 4 <= stream.count else { throw PNG.Failure("stored block header cut") }
                let length = Int(stream[bits.at]) | Int(stream[bits.at + 1]) << 8
                let check = Int(stream[bits.at + 2]) | Int(stream[bits.at + 3]) << 8
                guard length == check ^ 0xFFFF, bits.at + 4 + length <= stream.count else { throw PNG.Failure("bad stored block") }
                out += stream[(bits.at + 4)..<(bits.at + 4 + length)]
                bits.at += 4 + length
            case 1:
                let fixed = (0..<288).map { $0 < 144 ? 8 : $0 < 256 ? 9 : $0 < 280 ? 7 : 8 }
                try codes(&bits, &out, Huffman(lengths: fixed), Huffman(lengths: [Int](repeating: 5, count: 30)))
            case 2:
                let literals = try bits.take(5) + 257
                let distances = try bits.take(5) + 1
                let codeLengthCount = try bits.take(4) + 4
                var codeLengths = [Int](repeating: 0, count: 19)
                for i in 0..<codeLengthCount { codeLengths[order[i]] = try bits.take(3) }
                let codeLengthCode = Huffman(lengths: codeLengths)
                var lengths: [Int] = []
                while lengths.count < literals + distances {
                    let symbol = try codeLengthCode.decode(&bits)
                    switch symbol {
                    case 0..<16: lengths.append(symbol)
                    case 16:
                        guard let previous = lengths.last else { throw PNG.Failure("repeat with nothing before") }
                        lengths += repeatElement(previous, count: 3 + (try bits.take(2)))
                    case 17: lengths += repeatElement(0, count: 3 + (try bits.take(3)))
                    default: lengths += repeatElement(0, count: 11 + (try bits.take(7)))
                    }
                }
                guard lengths.count == literals + distances else { throw PNG.Failure("code lengths overrun") }
                try codes(&bits, &out, Huffman(lengths: Array(lengths[0..<literals])), Huffman(lengths: Array(lengths[literals...])))
            default:
                throw PNG.Failure("block type 3")
            }
        }
        bits.alignToByte()
        guard bits.at + 4 <= stream.count else { throw PNG.Failure("no Adler-32") }
        var a = 1, b = 0
        for byte in out {
            a = (a + Int(byte)) % 65521
            b = (b + a) % 65521
        }
        guard PNG.bigEndian(stream, bits.at, 4) == b << 16 | a else { throw PNG.Failure("Adler-32 mismatch") }
        return out
    }

    private static func codes(_ bits: inout Bits, _ out: inout [UInt8], _ literal: Huffman, _ distance: Huffman) throws {
        while true {
            let symbol = try literal.decode(&bits)
            if symbol < 256 {
                out.append(UInt8(symbol))
            } else if symbol == 256 {
                return
            } else {
                let code = symbol - 257
                guard code < lengthBase.count else { throw PNG.Failure("bad length code") }
                let length = lengthBase[code] + (try bits.take(lengthExtra[code]))
                let distanceCode = try distance.decode(&bits)
                guard distanceCode < distanceBase.count else { throw PNG.Failure("bad distance code") }
                let back = distanceBase[distanceCode] + (try bits.take(distanceExtra[distanceCode]))
                guard back <= out.count else { throw PNG.Failure("distance too far back") }
                for _ in 0..<length { out.append(out[out.count - back]) }
            }
        }
    }
}

// MARK: - JPEG

enum JPEG {
    struct Frame: Equatable {
        /// The SOF marker's second byte: 0xC0 for baseline.
        var marker: UInt8
        var precision: Int
        var width: Int
        var height: Int
        var components: Int
    }

    /// The frame header, found by walking the marker segments from SOI; nil
    /// when the file does not start with SOI, end with EOI, or has no SOF.
    static func frame(_ bytes: [UInt8]) -> Frame? {
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8,
              bytes[bytes.count - 2] == 0xFF, bytes[bytes.count - 1] == 0xD9 else { return nil }
        var at = 2
        while at + 4 <= bytes.count {
            guard bytes[at] == 0xFF else { return nil }
            let marker = bytes[at + 1]
            if marker == 0xFF { at += 1; continue }  // fill byte
            let length = PNG.bigEndian(bytes, at + 2, 2)
            let isFrame = (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker)
            if isFrame {
                guard at + 2 + length <= bytes.count, length >= 8 else { return nil }
                return Frame(
                    marker: marker, precision: Int(bytes[at + 4]), width: PNG.bigEndian(bytes, at + 7, 2),
                    height: PNG.bigEndian(bytes, at + 5, 2), components: Int(bytes[at + 9]))
            }
            if marker == 0xDA { return nil }  // scan data before any frame header
            at += 2 + length
        }
        return nil
    }
}

// MARK: - MP4 edits

enum TrackHeaderEdit {
    /// A copy of `source` at `destination` whose video track header carries
    /// the identity matrix: the same coded pictures, shown unturned.
    static func unrotatedCopy(of source: String, to destination: String) throws {
        let file = try MP4File(path: source)
        guard let video = file.videoTracks.first, let tkhd = video.box.find("tkhd").first?.box else {
            throw PNG.Failure("\(source): no video tkhd")
        }
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source)))
        let start = Int(tkhd.offset)
        // size(4) type(4) version/flags(4); version 0: creation, modification,
        // track_ID, reserved, duration (4 each); version 1 widens three to 8.
        // Then reserved(8) layer(2) alternate_group(2) volume(2) reserved(2), matrix(36).
        let version = bytes[start + 8]
        let matrixAt = start + 12 + (version == 1 ? 32 : 20) + 16
        let identity: [UInt32] = [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000]
        for (i, value) in identity.enumerated() {
            for byte in 0..<4 { bytes[matrixAt + i * 4 + byte] = UInt8(truncatingIfNeeded: value >> (24 - 8 * byte)) }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: destination))
    }
}
