import MediaMuxBase
/// Reads the first NAL units of an MP4-style (length-prefixed) H.264 or HEVC
/// sample to tell whether decoding can start there: what the sync-sample
/// table should say, and sometimes does not (an iPhone clip leaves its
/// opening IDR picture out of stss).
package enum RandomAccess {
    package static func understands(codec: String) -> Bool { codec == "h264" || codec == "hevc" }

    /// True when the sample's first picture is an H.264 IDR or an HEVC IRAP
    /// (IDR, CRA or BLA) picture; false when it is not, or when the codec
    /// configuration is not an avcC/hvcC record that gives the NAL length size.
    package static func startsDecoding(codec: String, configuration: UnsafeBufferPointer<UInt8>, sample: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let lengthSize = nalLengthSize(codec: codec, configuration: configuration) else { return false }
        var offset = 0
        while offset + lengthSize < sample.count {
            var length = 0
            for index in 0..<lengthSize { length = length << 8 | Int(sample[offset + index]) }
            let header = offset + lengthSize
            guard length > 0, length <= sample.count - header else { return false }
            if codec == "h264" {
                let type = sample[header] & 0x1F
                // Types 1 to 5 carry slices: the first one says which picture this is.
                if (1...5).contains(type) { return type == 5 }
            } else {
                let type = (sample[header] >> 1) & 0x3F
                // Types 0 to 31 carry slices; 16 to 23 are IRAP pictures (BLA, IDR, CRA and reserved IRAP).
                if type < 32 { return (16...23).contains(type) }
            }
            offset = header + length
        }
        return false
    }

    /// Whether a copy may begin a clip in the middle of a track at this
    /// sample, a keyframe: an H.264 IDR picture, which resets everything a
    /// decoder carries, or any HEVC IRAP picture (a CRA made a splice point
    /// by `markSplice`). Codecs MediaMux does not parse: true.
    package static func joins(codec: String, configuration: UnsafeBufferPointer<UInt8>, sample: UnsafeBufferPointer<UInt8>) -> Bool {
        guard understands(codec: codec) else { return true }
        return startsDecoding(codec: codec, configuration: configuration, sample: sample)
    }

    /// An HEVC sample that begins a clip in the middle of a track: its CRA
    /// slices (type 21) become BLA_W_LP (16), a splice point, so that a
    /// decoder starts its picture order counts anew there and does not
    /// look for the pictures before it (the leading pictures that reference
    /// them are left out of the copy). CRA and BLA slices share their syntax:
    /// only the NAL unit headers' type bits change. Nothing else is touched.
    package static func markSplice(codec: String, configuration: UnsafeBufferPointer<UInt8>, sample: UnsafeMutableBufferPointer<UInt8>) {
        guard codec == "hevc", let lengthSize = nalLengthSize(codec: codec, configuration: configuration) else { return }
        var offset = 0
        while offset + lengthSize < sample.count {
            var length = 0
            for index in 0..<lengthSize { length = length << 8 | Int(sample[offset + index]) }
            let header = offset + lengthSize
            guard length > 0, length <= sample.count - header else { return }
            if (sample[header] >> 1) & 0x3F == 21 {
                sample[header] = (sample[header] & 0x81) | (16 << 1)
            }
            offset = header + length
        }
    }

    /// The size of each NAL unit's length field, from avcC (byte 4) or hvcC (byte 21).
    private static func nalLengthSize(codec: String, configuration: UnsafeBufferPointer<UInt8>) -> Int? {
        let position = codec == "h264" ? 4 : 21
        guard configuration.count > position, configuration[0] == 1 else { return nil }
        let size = Int(configuration[position] & 0x03) + 1
        return size == 3 ? nil : size
    }
}
