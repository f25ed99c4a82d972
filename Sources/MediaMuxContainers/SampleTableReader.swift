/// The samples of a track's sample table (ISO/IEC 14496-12, 8.6 and 8.7),
/// one at a time in decode order, described as a fragment's samples are
/// (`MovieFragments.Sample`): where its data lies, its size, decode time,
/// duration, composition offset and sync flag. The tables are read where
/// they lie in the moov's boxes; nothing is built per sample. For a
/// fragmented file whose moov holds the first samples before its fragments.
package struct SampleTableReader {
    private let trackID: Int
    private let fileSize: Int64
    private let count: Int
    /// stsz's size for every sample, or nil when each has its own.
    private let uniformSize: UInt32?
    private let sizes: BoxNode?
    private let chunkOffsets: BoxNode
    private let wideOffsets: Bool
    private let chunkCount: Int
    private let chunkRuns: BoxNode
    private let chunkRunCount: Int
    private let durations: Runs
    private let offsets: Runs?
    private let syncSamples: BoxNode?
    private let syncCount: Int

    private var index = 0
    private var chunk = -1
    private var chunkRun = 0
    private var samplesLeftInChunk = 0
    private var dataOffset: Int64 = 0
    private var decodeTime: Int64 = 0
    private var durationCursor = RunCursor()
    private var offsetCursor = RunCursor()
    private var syncIndex = 0

    /// A run-length table (stts, ctts): a count and a value per entry.
    private struct Runs {
        let box: BoxNode
        let entries: Int

        init(_ box: BoxNode) throws {
            entries = Int(try box.uint32(at: 4))
            guard entries <= (box.head.count - 8) / 8 else { throw BoxFailure.malformed("short \(box.type)") }
            self.box = box
        }
    }

    /// Where a walk through a `Runs` table is.
    private struct RunCursor {
        var entry = 0
        var left: UInt32 = 0
        var value: UInt32 = 0

        /// The value for the next sample, going on to the next entry when a run is spent.
        mutating func next(in runs: Runs) throws -> UInt32? {
            while left == 0 {
                guard entry < runs.entries else { return nil }
                left = try runs.box.uint32(at: 8 + entry * 8)
                value = try runs.box.uint32(at: 12 + entry * 8)
                entry += 1
            }
            left -= 1
            return value
        }
    }

    /// - Parameters:
    ///   - stbl: The track's sample table box.
    ///   - trackID: Its track_ID, for the samples' description.
    ///   - fileSize: The file's size: a sample whose data runs past it is not whole.
    package init(stbl: BoxNode, trackID: Int, fileSize: Int64) throws {
        self.trackID = trackID
        self.fileSize = fileSize
        guard let stsz = stbl.first("stsz") else { throw BoxFailure.malformed("no stsz") }
        let size = try stsz.uint32(at: 4)
        count = Int(try stsz.uint32(at: 8))
        if size == 0 {
            guard count <= (stsz.head.count - 12) / 4 else { throw BoxFailure.malformed("short stsz") }
            uniformSize = nil
            sizes = stsz
        } else {
            uniformSize = size
            sizes = nil
        }
        guard let offsets = stbl.first("stco") ?? stbl.first("co64") else { throw BoxFailure.malformed("no stco") }
        wideOffsets = offsets.type == "co64"
        chunkOffsets = offsets
        chunkCount = Int(try offsets.uint32(at: 4))
        guard chunkCount <= (offsets.head.count - 8) / (wideOffsets ? 8 : 4) else { throw BoxFailure.malformed("short \(offsets.type)") }
        guard let stsc = stbl.first("stsc") else { throw BoxFailure.malformed("no stsc") }
        chunkRuns = stsc
        chunkRunCount = Int(try stsc.uint32(at: 4))
        guard chunkRunCount <= (stsc.head.count - 8) / 12 else { throw BoxFailure.malformed("short stsc") }
        guard let stts = stbl.first("stts") else { throw BoxFailure.malformed("no stts") }
        durations = try Runs(stts)
        self.offsets = try stbl.first("ctts").map(Runs.init)
        syncSamples = stbl.first("stss")
        if let stss = syncSamples {
            syncCount = Int(try stss.uint32(at: 4))
            guard syncCount <= (stss.head.count - 8) / 4 else { throw BoxFailure.malformed("short stss") }
        } else {
            syncCount = 0
        }
    }

    /// The next sample; nil after the last.
    /// - Throws: `BoxFailure.malformed` when the tables do not place it.
    package mutating func next() throws -> MovieFragments.Sample? {
        guard index < count else { return nil }
        if samplesLeftInChunk == 0 { try nextChunk() }
        let size = Int64(try uniformSize ?? sizes!.uint32(at: 12 + index * 4))
        guard let duration = try durationCursor.next(in: durations) else { throw BoxFailure.malformed("stts ends before sample \(index + 1)") }
        // Read as signed in either version, as writers store negatives in version 0 too.
        var offset: Int64 = 0
        if let offsets, let value = try offsetCursor.next(in: offsets) { offset = Int64(Int32(bitPattern: value)) }
        var isSync = true
        if let syncSamples {
            let number = UInt32(truncatingIfNeeded: index + 1)
            while syncIndex < syncCount, try syncSamples.uint32(at: 8 + syncIndex * 4) < number { syncIndex += 1 }
            isSync = false
            if syncIndex < syncCount { isSync = try syncSamples.uint32(at: 8 + syncIndex * 4) == number }
        }
        let (end, overflow) = dataOffset.addingReportingOverflow(size)
        let sample = MovieFragments.Sample(
            trackID: trackID, dataOffset: dataOffset, size: size, decodeTime: decodeTime, duration: Int64(duration),
            compositionOffset: offset, isSync: isSync, isWhole: !overflow && dataOffset >= 0 && end <= fileSize)
        index += 1
        samplesLeftInChunk -= 1
        dataOffset = overflow ? fileSize : end
        decodeTime += Int64(duration)
        return sample
    }

    /// Moves to the next chunk that holds samples: its offset, and how many it holds by stsc.
    private mutating func nextChunk() throws {
        repeat {
            chunk += 1
            guard chunk < chunkCount else { throw BoxFailure.malformed("the chunks end before sample \(index + 1)") }
            while chunkRun + 1 < chunkRunCount, Int(try chunkRuns.uint32(at: 8 + (chunkRun + 1) * 12)) <= chunk + 1 { chunkRun += 1 }
            guard chunkRunCount > 0 else { throw BoxFailure.malformed("an empty stsc") }
            samplesLeftInChunk = Int(try chunkRuns.uint32(at: 12 + chunkRun * 12))
        } while samplesLeftInChunk == 0
        dataOffset = wideOffsets ? try chunkOffsets.int64(at: 8 + chunk * 8) : Int64(try chunkOffsets.uint32(at: 8 + chunk * 4))
    }
}
