import MediaMuxBase
import MediaMuxContainers
internal import CFFmpeg

/// Fragmented MP4 written in one pass to a sink, never sought back to: an
/// initialisation segment (ftyp, and a moov with mvex and no samples), then
/// a moof/mdat pair per fragment, each fragment going out as FFmpeg's muxer
/// completes it. A fragment starts at every video keyframe, and after
/// `longest` at the latest; the muxer holds one fragment at a time.
///
/// The muxer writes its moov with the first fragment (`delay_moov`), so
/// that sample entries it completes from the first packets (VP9's vpcC, an
/// H.264 avcC from a stream without one) are whole. Everything is held back
/// until that moov is complete, and goes out with the plan's edit lists,
/// durations (mvhd, tkhd, mehd), sample entries and metadata, as the file
/// layout's moov gets them.
///
/// With `timesInSamples` (the fragmented layout itself, not the fragments a
/// movie is made from), a video's samples also say where it ends, for the
/// players that read only the start of an edit list in fragments (FFmpeg's
/// mov demuxer, and Chromium from disk through it): they take a track's
/// length from its samples' durations. Those durations then add up to the
/// time the track is presented: the frame on screen at the end lasts only
/// until it, a frame shown after the end (kept because a frame before it
/// refers to it) takes one tick, and the last sample lasts until the end
/// (a held last frame included). The decode times after a shortened frame
/// move earlier by what it loses; the presentation times stay. A video's
/// composition offsets stay positive, with the start edit for its reorder
/// delay: FFmpeg (5.1 and 7.1 alike) shows every frame of a fragmented
/// track with negative offsets later by the largest of them, out of step
/// with its sound. Audio needs nothing: its last packet is cut to the end.
final class FragmentedWriter: MovieWriter {
    private let plan: MergePlan
    private let longest: MediaTime
    private let sink: any ByteSink
    /// The file the sink writes, for an output with a path; nil for a stream.
    private let temporary: TemporaryOutput?
    /// Bytes of free space after the moov (a `free` box; none under 8): room
    /// for a movie's moov, made from the fragments where they lie (`FragmentsToMovieWriter`).
    private let roomAfterMovieHeader: Int
    let muxer: MuxerHandle
    private var stream: UnsafeMutablePointer<AVIOContext>?
    /// The muxer's bytes until the initialisation segment is rewritten; nil after.
    private var held: [UInt8]? = []
    /// What the moov must say, once the first packets are known.
    private var rewrite: MovieRewrite?
    /// Why the sink took no more (its error, which FFmpeg's return code cannot carry).
    private var failure: (any Error)?
    private var bytesWritten = 0
    let warnings: [String] = []
    private let timesInSamples: Bool
    /// By output stream, from its first packet: how a video's sample durations are fitted to its end.
    private var videoEnds: [Int: VideoEnd] = [:]

    /// Bytes FFmpeg gathers before handing them to the sink.
    private static let bufferSize: Int32 = 256 << 10

    init(
        plan: MergePlan, longest: MediaTime, sink: any ByteSink, temporary: TemporaryOutput?, timesInSamples: Bool, roomAfterMovieHeader: Int = 0
    ) throws {
        self.plan = plan
        self.timesInSamples = timesInSamples
        self.longest = longest
        self.sink = sink
        self.temporary = temporary
        self.roomAfterMovieHeader = roomAfterMovieHeader
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
            "movflags": "frag_keyframe+empty_moov+delay_moov+default_base_moof+skip_trailer",
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
        self.rewrite = rewrite
        try releaseHeldBytes()
    }

    func write(_ packet: UnsafeMutablePointer<AVPacket>, isLast: Bool) throws {
        let index = Int(packet.pointee.stream_index)
        if timesInSamples, plan.tracks[index].role == .video {
            let track = plan.tracks[index]
            let base = muxer.stream(index).pointee.time_base
            var end = videoEnds[index]
                ?? VideoEnd(first: packet.pointee, start: track.sourceStart.ticks(in: base, rounding: .nearest), end: track.end.ticks(in: base, rounding: .nearest))
            end.fit(packet, isLast: isLast)
            videoEnds[index] = end
        }
        try sinkErrors { try muxer.write(packet) }
    }

    /// A video's sample durations fitted to the time it is presented, in
    /// the stream's time base: its packets' presentation times run from
    /// `start` to `end`, and its media (the edit list's start aside) from
    /// the first packet's decode time.
    private struct VideoEnd {
        let end: Int64
        /// Where the last sample's duration reaches: the first decode time and the time presented.
        let lastDecodeEnd: Int64
        /// What the decode times from here on are moved earlier by: the display past the end of the frames written so far.
        var lowering: Int64 = 0
        var lastDTS = Int64.min

        init(first: AVPacket, start: Int64, end: Int64) {
            self.end = end
            lastDecodeEnd = first.dts.saturatingAdding(end.saturatingSubtracting(start))
        }

