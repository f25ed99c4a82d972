import Foundation

/// A small, independent ISO BMFF (MP4) / QuickTime box reader used only by the tests.
///
/// It exists so that tests can check what MediaMux wrote without asking FFmpeg, which
/// would otherwise be both the writer and the judge. It reads the top-level box headers
/// with a `FileHandle`, loads only `moov` into memory, and reads sample bytes on demand.
///
/// Parsing is defensive: every read is bounds-checked and malformed input throws
/// `MP4File.ParseError` instead of trapping. Sample tables that disagree with each other
/// (e.g. `stts` covering fewer samples than `stsz`) do not throw; the mismatch is
/// recorded in `Track.issues` so a test can assert that list is empty.
struct MP4File: Sendable {

    struct ParseError: Error, CustomStringConvertible, Sendable {
        let message: String
        init(_ message: String) { self.message = message }
        var description: String { "MP4File.ParseError: \(message)" }
    }

    /// A box header. Offsets are absolute file offsets; `size` includes the header.
    struct Box: Sendable, Equatable {
        let type: String
        let offset, size: Int64
        /// 8, or 16 when the 64-bit `largesize` field is used.
        let headerSize: Int64
        var payloadOffset: Int64 { offset + headerSize }
        var payloadSize: Int64 { size - headerSize }
        var end: Int64 { offset + size }
    }

    /// A box inside `moov`. Only known container boxes have `children`.
    struct BoxNode: Sendable {
        let box: Box
        let children: [BoxNode]
        var type: String { box.type }

        /// Descendants matching a slash-separated path of types, e.g. `"mdia/minf/stbl/cslg"`.
        func find(_ path: String) -> [BoxNode] {
            var level = [self]
            for part in path.split(separator: "/") {
                level = level.flatMap { $0.children.filter { $0.type == part } }
            }
            return level
        }
    }

    struct EditListEntry: Sendable, Equatable {
        /// In the movie (`mvhd`) timescale.
        let segmentDuration: Int64
        /// In the media (`mdhd`) timescale; -1 marks an empty edit.
        let mediaTime: Int64
        let mediaRate: Double
        var isEmpty: Bool { mediaTime == -1 }
    }

    struct RawBox: Sendable, Equatable, CustomStringConvertible {
        let type: String
        let bytes: [UInt8]
        var inWave = false
        var description: String { "\(type)(\(bytes.count))" }
    }

    struct TimeToSampleEntry: Sendable, Equatable { let count: UInt32; let delta: UInt32 }
    struct CompositionOffsetEntry: Sendable, Equatable { let count: UInt32; let offset: Int32 }
    struct SampleToChunkEntry: Sendable, Equatable { let firstChunk, samplesPerChunk, sampleDescriptionIndex: UInt32 }

