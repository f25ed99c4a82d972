import MediaMuxBase

/// What a file's movie header says about each track's presentation: what
/// players go by, read without FFmpeg's interpretation.
package struct MovieHeaderFacts {
    package struct Track {
        /// tkhd duration: the sum of the track's edits, in the movie timescale.
        package var duration: Int64
        /// Leading empty edits: how late the track starts, in the movie timescale.
        package var delay: Int64
        package var hasEditList: Bool
        /// Where in the media (track timescale) the first non-empty edit starts
        /// presenting; 0 without an edit list (see `presentedFrom`).
        package var mediaStart: Int64 = 0
        /// True when the edits are at most some empty ones followed by one
        /// segment played at normal rate: a timeline one output edit can repeat.
        package var isSingleSegment = true
        /// Samples in the track's sample table (stsz).
        package var sampleCount: Int?
        /// The smallest composition offset (ctts, read as signed in either
        /// version, as writers store negatives in version 0 too); 0 without ctts.
        package var leastCompositionOffset: Int64 = 0
        /// The first sample entry, with the boxes inside it (codec
        /// configuration, colour, aspect...) as the file has them.
        package var sampleEntry: BoxNode?
        /// How many sample entries the track has (fragments choose one by index).
        package var sampleEntryCount = 0
        /// The first entry is encrypted (Common Encryption renames it `encv`,
        /// `enca`...): its samples need the key information the fragments carry beside them.
        package var isProtected = false
        /// The track's boxes besides its header, edits and media (tapt,
        /// tgas, tref, udta...), as the file has them.
        package var otherBoxes: [BoxNode] = []
        /// mdhd's timescale: ticks per second of the media's times.
        package var mediaTimescale: Int64 = 0
        /// Fragmented files, and tracks with composition offsets but no edit
        /// list: the span the sample table's own samples are presented for,
        /// and the decode time after them, in the media timescale.
        package var tableSpan: SampleSpan?
        package var tableDecodeEnd: Int64 = 0
    }

    package var movieTimescale: Int64
    /// mvhd's duration, in the movie timescale: the longest track's (0 when
    /// the writer left it so, as fragmenting muxers do).
    package var movieDuration: Int64
    /// By track_ID.
    package var tracks: [Int: Track]
    /// The movie-level metadata boxes: QuickTime's `meta` (mdta keys) and the children of `udta`.
    package var metadata: MovieMetadataBoxes
    /// The samples of the movie fragments, for a movie that declares them
    /// (an `mvex` box); nil otherwise.
    package var fragments: MovieFragments?

    package init(path: String) throws {
        guard let file = openForReading(path) else { throw BoxFailure.io("cannot open: \(systemErrorText())") }
        defer { try? file.close() }
        let descriptor = file.rawValue
        let tree = try MovieTree(moovBytes: readMovieBox(descriptor: descriptor).bytes)
        try self.init(tree: tree)
        if tree.root.first("mvex") != nil {
            fragments = try MovieFragments(descriptor: descriptor, moov: tree, decodeStarts: tracks.mapValues(\.tableDecodeEnd))
        }
    }

    /// Where a track's samples are presented, in its media timescale: those
    /// of the sample table and of the fragments together. Nil when the movie
    /// is not fragmented or the track has no samples.
    package func fragmentedSpan(of trackID: Int) -> SampleSpan? {
        guard let fragments, let track = tracks[trackID] else { return nil }
        guard let span = fragments.tracks[trackID]?.presentation else { return track.tableSpan }
        return span.union(track.tableSpan)
    }

    /// A fragmented track's samples: the sample table's and the fragments' whole ones.
    package func fragmentedSampleCount(of trackID: Int) -> Int? {
        guard let fragments, let track = tracks[trackID] else { return nil }
        return (track.sampleCount ?? 0) + (fragments.tracks[trackID]?.sampleCount ?? 0)
    }

    /// Where a track's presentation starts in its media (track timescale),
    /// given the span its samples are presented for: its first edit's media
    /// time, or without an edit list the media's own times, which begin
    /// with the earliest sample shown. B-frames' composition offsets put
    /// that after zero when no edit list takes them back (FFmpeg's
    /// fragmented output, `-use_editlist 0`): the track is then shown from
    /// there, as ffprobe's start time and players have it, not from a zero
    /// at which nothing is shown.
    package static func presentedFrom(_ track: Track, span: SampleSpan?) -> Int64 {
        guard !track.hasEditList, let span, span.start > 0 else { return max(track.mediaStart, 0) }
        return span.start
    }

    package init(tree: MovieTree) throws {
        guard let mvhd = tree.root.first("mvhd") else { throw BoxFailure.malformed("no mvhd") }
        let wideHeader = try mvhd.uint8(at: 0) == 1
        movieTimescale = Int64(try mvhd.uint32(at: wideHeader ? 20 : 12))
        guard movieTimescale > 0 else { throw BoxFailure.malformed("no movie timescale") }
        movieDuration = wideHeader ? try mvhd.int64(at: 24) : Int64(try mvhd.uint32(at: 16))
        tracks = [:]
        for trak in tree.tracks {
            guard let tkhd = trak.first("tkhd") else { continue }
            let wide = try tkhd.uint8(at: 0) == 1
            let id = try tkhd.trackID()
            var track = Track(duration: wide ? try tkhd.int64(at: 28) : Int64(try tkhd.uint32(at: 20)), delay: 0, hasEditList: false)
            if let elst = trak.first("edts/elst") { try Self.read(edits: EditList(elst).entries, into: &track) }
            if let mdhd = trak.first("mdia/mdhd") { track.mediaTimescale = Int64(try mdhd.uint32(at: try mdhd.uint8(at: 0) == 1 ? 20 : 12)) }
            if let stbl = trak.first("mdia/minf/stbl") {
                try Self.readSampleTable(stbl, into: &track)
                if tree.root.first("mvex") != nil {
                    try Self.readSampleTimes(stbl, into: &track)
                } else if !track.hasEditList, stbl.first("ctts") != nil {
                    // Only to find the first picture (`presentedFrom`): times
                    // that do not add up leave the track starting at zero, as
                    // FFmpeg's reading has it, and the rest of the header stands.
                    try? Self.readSampleTimes(stbl, into: &track)
                }
            }
            let entries = MovieTree.sampleEntries(of: trak)
            track.sampleEntry = entries.first
            track.sampleEntryCount = entries.count
            track.isProtected = entries.first.map { ["encv", "enca", "encs", "enct"].contains($0.type) } ?? false
            track.otherBoxes = trak.children?.filter { !["tkhd", "edts", "mdia"].contains($0.type) } ?? []
            tracks[id] = track
        }
        metadata = MovieMetadataBoxes(moov: tree.root)
    }

    private static func read(edits: [EditList.Entry], into track: inout Track) throws {
        track.hasEditList = !edits.isEmpty
        var delay: Int64 = 0
        let empty = edits.prefix(while: { $0.mediaTime == -1 })
        for edit in empty {
            let (sum, overflow) = delay.addingReportingOverflow(edit.duration)
            guard !overflow, edit.duration >= 0 else { throw BoxFailure.malformed("edit durations overflow") }
            delay = sum
        }
        track.delay = delay
        let segments = edits.dropFirst(empty.count)
        track.mediaStart = segments.first?.mediaTime ?? 0
        track.isSingleSegment = segments.count <= 1 && segments.allSatisfy { $0.rate == EditList.Entry.normalRate }
    }

    /// The sample count and least composition offset.
    private static func readSampleTable(_ stbl: BoxNode, into track: inout Track) throws {
        if let sizes = stbl.first("stsz") ?? stbl.first("stz2") { track.sampleCount = Int(try sizes.uint32(at: 8)) }
        guard let ctts = stbl.first("ctts") else { return }
        let count = Int(try ctts.uint32(at: 4))
        guard count <= (ctts.head.count - 8) / 8 else { throw BoxFailure.malformed("short ctts") }
        var least: Int64 = 0
        for index in 0..<count where try ctts.uint32(at: 8 + index * 8) > 0 {
            least = min(least, Int64(Int32(bitPattern: try ctts.uint32(at: 12 + index * 8))))
        }
        track.leastCompositionOffset = least
    }
}

