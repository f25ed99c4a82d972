import MediaMuxBase
import MediaMuxContainers
/// The boxes of a source's sample entry that a stream copy carries into the
/// output's, byte for byte: codec configuration (hvcC, avcC, av1C, vpcC,
/// esds), Dolby Vision (dvcC, dvvC, dvwC), colour (colr, mdcv, clli), shape
/// (pasp, clap, fiel), Apple's amve, channel layout (chan), and boxes no one
/// here knows. FFmpeg's muxer writes a subset of these; this puts the rest back.
public struct SampleEntryCarry: Sendable, Equatable {
    /// The source's sample-entry type: hvc1, hev1, avc1, mp4a...
    var sourceType: String
    /// In source order; the contents of a QuickTime `wave` box taken out of it.
    var boxes: [BoxNode]
    /// The source's whole sample entry, which replaces the muxer's as it
    /// is: for a codec this FFmpeg has no name for, whose packets the muxer
    /// writes under a stand-in codec (see `MergePlan.Track.standIn`).
    var wholeEntry: BoxNode?

    /// Boxes that only hold a sample entry together (wave's frma, its copy
    /// of the entry type, its terminator) or describe what the output is not
    /// (sinf: encryption), and padding.
    static let neverCarried: Set<String> = ["frma", "\0\0\0\0", "sinf", "free", "skip"]

    /// Boxes that describe the picture's colour, which an encoded copy keeps:
    /// QuickTime's and ISO's colr, HDR10's mastering display and light
    /// levels, Apple's ambient viewing environment.
    static let colourTypes: Set<String> = ["colr", "mdcv", "clli", "amve"]

    /// Configuration boxes that describe the bitstream as the sample-entry
    /// type declares it (hvc1 wants parameter sets complete in hvcC, hev1
    /// does not): kept as the muxer wrote them when the type changes.
    static let configurationTypes: Set<String> = ["hvcC", "avcC"]

    /// Dolby Vision entry types FFmpeg 5.1's muxer cannot write, with the
    /// types it writes for the same bitstream. Profile 5 (dvh1/dvhe) is not
    /// backward compatible: its pictures are IPT, not BT.2020, and a player
    /// that sees hvc1 shows them in the wrong colours. The output keeps the
    /// source's type, and with it the source's configuration boxes. Dolby
    /// Vision on AV1 (dav1, profile 10) is read as AV1 where FFmpeg knows
    /// the type (7.1) and written as av01.
    static let restoredTypes: [String: Set<String>] = [
        "dvh1": ["hvc1", "hev1"], "dvhe": ["hvc1", "hev1"], "dva1": ["avc1", "avc3"], "dvav": ["avc1", "avc3"],
        "dav1": ["av01"],
    ]

    /// The entry type the output gets in place of the muxer's, if any.
    public var restoredType: String? { Self.restoredTypes[sourceType] == nil && wholeEntry == nil ? nil : sourceType }

    /// Carries the source's entry whole, its type and head included.
    init(wholeEntry entry: BoxNode) {
        sourceType = entry.type
        boxes = []
        wholeEntry = entry
    }

    /// nil when the source has no boxes to carry.
    init?(sourceType: String, boxes: [BoxNode]) {
        var carried: [BoxNode] = []
        for box in boxes {
            if box.type == "wave", let inner = box.children {
                carried += inner.filter { $0.type != sourceType && $0.type != "mp4a" && !Self.neverCarried.contains($0.type) }
            } else if !Self.neverCarried.contains(box.type) {
                carried.append(box)
            }
        }
        guard !carried.isEmpty else { return nil }
        self.sourceType = sourceType
        self.boxes = carried
    }

    /// The carry without the boxes of `types`; nil when nothing is left.
    func leaving(_ types: Set<String>) -> SampleEntryCarry? {
        guard wholeEntry == nil else { return self }
        var left = self
        left.boxes.removeAll { types.contains($0.type) }
        return left.boxes.isEmpty ? nil : left
    }

