import MediaMuxBase
internal import CFFmpeg

/// A copied track's packets, span after span (`MergePlan.Track.spans`),
/// each span read from its own source (`SpanReaders`). The first span is
/// read as the plan places the track. Each later one reads its source from
/// the start of its range, placed where the packets before it end, so that
/// they tile the timeline with neither gap nor overlap; the last is cut at
/// the track's end like any copy. A loop of a soundtrack whose packets stand
/// alone (PCM, ALAC) is such a track: one span for each play. The planner
/// keeps one sample entry for the track: the spans' sources agree, and a
/// later span starts at a sync sample.
///
/// A composition's clips (spans with a `Join`) are placed where the plan
/// places them instead, their decode times lowered as the plan says (see
/// `MergePlan.Span.Join`); what a clip's reader
/// hands out to be shown before its start (leading pictures) is left out.
final class CopiedSpans: PacketSource {
    let timeBase: AVRational
    private let readers: SpanReaders
    private let tick: MediaTime
    private let kind: MediaMuxError.StreamKind
    /// Ticks added to the current span's packets.
    private var shift: Int64 = 0
    /// Ticks the current span's decode times are lowered by, beyond `shift`.
    private var decodeLowering: Int64 = 0
    /// The current span is a clip of a composition.
    private var joins: Bool
    /// The current span's first packet is yet to come, and begins a clip after the first.
    private var splices = false
    /// The end of the latest packet handed out.
    private var reached: Int64 = .min
    private var packetsThisSpan = 0
    private let endTick: Int64

    init(inputs: SpanInputs, track: MergePlan.Track) throws {
        readers = try SpanReaders(inputs: inputs, track: track, decision: .copy)
        tick = track.timeBase
        kind = track.role.kind
        timeBase = AVRational(tick: track.timeBase)
        endTick = track.end.ticks(of: tick, rounding: .up)
        let first = track.spans.first { $0.decision == .copy }?.join
        joins = first != nil
        decodeLowering = first?.decodeLowering.ticks(of: track.timeBase, rounding: .nearest) ?? 0
    }

    var warnings: [String] { readers.warnings }

    func next() throws -> PacketBuffer? {
        while true {
            if let buffer = try readers.current.next() {
                let packet = buffer.pointer
                if joins, packet.pointee.pts < 0 {
                    readers.current.reuse(buffer)
                    continue
                }
                if splices {
                    // The first picture of a clip after the first: a splice point.
                    splices = false
                    try readers.current.markSplice(packet)
                }
                packet.pointee.pts = packet.pointee.pts.saturatingAdding(shift)
                packet.pointee.dts = packet.pointee.dts.saturatingAdding(shift).saturatingSubtracting(decodeLowering)
                reached = max(reached, packet.pointee.pts.saturatingAdding(max(packet.pointee.duration, 0)))
                packetsThisSpan += 1
                return buffer
            }
            guard reached < endTick, readers.hasFollowing else { return nil }
            guard packetsThisSpan > 0 else {
                throw MediaMuxError.damaged(path: readers.current.demuxer.path, detail: "a span of its \(kind.rawValue) found no packets to copy")
            }
            if let join = readers.nextSpan?.join, let span = try readers.begin(placed: nil)?.span {
                // A clip, where the plan places it.
                joins = true
                splices = true
                shift = span.place.ticks(of: tick, rounding: .nearest)
                decodeLowering = join.decodeLowering.ticks(of: tick, rounding: .nearest)
            } else {
                // The next span's source from the start of its range, its first
                // sample placed where the last span's last packet ends.
                _ = try readers.begin(placed: MediaTime(ticks: reached, of: tick))
                joins = false
                shift = reached
                decodeLowering = 0
            }
            packetsThisSpan = 0
        }
    }

    func reuse(_ buffer: PacketBuffer) {
        readers.current.reuse(buffer)
    }

    /// The last packet lasts until the end: a soundtrack's is cut there, a
    /// video's reaches over a held last frame. A later span's reader counts
    /// from where it was placed; the end is the track's.
    func makeFinal(_ packet: UnsafeMutablePointer<AVPacket>) {
        if readers.current === readers.first {
            readers.first.makeFinal(packet)
        } else {
            readers.current.trim(packet, to: endTick.saturatingSubtracting(packet.pointee.dts))
        }
    }

    func checkComplete(declaredPackets: Int?) throws {
        try readers.checkComplete(declaredPackets: declaredPackets)
    }
}