    struct Track: Sendable {
        let box: BoxNode
        // tkhd
        let trackID: UInt32
        /// tkhd's flags: 0x1 enabled, 0x2 in the movie.
        let tkhdFlags: UInt32
        /// Tracks of one group are alternatives to each other (0: none).
        let alternateGroup: UInt16
        var isEnabled: Bool { tkhdFlags & 1 != 0 }
        let tkhdDuration: UInt64
        let width, height: Double
        /// a, b, u, c, d, v, x, y, w as stored (a,b,c,d,x,y are 16.16; u,v,w are 2.30).
        let matrix: [Int32]
        // mdia
        let handlerType: String
        let mediaTimescale: UInt32
        let mdhdDuration: UInt64
        /// Raw 16-bit mdhd language field.
        let languageCode: UInt16
        /// ISO 639-2/T code such as "und" or "eng"; nil for QuickTime Macintosh codes (< 0x400).
        let language: String?
        /// nil when there is no `elst`.
        let editList: [EditListEntry]?
        // stbl
        /// Format fourcc of the first `stsd` entry ("avc1", "hvc1", "mp4a", "Opus", ...).
        let sampleFormat: String?
        /// How many sample entries `stsd` holds (players use the first only).
        let sampleEntryCount: Int
        /// The boxes inside the first sample entry, whole (header included),
        /// after its fixed fields; a QuickTime `wave` box's children follow it
        /// with `inWave` set.
        let sampleEntryBoxes: [RawBox]
        let timeToSample: [TimeToSampleEntry]
        /// nil when there is no `ctts`.
        let compositionOffsetTable: [CompositionOffsetEntry]?
        let cttsVersion: UInt8?
        /// 1-based sample numbers; nil when `stss` is absent, meaning every sample is sync.
        private(set) var syncSamples: [UInt32]?
        /// `stsz` sample_size field: non-zero means every sample has this size.
        let uniformSampleSize: UInt32
        let sampleToChunk: [SampleToChunkEntry]
        let chunkOffsets: [UInt64]
        /// "stco", "co64" or nil.
        let chunkOffsetBoxType: String?
        // Derived
        private(set) var sampleCount: Int
        private(set) var sampleSizes: [UInt32]
        /// Always `sampleCount` long; padded (and reported in `issues`) if `stts` is short.
        private(set) var decodeTimes: [Int64]
        /// Always `sampleCount` long; zeros when `ctts` is absent or short.
        private(set) var compositionOffsets: [Int32]
        /// Absolute file offset of each sample. Shorter than `sampleCount` only if the
        /// chunk tables cannot place every sample (see `issues`).
        private(set) var sampleOffsets: [Int64]
        /// Sum of all `stts` deltas, in `mediaTimescale`.
        private(set) var mediaDuration: Int64
        /// Inconsistencies between the sample tables, in words.
        private(set) var issues: [String]
        /// The durations each fragment sample's `trun` (or its defaults)
        /// declares, after the moov's own samples: empty when not fragmented.
        private(set) var fragmentDurations: [Int64] = []
        let filePath: String

        var isVideo: Bool { handlerType == "vide" }
        var isAudio: Bool { handlerType == "soun" }
        var compositionTimes: [Int64] { zip(decodeTimes, compositionOffsets).map { $0 &+ Int64($1) } }

        func isSyncSample(_ index: Int) -> Bool {
            guard let syncSamples else { return true }
            return syncSamples.contains(UInt32(clamping: index &+ 1))
        }

        /// Display rotation implied by the a, b, c, d matrix entries. iPhone portrait clips
        /// store (0, 1, -1, 0), which players show turned 90° clockwise.
        var rotationClockwiseDegrees: Int? {
            guard matrix.count == 9 else { return nil }
            let one: Int32 = 0x10000
            switch (matrix[0], matrix[1], matrix[3], matrix[4]) {
            case (one, 0, 0, one): return 0
            case (0, one, -one, 0): return 90
            case (-one, 0, 0, -one): return 180
            case (0, -one, one, 0): return 270
            default: return nil
            }
        }

        /// Seconds shown by a player: the sum of all edit durations (empty edits included)
        /// when an `elst` exists, else the media duration. NaN if a timescale is zero.
        func presentedDuration(movieTimescale: UInt32) -> Double {
            if let editList, !editList.isEmpty {
                guard movieTimescale > 0 else { return .nan }
                return Double(editList.reduce(0) { $0 &+ $1.segmentDuration }) / Double(movieTimescale)
            }
            guard mediaTimescale > 0 else { return .nan }
            return Double(mediaDuration) / Double(mediaTimescale)
        }

        /// The track with a fragmented file's samples after the moov's own.
        func appending(_ fragments: [FragmentSample], fileSize: Int64) -> Track {
            guard !fragments.isEmpty else { return self }
            var track = self
            if fragments.contains(where: { !$0.isSync }) || syncSamples != nil {
                let inMovie = syncSamples ?? (1...max(sampleCount, 1)).prefix(sampleCount).map { UInt32($0) }
                track.syncSamples = inMovie + fragments.indices.filter { fragments[$0].isSync }.map { UInt32(sampleCount + $0 + 1) }
            }
            track.sampleCount += fragments.count
            track.sampleSizes += fragments.map(\.size)
            track.decodeTimes += fragments.map(\.decodeTime)
            track.compositionOffsets += fragments.map(\.compositionOffset)
            track.fragmentDurations += fragments.map { Int64($0.duration) }
            if sampleOffsets.count == sampleCount {
                track.sampleOffsets += fragments.map(\.offset)
            }
            if let last = fragments.last {
                track.mediaDuration = last.decodeTime + Int64(last.duration)
            }
            if let bad = fragments.firstIndex(where: { $0.offset + Int64($0.size) > fileSize }) {
                track.issues.append("fragment sample \(sampleCount + bad) at offset \(fragments[bad].offset) extends past end of file (\(fileSize) bytes)")
            }
            return track
        }

