import Foundation

/// Loudness as the ffmpeg CLI's ebur128 filter measures it: an independent
/// judge of what MediaMux's loudness option did. `make test` installs ffmpeg.
enum LoudnessCheck {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The integrated loudness (LUFS) and true peak (dBTP) of the first audio stream of `path`.
    static func measure(_ path: String) throws -> (integrated: Double, truePeak: Double) {
        guard let ffmpeg = ["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw Failure(description: "the ffmpeg CLI is not installed (make test installs it)")
        }
        let run = try ExternalTool.run(
            ffmpeg, ["-nostdin", "-nostats", "-hide_banner", "-i", path, "-map", "0:a:0", "-af", "ebur128=peak=true", "-f", "null", "-"],
            keeping: .errors, seconds: 60)
        let text = String(decoding: run.text, as: UTF8.self)
        guard let summary = text.range(of: "Summary:") else { throw Failure(description: "no ebur128 summary: \(text.suffix(500))") }
        func value(after label: String) -> Double? {
            guard let found = text.range(of: label, range: summary.upperBound..<text.endIndex) else { return nil }
            let rest = text[found.upperBound...].drop { $0 == " " }
            return Double(rest.prefix { "-+.0123456789".contains($0) })
        }
        guard let integrated = value(after: "I:"), let peak = value(after: "Peak:") else {
            throw Failure(description: "no loudness or peak in: \(text[summary.lowerBound...])")
        }
        return (integrated, peak)
    }
}

/// A 16-bit PCM WAV file written by the tests, for soundtracks no fixture has.
enum WaveFile {
    static func write(_ samples: [Float], rate: Int, to path: String) throws {
        var data = Data()
        func put32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        func put16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        data.append(contentsOf: Array("RIFF".utf8)); put32(UInt32(36 + samples.count * 2)); data.append(contentsOf: Array("WAVE".utf8))
        data.append(contentsOf: Array("fmt ".utf8)); put32(16); put16(1); put16(1); put32(UInt32(rate)); put32(UInt32(rate * 2)); put16(2); put16(16)
        data.append(contentsOf: Array("data".utf8)); put32(UInt32(samples.count * 2))
        for sample in samples { put16(UInt16(bitPattern: Int16((max(-1, min(1, sample)) * 32767).rounded()))) }
        try data.write(to: URL(fileURLWithPath: path))
    }
}
