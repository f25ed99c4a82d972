// Top-level code that reads every property of a MediaMuxError, built in
// release by CI (.ci/examples.sh, `make examples-release`): Swift 6.3.1's
// optimizer was reported to crash ("Found outside of lifetime use?!")
// compiling `error.ffmpegCode.map(String.init)` at top level. Both ways of
// catching are here: a typed `do` and a cast. Run with a file to probe:
// `error-properties FILE`; it prints what the error says (exit 1), or the
// file's duration.
import Foundation
import MediaMux

func describe(_ error: MediaMuxError) {
    print("description: \(error.description)")
    print("localizedDescription: \(error.localizedDescription)")
    print("errorDescription: \(error.errorDescription ?? "-")")
    print("code: \(error.code), kind: \(error.kind)")
    print("subject: \(error.subject ?? "-")")
    print("option: \(error.option ?? "-")")
    print("streamKind: \(error.streamKind.map { $0.rawValue } ?? "-")")
    print("httpStatus: \(error.httpStatus.map(String.init) ?? "-")")
    print("ffmpegCode: \(error.ffmpegCode.map(String.init) ?? "-")")
    print("clip: \(error.context.clip.map { "\($0.index) \($0.file)" } ?? "-")")
    print("time: \(error.context.time.map { $0.secondsText() } ?? "-")")
}

let path = CommandLine.arguments.dropFirst().first ?? "missing.mp4"
var failed = false
do throws(MediaMuxError) {
    let info = try await MuxEngine().probe(path)
    print("\(path): \(info.duration?.seconds ?? 0) s")
} catch {
    // The same reads written inline at top level, where the crash was reported.
    print("ffmpegCode inline: \(error.ffmpegCode.map(String.init) ?? "-")")
    print("httpStatus inline: \(error.httpStatus.map(String.init) ?? "-")")
    describe(error)
    failed = true
}
// In a closure Swift gives `catch` an `any Error`: the cast.
let viaCast = await Task { () async -> String in
    do {
        _ = try await MuxEngine().probe(path)
        return "no error"
    } catch let error as MediaMuxError {
        return "cast: \(error.code) \(error.ffmpegCode.map(String.init) ?? "-")"
    } catch {
        return "not a MediaMuxError: \(error)"
    }
}.value
print(viaCast)
exit(failed ? 1 : 0)