        /// Reads sample `index` (0-based) from the file.
        func sampleData(_ index: Int) throws -> Data {
            guard index >= 0, index < sampleCount else {
                throw ParseError("track \(trackID): sample index \(index) out of range 0..<\(sampleCount)")
            }
            guard index < sampleOffsets.count else {
                throw ParseError("track \(trackID): sample \(index) is not placed in any chunk (\(sampleOffsets.count) of \(sampleCount) placed)")
            }
            let bytes = try MP4File.readBytes(path: filePath, at: sampleOffsets[index], count: Int64(sampleSizes[index]))
            return Data(bytes)
        }
    }

    let path: String
    let fileSize: Int64
    let topLevelBoxes: [Box]
    /// The first `moov` box, with its known containers expanded.
    let moov: BoxNode
    let movieTimescale: UInt32
    let movieDuration: UInt64
    let tracks: [Track]

    var videoTracks: [Track] { tracks.filter(\.isVideo) }
    var audioTracks: [Track] { tracks.filter(\.isAudio) }
    func track(id: UInt32) -> Track? { tracks.first { $0.trackID == id } }
    func topLevelBoxes(ofType type: String) -> [Box] { topLevelBoxes.filter { $0.type == type } }

    /// A box's bytes, header included.
    func bytes(of node: BoxNode) throws -> [UInt8] {
        try Self.readBytes(path: path, at: node.box.offset, count: node.box.size)
    }

    /// The key names of QuickTime's moov/meta (mdta keys), in order.
    func metadataKeys() throws -> [String] {
        guard let keys = moov.find("meta/keys").first else { return [] }
        let raw = try bytes(of: keys)
        var c = Cursor(bytes: raw, pos: 12, end: raw.count, base: keys.box.offset, what: "keys")
        return try (0..<c.u32()).map { _ in
            let size = Int(try c.u32())
            _ = try c.fourCC() // namespace, mdta
            return String(decoding: try c.take(size - 8), as: UTF8.self)
        }
    }
    /// True when the first `moov` precedes the first `mdat` ("faststart").
    var isFastStart: Bool {
        guard let m = topLevelBoxes.firstIndex(where: { $0.type == "moov" }) else { return false }
        guard let d = topLevelBoxes.firstIndex(where: { $0.type == "mdat" }) else { return true }
        return m < d
    }

    init(path: String) throws {
        self.path = path
        let (size, boxes) = try Self.scanTopLevel(path: path)
        fileSize = size
        topLevelBoxes = boxes
        guard let moovBox = boxes.first(where: { $0.type == "moov" }) else {
            throw ParseError("\(path): no moov box (top level: \(boxes.map(\.type)))")
        }
        let bytes = try Self.readBytes(path: path, at: moovBox.offset, count: moovBox.size)
        let tree = ByteTree(bytes: bytes, base: moovBox.offset)
        moov = BoxNode(box: moovBox, children: try tree.children(from: Int(moovBox.headerSize), to: bytes.count, depth: 1))

        guard let mvhd = moov.children.first(where: { $0.type == "mvhd" }) else { throw ParseError("moov has no mvhd") }
        var c = try tree.fullBoxCursor(mvhd)
        // Version 1 widens creation/modification time and duration to 64 bits.
        try c.skip(c.version == 1 ? 16 : 8)
        movieTimescale = try c.u32()
        movieDuration = c.version == 1 ? try c.u64() : UInt64(try c.u32())
        let inMovie = try moov.children.filter { $0.type == "trak" }.map { try Self.parseTrack($0, tree: tree, path: path, fileSize: size) }
        fragmentCount = boxes.filter { $0.type == "moof" }.count
        guard fragmentCount > 0 else {
            tracks = inMovie
            return
        }
        let fragments = try Self.fragmentSamples(
            path: path, topLevel: boxes, moov: moov,
            decodeStarts: Dictionary(inMovie.map { ($0.trackID, $0.mediaDuration) }, uniquingKeysWith: { first, _ in first }))
        tracks = inMovie.map { $0.appending(fragments[$0.trackID] ?? [], fileSize: size) }
    }

