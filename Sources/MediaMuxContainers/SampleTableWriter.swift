import MediaMuxBase

/// A fragmented movie's samples made one movie's sample tables (ISO/IEC
/// 14496-12, 8.6 and 8.7), in the file that holds them.
package enum MovieTablesFromFragments {
    /// Walks the fragments of the file `descriptor` (whose moov is `tree`),
    /// turns each moof into a `free` box, and gives `tree` the tables of the
    /// samples the fragments declare, in place of its mvex and empty tables.
    /// Only one fragment's sample list is held at a time, and 4 to 12 bytes
    /// a sample for the tables.
    package static func convert(_ tree: inout MovieTree, descriptor: Int32) throws {
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
package struct TrackTables {
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

    package var sampleCount: Int { sizes.count }

    /// Adds the next sample in decode order, from the fragment whose moof is at `fragment`.
    package mutating func add(_ sample: MovieFragments.Sample, fragment: Int64) throws {
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
    package mutating func install(in trak: inout BoxNode) throws {
        guard let last else { return }
        try appendDuration(last.duration)
        closeChunk()
        let mediaEnd = last.decode + last.duration
        try trak.modify("mdia/mdhd") { try $0.setMediaDuration(mediaEnd) }
        let replaced: Set<String> = ["stts", "ctts", "cslg", "stss", "stps", "sdtp", "stsc", "stsz", "stz2", "stco", "co64"]
        var tables: [BoxNode] = [BoxNode.table("stts", entries: durations.count) { head in
            for run in durations { head.appendBigEndian(run.count); head.appendBigEndian(run.delta) }
        }]
        if offsets.contains(where: { $0.offset != 0 }) {
            let negative = offsets.contains { $0.offset < 0 }
            tables.append(BoxNode.table("ctts", version: negative ? 1 : 0, entries: offsets.count) { head in
                for run in offsets { head.appendBigEndian(run.count); head.appendBigEndian(UInt32(bitPattern: run.offset)) }
            })
        }
        if !allSync {
            tables.append(BoxNode.table("stss", entries: syncSamples.count) { head in syncSamples.forEach { head.appendBigEndian($0) } })
        }
        tables.append(BoxNode.table("stsc", entries: chunkRuns.count) { head in
            for run in chunkRuns { head.appendBigEndian(run.firstChunk); head.appendBigEndian(run.samples); head.appendBigEndian(UInt32(1)) }
        })
        var sizeTable: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0]
        sizeTable.appendBigEndian(UInt32(sizes.count))
        sizeTable.reserveCapacity(sizeTable.count + 4 * sizes.count)
        sizes.forEach { sizeTable.appendBigEndian($0) }
        sizes = []
        tables.append(BoxNode(type: "stsz", head: sizeTable))
        let wide = chunkOffsets.contains { $0 > Int64(UInt32.max) }
        tables.append(BoxNode.table(wide ? "co64" : "stco", entries: chunkOffsets.count) { head in
            for offset in chunkOffsets {
                if wide { head.appendBigEndian(UInt64(offset)) } else { head.appendBigEndian(UInt32(offset)) }
            }
        })
        try trak.modify("mdia/minf/stbl") { stbl in
            let kept = (stbl.children ?? []).filter { !replaced.contains($0.type) }
            let descriptions = kept.filter { $0.type == "stsd" }
            guard descriptions.count == 1 else { throw BoxFailure.malformed("\(descriptions.count) stsd boxes") }
            stbl.children = descriptions + tables + kept.filter { $0.type != "stsd" }
        }
    }
}
