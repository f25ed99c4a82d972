import ArgumentParser
import MediaMux

extension MuxCtl {
    struct Cache: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show or empty the download cache.",
            subcommands: [List.self, Clear.self])

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List cached downloads, most recently used first.")
            @Option(name: .customLong("cache-dir"), help: "The download cache.") var cacheDirectory: String?
            @OptionGroup var common: CommonOptions

            func run() async throws {
                let entries = try await runReportingErrors { [cacheDirectory] in try DownloadEngine().cachedDownloads(in: muxctlCacheDirectory(cacheDirectory)) }
                if common.json {
                    printJSON(entries)
                    return
                }
                guard !common.quiet else { return }
                if entries.isEmpty { print("the download cache is empty") }
                for entry in entries {
                    print("\(entry.url)\n  \(entry.path), \(formatBytes(Int(entry.bytes)))")
                }
            }
        }

        struct Clear: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Remove every cached download.")
            @Option(name: .customLong("cache-dir"), help: "The download cache.") var cacheDirectory: String?
            @OptionGroup var common: CommonOptions

            func run() async throws {
                let removed = try await runReportingErrors { [cacheDirectory] in try DownloadEngine().clearDownloadCache(in: muxctlCacheDirectory(cacheDirectory)) }
                if common.json {
                    printJSON(["removedFiles": removed])
                } else if !common.quiet {
                    print("removed \(removed) files")
                }
            }
        }
    }
}