    /// How many movie fragments (`moof`) the file has; their samples follow the moov's in each track.
    let fragmentCount: Int

    // MARK: - File access

    /// Walks the top-level box headers without reading payloads, so a large `mdat` costs nothing.
    private static func scanTopLevel(path: String) throws -> (Int64, [Box]) {
        let handle: FileHandle
        do { handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path)) } catch {
            throw ParseError("cannot open \(path): \(error)")
        }
        defer { try? handle.close() }
        guard let fileSize = Int64(exactly: try handle.seekToEnd()) else { throw ParseError("file too large") }
        var boxes: [Box] = []
        var pos: Int64 = 0
        while pos < fileSize {
            guard fileSize - pos >= 8 else { throw ParseError("truncated box header at offset \(pos): \(fileSize - pos) bytes left") }
            try handle.seek(toOffset: UInt64(pos))
            let header = [UInt8](try handle.read(upToCount: 16) ?? Data())
            var c = Cursor(bytes: header, pos: 0, end: header.count, base: pos, what: "top-level box header")
            let size32 = try c.u32()
            let type = try c.fourCC()
            var size = Int64(size32)
            var headerSize: Int64 = 8
            if size32 == 1 {
                guard let large = Int64(exactly: try c.u64()) else { throw ParseError("'\(type)' at \(pos): largesize overflows") }
                size = large
                headerSize = 16
            } else if size32 == 0 {
                size = fileSize - pos // "box extends to end of file"
            }
            guard size >= headerSize else { throw ParseError("'\(type)' at \(pos): size \(size) smaller than its header") }
            guard size <= fileSize - pos else {
                throw ParseError("'\(type)' at \(pos) is truncated: declares \(size) bytes, only \(fileSize - pos) left in file")
            }
            boxes.append(Box(type: type, offset: pos, size: size, headerSize: headerSize))
            pos += size
        }
        return (fileSize, boxes)
    }

    /// Reads exactly `count` bytes at `offset`, throwing if the range is outside the file.
    static func readBytes(path: String, at offset: Int64, count: Int64) throws -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw ParseError("cannot open \(path)") }
        defer { try? handle.close() }
        let fileSize = Int64(clamping: try handle.seekToEnd())
        guard offset >= 0, count >= 0, offset <= fileSize, count <= fileSize - offset else {
            throw ParseError("read of \(count) bytes at offset \(offset) is outside the file (\(fileSize) bytes)")
        }
        try handle.seek(toOffset: UInt64(offset))
        let data = try handle.read(upToCount: Int(count)) ?? Data()
        guard data.count == Int(count) else { throw ParseError("short read at \(offset): got \(data.count) of \(count) bytes") }
        return [UInt8](data)
    }

    // MARK: - Track parsing

    private static func parseTrack(_ trak: BoxNode, tree: ByteTree, path: String, fileSize: Int64) throws -> Track {
        func required(_ p: String) throws -> BoxNode {
            guard let node = trak.find(p).first else { throw ParseError("trak at \(trak.box.offset) has no \(p)") }
            return node
        }
        func optional(_ p: String) -> BoxNode? { trak.find(p).first }

        // tkhd: version 1 widens creation/modification time and duration to 64 bits.
        var c = try tree.fullBoxCursor(try required("tkhd"))
        let v1 = c.version == 1
        let tkhdFlags = c.flags
        try c.skip(v1 ? 16 : 8)
        let trackID = try c.u32()
        try c.skip(4)
        let tkhdDuration = v1 ? try c.u64() : UInt64(try c.u32())
        try c.skip(8 + 2) // reserved, layer
        let alternateGroup = try c.u16()
        try c.skip(2 + 2) // volume, reserved
        let matrix = try (0..<9).map { _ in Int32(bitPattern: try c.u32()) }
        let width = Double(try c.u32()) / 65536
        let height = Double(try c.u32()) / 65536

        c = try tree.fullBoxCursor(try required("mdia/mdhd"))
        let mdhdV1 = c.version == 1
        try c.skip(mdhdV1 ? 16 : 8)
        let mediaTimescale = try c.u32()
        let mdhdDuration = mdhdV1 ? try c.u64() : UInt64(try c.u32())
        let languageCode = try c.u16()

        // hdlr: QuickTime's component type ('mhlr') and ISO's pre_defined share the first field.
        c = try tree.fullBoxCursor(try required("mdia/hdlr"))
        try c.skip(4)
        let handlerType = try c.fourCC()

        var editList: [EditListEntry]?
        if let elst = optional("edts/elst") {
            c = try tree.fullBoxCursor(elst)
            let wide = c.version == 1
            editList = try c.entries(entrySize: wide ? 20 : 12) { c in
                let duration = wide ? Int64(bitPattern: try c.u64()) : Int64(try c.u32())
                let time = wide ? Int64(bitPattern: try c.u64()) : Int64(Int32(bitPattern: try c.u32()))
                let rate = Double(Int32(bitPattern: try c.u32())) / 65536 // 16.16 integer + fraction
                return EditListEntry(segmentDuration: duration, mediaTime: time, mediaRate: rate)
            }
        }

        let stbl = "mdia/minf/stbl/"
        /// Reads a FullBox table (u32 count + fixed-size entries) if the box exists.
        func table<T>(_ type: String, _ size: Int, _ read: (inout Cursor) throws -> T) throws -> (entries: [T], version: UInt8)? {
            guard let node = optional(stbl + type) else { return nil }
            var c = try tree.fullBoxCursor(node)
            return (try c.entries(entrySize: size, read), c.version)
        }
        var sampleFormat: String?
        var sampleEntryBoxes: [RawBox] = []
        var sampleEntryCount = 0
        if let stsd = optional(stbl + "stsd") {
            c = try tree.fullBoxCursor(stsd)
            sampleEntryCount = Int(try c.u32())
            if sampleEntryCount > 0 {
                let entryStart = c.pos
                let entrySize = Int(try c.u32())
                sampleFormat = try c.fourCC()
                sampleEntryBoxes = try tree.sampleEntryBoxes(at: entryStart, size: entrySize, handler: handlerType)
            }
        }
        let timeToSample = try table("stts", 8) { TimeToSampleEntry(count: try $0.u32(), delta: try $0.u32()) }?.entries ?? []
        // Version 0 offsets are unsigned on paper, but Apple and FFmpeg store negative
        // offsets there anyway (4294967256 == -40), so both versions read as Int32.
        let ctts = try table("ctts", 8) { CompositionOffsetEntry(count: try $0.u32(), offset: Int32(bitPattern: try $0.u32())) }
        let cttsTable = ctts?.entries
        let syncSamples = try table("stss", 4) { try $0.u32() }?.entries
        let sampleToChunk = try table("stsc", 12) {
            SampleToChunkEntry(firstChunk: try $0.u32(), samplesPerChunk: try $0.u32(), sampleDescriptionIndex: try $0.u32())
        }?.entries ?? []
        let stco = try table("stco", 4) { UInt64(try $0.u32()) }?.entries
        let co64 = stco == nil ? try table("co64", 8) { try $0.u64() }?.entries : nil
        let chunkOffsets = stco ?? co64 ?? []
        let chunkBoxType = stco != nil ? "stco" : co64 != nil ? "co64" : nil

        var uniformSize: UInt32 = 0
        var sampleSizes: [UInt32] = []
        var issues: [String] = []
        if let stsz = optional(stbl + "stsz") {
            c = try tree.fullBoxCursor(stsz)
            uniformSize = try c.u32()
            if uniformSize != 0 {
                // The count is not backed by table bytes here, so cap it before allocating.
                let count = try c.u32()
                guard count <= 20_000_000 else { throw ParseError("track \(trackID): implausible stsz sample_count \(count)") }
                sampleSizes = Array(repeating: uniformSize, count: Int(count))
            } else {
                sampleSizes = try c.entries(entrySize: 4) { try $0.u32() }
            }
        } else if optional(stbl + "stz2") != nil {
            issues.append("stz2 (compact sample sizes) is not supported")
        }

        // Derived per-sample tables. Every loop is bounded by sampleCount, so bogus counts
        // in stts/ctts/stsc cannot make us allocate or spin.
        let sampleCount = sampleSizes.count
        var mediaDuration: Int64 = 0
        var decodeTimes: [Int64] = []
        decodeTimes.reserveCapacity(sampleCount)
        var dts: Int64 = 0
        for entry in timeToSample {
            mediaDuration = mediaDuration &+ Int64(entry.count) &* Int64(entry.delta)
            for _ in 0..<min(Int(entry.count), sampleCount - decodeTimes.count) {
                decodeTimes.append(dts)
                dts = dts &+ Int64(entry.delta)
            }
        }
        let sttsTotal = timeToSample.reduce(Int64(0)) { $0 &+ Int64($1.count) }
        if sttsTotal != Int64(sampleCount) { issues.append("stts covers \(sttsTotal) samples, stsz has \(sampleCount)") }
        while decodeTimes.count < sampleCount { decodeTimes.append(dts) }

        var compositionOffsets: [Int32] = []
        compositionOffsets.reserveCapacity(sampleCount)
        if let cttsTable {
            for entry in cttsTable {
                let n = min(Int(entry.count), sampleCount - compositionOffsets.count)
                compositionOffsets.append(contentsOf: repeatElement(entry.offset, count: n))
            }
            let total = cttsTable.reduce(Int64(0)) { $0 &+ Int64($1.count) }
            if total != Int64(sampleCount) { issues.append("ctts covers \(total) samples, stsz has \(sampleCount)") }
        }
        while compositionOffsets.count < sampleCount { compositionOffsets.append(0) }

        var sampleOffsets: [Int64] = []
        sampleOffsets.reserveCapacity(sampleCount)
        placement: for (i, entry) in sampleToChunk.enumerated() {
            let first = Int(entry.firstChunk)
            let last = i + 1 < sampleToChunk.count ? Int(sampleToChunk[i + 1].firstChunk) - 1 : chunkOffsets.count
            guard first >= 1, last >= first else {
                issues.append("stsc entry \(i) has first_chunk \(first) and is followed by chunk \(last + 1)")
                break
            }
            for chunk in first...last {
                guard sampleOffsets.count < sampleCount else { break placement }
                guard chunk <= chunkOffsets.count else {
                    issues.append("stsc refers to chunk \(chunk), but there are \(chunkOffsets.count) chunk offsets")
                    break placement
                }
                guard var offset = Int64(exactly: chunkOffsets[chunk - 1]), offset < 1 << 62 else {
                    issues.append("chunk \(chunk) offset \(chunkOffsets[chunk - 1]) is absurd")
                    break placement
                }
                for _ in 0..<entry.samplesPerChunk {
                    guard sampleOffsets.count < sampleCount else { break placement }
                    sampleOffsets.append(offset)
                    offset += Int64(sampleSizes[sampleOffsets.count - 1])
                }
            }
        }
        if sampleOffsets.count < sampleCount {
            issues.append("stsc/chunk offsets place \(sampleOffsets.count) of \(sampleCount) samples")
        }
        if let bad = sampleOffsets.indices.first(where: { sampleOffsets[$0] + Int64(sampleSizes[$0]) > fileSize }) {
            issues.append("sample \(bad) at offset \(sampleOffsets[bad]) extends past end of file (\(fileSize) bytes)")
        }

        return Track(
            box: trak, trackID: trackID, tkhdFlags: tkhdFlags, alternateGroup: alternateGroup, tkhdDuration: tkhdDuration, width: width, height: height, matrix: matrix,
            handlerType: handlerType, mediaTimescale: mediaTimescale, mdhdDuration: mdhdDuration,
            languageCode: languageCode, language: decodeLanguage(languageCode), editList: editList,
            sampleFormat: sampleFormat, sampleEntryCount: sampleEntryCount, sampleEntryBoxes: sampleEntryBoxes, timeToSample: timeToSample, compositionOffsetTable: cttsTable,
            cttsVersion: ctts?.version, syncSamples: syncSamples, uniformSampleSize: uniformSize,
            sampleToChunk: sampleToChunk, chunkOffsets: chunkOffsets, chunkOffsetBoxType: chunkBoxType,
            sampleCount: sampleCount, sampleSizes: sampleSizes, decodeTimes: decodeTimes,
            compositionOffsets: compositionOffsets, sampleOffsets: sampleOffsets, mediaDuration: mediaDuration,
            issues: issues, filePath: path)
    }

    /// ISO packs three 5-bit letters (each minus 0x60); QuickTime uses values below 0x400
    /// for Macintosh language codes, which have no letters to decode.
    private static func decodeLanguage(_ code: UInt16) -> String? {
        let packed = code & 0x7FFF
        guard packed >= 0x400 else { return nil }
        let letters = [packed >> 10, packed >> 5, packed].map { UInt8(($0 & 0x1F) + 0x60) }
        guard letters.allSatisfy({ (0x61...0x7A).contains($0) }) else { return nil }
        return String(decoding: letters, as: UTF8.self)
    }
}

