import Foundation

/// The samples of a fragmented MP4's movie fragments (`moof`/`traf`/`trun`),
/// read by the tests' own rules from ISO/IEC 14496-12: the defaults of
/// `trex` (in the moov's `mvex`) and `tfhd`, `tfdt`'s decode time, each
/// run's data offset, per-sample durations, sizes, flags and composition
/// offsets. MP4File adds them after the moov's own samples, so a fragmented
/// file and its defragmented copy read the same.
extension MP4File {
    struct FragmentSample: Sendable, Equatable {
        let offset: Int64
        let size: UInt32
        let decodeTime: Int64
        let duration: UInt32
        let compositionOffset: Int32
        let isSync: Bool
    }

    /// `trex`: a track's defaults for every fragment.
    private struct TrackDefaults {
        var duration: UInt32 = 0
        var size: UInt32 = 0
        var flags: UInt32 = 0
    }

    /// Every fragment's samples, by track ID, in file order. `decodeStarts`
    /// gives each track's decode time after its moov samples, where a
    /// fragment without `tfdt` continues.
    static func fragmentSamples(
        path: String, topLevel: [Box], moov: BoxNode, decodeStarts: [UInt32: Int64]
    ) throws -> [UInt32: [FragmentSample]] {
        var defaults: [UInt32: TrackDefaults] = [:]
        for trex in moov.find("mvex/trex") {
            var c = try fullBox(path: path, trex)
            let trackID = try c.u32()
            _ = try c.u32()  // default sample description index
            defaults[trackID] = TrackDefaults(duration: try c.u32(), size: try c.u32(), flags: try c.u32())
        }
        var samples: [UInt32: [FragmentSample]] = [:]
        var nextDecode = decodeStarts
        for moof in topLevel where moof.type == "moof" {
            let bytes = try readBytes(path: path, at: moof.offset, count: moof.size)
            let tree = ByteTree(bytes: bytes, base: moof.offset)
            let children = try tree.children(from: Int(moof.headerSize), to: bytes.count, depth: 1)
            // Without an explicit base, a track fragment's data starts where the previous one's ended (the first: at the moof).
            var previousEnd = moof.offset
            for traf in children where traf.type == "traf" {
                guard let tfhd = traf.children.first(where: { $0.type == "tfhd" }) else { throw ParseError("traf at \(traf.box.offset) has no tfhd") }
                var c = try tree.fullBoxCursor(tfhd)
                let flags = c.flags
                let trackID = try c.u32()
                var base = flags & 0x20000 != 0 ? moof.offset : previousEnd
                if flags & 0x1 != 0 { base = Int64(clamping: try c.u64()) }
                if flags & 0x2 != 0 { _ = try c.u32() }
                var fallback = defaults[trackID] ?? TrackDefaults()
                if flags & 0x8 != 0 { fallback.duration = try c.u32() }
                if flags & 0x10 != 0 { fallback.size = try c.u32() }
                if flags & 0x20 != 0 { fallback.flags = try c.u32() }
                if let tfdt = traf.children.first(where: { $0.type == "tfdt" }) {
                    var t = try tree.fullBoxCursor(tfdt)
                    nextDecode[trackID] = t.version == 1 ? Int64(bitPattern: try t.u64()) : Int64(try t.u32())
                }
                var decode = nextDecode[trackID] ?? 0
                var dataPosition = base
                for trun in traf.children where trun.type == "trun" {
                    var r = try tree.fullBoxCursor(trun)
                    let count = try r.u32()
                    if r.flags & 0x1 != 0 { dataPosition = base + Int64(Int32(bitPattern: try r.u32())) }
                    let firstFlags: UInt32? = r.flags & 0x4 != 0 ? try r.u32() : nil
                    let fieldBytes = [0x100, 0x200, 0x400, 0x800].filter { r.flags & UInt32($0) != 0 }.count * 4
                    guard Int64(count) * Int64(fieldBytes) <= Int64(r.remaining) else {
                        throw ParseError("trun at \(trun.box.offset) declares \(count) samples in \(r.remaining) bytes")
                    }
                    for index in 0..<Int(count) {
                        let duration = r.flags & 0x100 != 0 ? try r.u32() : fallback.duration
                        let size = r.flags & 0x200 != 0 ? try r.u32() : fallback.size
                        var sampleFlags = r.flags & 0x400 != 0 ? try r.u32() : fallback.flags
                        if index == 0, let firstFlags { sampleFlags = firstFlags }
                        // Version 0 offsets are unsigned on paper; read as ctts is read.
                        let composition = r.flags & 0x800 != 0 ? Int32(bitPattern: try r.u32()) : 0
                        samples[trackID, default: []].append(FragmentSample(
                            offset: dataPosition, size: size, decodeTime: decode, duration: duration,
                            compositionOffset: composition, isSync: sampleFlags & 0x10000 == 0))
                        dataPosition += Int64(size)
                        decode += Int64(duration)
                    }
                }
                nextDecode[trackID] = decode
                previousEnd = dataPosition
            }
        }
        return samples
    }

    private static func fullBox(path: String, _ node: BoxNode) throws -> Cursor {
        let bytes = try readBytes(path: path, at: node.box.offset, count: node.box.size)
        return try ByteTree(bytes: bytes, base: node.box.offset).fullBoxCursor(node)
    }
}

extension MP4File.Track {
    /// Where a track's presentation starts in its media, in its timescale:
    /// the media time its edit list starts at, or without one its earliest
    /// composition time when that is after zero. ISO 14496-12 8.6.6 maps
    /// the media timeline as it is when there is no edit list, so a track
    /// whose pictures all carry composition offsets (B-frames) shows its
    /// first one that late, as ffprobe's start time says.
    var presentedStart: Int64 {
        if let edits = editList, !edits.isEmpty { return edits.first { !$0.isEmpty }?.mediaTime ?? 0 }
        return max(compositionTimes.min() ?? 0, 0)
    }

    /// Where a track's presentation ends, in seconds from its first shown
    /// sample, by the samples alone: the latest composition time plus that
    /// sample's duration (the last sample's runs to the media's end), less
    /// `presentedStart`. What a fragmented file's mvhd or mehd says does not
    /// count. NaN for a track that starts late (empty edits), which this
    /// does not measure.
    var presentedEnd: Double {
        guard mediaTimescale > 0, sampleCount > 0 else { return .nan }
        if editList?.first?.isEmpty == true { return .nan }
        let ends = compositionTimes.indices.map { index in
            compositionTimes[index] + (index + 1 < sampleCount ? decodeTimes[index + 1] : mediaDuration) - decodeTimes[index]
        }
        return Double((ends.max() ?? 0) - presentedStart) / Double(mediaTimescale)
    }
}
