import MediaMuxBase
internal import CFFmpeg

/// The inputs one output track's spans read, each file opened once for the
/// track (as its reading needs it: with or without the demuxer applying edit
/// lists, fragments read as reached) and rewound when a later span reads it
/// again. A file no later span reads is closed when its last span is done.
final class SpanInputs {
    private struct Key: Hashable {
        var path: String
        var ignoringEditLists: Bool
        var fragmentsAsReached: Bool
    }

    private let cancellation: CancellationFlag
    private var open: [Key: DemuxerHandle] = [:]
    /// Inputs read by a span already: the next span to read one rewinds it first.
    private var read: Set<Key> = []
    /// How many of the spans not yet begun read each input.
    private var spansLeft: [Key: Int] = [:]
    /// The track's own input, which its first span reads (a video's metadata comes from it).
    let own: DemuxerHandle

    init(track: MergePlan.Track, cancellation: CancellationFlag) throws {
        self.cancellation = cancellation
        for span in track.spans.dropFirst() {
            guard let view = track.reading(span, remaining: track.end) else { continue }
            spansLeft[Self.key(view), default: 0] += 1
        }
        let key = Self.key(track)
        own = try DemuxerHandle(
            path: track.path, cancellation: cancellation, ignoringEditLists: key.ignoringEditLists, fragmentsAsReached: key.fragmentsAsReached)
        open[key] = own
        read.insert(key)
    }

    private static func key(_ track: MergePlan.Track) -> Key {
        Key(
            path: track.path, ignoringEditLists: track.timestamps != .demuxer,
            fragmentsAsReached: track.isFragmented && (track.isCopied || track.readsOwnFragments != nil))
    }

    /// The input a later span's reading (`Track.reading(_:remaining:)`) reads, at the start of its stream.
    func demuxer(for view: MergePlan.Track) throws -> DemuxerHandle {
        let key = Self.key(view)
        spansLeft[key, default: 1] -= 1
        if let demuxer = open[key] {
            if read.contains(key) { try demuxer.rewind(view.streamIndex) }
            read.insert(key)
            return demuxer
        }
        let demuxer = try DemuxerHandle(
            path: view.path, cancellation: cancellation, ignoringEditLists: key.ignoringEditLists, fragmentsAsReached: key.fragmentsAsReached)
        open[key] = demuxer
        read.insert(key)
        return demuxer
    }

    /// A span is done with `demuxer`: closed unless a later span reads it.
    func release(_ demuxer: DemuxerHandle) {
        guard demuxer !== own, let key = open.first(where: { $0.value === demuxer })?.key, spansLeft[key, default: 0] <= 0 else { return }
        open[key] = nil
    }
}

extension MergePlan.Track {
    /// The track as a span after the first reads its source: the span's
    /// stream, read as its `Reading` says (or as the track reads its own),
    /// the start of the span's range at tick 0. It ends where the range
    /// ends, or where the track does (`remaining` after the span's start)
    /// when that comes first or when the range plays its source to the end
    /// (whose packets are then read to their end, as the track's first span
    /// reads them). Nothing before the start is hidden by an edit list in
    /// the middle of a track, so the reader keeps only what decodes the
    /// start (`TrackReader`'s `joining`). Nil for a span that reads no
    /// source (a held frame, silence).
    func reading(_ span: MergePlan.Span, remaining: MediaTime) -> MergePlan.Track? {
        guard let source = span.source, let range = span.sourceRange else { return nil }
        var view = self
        view.path = source.path
        view.streamIndex = source.streamIndex
        let reading = source.reading ?? .init(of: self)
        view.codec = reading.codec
        view.timestamps = reading.timestamps
        view.sampleCount = reading.sampleCount
        view.missingSamples = reading.missingSamples
        view.damagedFragment = reading.damagedFragment
        view.isFragmented = reading.isFragmented
        view.fragmentSamples = reading.fragmentSamples
        view.marksFirstRandomAccessPoint = reading.marksFirstRandomAccessPoint
        view.origin = range.lowerBound
        view.sourceStart = .zero()
        let whole = range.upperBound >= reading.end
        view.end = whole ? remaining : min(remaining, range.upperBound - range.lowerBound)
        view.sourceEnd = min(view.end, reading.end - range.lowerBound)
        view.leadIn = .zero()
        view.spans = [span]
        return view
    }
}

/// The readers of one track's spans of one decision (copied, or decoded to
/// be encoded), in order: the first span read as the plan places the track,
/// each later one from its source (`MergePlan.Track.reading(_:remaining:)`)
/// once the one before is done. Whether each source held what it declares
/// is known as its span ends, and said after the first span's own check, in
/// the order the track's spans play.
final class SpanReaders {
    let inputs: SpanInputs
    private let track: MergePlan.Track
    /// The first span's reader, placed as the plan places the track.
    let first: TrackReader
    /// The span being read.
    private(set) var current: TrackReader
    /// The later spans not yet begun.
    private var following: ArraySlice<MergePlan.Span>
    private var laterFailure: (any Error)?
    private var laterWarnings: [String] = []
    /// The samples the current later span's source declares.
    private var declared: Int?

    init(inputs: SpanInputs, track: MergePlan.Track, decision: MergePlan.Span.Decision) throws {
        self.track = track
        self.inputs = inputs
        let spans = track.spans.filter { $0.decision == decision }
        following = spans.dropFirst()
        // The first span reads to the track's end, unless a later one follows
        // a range that stops before its source does.
        let firstSpan = spans.first
        let playsToSourceEnd = firstSpan?.sourceRange.map { $0.upperBound >= track.sourceEnd + track.origin } ?? true
        let firstEnd = following.isEmpty || playsToSourceEnd ? track.end : firstSpan.map { min(track.end, $0.end) } ?? track.end
        first = try TrackReader(demuxer: inputs.own, track: track, end: firstEnd)
        current = first
    }

    /// Where the first span's reader stops, on the track's timeline.
    var firstEnd: MediaTime { first.end }

    /// What the sources' reading found: the first span's, and those of later spans from other files.
    var warnings: [String] { first.warnings + laterWarnings }

    /// Spans are left to begin.
    var hasFollowing: Bool { !following.isEmpty }

    /// The span `begin` begins next.
    var nextSpan: MergePlan.Span? { following.first }

    /// The next span, its reader begun, placed `placed` into the track (nil:
    /// where the plan places it); nil after the last.
    func begin(placed: MediaTime?) throws -> (span: MergePlan.Span, view: MergePlan.Track)? {
        guard let span = following.popFirst() else { return nil }
        guard let view = track.reading(span, remaining: track.end - (placed ?? span.place)) else {
            throw MediaMuxError.unexpected(path: track.path, detail: "internal error: a span to read has no source; please report it")
        }
        finishCurrent()
        current = try TrackReader(demuxer: inputs.demuxer(for: view), track: view, end: view.end, joining: true)
        declared = view.sampleCount
        return (span, view)
    }

    /// A later span's reader is done: whether its source held what it declares, kept for `checkComplete`.
    private func finishCurrent() {
        guard current !== first else { return }
        do {
            try current.checkComplete(declaredPackets: declared)
        } catch {
            laterFailure = laterFailure ?? error
        }
        if current.demuxer.path != track.path { laterWarnings += current.warnings }
        inputs.release(current.demuxer)
        current = first
    }

    /// The first span must be whole, and so must the sources of the later ones.
    func checkComplete(declaredPackets: Int?) throws {
        try first.checkComplete(declaredPackets: declaredPackets)
        finishCurrent()
        if let laterFailure { throw laterFailure }
    }
}
