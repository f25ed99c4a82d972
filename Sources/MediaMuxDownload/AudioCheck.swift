import MediaMuxBase
import MediaMuxContainers
import SystemPackage

/// Says whether the file at `path` has an audio stream, for bodies the
/// download module cannot recognise alone. The facade passes FFmpeg's probe.
package typealias AudioProbe = @Sendable (_ path: String, _ cancellation: CancellationFlag) throws -> Bool

/// Whether a downloaded body is audio, from what MediaMux reads without
/// FFmpeg: an MP4/QuickTime file's tracks, and the first bytes of the common
/// audio files. A text page (the error page a server sends with 200) or an
/// empty body is not media at all, and throws as a demuxer would. nil where
/// neither tells (Ogg and Matroska carry video too).
package func recognizedAudio(path: String) throws -> Bool? {
    if let quickTime = quickTimeHasSoundTrack(path: path) { return quickTime }
    let head = try firstBytes(of: path, count: 16)
    if head.isEmpty { throw MediaMuxError.notMedia(path: path, detail: "the file is empty") }
    return try AudioSignature.classify(head, path: path)
}

package enum AudioSignature {
    /// The signatures of audio-only files.
    package static func classify(_ head: [UInt8], path: String) throws -> Bool? {
        func starts(_ text: String, at offset: Int = 0) -> Bool {
            let bytes = Array(text.utf8)
            return head.count >= offset + bytes.count && Array(head[offset..<(offset + bytes.count)]) == bytes
        }
        if starts("ID3") || starts("fLaC") || starts("caff") || starts("#!AMR") { return true }
        if (starts("RIFF") || starts("RF64")) && starts("WAVE", at: 8) { return true }
        if starts("FORM") && (starts("AIFF", at: 8) || starts("AIFC", at: 8)) { return true }
        // An MPEG audio frame (MP3) or ADTS (AAC): eleven sync bits.
        if head.count >= 2 && head[0] == 0xFF && head[1] & 0xE0 == 0xE0 { return true }
        // HTML, XML or JSON, after a byte-order mark and white space.
        let text = head.drop { [0xEF, 0xBB, 0xBF, 0x20, 0x09, 0x0A, 0x0D].contains($0) }
        if let first = text.first, [UInt8(ascii: "<"), UInt8(ascii: "{"), UInt8(ascii: "[")].contains(first) {
            throw MediaMuxError.notMedia(path: path, detail: "it is a text page")
        }
        return nil
    }
}

/// Up to `count` bytes from the start of a file.
package func firstBytes(of path: String, count: Int) throws -> [UInt8] {
    do {
        let file = try FileDescriptor.open(FilePath(path), .readOnly, options: .closeOnExec)
        return try file.closeAfter {
            var bytes = [UInt8](repeating: 0, count: count)
            let got = try bytes.withUnsafeMutableBytes { try file.readAll(fromAbsoluteOffset: 0, into: $0) }
            return Array(bytes.prefix(got))
        }
    } catch {
        throw MediaMuxError.unreadable(path: path, reason: systemErrorText(error))
    }
}
