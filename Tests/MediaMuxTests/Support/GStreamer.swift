import Foundation

/// GStreamer's player pipeline, for what a player that shares none of
/// FFmpeg's demuxing makes of a file: qtdemux reads the MP4/MOV and applies
/// its edit list, decodebin picks a decoder (gst-libav's for H.264/HEVC),
/// and the decoder drops what falls outside the edit. `make test` installs it.
enum GStreamer {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static var executable: String? {
        ["/usr/bin/gst-launch-1.0", "/usr/local/bin/gst-launch-1.0"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The first `count` pictures GStreamer shows of `path`, each `size`
    /// bytes of planar YUV (no row padding for the sizes used here). It
    /// writes every picture to `rawFile`: identity's eos-after, which would
    /// stop early, loses pictures on the way to the sink. `decoder`, when
    /// given, is the decoder element and its properties in place of
    /// decodebin's choice ("avdec_h265 max-threads=1").
    static func firstPictures(of path: String, count: Int, size: Int, rawFile: String, decoder: String? = nil) throws -> [[UInt8]] {
        guard let executable else { throw Failure(description: "gst-launch-1.0 is not installed (make test installs it)") }
        let decoding = decoder.map { $0.split(separator: " ").map(String.init) } ?? ["decodebin"]
        let arguments = ["-q", "filesrc", "location=\(path)", "!", "qtdemux", "name=demux", "demux.video_0", "!"] + decoding + [
            "!", "video/x-raw", "!", "filesink", "location=\(rawFile)",
        ]
        let (status, said) = try ExternalTool.run(executable, arguments, keeping: .errors, seconds: 60)
        guard status == 0 else {
            throw Failure(description: "gst-launch-1.0 failed on \(path): \(String(decoding: said, as: UTF8.self).prefix(400))")
        }
        let file = try FileHandle(forReadingFrom: URL(fileURLWithPath: rawFile))
        defer { try? file.close() }
        let data = try file.read(upToCount: count * size) ?? Data()
        return stride(from: 0, to: data.count - size + 1, by: size).map { [UInt8](data[$0..<($0 + size)]) }
    }

    /// The caps of the raw pictures GStreamer decodes `path`'s video to
    /// ("video/x-raw, format=(string)I420_10LE, ..., colorimetry=(string)bt2100-pq, ..."):
    /// the format, size and colour a player that shares nothing with FFmpeg's demuxer reads.
    static func decodedCaps(of path: String) throws -> String {
        guard let executable else { throw Failure(description: "gst-launch-1.0 is not installed (make test installs it)") }
        let arguments = ["-v", "filesrc", "location=\(path)", "!", "qtdemux", "!", "decodebin", "!", "video/x-raw", "!", "fakesink"]
        let (status, said) = try ExternalTool.run(executable, arguments, keeping: .output, seconds: 60)
        let text = String(decoding: said, as: UTF8.self)
        guard status == 0, let line = text.split(separator: "\n").last(where: { $0.contains("caps = video/x-raw") }) else {
            throw Failure(description: "gst-launch-1.0 decoded no video of \(path): \(text.suffix(400))")
        }
        return String(line[line.range(of: "video/x-raw")!.lowerBound...])
    }

    /// The duration GStreamer's discoverer gives `path`, in seconds (qtdemux's, from the edit lists and mehd/mvhd).
    static func discoveredDuration(of path: String) throws -> Double {
        let discoverer = "/usr/bin/gst-discoverer-1.0"
        guard FileManager.default.isExecutableFile(atPath: discoverer) else {
            throw Failure(description: "gst-discoverer-1.0 is not installed (make test installs it)")
        }
        let (status, said) = try ExternalTool.run(discoverer, [path], keeping: .output, seconds: 60)
        let text = String(decoding: said, as: UTF8.self)
        // "Duration: 0:00:04.000000000"
        guard status == 0, let line = text.split(separator: "\n").first(where: { $0.contains("Duration: ") }),
              let value = line.split(separator: " ").last else {
            throw Failure(description: "gst-discoverer-1.0 gave no duration for \(path): \(text.suffix(300))")
        }
        let parts = value.split(separator: ":").compactMap { Double($0) }
        guard parts.count == 3 else { throw Failure(description: "unreadable duration \(value)") }
        return parts[0] * 3600 + parts[1] * 60 + parts[2]
    }
}
