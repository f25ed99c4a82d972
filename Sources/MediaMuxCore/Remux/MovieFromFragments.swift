import MediaMuxBase
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
        temporary = TemporaryOutput(finalPath: plan.outputPath)
        let sink = try DescriptorSink(creating: temporary.path, name: plan.outputPath)
        var room = 0
        if case .reservedAtFront(let bytes) = plan.movieHeader { room = bytes }
        fragments = try FragmentedWriter(plan: plan, longest: longest, sink: sink, temporary: nil, roomAfterMovieHeader: room)
    }

    deinit { temporary.discard() }

    func open() throws {
        try fragments.open()
    }

    func begin(_ rewrite: MovieRewrite) throws {
        self.rewrite = rewrite
        try fragments.begin(rewrite)
    }

    func write(_ packet: UnsafeMutablePointer<AVPacket>) throws {
        try fragments.write(packet)
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
            let movedToEnd = try rewriter.replaceMovieHeader { tree, descriptor in
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

/// A fragmented movie's samples made one movie's sample tables (ISO/IEC
/// 14496-12, 8.6 and 8.7), in the file that holds them.
enum MovieTablesFromFragments {
    /// Walks the fragments of the file `descriptor` (whose moov is `tree`),
    /// turns each moof into a `free` box, and gives `tree` the tables of the
    /// samples the fragments declare, in place of its mvex and empty tables.
    /// Only one fragment's sample list is held at a time, and 4 to 12 bytes
    /// a sample for the tables.
    static func convert(_ tree: inout MovieTree, descriptor: Int32) throws {
        var walker = try MovieFragments.Walker(descriptor: descriptor, moov: tree, decodeStarts: [:])
        var tables: [Int: TrackTables] = [:]
        while let fragment = try walker.next() {
            for sample in fragment.samples {
                try tables[sample.trackID, default: TrackTables()].add(sample, fragment: fragment.offset)
            }
            guard writeFully(descriptor, Array("free".utf8), at: fragment.offset + 4) else {
                throw BoxFailure.io("turning a fragment header into free space failed: \(systemErrorText())")
            }
        }
        if let damage = walker.damage { throw BoxFailure.layoutMismatch("the fragments written do not read back: \(damage)") }
        if walker.isCut { throw BoxFailure.layoutMismatch("the fragments written end short of their samples") }
        guard var children = tree.root.children else { throw BoxFailure.malformed("empty moov") }
        children.removeAll { $0.type == "mvex" }
        for index in children.indices where children[index].type == "trak" {
            guard let tkhd = children[index].first("tkhd") else { throw BoxFailure.malformed("a trak without tkhd") }
            let trackID = try tkhd.trackID()
            guard var track = tables.removeValue(forKey: trackID), track.sampleCount > 0 else {
                throw BoxFailure.layoutMismatch("track \(trackID) has no samples in the fragments written")
            }
            try track.install(in: &children[index])
        }
        tree.root.children = children
    }
}

/// One track's sample tables, built a sample at a time: run-length where
/// the format allows (times, offsets, samples per chunk), a size for every
/// sample, a number for every sync sample, an offset for every chunk.
struct TrackTables {
    private var sizes: [UInt32] = []
    /// stts: runs of equal decode durations.
    private var durations: [(count: UInt32, delta: UInt32)] = []
    /// ctts: runs of equal composition offsets.
    private var offsets: [(count: UInt32, offset: Int32)] = []
    /// stss: the 1-based numbers of the sync samples, once one is not (none are kept while all are).
    private var syncSamples: [UInt32] = []
    private var allSync = true
    private var chunkOffsets: [Int64] = []
    /// stsc: from which chunk (1-based) on, how many samples a chunk holds.
    private var chunkRuns: [(firstChunk: UInt32, samples: UInt32)] = []
    private var chunkSamples: UInt32 = 0
    private var chunkEnd: Int64 = -1
    private var chunkFragment: Int64 = -1
    /// The latest sample's decode time and duration: its stts delta is the
    /// next one's decode time less its own, as a movie muxer makes it.
    private var last: (decode: Int64, duration: Int64)?

    var sampleCount: Int { sizes.count }

    /// Adds the next sample in decode order, from the fragment whose moof is at `fragment`.
    mutating func add(_ sample: MovieFragments.Sample, fragment: Int64) throws {
        guard let size = UInt32(exactly: sample.size), let offset = Int32(exactly: sample.compositionOffset), sample.duration >= 0 else {
            throw BoxFailure.layoutMismatch("a sample of \(sample.size) bytes, offset \(sample.compositionOffset), lasting \(sample.duration)")
        }
        if let last {
            try appendDuration(sample.decodeTime - last.decode)
        } else if sample.decodeTime != 0 {
            throw BoxFailure.layoutMismatch("track \(sample.trackID) is first decoded at \(sample.decodeTime), not 0")
        }
        last = (sample.decodeTime, sample.duration)
        sizes.append(size)
        if let run = offsets.last, run.offset == offset {
            offsets[offsets.count - 1].count += 1
        } else {
            offsets.append((1, offset))
        }
        if !sample.isSync, allSync {
            allSync = false
            syncSamples = Array(1..<UInt32(sizes.count))
        } else if sample.isSync, !allSync {
            syncSamples.append(UInt32(sizes.count))
        }
        if sample.dataOffset != chunkEnd || fragment != chunkFragment {
            closeChunk()
            chunkOffsets.append(sample.dataOffset)
            chunkFragment = fragment
        }
        chunkSamples += 1
        chunkEnd = sample.dataOffset + sample.size
    }

    private mutating func appendDuration(_ duration: Int64) throws {
        guard let delta = UInt32(exactly: duration) else {
            throw BoxFailure.layoutMismatch("decode times that step by \(duration)")
        }
        if let run = durations.last, run.delta == delta {
            durations[durations.count - 1].count += 1
        } else {
            durations.append((1, delta))
        }
    }

    private mutating func closeChunk() {
        guard chunkSamples > 0 else { return }
        if chunkRuns.last?.samples != chunkSamples { chunkRuns.append((UInt32(chunkOffsets.count), chunkSamples)) }
        chunkSamples = 0
    }

    /// Puts the tables in `trak`'s stbl, in place of any there, and the
    /// media's length in its mdhd.
    mutating func install(in trak: inout BoxNode) throws {
        guard let last else { return }
        try appendDuration(last.duration)
        closeChunk()
        let mediaEnd = last.decode + last.duration
        try trak.modify("mdia/mdhd") { try Self.setDuration(mediaEnd, of: &$0) }
        let replaced: Set<String> = ["stts", "ctts", "cslg", "stss", "stps", "sdtp", "stsc", "stsz", "stz2", "stco", "co64"]
        var tables: [BoxNode] = [Self.fullBox("stts", entries: durations.count) { head in
            for run in durations { head.append32(run.count); head.append32(run.delta) }
        }]
        if offsets.contains(where: { $0.offset != 0 }) {
            let negative = offsets.contains { $0.offset < 0 }
            tables.append(Self.fullBox("ctts", version: negative ? 1 : 0, entries: offsets.count) { head in
                for run in offsets { head.append32(run.count); head.append32(UInt32(bitPattern: run.offset)) }
            })
        }
        if !allSync {
            tables.append(Self.fullBox("stss", entries: syncSamples.count) { head in syncSamples.forEach { head.append32($0) } })
        }
        tables.append(Self.fullBox("stsc", entries: chunkRuns.count) { head in
            for run in chunkRuns { head.append32(run.firstChunk); head.append32(run.samples); head.append32(1) }
        })
        var sizeTable: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0]
        sizeTable.append32(UInt32(sizes.count))
        sizeTable.reserveCapacity(sizeTable.count + 4 * sizes.count)
        sizes.forEach { sizeTable.append32($0) }
        sizes = []
        tables.append(BoxNode(type: "stsz", head: sizeTable))
        let wide = chunkOffsets.contains { $0 > Int64(UInt32.max) }
        tables.append(Self.fullBox(wide ? "co64" : "stco", entries: chunkOffsets.count) { head in
            for offset in chunkOffsets {
                if wide { head.append32(UInt32(truncatingIfNeeded: offset >> 32)) }
                head.append32(UInt32(truncatingIfNeeded: offset))
            }
        })
        try trak.modify("mdia/minf/stbl") { stbl in
            let kept = (stbl.children ?? []).filter { !replaced.contains($0.type) }
            let descriptions = kept.filter { $0.type == "stsd" }
            guard descriptions.count == 1 else { throw BoxFailure.malformed("\(descriptions.count) stsd boxes") }
            stbl.children = descriptions + tables + kept.filter { $0.type != "stsd" }
        }
    }

    /// A full box of version `version`, flags 0, an entry count and what `entries` appends.
    private static func fullBox(_ type: String, version: UInt8 = 0, entries count: Int, _ entries: (inout [UInt8]) -> Void) -> BoxNode {
        var head: [UInt8] = [version, 0, 0, 0]
        head.append32(UInt32(count))
        entries(&head)
        return BoxNode(type: type, head: head)
    }

    /// Sets mdhd's duration, widening the box to version 1 where it needs 64 bits.
    private static func setDuration(_ duration: Int64, of mdhd: inout BoxNode) throws {
        let wide = try mdhd.uint8(at: 0) == 1
        guard mdhd.head.count >= (wide ? 32 : 20) else { throw BoxFailure.malformed("short mdhd") }
        if wide {
            BoxBuffer.put64(UInt64(duration), into: &mdhd.head, at: 24)
        } else if let narrow = UInt32(exactly: duration) {
            BoxBuffer.put32(narrow, into: &mdhd.head, at: 16)
        } else {
            // Version 1: 64-bit creation and modification times and duration.
            let old = mdhd.head
            var head: [UInt8] = [1, old[1], old[2], old[3]]
            head += [0, 0, 0, 0] + old[4..<8] + [0, 0, 0, 0] + old[8..<12] + old[12..<16]
            head += [UInt8](repeating: 0, count: 8)
            BoxBuffer.put64(UInt64(duration), into: &head, at: 24)
            head += old[20...]
            mdhd.head = head
        }
    }
}

private extension Array where Element == UInt8 {
    mutating func append32(_ value: UInt32) {
        append(contentsOf: [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)])
    }
}
