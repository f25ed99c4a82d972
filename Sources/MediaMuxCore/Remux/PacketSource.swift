import MediaMuxBase
internal import CFFmpeg

/// Where the packets of one output track come from: the input's own packets
/// (`TrackReader`) or a track decoded and encoded (`EncodedAudioReader`,
/// `EncodedVideoReader`).
/// Either hands them out in decode order, on the output's timeline, and cut
/// at the plan's end.
protocol PacketSource: AnyObject {
    /// The time base of the packets handed out.
    var timeBase: AVRational { get }
    /// The next packet; nil when the track is done. The caller owns it until
    /// it hands it back with `reuse`.
    func next() throws -> PacketBuffer?
    func reuse(_ buffer: PacketBuffer)
    /// Called on the last packet: make it last until the end.
    func makeFinal(_ packet: UnsafeMutablePointer<AVPacket>)
    /// Throws when the input stopped short of what it declares.
    func checkComplete(declaredPackets: Int?) throws
    /// What went wrong without stopping the track, for the report.
    var warnings: [String] { get }
    /// Packets that could not be decoded and were passed over (decoded tracks only).
    var damagedPackets: Int { get }
}

extension PacketSource {
    var warnings: [String] { [] }
    var damagedPackets: Int { 0 }
}

extension TrackReader: PacketSource {}

/// The packets a source has made ready and not yet handed out, in order,
/// and the buffers handed back for the next ones: a demuxer or an encoder
/// gives a few packets at a turn, and the muxer takes them one at a time.
struct PacketQueue {
    private var ready: [PacketBuffer] = []
    private var readyIndex = 0
    private var spare: [PacketBuffer] = []

    var isEmpty: Bool { readyIndex == ready.count }

    /// The packet `pop` would hand out next.
    var front: UnsafeMutablePointer<AVPacket>? { readyIndex < ready.count ? ready[readyIndex].pointer : nil }

    /// The oldest packet not yet handed out, or nil when none is waiting.
    mutating func pop() -> PacketBuffer? {
        guard readyIndex < ready.count else { return nil }
        let packet = ready[readyIndex]
        readyIndex += 1
        if readyIndex == ready.count {
            ready.removeAll(keepingCapacity: true)
            readyIndex = 0
        }
        return packet
    }

    /// Puts packets at the back of the queue.
    mutating func push<Buffers: Sequence<PacketBuffer>>(_ buffers: Buffers) {
        ready.append(contentsOf: buffers)
    }

    /// A buffer to read or receive the next packet into: one handed back, or a new one.
    mutating func blankBuffer() throws -> PacketBuffer {
        try spare.popLast() ?? PacketBuffer()
    }

    /// Moves an encoder's packet into a buffer at the back of the queue (the
    /// encoder's packet is left blank), and returns it for its times to be set.
    mutating func push(moving packet: UnsafeMutablePointer<AVPacket>) throws -> UnsafeMutablePointer<AVPacket> {
        let buffer = try blankBuffer()
        av_packet_unref(buffer.pointer)
        av_packet_move_ref(buffer.pointer, packet)
        ready.append(buffer)
        return buffer.pointer
    }

    /// Takes buffers back for later packets.
    mutating func reuse<Buffers: Sequence<PacketBuffer>>(_ buffers: Buffers) {
        spare.append(contentsOf: buffers)
    }

    mutating func reuse(_ buffer: PacketBuffer) {
        spare.append(buffer)
    }
}
