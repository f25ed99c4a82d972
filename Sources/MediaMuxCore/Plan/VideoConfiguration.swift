/// The bit depth a video stream's decoder configuration record declares
/// (its extradata, as the MP4 sample entry holds it), for when FFmpeg has not
/// decoded a picture to learn it: an MP4's HEVC or AV1 is probed from its
/// movie header alone.
enum VideoConfiguration {
    /// Bits a luma sample, or nil when the record does not say.
    static func bitDepth(codec: String, configuration bytes: [UInt8]) -> Int? {
        switch codec {
        case "hevc":
            // HEVCDecoderConfigurationRecord (ISO 14496-15, 8.3.3.1): bitDepthLumaMinus8 in byte 17's low 3 bits.
            guard bytes.count > 17, bytes[0] == 1 else { return nil }
            return Int(bytes[17] & 0x07) + 8
        case "av1":
            // AV1CodecConfigurationRecord: byte 2 holds high_bitdepth (bit 6) and twelve_bit (bit 5).
            guard bytes.count > 2, bytes[0] & 0x80 != 0 else { return nil }
            guard bytes[2] & 0x40 != 0 else { return 8 }
            return bytes[2] & 0x20 != 0 ? 12 : 10
        case "h264":
            // AVCDecoderConfigurationRecord: profile_idc in byte 1; High 10 (110) and the 4:2:2 and
            // 4:4:4 profiles may hold more than 8 bits, which their SPS says; the rest hold 8.
            guard bytes.count > 1, bytes[0] == 1 else { return nil }
            return [110, 122, 244].contains(bytes[1]) ? nil : 8
        default:
            return nil
        }
    }
}