extension MovieHeaderFacts {
    /// The span the sample table's samples are presented for and the decode
    /// time after them, from stts and ctts, a run of equal durations and
    /// offsets at a time.
    fileprivate static func readSampleTimes(_ stbl: BoxNode, into track: inout Track) throws {
        func runs(_ box: BoxNode?) throws -> [(count: Int64, value: Int64)] {
            guard let box else { return [] }
            let count = Int(try box.uint32(at: 4))
            guard count <= (box.head.count - 8) / 8 else { throw BoxFailure.malformed("short \(box.type)") }
            return try (0..<count).map { index in
                (Int64(try box.uint32(at: 8 + index * 8)), Int64(try box.uint32(at: 12 + index * 8)))
            }
        }
        let durations = try runs(stbl.first("stts"))
        // Offsets read as signed in either version, as in `readSampleTable`.
        var offsets = try runs(stbl.first("ctts")).map { ($0.count, Int64(Int32(truncatingIfNeeded: $0.value))) }[...]
        var decode: Int64 = 0
        var span: SampleSpan?
        for var run in durations {
            while run.count > 0 {
                let offset = offsets.first?.1 ?? 0
                let count = min(run.count, offsets.first?.0 ?? run.count)
                let (length, long) = count.multipliedReportingOverflow(by: run.value)
                let (end, late) = decode.addingReportingOverflow(length)
                guard !long, !late, !end.addingReportingOverflow(offset).overflow else { throw BoxFailure.malformed("sample times overflow") }
                span = SampleSpan(start: decode + offset, end: end + offset).union(span)
                decode = end
                run.count -= count
                if let first = offsets.first {
                    if first.0 > count { offsets[offsets.startIndex].0 -= count } else { offsets.removeFirst() }
                }
            }
        }
        track.tableSpan = span
        track.tableDecodeEnd = decode
    }
}

extension BoxNode {
    /// A `tkhd`'s track_ID (after version 1's 64-bit times, or version 0's 32-bit ones).
    package func trackID() throws -> Int {
        Int(try uint32(at: try uint8(at: 0) == 1 ? 20 : 12))
    }
}
