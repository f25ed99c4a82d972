import ArgumentParser
import MediaMux

extension MuxCtl {
    struct Probe: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show what MediaMux sees in a media file.")

        @Argument(help: "The media file.") var file: String
        @OptionGroup var common: CommonOptions

        func run() async throws {
            let engine = common.engine
            let info = try await runReportingErrors { try await engine.probe(file) }
            if common.json {
                printJSON(ProbeSummary(info))
            } else if !common.quiet {
                print(describe(info))
            }
        }
    }
}

func describe(_ info: MediaInfo) -> String {
    var lines = ["\(info.path): \(info.formatDescription) (\(info.format))" + (info.containerDuration.map { ", \($0.secondsText()) s" } ?? "")]
    for stream in info.streams {
        let codec = stream.unreadableCodec ?? (stream.codec + (stream.codecTag.map { " (\($0))" } ?? ""))
        var parts = ["#\(stream.index) \(stream.kind.rawValue) \(codec)" + (stream.profile.map { " \($0)" } ?? "")]
        if let width = stream.width, let height = stream.height {
            var size = "\(width)x\(height)"
            if stream.rotation != 0 || !stream.pixelAspect.isSquare, let shown = stream.displaySize {
                size += ", shown \(shown)" + (stream.rotation != 0 ? " (rotated \(stream.rotation)° clockwise)" : "")
            }
            parts.append(size)
        }
        if let rate = stream.frameRate { parts.append("\(fixedPoint(rate, decimals: rate.rounded() == rate ? 0 : 3)) fps") }
        if let rate = stream.sampleRate { parts.append("\(rate) Hz") }
        if let channels = stream.channels { parts.append("\(channels) ch") }
        if let start = stream.start, let end = stream.end {
            parts.append("\(start.secondsText())-\(end.secondsText()) s")
        }
        if let priming = stream.priming { parts.append("priming \(priming)") }
        if let count = stream.packetCount { parts.append("\(count) packets") }
        if let missing = stream.missingSamples { parts.append("cut short: \(missing) more declared but missing") }
        if let damage = stream.damagedFragment { parts.append("\(damage): the file is read up to it") }
        if stream.isAttachedPicture { parts.append("cover art") }
        lines.append("  " + parts.joined(separator: ", "))
    }
    return lines.joined(separator: "\n")
}
