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
        width = Int(frame.pointee.width)
        height = Int(frame.pointee.height)
        bitDepth = Int(descriptor.pointee.comp.0.depth)
        let stride = Int(frame.pointee.linesize.0)
        samples = []
        samples.reserveCapacity(width * height)
        for row in 0..<height {
            let line = base + row * stride
            for column in 0..<width {
                samples.append(bitDepth > 8
                    ? UInt16(line[2 * column]) | UInt16(line[2 * column + 1]) << 8
                    : UInt16(line[column]))
            }
        }
    }

    subscript(x: Int, y: Int) -> UInt16 { samples[y * width + x] }

    /// Turned as a display matrix turns it: a coded point (x, y) goes where the turn shows it.
    func turned(clockwise degrees: Int, mirrored: Bool = false) -> LumaPlane {
        let source = mirrored ? self.mirrored() : self
        switch (degrees % 360 + 360) % 360 {
        case 90:
            return LumaPlane(width: height, height: width, bitDepth: bitDepth, samples: (0..<width).flatMap { y in
                (0..<height).map { x in source[y, height - 1 - x] }
            })
        case 180:
            return LumaPlane(width: width, height: height, bitDepth: bitDepth, samples: source.samples.reversed())
        case 270:
            return LumaPlane(width: height, height: width, bitDepth: bitDepth, samples: (0..<width).flatMap { y in
                (0..<height).map { x in source[width - 1 - y, x] }
            })
        default:
            return source
        }
    }

    func mirrored() -> LumaPlane {
        LumaPlane(width: width, height: height, bitDepth: bitDepth, samples: (0..<height).flatMap { y in
            (0..<width).map { x in self[width - 1 - x, y] }
        })
    }

    func cropped(x: Int, y: Int, width: Int, height: Int) -> LumaPlane {
        LumaPlane(width: width, height: height, bitDepth: bitDepth, samples: (y..<(y + height)).flatMap { row in
            samples[(row * self.width + x)..<(row * self.width + x + width)]
        })
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
        for (index, sample) in samples.enumerated() {
            if bytes == 2 {
                input[2 * index] = UInt8(sample & 0xFF)
                input[2 * index + 1] = UInt8(sample >> 8)
            } else {
                input[index] = UInt8(sample)
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
        let values = bytes == 2
            ? stride(from: 0, to: output.count, by: 2).map { UInt16(output[$0]) | UInt16(output[$0 + 1]) << 8 }
            : output.map(UInt16.init)
        return LumaPlane(width: newWidth, height: newHeight, bitDepth: bitDepth, samples: values)
    }

    /// Peak signal to noise ratio against a plane of the same size, in dB
    /// (infinity when equal).
    func psnr(against other: LumaPlane) -> Double {
        precondition(width == other.width && height == other.height, "PSNR of \(width)x\(height) against \(other.width)x\(other.height)")
        var squared = 0.0
        for (a, b) in zip(samples, other.samples) {
            let difference = Double(a) - Double(b)
            squared += difference * difference
        }
        let mean = squared / Double(samples.count)
        let peak = Double((1 << bitDepth) - 1)
        return mean == 0 ? .infinity : 10 * log10(peak * peak / mean)
    }

    var mean: Double { Double(samples.reduce(0) { $0 + Int($1) }) / Double(max(samples.count, 1)) }
}
