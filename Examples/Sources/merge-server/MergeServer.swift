import Hummingbird
#if canImport(Glibc)
import Glibc
#endif
import MediaMux

/// `GET /merge?video=PATH&audio=PATH` answers with the merge of two files as
/// fragmented MP4, made as the client reads it. The paths are relative to
/// the media folder (`--media`, by default the working directory), and may
/// not leave it.
/// Everything that can be known before the first byte (a missing file, a
/// file that is not media, a codec MP4 cannot hold) is an error status with
/// MediaMux's one-line message; what is found later ends the body early.
@main
struct MergeServer {
    static func main() async throws {
        var arguments = ArraySlice(CommandLine.arguments.dropFirst())
        var folder = "."
        var port = 8080
        while let argument = arguments.popFirst() {
            switch argument {
            case "--media": folder = arguments.popFirst() ?? ""
            case "--port": port = arguments.popFirst().flatMap(Int.init) ?? -1
            default: port = -1
            }
        }
        guard !folder.isEmpty, (0...65535).contains(port) else {
            print("usage: merge-server [--media DIR] [--port N]")
            exit(2)
        }
        let media = folder
        // docs:begin serving
        let engine = MuxEngine()
        let router = Router()
        router.get("merge") { request, context -> Response in
            guard let video = request.uri.queryParameters.get("video"), let audio = request.uri.queryParameters.get("audio"),
                  let videoPath = file(video, in: media), let audioPath = file(audio, in: media)
            else {
                return message(.badRequest, "give video and audio, each the path of a file within the media folder")
            }
            let job = MergeJob(video: videoPath, audio: audioPath, output: .stream(.body(named: "response")))
            do throws(MediaMuxError) {
                let body = try await engine.logging(to: context.logger).body(for: job)
                return Response(status: .ok, headers: [.contentType: "video/mp4"], body: ResponseBody(asyncSequence: body))
            } catch {
                // Typed: the error is a MediaMuxError, whose kind says whose fault it is.
                switch error.kind {
                case .input, .option: return message(.unprocessableContent, error.description)
                case .cancelled: return message(.serviceUnavailable, error.description)
                case .output, .network, .ffmpeg, .unexpected: return message(.internalServerError, error.description)
                }
            }
        }
        // docs:end serving
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
        try await app.runService()
    }

    /// A relative path within the media folder; nil for one that leads out of it.
    static func file(_ path: String, in folder: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard !path.isEmpty, !path.hasPrefix("/"), !parts.contains("..") else { return nil }
        return folder + "/" + path
    }

    static func message(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(status: status, headers: [.contentType: "text/plain; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: text + "\n")))
    }
}
