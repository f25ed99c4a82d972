import MediaMuxBase
public import NIOCore

/// Where a merge writes: a file, or a stream of fragmented MP4 made as it
/// goes. A file's name converts to it: `let output: MergeOutput = "out.mp4"`.
public enum MergeOutput: Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// A file by its path: .mp4, .m4v or .mov, written to a file with no
    /// name in its folder and named when complete.
    case file(String)
    /// Fragmented MP4, streamed as it is made (see `OutputLayout.fragmented`).
    case stream(MergeStream)

    public init(stringLiteral path: String) {
        self = .file(path)
    }

    /// The output as errors and the report name it: the file's path, or the stream's name.
    public var name: String {
        switch self {
        case .file(let path): return path
        case .stream(let stream): return stream.name
        }
    }

    public var description: String { name }
}

/// Where a merge streamed as it is made goes: fragmented MP4, in pieces,
/// in order, never sought back to (see `OutputLayout.fragmented`).
public struct MergeStream: Sendable {
    /// The output as errors and the report name it.
    public var name: String
    let target: Target

    enum Target: Sendable {
        case standardOutput
        case writer(@Sendable (ByteBuffer) async throws -> Void)
        /// Pulled by the caller, through `MuxEngine.body(for:progress:)`.
        case pulled
    }

    /// A job's output as a body its caller pulls, through
    /// `MuxEngine.body(for:progress:)` (a server's response body). Another
    /// call refuses it with `.invalidOption`, as it has nowhere to write.
    ///
    /// - Parameter name: The output as errors and the report name it ("response").
    public static func body(named name: String) -> MergeStream {
        MergeStream(name: name, target: .pulled)
    }

    /// The process's standard output, written directly. A reader that stops
    /// reading fails the merge with `.outputNotWritable` ("broken pipe"),
    /// and the process should ignore SIGPIPE, as muxctl does.
    public static let standardOutput = MergeStream(name: "standard output", target: .standardOutput)

    /// A writer of your own, called with each chunk of the output in
    /// order, one call at a time: the merge's `MergeBody`, pulled for you.
    /// The merge advances as the writer returns, and holds no thread while
    /// it waits. A writer that throws stops the merge, which then throws
    /// `.outputNotWritable` naming `name`.
    ///
    /// - Parameters:
    ///   - name: The output as errors and the report name it ("response").
    ///   - write: Takes each chunk (at most 256 KiB).
    public init(name: String, write: @escaping @Sendable (ByteBuffer) async throws -> Void) {
        self.init(name: name, target: .writer(write))
    }

    private init(name: String, target: Target) {
        self.name = name
        self.target = target
    }

    /// Hands each chunk of `body` to `write`, in order; the merge's report at the end.
    static func drain(
        _ body: MergeBody, name: String, into write: @Sendable (ByteBuffer) async throws -> Void
    ) async throws(MediaMuxError) -> MergeReport {
        for try await chunk in body {
            do {
                try await write(chunk)
            } catch {
                throw MediaMuxError.outputNotWritable(path: name, reason: writerFailure(error))
            }
        }
        guard let report = body.report else {
            throw MediaMuxError.unexpected(path: name, detail: "internal error: a merge's body ended without its report; please report it")
        }
        return report
    }

    /// Why the writer stopped, in a reader's words: a cancelled write is
    /// most often a client that went away.
    static func writerFailure(_ error: any Error) -> String {
        if error is CancellationError { return "its writer was cancelled (did the client go away?)" }
        return "its writer failed: \((error as? MediaMuxError)?.description ?? "\(error)")"
    }
}
