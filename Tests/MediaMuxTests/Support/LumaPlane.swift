import Foundation
import CFFmpeg
import CFFmpegScale

/// A decoded picture's luma samples (8 or 10 bits, kept as they are), for
/// the tests' own comparisons: turned, scaled with libswscale's bicubic,
/// cropped, and measured by PSNR, without the code under test.
struct LumaPlane: Sendable, Equatable {
    var width: Int
    var height: Int
    var bitDepth: Int
    /// Row after row.
    var samples: [UInt16]

    init(width: Int, height: Int, bitDepth: Int, samples: [UInt16]) {
        (self.width, self.height, self.bitDepth, self.samples) = (width, height, bitDepth, samples)
    }

    init?(_ frame: UnsafeMutablePointer<AVFrame>) {
        guard let descriptor = av_pix_fmt_desc_get(AVPixelFormat(frame.pointee.format)), let base = frame.pointee.data.0 else { return nil }
        let (width, height) = (Int(frame.pointee.width), Int(frame.pointee.height))
        let depth = Int(descriptor.pointee.comp.0.depth)
        let stride = Int(frame.pointee.linesize.0)
        self.init(width: width, height: height, bitDepth: depth) { sample in
            for row in 0..<height {
                let line = base + row * stride
                for column in 0..<width {
                    sample[row * width + column] = depth > 8
                        ? UInt16(line[2 * column]) | UInt16(line[2 * column + 1]) << 8
                        : UInt16(line[column])
                }
            }
        }
    }

    /// A plane whose samples `fill` writes, row after row. The loops below
    /// work on buffers, not on sequences of samples: the tests run unoptimized
    /// (and under the sanitizers), where a generic iterator per sample costs
    /// a hundred times a plain load.
    init(width: Int, height: Int, bitDepth: Int, fill: (UnsafeMutableBufferPointer<UInt16>) -> Void) {
        let samples = [UInt16](unsafeUninitializedCapacity: width * height) { buffer, count in
            buffer.initialize(repeating: 0)
            fill(buffer)
            count = width * height
        }
        self.init(width: width, height: height, bitDepth: bitDepth, samples: samples)
    }

    subscript(x: Int, y: Int) -> UInt16 { samples[y * width + x] }

    /// Turned as a display matrix turns it: a coded point (x, y) goes where the turn shows it.
    func turned(clockwise degrees: Int, mirrored: Bool = false) -> LumaPlane {
        let (width, height) = (self.width, self.height)
        // Where the sample shown at (x, y) of the turned plane is read in this one.
        let read: (Int, Int) -> Int
        switch (degrees % 360 + 360) % 360 {
        case 90: read = { x, y in (height - 1 - x) * width + y }
        case 180: read = { x, y in (height - 1 - y) * width + (width - 1 - x) }
        case 270: read = { x, y in x * width + (width - 1 - y) }
        default: read = { x, y in y * width + x }
        }
        let sideways = degrees % 180 != 0
        let (newWidth, newHeight) = sideways ? (height, width) : (width, height)
        return samples.withUnsafeBufferPointer { source in
            LumaPlane(width: newWidth, height: newHeight, bitDepth: bitDepth) { turned in
                for y in 0..<newHeight {
                    for x in 0..<newWidth {
                        // A mirror (across the vertical axis) comes before the turn.
                        var index = read(x, y)
                        if mirrored { index = index - index % width + (width - 1 - index % width) }
                        turned[y * newWidth + x] = source[index]
                    }
                }
            }
        }
    }

    func mirrored() -> LumaPlane { turned(clockwise: 0, mirrored: true) }

    func cropped(x: Int, y: Int, width: Int, height: Int) -> LumaPlane {
        let sourceWidth = self.width
        return samples.withUnsafeBufferPointer { source in
            LumaPlane(width: width, height: height, bitDepth: bitDepth) { cropped in
                for row in 0..<height {
                    let from = (y + row) * sourceWidth + x
                    for column in 0..<width { cropped[row * width + column] = source[from + column] }
                }
            }
        }
    }

    /// Scaled by libswscale's bicubic, as libavfilter's scale filter does by default.
    func scaled(width newWidth: Int, height newHeight: Int) throws -> LumaPlane {
        let format = bitDepth > 8 ? AV_PIX_FMT_GRAY10LE : AV_PIX_FMT_GRAY8
        guard let context = sws_getContext(
            Int32(width), Int32(height), format, Int32(newWidth), Int32(newHeight), format, SWS_BICUBIC, nil, nil, nil)
        else { throw TrackDecoder.Failure(description: "no scaler for \(width)x\(height) to \(newWidth)x\(newHeight)") }
        defer { sws_freeContext(context) }
        let bytes = bitDepth > 8 ? 2 : 1
        var input = [UInt8](repeating: 0, count: width * height * bytes)
        input.withUnsafeMutableBufferPointer { input in
            samples.withUnsafeBufferPointer { samples in
                for index in 0..<samples.count {
                    if bytes == 2 {
                        input[2 * index] = UInt8(samples[index] & 0xFF)
                        input[2 * index + 1] = UInt8(samples[index] >> 8)
                    } else {
                        input[index] = UInt8(samples[index])
                    }
                }
            }
        }
        var output = [UInt8](repeating: 0, count: newWidth * newHeight * bytes)
        input.withUnsafeBufferPointer { from in
            output.withUnsafeMutableBufferPointer { to in
                var sources: [UnsafePointer<UInt8>?] = [from.baseAddress, nil, nil, nil]
                var destinations: [UnsafeMutablePointer<UInt8>?] = [to.baseAddress, nil, nil, nil]
                let sourceStrides: [Int32] = [Int32(width * bytes), 0, 0, 0]
                let destinationStrides: [Int32] = [Int32(newWidth * bytes), 0, 0, 0]
                _ = sws_scale(context, &sources, sourceStrides, 0, Int32(height), &destinations, destinationStrides)
            }
        }
        return output.withUnsafeBufferPointer { output in
            LumaPlane(width: newWidth, height: newHeight, bitDepth: bitDepth) { values in
                for index in 0..<values.count {
                    values[index] = bytes == 2
                        ? UInt16(output[2 * index]) | UInt16(output[2 * index + 1]) << 8
                        : UInt16(output[index])
                }
            }
        }
    }

    /// Peak signal to noise ratio against a plane of the same size, in dB
    /// (infinity when equal).
    func psnr(against other: LumaPlane) -> Double {
        precondition(width == other.width && height == other.height, "PSNR of \(width)x\(height) against \(other.width)x\(other.height)")
        var squared = 0
        samples.withUnsafeBufferPointer { mine in
            other.samples.withUnsafeBufferPointer { theirs in
                for index in 0..<mine.count {
                    let difference = Int(mine[index]) - Int(theirs[index])
                    squared += difference * difference
                }
            }
        }
        let mean = Double(squared) / Double(samples.count)
        let peak = Double((1 << bitDepth) - 1)
        return mean == 0 ? .infinity : 10 * log10(peak * peak / mean)
    }

    var mean: Double { Double(samples.reduce(0) { $0 + Int($1) }) / Double(max(samples.count, 1)) }
}
