// `download-only URL OUTPUT`: a download through the MediaMuxDownload product
// alone, which links no FFmpeg, for download.sh to measure its memory
// against muxctl's. Without the cache, as `muxctl download --no-cache`.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MediaMuxDownload

func complain(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    complain("usage: download-only URL OUTPUT")
    exit(2)
}
do {
    let result = try await DownloadEngine().download(arguments[1], to: arguments[2], overwrite: true, options: DownloadOptions(useCache: false))
    print("\(result.bytes) bytes")
} catch {
    complain("error: \(error)")
    exit(1)
}
