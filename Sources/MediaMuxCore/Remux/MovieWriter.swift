import MediaMuxBase
import MediaMuxContainers
internal import CFFmpeg

/// Where the output's bytes go, chosen by whoever runs the merge.
package enum MergeDestination {
    /// The plan's output path: written beside it, moved into place when complete.
    case file
    /// Streamed as it is made (fragmented MP4 only): standard output, a caller's writer.
    case stream(any ByteSink)

    var isStream: Bool {
        if case .stream = self { return true }
        return false
    }
}

/// The seam between the packet loop and the output's layout: the Remuxer
/// adds the tracks to `muxer`, opens the writer, hands it the movie
/// header's rewrite once every track's first packet is known and before
/// any is written, writes the packets through it, and finishes it. The
/// writer alone knows the layout (one movie; an initialisation segment and
/// fragments) and where the bytes go (a file moved into place; a sink as
/// they are made). A writer dropped unfinished leaves nothing behind.
protocol MovieWriter: AnyObject {
    var muxer: MuxerHandle { get }
    /// Writes the file header (with the muxer options the layout needs).
    func open() throws
    /// What the movie header must say beyond what FFmpeg's muxer writes.
    func begin(_ rewrite: MovieRewrite) throws
    /// Writes one packet; `isLast` says it is its track's last.
    func write(_ packet: UnsafeMutablePointer<AVPacket>, isLast: Bool) throws
    /// Writes the trailer: every packet is out of the muxer.
    func finish() throws
    /// Completes the output (the movie header rewritten, the file moved
    /// into place) and returns its size in bytes.
    func commit() throws -> Int
    /// What the reader of the report should know about how it was written.
    var warnings: [String] { get }
}

extension MergePlan {
    /// The writer this plan's layout needs, writing to `destination`.
    func writer(to destination: MergeDestination) throws -> any MovieWriter {
        switch (movieHeader, destination) {
        case (.fragmented(let longest), .stream(let sink)):
            return try FragmentedWriter(plan: self, longest: longest, sink: sink, temporary: nil, timesInSamples: true)
        case (.fragmented(let longest), .file):
            let temporary = TemporaryOutput(anonymous: outputPath)
            let sink = try temporary.sink()
            return try FragmentedWriter(plan: self, longest: longest, sink: sink, temporary: temporary, timesInSamples: true)
        case (_, .file):
            if case .fromFragments(let longest) = sampleTables { return try FragmentsToMovieWriter(plan: self, longest: longest) }
            return try MovieFileWriter(plan: self)
        case (_, .stream):
            // The planner gives a stream the fragmented layout: a movie's header needs a file to seek in.
            throw MediaMuxError.unexpected(path: outputPath, detail: "internal error: a movie planned for a stream; please report it")
        }
    }
}

/// One movie in a file: sample tables in the moov, which is rewritten in
/// place (or moved to the front) once the muxer has written it, and the
/// file moved into place.
final class MovieFileWriter: MovieWriter {
    private let plan: MergePlan
    private let temporary: TemporaryOutput
    let muxer: MuxerHandle
    private var rewrite: MovieRewrite?
    private(set) var warnings: [String] = []

    init(plan: MergePlan) throws {
        self.plan = plan
        temporary = TemporaryOutput(anonymous: plan.outputPath)
        muxer = try MuxerHandle(path: temporary.path, reportedPath: plan.outputPath, muxer: plan.container.muxer)
    }

    deinit { temporary.discard() }

    func open() throws {
        var options = ["movie_timescale": String(plan.movieTimescale)]
        if case .reservedAtFront(let bytes) = plan.movieHeader { options["moov_size"] = String(bytes) }
        // Moved to the front by the movie header rewrite, which may grow it; or left at the end.
        try muxer.open(options: options)
    }

    func begin(_ rewrite: MovieRewrite) throws {
        self.rewrite = rewrite
    }

    func write(_ packet: UnsafeMutablePointer<AVPacket>, isLast: Bool) throws {
        try muxer.write(packet)
    }

    func finish() throws {
        try muxer.finish()
    }

    func commit() throws -> Int {
        guard let rewrite else {
            throw MediaMuxError.unexpected(path: plan.outputPath, detail: "internal error: a movie finished before it began; please report it")
        }
        do {
            if try MovieRewriter(path: temporary.path).apply(rewrite, moveToFront: plan.movieHeader == .movedToFront),
               plan.movieHeader != .atEnd {
                warnings.append(movieHeaderOutgrewItsRoom)
            }
        } catch BoxFailure.io(let reason) {
            throw MediaMuxError.outputNotWritable(path: plan.outputPath, reason: "its movie header could not be rewritten (\(reason))")
        } catch {
            throw movieHeaderDefect(error, output: plan.outputPath)
        }
        return try temporary.commit(overwrite: plan.overwrite)
    }
}

/// The report's warning when a moov planned for the front ends up last.
let movieHeaderOutgrewItsRoom = "the movie header outgrew its room at the front and was moved to the end: playback starts only once the whole file is there"

/// FFmpeg's muxer wrote the header just before, as the plan said: one that
/// does not parse, or not as planned, is MediaMux's defect, not the output's.
func movieHeaderDefect(_ error: any Error, output: String) -> MediaMuxError {
    .unexpected(path: output, detail: "internal error: the movie header FFmpeg wrote could not be rewritten (\(error)); please report it")
}
