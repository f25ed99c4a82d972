import Foundation
import Testing
import TestSupport
@testable import MediaMux
@testable import MediaMuxCore

/// Raw MP3 and ADTS AAC behind junk: bytes shaped like AMR-NB frames (which
/// win FFmpeg's own probe, so that ffprobe calls the file raw AMR-NB), an
/// unknown tag, up to a megabyte of either. They are read as MP3 and AAC,
/// as FFmpeg's mp3 and aac demuxers read them when told to, and as
/// soundtracks end with the samples `ffmpeg -f mp3|aac -i FILE` decodes.
/// The files are made here from the fixtures, not committed.
@Suite(.serialized) struct JunkBeforeAudioTests {
    enum Junk: String, CaseIterable, Sendable {
        /// 100 kB of AMR-NB 12.2 kbit/s frames: a 0x3C header byte and 31 bytes of noise without 0xFF.
        case amrLike100k
        /// The same for 1,000,000 bytes.
        case amrLike1M
        /// A 64 KiB tag of a kind no reader knows: "XTAG", a size, zeros.
        case unknownTag

        var bytes: [UInt8] {
            var generator = SplitMix(seed: 26)
            switch self {
            case .amrLike100k, .amrLike1M:
                let count = self == .amrLike100k ? 100_000 : 1_000_000
                var junk: [UInt8] = []
                junk.reserveCapacity(count + 32)
                while junk.count < count {
                    junk.append(0x3C)
                    for _ in 0..<31 { junk.append(UInt8(generator.next() % 255)) }
                }
                return Array(junk.prefix(count))
            case .unknownTag:
                return Array("XTAG".utf8) + [0x00, 0x01, 0x00, 0x00] + [UInt8](repeating: 0, count: 65_536)
            }
        }
    }

    /// A fixed sequence of pseudo-random numbers (SplitMix64).
    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static var ffmpeg: String {
        get throws {
            try #require(["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first { FileManager.default.isExecutableFile(atPath: $0) },
                         "the ffmpeg CLI is not installed (make test installs it)")
        }
    }

    /// The mono 16-bit samples the ffmpeg CLI decodes from `path`, read with its demuxer `format`.
    static func decodedSamples(_ path: String, format: String) throws -> Int {
        let run = try ExternalTool.run(
            try ffmpeg, ["-nostdin", "-v", "error", "-f", format, "-i", path, "-map", "0:a:0", "-f", "s16le", "-ac", "1", "-"],
            keeping: .output, seconds: 60)
        try #require(run.status == 0)
        return run.text.count / 2
    }

    /// The stream behind the junk: the fixture's MP3, or ADTS copied out of an M4A by the ffmpeg CLI.
    static func stream(_ format: String, in folder: TemporaryFolder) throws -> [UInt8] {
        if format == "mp3" { return [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("mp3_5s.mp3")))) }
        let adts = folder.path("plain.aac")
        let run = try ExternalTool.run(
            try ffmpeg, ["-nostdin", "-v", "error", "-y", "-i", Fixtures.path("aac_2s.m4a"), "-c", "copy", "-f", "adts", adts],
            keeping: .errors, seconds: 60)
        try #require(run.status == 0, "\(String(decoding: run.text, as: UTF8.self))")
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: adts)))
    }

    @Test(arguments: Junk.allCases, ["mp3", "aac"])
    func readAsTheAudioBehindTheJunk(_ junk: Junk, _ format: String) async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("after_\(junk.rawValue).\(format)")
        try Data(junk.bytes + Self.stream(format, in: folder)).write(to: URL(fileURLWithPath: path))
        let info = try await MuxEngine().probe(path)
        #expect(info.format == format, "\(info.format)")
        let audio = try #require(info.audio)
        let rate = try #require(audio.sampleRate)
        let decoded = try Self.decodedSamples(path, format: format)
        let probed = try #require(audio.end).seconds - (try #require(audio.start).seconds)
        #expect(abs(probed - Double(decoded) / Double(rate)) < 0.001, "probed \(probed) s, decoded \(decoded) samples at \(rate) Hz")

        let output = folder.path("out.mp4")
        let report = try await MuxEngine().merge(video: Fixtures.path("h264_26s_2fps.mp4"), audio: path, output: output)
        #expect(report.endReason == .audioEndsFirst)
        let file = try MP4File(path: output)
        let seconds = Double(file.movieDuration) / Double(file.movieTimescale)
        #expect(abs(seconds - Double(decoded) / Double(rate)) < 0.001, "the output lasts \(seconds) s")
        // What the output decodes to is what the source decodes to.
        #expect(try Self.decodedSamples(output, format: "mov") == decoded)
        if format == "mp3" {
            #expect(report.warnings.contains { $0.hasPrefix(path) && $0.contains("before its first MP3 frame are not audio") }, "\(report.warnings)")
        }
    }

    /// An AMR-NB file made of the same frames, with AMR's magic, stays AMR,
    /// which MediaMux does not read: refused as what it is.
    @Test func aRealAMRFileStaysAMR() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("speech.amr")
        try Data(Array("#!AMR\n".utf8) + Junk.amrLike100k.bytes).write(to: URL(fileURLWithPath: path))
        await #expect(throws: MediaMuxError.notMedia(path: path, detail: "it is 3GPP AMR (amr), not an audio or video file MediaMux reads")) {
            _ = try await MuxEngine().probe(path)
        }
    }

    @Test func theFrameScanNeedsEightFramesInARow() throws {
        var bytes = Junk.amrLike100k.bytes
        #expect(AudioFrameSync.find(in: bytes) == nil)
        // An MPEG-1 layer III header, 128 kbit/s, 44.1 kHz, no padding: 417-byte frames.
        let frame: [UInt8] = [0xFF, 0xFB, 0x90, 0x00] + [UInt8](repeating: 0x11, count: 413)
        bytes += Array(repeating: frame, count: 7).joined()
        #expect(AudioFrameSync.find(in: bytes) == nil)
        bytes += frame
        let found = try #require(AudioFrameSync.find(in: bytes))
        #expect(found.kind == .mpegAudio && found.offset == 100_000)
    }
}

extension JunkBeforeAudioTests {
    /// The packets that decode to something: a frame header first,
    /// free-format frames (bit-rate index 0) included; junk and reserved
    /// values not.
    @Test func whichPacketsStartWithAFrame() {
        func starts(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBufferPointer(AudioFrameSync.startsWithMPEGAudioFrame) }
        #expect(starts([0xFF, 0xFB, 0x90, 0x00]))  // MPEG-1 layer III, 128 kbit/s, 44.1 kHz
        #expect(starts([0xFF, 0xFB, 0x00, 0x00]))  // free format
        #expect(!starts([0xFF, 0xFB, 0xF0, 0x00]))  // bit-rate index 15
        #expect(!starts([0xFF, 0xFB, 0x9C, 0x00]))  // sample-rate index 3
        #expect(!starts([0xFF, 0xF9, 0x90, 0x00]))  // layer 0 (reserved)
        #expect(!starts([0xFF, 0xEB, 0x90, 0x00]))  // version 01 (reserved)
        #expect(!starts([0x3C, 0xFB, 0x90, 0x00]))
        #expect(!starts([0xFF, 0xFB, 0x90]))
    }
}
