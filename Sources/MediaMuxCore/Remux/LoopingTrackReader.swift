import MediaMuxBase
internal import CFFmpeg

/// A soundtrack copied again and again up to the track's end (`MergePlan.Loop`),
/// for codecs whose packets stand alone (PCM, ALAC). Each play is a fresh
/// read of the source from its start, placed where the play before ended,
/// so that the packets tile the timeline with neither gap nor overlap. The
/// last play is cut to the sample like any copied soundtrack.
final class LoopingTrackReader: PacketSource {
    let timeBase: AVRational
    private let demuxer: DemuxerHandle
    private let track: MergePlan.Track
    private let tick: MediaTime
    private let firstPlay: TrackReader
    private var reader: TrackReader
    /// Ticks added to the current play's packets.
    private var shift: Int64 = 0
    /// Where the source's first sample lies on the output timeline in the first play's placing.
    private let sourceStartTick: Int64
    private let endTick: Int64
    /// The end of the latest packet handed out.
    private var reached: Int64 = .min
    private var packetsThisPlay = 0

    init(demuxer: DemuxerHandle, track: MergePlan.Track, loop: MergePlan.Loop) throws {
        self.demuxer = demuxer
        self.track = track
        tick = track.timeBase
        timeBase = AVRational(tick: track.timeBase)
        sourceStartTick = (track.sourceEnd - loop.period).ticks(of: tick, rounding: .nearest)
        endTick = track.end.ticks(of: tick, rounding: .up)
        firstPlay = try TrackReader(demuxer: demuxer, track: track, end: track.end)
        reader = firstPlay
    }

    /// What the source's reading found (every play reads the same file): said once.
    var warnings: [String] { firstPlay.warnings }

    func next() throws -> PacketBuffer? {
        while true {
            if let buffer = try reader.next() {
                let packet = buffer.pointer
                packet.pointee.pts = packet.pointee.pts.saturatingAdding(shift)
                packet.pointee.dts = packet.pointee.dts.saturatingAdding(shift)
                reached = max(reached, packet.pointee.pts.saturatingAdding(max(packet.pointee.duration, 0)))
                packetsThisPlay += 1
                return buffer
            }
            guard reached < endTick else { return nil }
            guard packetsThisPlay > 0 else {
                throw MediaMuxError.damaged(path: track.path, detail: "a repeat of the audio found no packets to play again")
            }
            try startNextPlay()
        }
    }

    /// Reads the source again from its start, its first sample placed where
    /// the last play's last packet ends.
    private func startNextPlay() throws {
        try demuxer.rewind(track.streamIndex)
        shift = reached.saturatingSubtracting(sourceStartTick)
        var play = track
        play.leadIn = nil
        play.end = track.end - MediaTime(ticks: shift, of: tick)
        play.sourceEnd = play.end
        reader = try TrackReader(demuxer: demuxer, track: play, end: play.end)
        packetsThisPlay = 0
    }

    func reuse(_ buffer: PacketBuffer) {
        reader.reuse(buffer)
    }

    /// The last packet ends exactly at the end.
    func makeFinal(_ packet: UnsafeMutablePointer<AVPacket>) {
        reader.trim(packet, to: endTick.saturatingSubtracting(packet.pointee.dts))
    }

    /// The first play must be whole; the later ones read the same packets.
    func checkComplete(declaredPackets: Int?) throws {
        try firstPlay.checkComplete(declaredPackets: declaredPackets)
    }
}