// MARK: - Byte-level helpers

// Nested (not top-level) so these names cannot collide with other test-support files.
extension MP4File {

    /// Bounds-checked big-endian reader over a byte range.
    struct Cursor {
        let bytes: [UInt8]
        var pos: Int
        let end: Int
        /// Absolute file offset of `bytes[0]`, for error messages.
        let base: Int64
        let what: String
        var version: UInt8 = 0
        var flags: UInt32 = 0

        init(bytes: [UInt8], pos: Int, end: Int, base: Int64, what: String) {
            self.bytes = bytes
            self.pos = pos
            self.end = min(end, bytes.count)
            self.base = base
            self.what = what
        }

        var remaining: Int { end - pos }

        mutating func take(_ n: Int) throws -> ArraySlice<UInt8> {
            guard n >= 0, n <= remaining else {
                throw ParseError("\(what) at offset \(base + Int64(pos)) is truncated: needs \(n) bytes, \(max(remaining, 0)) left")
            }
            defer { pos += n }
            return bytes[pos..<pos + n]
        }
        mutating func skip(_ n: Int) throws { _ = try take(n) }
        mutating func u16() throws -> UInt16 { try take(2).reduce(0) { $0 << 8 | UInt16($1) } }
        mutating func u32() throws -> UInt32 { try take(4).reduce(0) { $0 << 8 | UInt32($1) } }
        mutating func u64() throws -> UInt64 { try take(8).reduce(0) { $0 << 8 | UInt64($1) } }
        /// Box types are bytes, not text: map each byte to one scalar so "©xyz" survives.
        mutating func fourCC() throws -> String {
            String(String.UnicodeScalarView(try take(4).map { Unicode.Scalar($0) }))
        }