    /// Bytes the carried boxes may add to the movie header.
    var byteCount: Int { wholeEntry?.byteCount ?? boxes.reduce(0) { $0 + $1.byteCount } }

    /// The output's sample entry with the source's boxes in it: each box the
    /// muxer wrote is replaced by the source's of the same type (the n-th by
    /// the n-th, inside `wave` too), and the source's other boxes follow the
    /// muxer's. The muxer's own extras (btrt) stay. A Dolby Vision type the
    /// muxer could not write replaces the one it wrote for the same codec.
    func merged(into entry: BoxNode) -> BoxNode {
        if let wholeEntry { return wholeEntry }
        guard let written = entry.children else { return entry }
        var remaining = boxes
        var merged = entry
        if Self.restoredTypes[sourceType]?.contains(entry.type) == true { merged.type = sourceType }
        let keepsConfiguration = merged.type != sourceType
        func replace(_ box: BoxNode) -> BoxNode {
            guard let index = remaining.firstIndex(where: { $0.type == box.type }) else { return box }
            let source = remaining.remove(at: index)
            guard keepsConfiguration && Self.configurationTypes.contains(box.type) else { return source }
            return merged.type == "hvc1" && box.type == "hvcC" ? Self.parameterSetsMarkedComplete(box) : box
        }
        merged.children = written.map { box in
            guard box.type == "wave", let inner = box.children else { return replace(box) }
            var wave = box
            wave.children = inner.map(replace)
            return wave
        }
        merged.children! += remaining.filter { !(keepsConfiguration && Self.configurationTypes.contains($0.type)) }
        return merged
    }
}

extension SampleEntryCarry {
    /// An hvcC whose VPS, SPS and PPS arrays say they are complete, as ISO
    /// 14496-15 (8.4.1) has it for `hvc1`, where no parameter set comes
    /// in-band: a hev1 source copied as hvc1 gets this from FFmpeg 7.1's
    /// muxer, not from 5.1's, which keeps the hev1 record's flags. The
    /// layout: 22 bytes of profile and sizes, the array count, then each
    /// array's completeness bit and NAL unit type, its count, and its units
    /// with 16-bit lengths. One that does not parse is left as it is.
    static func parameterSetsMarkedComplete(_ hvcC: BoxNode) -> BoxNode {
        var bytes = hvcC.head
        guard bytes.count >= 23 else { return hvcC }
        var at = 23
        for _ in 0..<Int(bytes[22]) {
            guard at + 3 <= bytes.count else { return hvcC }
            if (32...34).contains(Int(bytes[at] & 0x3F)) { bytes[at] |= 0x80 }
            let units = Int(bytes[at + 1]) << 8 | Int(bytes[at + 2])
            at += 3
            for _ in 0..<units {
                guard at + 2 <= bytes.count else { return hvcC }
                at += 2 + (Int(bytes[at]) << 8 | Int(bytes[at + 1]))
            }
            guard at <= bytes.count else { return hvcC }
        }
        var marked = hvcC
        marked.head = bytes
        return marked
    }
}

/// The boxes of a source's track, beside its header, edits and media, that
/// a stream copy carries: QuickTime's aperture dimensions (tapt), Apple's
/// audio gain (tgas), boxes no one here knows, and, with the metadata, the
/// track's own user data and meta. Never track references (tref): the
/// track IDs they name mean nothing in the output.
public struct TrackBoxCarry: Sendable, Equatable {
    var boxes: [BoxNode]

    static let neverCarried: Set<String> = ["tkhd", "edts", "mdia", "tref", "free", "skip"]
    /// Boxes that describe the recording rather than the stream.
    static let metadataTypes: Set<String> = ["udta", "meta"]

    /// nil when the source has nothing to carry.
    init?(boxes: [BoxNode], keepsMetadata: Bool) {
        let carried = boxes.filter {
            !Self.neverCarried.contains($0.type) && (keepsMetadata || !Self.metadataTypes.contains($0.type))
        }
        guard !carried.isEmpty else { return nil }
        self.boxes = carried
    }

