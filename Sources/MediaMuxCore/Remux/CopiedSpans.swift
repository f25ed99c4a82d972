import MediaMuxBase
internal import CFFmpeg

/// A copied track's packets, span after span (`MergePlan.Track.spans`). The
/// first span is read as the plan places the track. Each later one reads
/// its source again from the start of its range, placed where the packets
/// before it end, so that they tile the timeline with neither gap nor
/// overlap; the last is cut at the track's end like any copy. A loop of a
/// soundtrack whose packets stand alone (PCM, ALAC) is such a track: one
/// span for each play.
final class CopiedSpans: PacketSource {
    let timeBase: AVRational
    private let demuxer: DemuxerHandle
    private let track: MergePlan.Track
    private let tick: MediaTime
    private let first: TrackReader
    private var reader: TrackReader
    /// The spans after the current one.
    private var following: ArraySlice<MergePlan.Span>
    /// Ticks added to the current span's packets.
    private var shift: Int64 = 0
    /// The end of the latest packet handed out.
    private var reached: Int64 = .min
    private var packetsThisSpan = 0
    private let endTick: Int64

    init(demuxer: DemuxerHandle, track: MergePlan.Track) throws {
        self.demuxer = demuxer
        self.track = track
        tick = track.timeBase
        timeBase = AVRational(tick: track.timeBase)
        endTick = track.end.ticks(of: tick, rounding: .up)
        first = try TrackReader(demuxer: demuxer, track: track, end: track.end)
        reader = first
        // Held frames are the last packet's duration reaching the end (`makeFinal`).
        following = track.spans.dropFirst().filter { $0.decision == .copy }[...]
    }

    /// What the source's reading found (every span reads the same file): said once.
    var warnings: [String] { first.warnings }

    func next() throws -> PacketBuffer? {
        while true {
            if let buffer = try reader.next() {
                let packet = buffer.pointer
                packet.pointee.pts = packet.pointee.pts.saturatingAdding(shift)
                packet.pointee.dts = packet.pointee.dts.saturatingAdding(shift)
                reached = max(reached, packet.pointee.pts.saturatingAdding(max(packet.pointee.duration, 0)))
                packetsThisSpan += 1
                return buffer
            }
            guard let span = following.popFirst(), reached < endTick else { return nil }
            guard packetsThisSpan > 0 else {
                throw MediaMuxError.damaged(path: track.path, detail: "a repeat of the audio found no packets to play again")
            }
            try start(span)
        }
    }

    /// Reads the source again from the start of the span's range, its
    /// first sample placed where the last span's last packet ends.
    private func start(_ span: MergePlan.Span) throws {
        guard let range = span.sourceRange, span.source == MergePlan.Span.Source(path: track.path, streamIndex: track.streamIndex) else {
            throw MediaMuxError.unexpected(path: track.path, detail: "internal error: a copied span takes from another source than its track; please report it")
        }
        try demuxer.rewind(track.streamIndex)
        // The range's start, on the output timeline as the first span placed the source.
        let rangeStart = (range.lowerBound - track.origin).ticks(of: tick, rounding: .nearest)
        shift = reached.saturatingSubtracting(rangeStart)
        var play = track
        play.leadIn = nil
        play.end = track.end - MediaTime(ticks: shift, of: tick)
        play.sourceEnd = play.end
        reader = try TrackReader(demuxer: demuxer, track: play, end: play.end)
        packetsThisSpan = 0
    }

    func reuse(_ buffer: PacketBuffer) {
        reader.reuse(buffer)
    }

    /// The last packet lasts until the end: a soundtrack's is cut there, a
    /// video's reaches over a held last frame. A later span's reader counts
    /// from where it was placed; the end is the track's.
    func makeFinal(_ packet: UnsafeMutablePointer<AVPacket>) {
        if reader === first {
            first.makeFinal(packet)
        } else {
            reader.trim(packet, to: endTick.saturatingSubtracting(packet.pointee.dts))
        }
    }

    /// The first span must be whole; the later ones read the same packets.
    func checkComplete(declaredPackets: Int?) throws {
        try first.checkComplete(declaredPackets: declaredPackets)
    }
}
