/// Finds where a raw MPEG audio (MP1/2/3) or ADTS AAC stream starts behind
/// junk: a run of frames, each header valid and the next one exactly where
/// its length says, all of one version, layer and sample rate. FFmpeg's own
/// probe weighs every demuxer over the first bytes and can pick another
/// (raw AMR-NB, whose frames are one header byte each) when junk comes
/// first; its mp3 and aac demuxers then resync past the junk themselves.
package enum AudioFrameSync: Equatable {
    case mpegAudio
    case adts

    /// FFmpeg's demuxer for it.
    package var formatName: String {
        switch self {
        case .mpegAudio: return "mp3"
        case .adts: return "aac"
        }
    }

    /// Consecutive frames that make a stream: a chance header in junk is
    /// followed by a second one in perhaps one case in a thousand, by eight
    /// practically never.
    package static let framesInARow = 8

    /// The first run of `framesInARow` frames in `bytes`, and where it starts.
    package static func find(in bytes: [UInt8]) -> (kind: AudioFrameSync, offset: Int)? {
        var index = 0
        while index + 7 <= bytes.count {
            if bytes[index] == 0xFF {
                for kind in [AudioFrameSync.adts, .mpegAudio] where kind.chains(bytes, from: index) {
                    return (kind, index)
                }
            }
            index += 1
        }
        return nil
    }

    /// True when a packet of MPEG audio starts with a frame header: one
    /// that does not (junk the demuxer's resync handed out with the first
    /// frame) decodes to nothing ("Header missing").
    /// Free-format frames (bit-rate index 0), which the decoder reads and a
    /// scan for runs cannot size, count too.
    package static func startsWithMPEGAudioFrame(_ packet: UnsafeBufferPointer<UInt8>) -> Bool {
        guard packet.count >= 4, packet[0] == 0xFF, packet[1] & 0xE0 == 0xE0 else { return false }
        let version = (packet[1] >> 3) & 0x3
        let layer = (packet[1] >> 1) & 0x3
        return version != 1 && layer != 0 && packet[2] >> 4 != 0xF && (packet[2] >> 2) & 0x3 != 3
    }

    private func chains(_ bytes: [UInt8], from start: Int) -> Bool {
        var position = start
        var signature: UInt32?
        for _ in 0..<Self.framesInARow {
            guard position + 7 <= bytes.count, let frame = header(bytes, at: position) else { return false }
            if let signature, signature != frame.signature { return false }
            signature = frame.signature
            position += frame.length
        }
        return true
    }

    /// A frame's length in bytes and what must stay the same from frame to frame.
    private func header(_ b: [UInt8], at i: Int) -> (length: Int, signature: UInt32)? {
        switch self {
        case .adts:
            // 12-bit sync, layer 00; sampling index below 13; frame length with the header (ISO 14496-3, 1.A.2).
            guard b[i] == 0xFF, b[i + 1] & 0xF6 == 0xF0 else { return nil }
            let rateIndex = (b[i + 2] >> 2) & 0xF
            guard rateIndex < 13 else { return nil }
            let length = Int(b[i + 3] & 0x3) << 11 | Int(b[i + 4]) << 3 | Int(b[i + 5] >> 5)
            let headerSize = b[i + 1] & 0x1 == 0 ? 9 : 7
            guard length > headerSize else { return nil }
            return (length, UInt32(b[i + 1] & 0x08) << 8 | UInt32(b[i + 2] & 0xFC))
        case .mpegAudio:
            // 11-bit sync; version not reserved; layer not reserved; bit rate neither free nor bad; rate not reserved.
            guard b[i] == 0xFF, b[i + 1] & 0xE0 == 0xE0 else { return nil }
            let version = (b[i + 1] >> 3) & 0x3
            let layer = (b[i + 1] >> 1) & 0x3
            let rateCode = (b[i + 2] >> 4) & 0xF
            let sampleRateCode = (b[i + 2] >> 2) & 0x3
            guard version != 1, layer != 0, rateCode != 0, rateCode != 0xF, sampleRateCode != 3 else { return nil }
            let isMPEG1 = version == 3
            let layerNumber = 4 - Int(layer)
            let bitRate = Self.bitRates(mpeg1: isMPEG1, layer: layerNumber)[Int(rateCode)] * 1000
            let sampleRate = [44100, 48000, 32000][Int(sampleRateCode)] >> (isMPEG1 ? 0 : (version == 2 ? 1 : 2))
            let padding = Int((b[i + 2] >> 1) & 0x1)
            let length: Int
            switch layerNumber {
            case 1: length = (12 * bitRate / sampleRate + padding) * 4
            case 3 where !isMPEG1: length = 72 * bitRate / sampleRate + padding
            default: length = 144 * bitRate / sampleRate + padding
            }
            guard length >= 4 else { return nil }
            return (length, UInt32(b[i + 1] & 0x1E) << 8 | UInt32(sampleRateCode))
        }
    }

    /// kbit/s by bit-rate index (ISO 11172-3 and 13818-3).
    private static func bitRates(mpeg1: Bool, layer: Int) -> [Int] {
        switch (mpeg1, layer) {
        case (true, 1): return [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448, 0]
        case (true, 2): return [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 0]
        case (true, _): return [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0]
        case (false, 1): return [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256, 0]
        case (false, _): return [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0]
        }
    }
}