        /// Reads a u32 entry count followed by that many fixed-size entries. The count is
        /// checked against the bytes actually present before anything is allocated.
        mutating func entries<T>(entrySize: Int, _ read: (inout Cursor) throws -> T) throws -> [T] {
            let count = try u32()
            guard Int64(count) * Int64(entrySize) <= Int64(remaining) else {
                throw ParseError("\(what) declares \(count) entries of \(entrySize) bytes but has \(remaining) bytes")
            }
            var result: [T] = []
            result.reserveCapacity(Int(count))
            for _ in 0..<count { result.append(try read(&self)) }
            return result
        }
    }

    /// The loaded `moov` bytes plus the knowledge of which boxes are containers.
    struct ByteTree {
        let bytes: [UInt8]
        let base: Int64

        /// Boxes whose payload is just child boxes. Anything else is kept as a leaf and skipped.
        static let containers: Set<String> = ["moov", "trak", "edts", "mdia", "minf", "dinf", "stbl", "udta", "meta", "ilst", "mvex", "tref", "moof", "traf"]

        func children(from start: Int, to end: Int, depth: Int) throws -> [BoxNode] {
            var nodes: [BoxNode] = []
            var pos = start
            // QuickTime may end udta with a 32-bit zero terminator, so tolerate < 8 trailing bytes.
            while end - pos >= 8 {
                var c = Cursor(bytes: bytes, pos: pos, end: end, base: base, what: "box header")
                let size32 = try c.u32()
                let type = try c.fourCC()
                var size = Int64(size32)
                var headerSize = 8
                if size32 == 1 {
                    size = Int64(clamping: try c.u64())
                    headerSize = 16
                } else if size32 == 0 {
                    size = Int64(end - pos) // extends to the end of the parent
                }
                let at = base + Int64(pos)
                guard size >= Int64(headerSize), size <= Int64(end - pos) else {
                    throw ParseError("'\(type)' at offset \(at): size \(size) does not fit in its parent (\(end - pos) bytes left)")
                }
                let boxEnd = pos + Int(size)
                var kids: [BoxNode] = []
                if Self.containers.contains(type), depth < 32 {
                    var first = pos + headerSize
                    if type == "meta", isFullBoxMeta(at: first, end: boxEnd) { first += 4 }
                    kids = try children(from: first, to: boxEnd, depth: depth + 1)
                }
                nodes.append(.init(box: .init(type: type, offset: at, size: size, headerSize: Int64(headerSize)), children: kids))
                pos = boxEnd
            }
            return nodes
        }

