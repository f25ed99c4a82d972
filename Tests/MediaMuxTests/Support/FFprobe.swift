import Foundation

/// The ffprobe CLI (`make test` installs it), for what FFmpeg's demuxer
/// reads of a file, outside the code under test.
enum FFprobe {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static var executable: String? {
        ["/usr/bin/ffprobe", "/usr/local/bin/ffprobe"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// One line per packet of the first `stream` ("v" or "a") stream: its
    /// times counted from the first packet's, size, whether it is a
    /// keyframe, and the SHA-256 of its bytes. (Durations and the discard
    /// flag are left out: FFmpeg derives them from edit lists, which it
    /// applies in full to a movie's sample tables but not to fragments.)
    static func packetDigest(_ path: String, stream: String) throws -> [String] {
        guard let executable else { throw Failure(description: "ffprobe is not installed (make test installs it)") }
        let arguments = [
            "-v", "error", "-select_streams", "\(stream):0", "-show_data_hash", "sha256",
            "-show_entries", "packet=pts,dts,size,flags,data_hash", "-of", "json", path,
        ]
        let (status, data) = try ExternalTool.run(executable, arguments, keeping: .output, seconds: 60)
        guard status == 0, let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let packets = root["packets"] as? [[String: Any]] else {
            throw Failure(description: "ffprobe read no packets of \(path)")
        }
        var first: (pts: Int64, dts: Int64)?
        return packets.map { packet in
            let pts = (packet["pts"] as? NSNumber)?.int64Value ?? .min
            let dts = (packet["dts"] as? NSNumber)?.int64Value ?? .min
            let origin = first ?? (pts, dts)
            first = origin
            let key = (packet["flags"] as? String)?.hasPrefix("K") == true ? "K" : "_"
            return "\(pts &- origin.pts),\(dts &- origin.dts),\(packet["size"] ?? ""),\(key),\(packet["data_hash"] ?? "")"
        }
    }

    /// Where ffprobe says the first `stream` ("v" or "a") stream starts
    /// and how long it lasts, in seconds: its demuxer's reading of the edit
    /// list (only its start, in fragments) and the samples' durations.
    static func streamTimes(_ path: String, stream: String) throws -> (start: Double, duration: Double) {
        guard let executable else { throw Failure(description: "ffprobe is not installed (make test installs it)") }
        let arguments = ["-v", "error", "-select_streams", "\(stream):0", "-show_entries", "stream=start_time,duration", "-of", "json", path]
        let (status, data) = try ExternalTool.run(executable, arguments, keeping: .output, seconds: 60)
        guard status == 0, let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let streams = root["streams"] as? [[String: Any]], let first = streams.first,
              let start = (first["start_time"] as? String).flatMap(Double.init), let duration = (first["duration"] as? String).flatMap(Double.init)
        else {
            throw Failure(description: "ffprobe gave no start and duration of \(path)'s \(stream) stream")
        }
        return (start, duration)
    }
}
