import ArgumentParser
import MediaMux
import MediaMuxBase

/// Options every command that downloads shares.
struct DownloadFlags: ParsableArguments {
    @Option(name: .customLong("cache-dir"), help: "The download cache (default: \(cacheDefaultHelp)).")
    var cacheDirectory: String?

    @Flag(name: .customLong("no-cache"), help: "Download straight to the destination, without the cache.")
    var noCache = false

    @Option(help: "The SHA-256 the download must have (hex).")
    var sha256: String?

    @Option(name: .customLong("max-size"), help: "Refuse downloads larger than this many MiB.")
    var maximumMiB: Int64 = 2048

    @Option(help: "Retries after transient failures (connection errors, 5xx, 408, 429, cut transfers).")
    var retries: Int = 4

    func validate() throws {
        if let sha256, sha256.count != 64 || !sha256.allSatisfy(\.isHexDigit) {
            throw ValidationError("--sha256 takes 64 hexadecimal digits")
        }
        if maximumMiB <= 0 || maximumMiB > 1 << 30 { throw ValidationError("--max-size must be between 1 and 1073741824 (MiB)") }
        if retries < 0 || retries > 100 { throw ValidationError("--retries must be between 0 and 100") }
    }

    var options: DownloadOptions {
        DownloadOptions(
            cacheDirectory: muxctlCacheDirectory(cacheDirectory), useCache: !noCache, expectedSHA256: sha256, maximumBytes: maximumMiB << 20,
            maximumAttempts: retries + 1)
    }
}

extension MuxCtl {
    struct Download: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Download an audio file (http or https), resuming and caching.",
            discussion: "Without -o the file stays in the download cache and its path is printed.")

        @Argument(help: "The URL.") var url: String
        @Option(name: .shortAndLong, help: "Where to put the file.") var output: String?
        @Flag(name: [.customShort("y"), .long], help: "Overwrite the -o file if it exists.") var force = false
        @OptionGroup var download: DownloadFlags
        @OptionGroup var common: CommonOptions

        func validate() throws {
            if download.noCache && output == nil { throw ValidationError("--no-cache needs -o FILE") }
        }

        func run() async throws {
            let engine = common.engine
            let bar = ProgressBar.forStandardError(enabled: !common.quiet && !common.json)
            let options = download.options
            let result = try await runReportingErrors { [url, output, force] in
                let report: @Sendable (DownloadProgress) -> Void = { bar?.show($0) }
                if let output {
                    return try await engine.download(url, to: output, overwrite: force, options: options, progress: report)
                }
                return try await engine.download(url, options: options, progress: report)
            }
            bar?.clear()
            if !common.quiet { result.warnings.forEach { writeToStandardError("warning: \($0)\n") } }
            if common.json {
                printJSON(result)
            } else if !common.quiet {
                print(describe(result))
            }
        }
    }
}

func describe(_ result: DownloadResult) -> String {
    let source: String
    switch result.source {
    case .network: source = result.resumedFrom > 0 ? "downloaded, resumed at \(formatBytes(Int(result.resumedFrom)))" : "downloaded"
    case .revalidatedCache: source = "from the cache (unchanged on the server)"
    case .offlineCache: source = "from the cache (server unreachable)"
    }
    var lines = ["\(result.path)", "  \(formatBytes(Int(result.bytes))), \(source) in \(fixedPoint(result.elapsed.seconds, decimals: 2)) s"]
    if result.finalURL != result.url { lines.append("  redirected to \(result.finalURL)") }
    if let sha256 = result.sha256 { lines.append("  sha256 \(sha256)") }
    return lines.joined(separator: "\n")
}

let cacheDefaultHelp = "$MUXCTL_CACHE_DIR, $XDG_CACHE_HOME/muxctl or ~/.cache/muxctl"

/// muxctl's download cache: `--cache-dir`, else `$MUXCTL_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/muxctl`, else `~/.cache/muxctl`. (The library's own
/// default is named after MediaMux; the tool keeps its own folder.)
func muxctlCacheDirectory(_ flag: String?) -> String {
    if let flag, !flag.isEmpty { return flag }
    if let override = environmentValue("MUXCTL_CACHE_DIR") { return override }
    if let xdg = environmentValue("XDG_CACHE_HOME") { return xdg + "/muxctl" }
    return (environmentValue("HOME") ?? ".") + "/.cache/muxctl"
}