        /// ISO `meta` is a FullBox (4 bytes of version/flags before its children); QuickTime's
        /// is a plain container. Both start with an `hdlr` child, so look for it at +4 or +8.
        private func isFullBoxMeta(at p: Int, end: Int) -> Bool {
            func typeIs(_ at: Int, _ fourCC: String) -> Bool {
                guard at >= 0, at + 4 <= end else { return false }
                return Array(bytes[at..<at + 4]) == Array(fourCC.utf8)
            }
            if typeIs(p + 4, "hdlr") { return false }
            if typeIs(p + 8, "hdlr") { return true }
            return p + 4 <= end && bytes[p..<p + 4].allSatisfy { $0 == 0 } // a zero "size" can only be version/flags
        }

        /// The child boxes of the sample entry at `start`: after 8 + 78 bytes
        /// for video, after 8 + 28 for sound (16 or 36 more in QuickTime's
        /// sound description versions 1 and 2).
        func sampleEntryBoxes(at start: Int, size: Int, handler: String) throws -> [RawBox] {
            var fixed: Int
            switch handler {
            case "vide": fixed = 86
            case "soun":
                var c = Cursor(bytes: bytes, pos: start + 16, end: start + size, base: base, what: "sound description")
                let version = try c.u16()
                fixed = 36 + (version == 1 ? 16 : version == 2 ? 36 : 0)
            default: return []
            }
            guard start + size <= bytes.count, fixed <= size else { throw ParseError("sample entry overruns stsd") }
            return try rawChildren(from: start + fixed, to: start + size, inWave: false)
        }

        private func rawChildren(from start: Int, to end: Int, inWave: Bool) throws -> [RawBox] {
            var boxes: [RawBox] = []
            var pos = start
            while end - pos >= 8 {
                var c = Cursor(bytes: bytes, pos: pos, end: end, base: base, what: "sample entry box")
                let size = Int(try c.u32())
                let type = try c.fourCC()
                guard size >= 8, size <= end - pos else { throw ParseError("'\(type)' in a sample entry overruns it") }
                boxes.append(RawBox(type: type, bytes: Array(bytes[pos..<pos + size]), inWave: inWave))
                if type == "wave" { boxes += try rawChildren(from: pos + 8, to: pos + size, inWave: true) }
                pos += size
            }
            return boxes
        }

        /// A cursor over a FullBox payload, positioned after version/flags (`version` is set).
        func fullBoxCursor(_ node: BoxNode) throws -> Cursor {
            let start = Int(node.box.payloadOffset - base)
            var c = Cursor(bytes: bytes, pos: start, end: Int(node.box.end - base), base: base, what: "'\(node.type)'")
            c.version = try c.take(1).first ?? 0
            c.flags = try c.take(3).reduce(0) { $0 << 8 | UInt32($1) }
            return c
        }
    }
}
