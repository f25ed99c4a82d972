import MediaMuxBase
internal import CFFmpeg

/// Fragmented MP4 written in one pass to a sink, never sought back to: an
/// initialisation segment (ftyp, and a moov with mvex and no samples), then
/// a moof/mdat pair per fragment, each fragment going out as FFmpeg's muxer
/// completes it. A fragment starts at every video keyframe, and after
/// `longest` at the latest; the muxer holds one fragment at a time.
///
/// The initialisation segment is held back until the first packets are
/// known, and goes out with the plan's edit lists, durations (mvhd, tkhd,
/// mehd), sample entries and metadata, as the file layout's moov gets them.
final class FragmentedWriter: MovieWriter {
    private let plan: MergePlan
    private let longest: MediaTime
    private let sink: any ByteSink
    /// The file the sink writes, for an output with a path; nil for a stream.
    private let temporary: TemporaryOutput?
    let muxer: MuxerHandle
    private var stream: UnsafeMutablePointer<AVIOContext>?
    /// The muxer's bytes until the initialisation segment is rewritten; nil after.
    private var held: [UInt8]? = []
    /// Why the sink took no more (its error, which FFmpeg's return code cannot carry).
    private var failure: (any Error)?
    private var bytesWritten = 0
    let warnings: [String] = []

    /// Bytes FFmpeg gathers before handing them to the sink.
    private static let bufferSize: Int32 = 256 << 10

    init(plan: MergePlan, longest: MediaTime, sink: any ByteSink, temporary: TemporaryOutput?) throws {
        self.plan = plan
        self.longest = longest
        self.sink = sink
        self.temporary = temporary
        muxer = try MuxerHandle(path: nil, reportedPath: sink.name, muxer: plan.container.muxer)
    }

    deinit {
        CFFmpeg_avio_writer_free(&stream)
        temporary?.discard()
    }

    func open() throws {
        stream = CFFmpeg_avio_writer(Unmanaged.passUnretained(self).toOpaque(), fragmentedWrite, Self.bufferSize)
        guard let stream else { throw MediaMuxError.outOfMemory("making the output stream", path: sink.name) }
        let options = [
            "movie_timescale": String(plan.movieTimescale),
            // The layout CMAF and DASH use: the initialisation segment
            // first, then moof/mdat pairs whose data offsets count from
            // their own moof. Not FFmpeg's `cmaf` flag: in FFmpeg 7.1 it
            // shifts decode times to the first presentation time (negative
            // composition offsets), which 5.1 does not; one layout on every
            // release keeps the edit lists below exact. (Nor the `cmfc`
            // brand, which a file of two tracks cannot carry.)
            "movflags": "frag_keyframe+empty_moov+default_base_moof+skip_trailer",
            "frag_duration": String(longest.converted(to: 1_000_000, rounding: .down).value),
            // The fragments' media timelines start at each track's first
            // packet, as a movie's do: the plan's edit lists place them.
            "use_editlist": "1",
        ]
        try sinkErrors { try muxer.open(options: options, stream: stream) }
        avio_flush(stream)
        try throwFailure()
    }

    func begin(_ rewrite: MovieRewrite) throws {
        guard let header = held else { return }
        held = nil
        var segment: [UInt8]
        do {
            segment = try Self.initializationSegment(header, rewrite: rewrite)
        } catch {
            throw movieHeaderDefect(error, output: sink.name)
        }
        try segment.withUnsafeBytes { try sink.write($0) }
        bytesWritten += segment.count
        segment = []
    }

    func write(_ packet: UnsafeMutablePointer<AVPacket>) throws {
        try sinkErrors { try muxer.write(packet) }
    }

    func finish() throws {
        try sinkErrors { try muxer.finish() }
        try sink.finish()
    }

    func commit() throws -> Int {
        guard let temporary else { return bytesWritten }
        return try temporary.commit(overwrite: plan.overwrite)
    }

    /// FFmpeg's bytes: held back before `begin`, to the sink after.
    fileprivate func take(_ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard failure == nil else { return FFmpegCode.brokenPipe }
        if held != nil {
            held! += bytes
            return Int32(bytes.count)
        }
        do {
            try sink.write(bytes)
            bytesWritten += bytes.count
            return Int32(bytes.count)
        } catch {
            failure = error
            return FFmpegCode.brokenPipe
        }
    }

    /// The sink's own error in place of the code FFmpeg returned for it.
    private func sinkErrors(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch {
            try throwFailure()
            throw error
        }
    }

    private func throwFailure() throws {
        if let failure { throw failure }
    }

    /// The header FFmpeg's muxer wrote (ftyp, moov) with its moov rewritten as planned.
    static func initializationSegment(_ header: [UInt8], rewrite: MovieRewrite) throws -> [UInt8] {
        var result: [UInt8] = []
        var offset = 0
        var rewritten = false
        while offset + 8 <= header.count {
            let size = Int(BoxBuffer.be32(header, offset))
            guard size >= 8, offset + size <= header.count else { throw BoxFailure.malformed("a box at \(offset) overruns the header") }
            let box = Array(header[offset..<offset + size])
            if String(decoding: header[offset + 4..<offset + 8], as: UTF8.self) == "moov" {
                var tree = try MovieTree(moovBytes: box)
                try MovieRewriter.apply(rewrite, to: &tree)
                try MovieRewriter.declareFragmentedDuration(rewrite.movieEnd, in: &tree.root)
                result += tree.bytes
                rewritten = true
            } else {
                result += box
            }
            offset += size
        }
        guard rewritten, offset == header.count else { throw BoxFailure.layoutMismatch("no whole moov in the initialisation segment") }
        return result
    }
}

/// FFmpeg's write callback: the writer's `take`.
private let fragmentedWrite: CFFmpeg_write_callback = { opaque, bytes, count in
    guard let opaque, let bytes, count >= 0 else { return count < 0 ? FFmpegCode.invalidArgument : 0 }
    let writer = Unmanaged<FragmentedWriter>.fromOpaque(opaque).takeUnretainedValue()
    return writer.take(UnsafeRawBufferPointer(start: bytes, count: Int(count)))
}