    /// Bytes the carried boxes may add to the movie header.
    var byteCount: Int { boxes.reduce(0) { $0 + $1.byteCount } }

    /// The output's track with the source's boxes in it. A box the muxer
    /// wrote is replaced by the source's of the same type, except that
    /// user data joins the muxer's (entries of a type it has stay its own)
    /// and the muxer's meta stays. Others go before the edits and media, as
    /// QuickTime places tapt; user data and meta go last.
    func merged(into trak: BoxNode) -> BoxNode {
        guard var children = trak.children else { return trak }
        for box in boxes {
            if let index = children.firstIndex(where: { $0.type == box.type }) {
                switch box.type {
                case "udta":
                    let present = Set(children[index].children?.map(\.type) ?? [])
                    children[index].children = (children[index].children ?? []) + (box.children ?? []).filter { !present.contains($0.type) }
                case "meta":
                    continue
                default:
                    children[index] = box
                }
            } else if Self.metadataTypes.contains(box.type) {
                children.append(box)
            } else {
                children.insert(box, at: children.firstIndex { $0.type == "edts" || $0.type == "mdia" } ?? children.endIndex)
            }
        }
        var merged = trak
        merged.children = children
        return merged
    }
}

/// Which of FFmpeg's metadata tags (read as text) go into the output.
public enum TagSelection: Sendable, Equatable {
    /// Every tag but these.
    case all(except: Set<String>)
    /// These tags alone.
    case only(Set<String>)

    func contains(_ key: String) -> Bool {
        switch self {
        case .all(let except): return !except.contains(key)
        case .only(let keys): return keys.contains(key)
        }
    }
}

/// The metadata a merge writes, decided from the video's.
public struct MetadataCarry: Sendable, Equatable {
    /// The video file's tags, as FFmpeg's muxer writes them.
    var fileTags: TagSelection
    /// Each copied stream's tags.
    var streamTags: TagSelection
    /// Boxes added to the output's movie header as the video has them.
    var boxes: MovieMetadataBoxes
    /// What the output keeps, by name, for the report.
    public var kept: [String]

    /// Tags that describe the source's gapless layout, which the output's edit lists replace.
    static let gaplessTags: Set<String> = ["iTunSMPB"]

    /// QuickTime sources: the boxes themselves, so that typed values (a
    /// location, a lens model as a number) arrive as written, and the
    /// creation time through FFmpeg, which writes it into the movie header.
    /// The output names its own writing tool (©too). Other containers: the
    /// tags FFmpeg reads. Without `keep`: the tracks' language and handler
    /// name only, which say nothing about the recording.
    static func plan(video: MediaInfo, keep: Bool) -> MetadataCarry {
        guard keep else {
            return MetadataCarry(fileTags: .only([]), streamTags: .only(["language", "handler_name"]), boxes: MovieMetadataBoxes(), kept: [])
        }
        guard let source = video.movieMetadata else {
            let kept = video.tags.keys.filter { !gaplessTags.contains($0) }.sorted()
            return MetadataCarry(fileTags: .all(except: gaplessTags), streamTags: .all(except: []), boxes: MovieMetadataBoxes(), kept: kept)
        }
        let padding: Set<String> = ["free", "skip"]
        var keyed = source.keyedMeta
        keyed?.children?.removeAll { padding.contains($0.type) }
        let boxes = MovieMetadataBoxes(
            keyedMeta: keyed,
            userData: source.userData.filter { !padding.contains($0.type) && $0.type != "\u{A9}too" },
            tagItems: source.tagItems.filter { $0.type != "\u{A9}too" })
        var kept = boxes.names
        if video.tags["creation_time"] != nil { kept.append("creation_time") }
        return MetadataCarry(fileTags: .only(["creation_time"]), streamTags: .all(except: []), boxes: boxes, kept: kept)
    }
}
