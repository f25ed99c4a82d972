import MediaMuxBase

/// The samples of a fragmented MP4's movie fragments (ISO/IEC 14496-12,
/// 8.8), summed track by track as a `Walker` hands them over, a fragment
/// at a time. A track keeps counts and extremes, not its samples, so memory
/// does not grow with the recording. `sidx` and `mfra` are not read: they
/// index fragments but do not bound them.
package struct MovieFragments: Equatable {
    /// One track's fragment samples, in its media timescale.
    package struct Track: Equatable {
        /// Samples whose data lies wholly inside the file.
        package var sampleCount = 0
        /// Samples declared whose data runs past the end of the file.
        package var missingSamples = 0
        /// The span presented by the whole samples: decode time plus
        /// composition offset, to that plus the duration. Nil without samples.
        package var presentation: SampleSpan?
        /// The decode time after the last whole sample.
        package var decodeEnd: Int64?
        /// The smallest composition offset of a whole sample (0 when none is negative).
        package var leastCompositionOffset: Int64 = 0

        mutating func count(_ sample: Sample) {
            guard sample.isWhole else {
                missingSamples += 1
                return
            }
            let shown = sample.decodeTime + sample.compositionOffset
            sampleCount += 1
            presentation = SampleSpan(start: shown, end: shown + sample.duration).union(presentation)
            leastCompositionOffset = min(leastCompositionOffset, sample.compositionOffset)
            decodeEnd = sample.decodeTime + sample.duration
        }
    }

    /// One sample a movie fragment declares: where its data lies and when
    /// it plays, in its track's media timescale.
    package struct Sample: Equatable, Sendable {
        package var trackID: Int
        /// Where its data starts in the file.
        package var dataOffset: Int64
        package var size: Int64
        package var decodeTime: Int64
        package var duration: Int64
        /// Presentation time minus decode time.
        package var compositionOffset: Int64
        /// Not flagged `sample_is_non_sync_sample`.
        package var isSync: Bool
        /// Its `sample_depends_on` says it depends on other samples (1).
        package var dependsOnOthers = false
        /// Its data lies wholly inside the file.
        package var isWhole: Bool
    }

    /// One `moof`: the tracks it has fragments of, and their samples in
    /// the order its `traf` and `trun` boxes declare them.
    package struct Fragment: Equatable, Sendable {
        /// Where the `moof` starts in the file.
        package var offset: Int64
        /// The track_IDs of its `traf` boxes, in order.
        package var trackIDs: [Int]
        package var samples: [Sample]
    }

    /// Fragments (`moof` boxes) read whole.
    package var fragmentCount = 0
    /// By track_ID.
    package var tracks: [Int: Track] = [:]
    /// The file ends inside a fragment: its header or some of its samples' data is missing.
    package var isCut = false
    /// A fragment header that does not parse, where it is and why: the
    /// walk stops there, and the samples before it are all that count.
    package var damage: String?

    /// - Parameters:
    ///   - descriptor: The file, open for reading.
    ///   - moov: Its movie header, whose `mvex/trex` boxes give the defaults.
    ///   - decodeStarts: Each track's decode time after its moov samples, by track_ID.
    package init(descriptor: Int32, moov: MovieTree, decodeStarts: [Int: Int64]) throws {
        var walker = try Walker(descriptor: descriptor, moov: moov, decodeStarts: decodeStarts)
        while let fragment = try walker.next() {
            fragmentCount += 1
            for trackID in fragment.trackIDs where tracks[trackID] == nil { tracks[trackID] = Track() }
            // A traf's samples come together: each run is summed into the track at once.
            let samples = fragment.samples
            var start = samples.startIndex
            while start < samples.endIndex {
                let trackID = samples[start].trackID
                var track = tracks[trackID] ?? Track()
                var end = start
                while end < samples.endIndex, samples[end].trackID == trackID {
                    track.count(samples[end])
                    end += 1
                }
                tracks[trackID] = track
                start = end
            }
        }
        isCut = walker.isCut
        damage = walker.damage
    }

    /// Walks a fragmented MP4's top-level boxes a movie fragment at a time:
    /// each `moof` is read (it holds only headers), each `mdat` passed over
    /// unread, so a walk holds one fragment's sample list at the most.
    ///
    /// A sample's decode time comes from `tfdt`, or continues from the
    /// track's previous sample (the moov's last, for the first fragment);
    /// its duration, size and flags from the `trun`, else the `tfhd`
    /// defaults, else `trex`'s.
    package struct Walker {
        /// `trex`: a track's defaults for every fragment.
        private struct Defaults {
            var duration: UInt32 = 0
            var size: UInt32 = 0
            var flags: UInt32 = 0
        }

        /// The most samples a fragment may declare: over 20 s of 48 kHz PCM
        /// stored a sample per frame, far more than writers put in one (a
        /// couple of seconds), and 56 MiB held for its sample list.
        static let mostSamples = 1 << 20

        /// A `moof` larger than this is not a header a writer makes (a million samples take 16 MB).
        private static let largestFragmentHeader = 64 << 20

        private let descriptor: Int32
        private let fileSize: Int64
        private let defaults: [Int: Defaults]
        private var nextDecode: [Int: Int64]
        private var offset: Int64 = 0
        private var isOver = false
        /// The file ends inside a fragment: its header or some of its samples' data is missing.
        package private(set) var isCut = false
        /// A fragment header that does not parse, where it is and why: the walk stopped there.
        package private(set) var damage: String?

        /// - Parameters:
        ///   - descriptor: The file, open for reading.
        ///   - moov: Its movie header, whose `mvex/trex` boxes give the defaults.
        ///   - decodeStarts: Each track's decode time after its moov samples, by track_ID.
        package init(descriptor: Int32, moov: MovieTree, decodeStarts: [Int: Int64]) throws {
            var defaults: [Int: Defaults] = [:]
            // mvex is kept whole in the movie tree: its boxes are read here.
            let extends = moov.root.first("mvex").map { try? BoxNode.parse($0.head[...]) { _, _ in nil } } ?? []
            for trex in (extends ?? []).filter({ $0.type == "trex" }) {
                defaults[Int(try trex.uint32(at: 4))] = Defaults(
                    duration: try trex.uint32(at: 12), size: try trex.uint32(at: 16), flags: try trex.uint32(at: 20))
            }
            self.descriptor = descriptor
            self.defaults = defaults
            fileSize = Int64(fileLength(descriptor))
            nextDecode = decodeStarts
        }

        /// The next fragment; nil at the end of the file, where it is cut
        /// (`isCut`), or at a fragment header that does not parse (`damage`).
        /// A damaged fragment gives none of its samples.
        /// - Throws: `BoxFailure.io` when the file cannot be read.
        package mutating func next() throws -> Fragment? {
            while !isOver, offset + 8 <= fileSize {
                do {
                    let (size, fragment) = try box(at: offset)
                    guard let size else {
                        isOver = true
                        return nil
                    }
                    offset += size
                    if let fragment { return fragment }
                } catch BoxFailure.malformed(let reason) {
                    damage = "the fragment header at byte \(offset) is damaged (\(reason))"
                    isOver = true
                }
            }
            return nil
        }

        /// Reads the top-level box at `offset`: its size (nil where the file
        /// ends inside it), and its samples when it is a `moof`.
        private mutating func box(at offset: Int64) throws -> (Int64?, Fragment?) {
            // One read takes the box header and, for most fragments, the whole moof.
            guard let head = readBytes(descriptor, count: Int(min(4096, fileSize - offset)), at: offset), head.count >= 8 else {
                throw BoxFailure.io("cannot read the box at \(offset)")
            }
            guard let box = BoxHeader(head, at: 0, extent: fileSize - offset) else { return (nil, nil) }
            let (size, type) = (box.size, box.type)
            guard size >= 8 else { throw BoxFailure.malformed("a box of \(size) bytes at \(offset)") }
            guard type == "moof" else {
                guard size <= fileSize - offset else {
                    // An mdat cut short: the samples past the end were declared missing.
                    isCut = isCut || type == "mdat"
                    return (nil, nil)
                }
                return (size, nil)
            }
            guard size <= fileSize - offset else {
                isCut = true
                return (nil, nil)
            }
            guard size <= Self.largestFragmentHeader else { throw BoxFailure.malformed("moof of \(size) bytes at \(offset)") }
            let bytes = size <= head.count ? Array(head.prefix(Int(size))) : readBytes(descriptor, count: Int(size), at: offset)
            guard let bytes, bytes.count == Int(size) else { throw BoxFailure.io("short read of the moof at \(offset)") }
            // Taken whole or not at all: a damaged fragment moves no track's decode time on.
            var decode = nextDecode
            let fragment = try read(moof: bytes, at: offset, nextDecode: &decode)
            nextDecode = decode
            if fragment.samples.contains(where: { !$0.isWhole }) { isCut = true }
            return (size, fragment)
        }

        private func read(moof bytes: [UInt8], at moofOffset: Int64, nextDecode: inout [Int: Int64]) throws -> Fragment {
            let nodes = try BoxNode.parse(bytes[...]) { type, _ in ["moof", "traf"].contains(type) ? 0 : nil }
            guard let moof = nodes.first, moof.type == "moof" else { throw BoxFailure.malformed("no moof at \(moofOffset)") }
            var fragment = Fragment(offset: moofOffset, trackIDs: [], samples: [])
            // Without an explicit base, a track fragment's data follows the previous one's (the first's: the moof).
            var previousEnd = moofOffset
            for traf in moof.all("traf") {
                guard let tfhd = traf.first("tfhd") else { throw BoxFailure.malformed("a traf without tfhd at \(moofOffset)") }
                var header = FieldReader(tfhd)
                let flags = try header.flags()
                let trackID = Int(try header.u32())
                var base = flags & 0x02_0000 != 0 ? moofOffset : previousEnd
                if flags & 0x1 != 0 { base = Int64(clamping: try header.u64()) }
                if flags & 0x2 != 0 { _ = try header.u32() }  // sample description index
                var fallback = defaults[trackID] ?? Defaults()
                if flags & 0x8 != 0 { fallback.duration = try header.u32() }
                if flags & 0x10 != 0 { fallback.size = try header.u32() }
                if flags & 0x20 != 0 { fallback.flags = try header.u32() }
                if let tfdt = traf.first("tfdt") {
                    var reader = FieldReader(tfdt)
                    nextDecode[trackID] = try reader.version() == 1 ? Int64(clamping: try reader.u64()) : Int64(try reader.u32())
                }
                var decode = nextDecode[trackID] ?? 0
                var data = base
                fragment.trackIDs.append(trackID)
                for trun in traf.all("trun") {
                    var run = FieldReader(trun)
                    let runFlags = try run.flags()
                    let count = Int(try run.u32())
                    if runFlags & 0x1 != 0 { data = base + Int64(Int32(bitPattern: try run.u32())) }
                    let firstFlags = runFlags & 0x4 != 0 ? try run.u32() : nil
                    let perSample = [0x100, 0x200, 0x400, 0x800].filter { runFlags & UInt32($0) != 0 }.count * 4
                    guard perSample == 0 || count <= run.remaining / perSample else {
                        throw BoxFailure.malformed("a trun declares \(count) samples in \(run.remaining) bytes")
                    }
                    // A run of defaults takes no bytes per sample: a few bytes could
                    // declare millions, each held here until the fragment is handed over.
                    guard count <= Self.mostSamples - fragment.samples.count else {
                        throw BoxFailure.malformed("a fragment declares more than \(Self.mostSamples) samples")
                    }
                    for index in 0..<count {
                        let duration = Int64(runFlags & 0x100 != 0 ? try run.u32() : fallback.duration)
                        let size = Int64(runFlags & 0x200 != 0 ? try run.u32() : fallback.size)
                        let sampleFlags = runFlags & 0x400 != 0 ? try run.u32() : (index == 0 ? firstFlags : nil) ?? fallback.flags
                        // Read as signed in either version, as writers store negatives in version 0 too.
                        let offset = runFlags & 0x800 != 0 ? Int64(Int32(bitPattern: try run.u32())) : 0
                        let (end, overflow) = data.addingReportingOverflow(size)
                        let (shown, late) = decode.addingReportingOverflow(offset)
                        guard !late, !shown.addingReportingOverflow(duration).overflow, !decode.addingReportingOverflow(duration).overflow else {
                            throw BoxFailure.malformed("sample times overflow in track \(trackID)")
                        }
                        let isWhole = !overflow && end <= fileSize
                        fragment.samples.append(Sample(
                            trackID: trackID, dataOffset: data, size: size, decodeTime: decode, duration: duration,
                            compositionOffset: offset, isSync: sampleFlags & 0x1_0000 == 0,
                            dependsOnOthers: (sampleFlags >> 24) & 0x3 == 1, isWhole: isWhole))
                        data = overflow ? fileSize : end
                        decode += duration
                    }
                }
                nextDecode[trackID] = decode
                previousEnd = data
            }
            return fragment
        }
    }
}