        mutating func fit(_ packet: UnsafeMutablePointer<AVPacket>, isLast: Bool) {
            let pts = packet.pointee.pts
            let duration = packet.pointee.duration
            packet.pointee.dts = max(packet.pointee.dts.saturatingSubtracting(lowering), lastDTS.saturatingAdding(1))
            lastDTS = packet.pointee.dts
            if pts.saturatingAdding(duration) > end {
                lowering = lowering.saturatingAdding(min(pts.saturatingAdding(duration) - end, duration))
            }
            if isLast {
                let reach = lastDecodeEnd.saturatingSubtracting(packet.pointee.dts)
                packet.pointee.duration = max(reach, 1)
            }
        }
    }

    func finish() throws {
        try sinkErrors { try muxer.finish() }
        guard held == nil else {
            throw movieHeaderDefect(BoxFailure.layoutMismatch("the muxer wrote no whole moov"), output: sink.name)
        }
        try sink.finish()
    }

    func commit() throws -> Int {
        guard let temporary else { return bytesWritten }
        return try temporary.commit(overwrite: plan.overwrite)
    }

    /// FFmpeg's bytes: held back until the moov is complete and rewritten, to the sink after.
    fileprivate func take(_ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard failure == nil else { return FFmpegCode.brokenPipe }
        do {
            if held != nil {
                held! += bytes
                try releaseHeldBytes()
            } else {
                try sink.write(bytes)
                bytesWritten += bytes.count
            }
            return Int32(bytes.count)
        } catch {
            failure = error
            return FFmpegCode.brokenPipe
        }
    }

    /// Once the plan's rewrite is known and the held bytes hold a whole
    /// moov: the bytes with that moov rewritten, to the sink.
    private func releaseHeldBytes() throws {
        guard let rewrite, let bytes = held else { return }
        let rewritten: (header: [UInt8], rest: [UInt8], emptyConfiguration: Int?)?
        do {
            rewritten = try Self.rewritingMovieHeader(in: bytes, as: rewrite)
        } catch {
            throw movieHeaderDefect(error, output: sink.name)
        }
        guard let rewritten else { return }
        let segment = (header: rewritten.header, rest: rewritten.rest)
        let empty = rewritten.emptyConfiguration
        if let empty {
            // The movie layout's muxer keeps no packet of such a stream (see the Remuxer's check).
            let kind = empty == 0 ? "video" : "audio"
            throw MediaMuxError.damaged(
                path: plan.tracks[empty].path,
                detail: "its first \(kind) packet does not hold the codec configuration MP4 needs, and the stream has none of its own")
        }
        held = nil
        try segment.header.withUnsafeBytes { try sink.write($0) }
        try writeRoom()
        try segment.rest.withUnsafeBytes { try sink.write($0) }
        bytesWritten += segment.header.count + segment.rest.count
    }

    /// The room after the moov, as a `free` box of zeros written a block at a time.
    private func writeRoom() throws {
        guard roomAfterMovieHeader >= 8 else { return }
        try BoxNode.freeBoxHeader(size: roomAfterMovieHeader).withUnsafeBytes { try sink.write($0) }
        let zeros = [UInt8](repeating: 0, count: min(roomAfterMovieHeader - 8, 64 << 10))
        var left = roomAfterMovieHeader - 8
        while left > 0 {
            try zeros.withUnsafeBytes { try sink.write(UnsafeRawBufferPointer(rebasing: $0[0..<min(left, zeros.count)])) }
            left -= min(left, zeros.count)
        }
        bytesWritten += roomAfterMovieHeader
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

    /// The muxer's first bytes (ftyp, moov, then the start of the first
    /// fragment) with the moov rewritten as planned, cut after the moov;
    /// nil while the moov is not all there yet; and the first track whose
    /// codec configuration the muxer left empty, if any.
    static func rewritingMovieHeader(
        in bytes: [UInt8], as rewrite: MovieRewrite
    ) throws -> (header: [UInt8], rest: [UInt8], emptyConfiguration: Int?)? {
        var offset = 0
        while offset + 8 <= bytes.count {
            // The muxer's stream has no end yet: a size of 0 stays 0, too small.
            guard let box = BoxHeader(bytes, at: offset, extent: nil) else { return nil }
            let size = Int(box.size)
            guard size >= 8 else { throw BoxFailure.malformed("a box of \(size) bytes at \(offset)") }
            guard box.type == "moov" else {
                offset += size
                continue
            }
            guard offset + size <= bytes.count else { return nil }
            var tree = try MovieTree(moovBytes: Array(bytes[offset..<offset + size]))
            try MovieRewriter.apply(rewrite, to: &tree)
            try tree.root.declareFragmentedDuration(rewrite.movieEnd)
            return (Array(bytes[..<offset]) + tree.bytes, Array(bytes[(offset + size)...]), tree.trackWithEmptyConfiguration)
        }
        return nil
    }
}

/// FFmpeg's write callback: the writer's `take`.
private let fragmentedWrite: CFFmpeg_write_callback = { opaque, bytes, count in
    guard let opaque, let bytes, count >= 0 else { return count < 0 ? FFmpegCode.invalidArgument : 0 }
    let writer = Unmanaged<FragmentedWriter>.fromOpaque(opaque).takeUnretainedValue()
    return writer.take(UnsafeRawBufferPointer(start: bytes, count: Int(count)))
}
