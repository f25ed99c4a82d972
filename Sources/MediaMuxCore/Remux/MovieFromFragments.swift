import MediaMuxBase
import MediaMuxContainers
internal import CFFmpeg

/// One movie in a file, written in memory that does not grow with the
/// input (`MergePlan.SampleTables.fromFragments`). FFmpeg's muxer writes
/// fragments into the temporary file, holding one at a time, with the room
/// the plan reserves for a movie header at the front left after the
/// initialisation segment's moov. At the end the fragments become one
/// movie where they lie: each moof becomes free space, each fragment's run
/// of a track's samples a chunk, and the moov, given the sample tables and
/// rid of its mvex, takes the fragmented one's place and the room after it,
/// or goes last. Nothing is moved unless the plan moves the moov to the front.
final class FragmentsToMovieWriter: MovieWriter {
    private let plan: MergePlan
    private let temporary: TemporaryOutput
    private let fragments: FragmentedWriter
    private var rewrite: MovieRewrite?
    private(set) var warnings: [String] = []

    var muxer: MuxerHandle { fragments.muxer }

    init(plan: MergePlan, longest: MediaTime) throws {
        self.plan = plan
        temporary = TemporaryOutput(anonymous: plan.outputPath)
        let sink = try temporary.sink()
        var room = 0
        if case .reservedAtFront(let bytes) = plan.movieHeader { room = bytes }
        fragments = try FragmentedWriter(plan: plan, longest: longest, sink: sink, temporary: nil, timesInSamples: false, roomAfterMovieHeader: room)
    }

    deinit { temporary.discard() }

    func open() throws {
        try fragments.open()
    }

    func begin(_ rewrite: MovieRewrite) throws {
        self.rewrite = rewrite
        try fragments.begin(rewrite)
    }

    func write(_ packet: UnsafeMutablePointer<AVPacket>, isLast: Bool) throws {
        try fragments.write(packet, isLast: isLast)
    }

    func finish() throws {
        try fragments.finish()
    }

    func commit() throws -> Int {
        guard let rewrite else {
            throw MediaMuxError.unexpected(path: plan.outputPath, detail: "internal error: a movie finished before it began; please report it")
        }
        _ = try fragments.commit()
        let rewriter = MovieRewriter(path: temporary.path)
        do {
            let movedToEnd = try MovieFile(path: temporary.path).replaceMovieHeader { tree, descriptor in
                try MovieTablesFromFragments.convert(&tree, descriptor: descriptor)
            }
            switch plan.movieHeader {
            case .movedToFront:
                // Last now: moved to the front as the muxer's own moov is.
                try rewriter.apply(rewrite, moveToFront: true)
            case .reservedAtFront where movedToEnd:
                warnings.append(movieHeaderOutgrewItsRoom)
            default:
                break
            }
        } catch BoxFailure.io(let reason) {
            throw MediaMuxError.outputNotWritable(path: plan.outputPath, reason: "its movie header could not be written (\(reason))")
        } catch {
            throw movieHeaderDefect(error, output: plan.outputPath)
        }
        return try temporary.commit(overwrite: plan.overwrite)
    }
}