/// Where a run of samples is presented, in its media timescale: from the
/// earliest composition time to the latest end.
package struct SampleSpan: Equatable, Sendable {
    package var start: Int64
    package var end: Int64

    package func union(_ other: SampleSpan?) -> SampleSpan {
        guard let other else { return self }
        return SampleSpan(start: min(start, other.start), end: max(end, other.end))
    }
}

/// Reads a full box's fields in order, after its version and flags.
private struct FieldReader {
    private let head: [UInt8]
    private var position = 4

    init(_ box: BoxNode) { head = box.head }

    var remaining: Int { max(0, head.count - position) }

    func version() throws -> UInt8 {
        guard !head.isEmpty else { throw BoxFailure.malformed("empty full box") }
        return head[0]
    }

    func flags() throws -> UInt32 {
        guard head.count >= 4 else { throw BoxFailure.malformed("full box without flags") }
        return BoxBuffer.be32(head, 0) & 0xFF_FFFF
    }

    mutating func u32() throws -> UInt32 {
        guard position + 4 <= head.count else { throw BoxFailure.malformed("a fragment box is too short") }
        defer { position += 4 }
        return BoxBuffer.be32(head, position)
    }

    mutating func u64() throws -> UInt64 {
        guard position + 8 <= head.count else { throw BoxFailure.malformed("a fragment box is too short") }
        defer { position += 8 }
        return BoxBuffer.be64(head, position)
    }
}
