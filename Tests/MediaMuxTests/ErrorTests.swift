import MediaMuxBase
import Testing

/// MediaMuxError's one line and its context, with no FFmpeg.
struct ErrorTests {
    /// The line each code printed before the errors were spelled in one
    /// table (muxctl prints it after "error: "; scripts match on it).
    @Test(arguments: [
        (MediaMuxError.fileNotFound(path: "a.mp4"), "a.mp4: no such file", MediaMuxError.Kind.input),
        (.damaged(path: "a.mp4", detail: "cut short"), "a.mp4: damaged or truncated media (cut short)", .input),
        (.streamIndexOutOfRange(kind: .audio, index: 3, available: 1, path: "b.m4a"), "b.m4a: there is no audio stream 3; the file has 1", .option),
        (.unsupportedOutputExtension(path: "out", extension: "", accepted: ["mp4", "mov"]), "out: unsupported output type (no extension); use .mp4 or .mov", .output),
        (.invalidOption(option: "volume", message: "--volume must be finite"), "--volume must be finite", .option),
        (.http(status: 404, url: "http://h/a"), "http://h/a: the server answered 404 Not Found", .network),
        (.notAudio(url: "http://h/a", contentType: nil, detail: "HTML"), "http://h/a: not an audio file (Content-Type not given; HTML)", .input),
        (.runtimeStopped, "MediaMux's thread pool has been shut down", .option),
        (.cancelled(path: "o.mp4"), "o.mp4: interrupted", .cancelled),
    ])
    func oneLinePerCode(error: MediaMuxError, line: String, kind: MediaMuxError.Kind) {
        #expect(error.description == line)
        #expect(error.kind == kind)
        #expect(error.context == MediaMuxError.Context())
    }

    @Test func theSubjectIsTheFileOrURL() {
        #expect(MediaMuxError.damaged(path: "a.mp4", detail: "x").subject == "a.mp4")
        #expect(MediaMuxError.network(url: "http://h/", reason: "refused").subject == "http://h/")
        #expect(MediaMuxError.invalidOption(option: "shard", message: "bad").subject == nil)
    }

    @Test func aClipAndATimeComeFirst() {
        let error = MediaMuxError.damaged(path: "b.mp4", detail: "a packet overruns the file")
        let inClip = error.inClip(2, file: "b.mp4").at(MediaTime(value: 3200, timescale: 1000))
        #expect(inClip.description == "clips[2], 3.200 s: b.mp4: damaged or truncated media (a packet overruns the file)")
        #expect(inClip.context.clip == MediaMuxError.Context.Clip(index: 2, file: "b.mp4"))
        #expect(inClip.context.time == MediaTime(value: 3200, timescale: 1000))
        // The code, kind and subject are the error's own, whatever the context.
        #expect(inClip.code == .damaged)
        #expect(inClip.subject == "b.mp4")
        #expect(inClip != error)
        // A clip whose file is not the subject (the output, say) is named.
        let output = MediaMuxError.outputNotWritable(path: "out.mp4", reason: "disk full").inClip(0, file: "a.mov")
        #expect(output.description == "clips[0] (a.mov): out.mp4: cannot be written (disk full)")
    }
}
