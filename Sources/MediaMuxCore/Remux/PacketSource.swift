import MediaMuxBase
internal import CFFmpeg

/// Where the packets of one output track come from: the input's own packets
/// (`TrackReader`) or the soundtrack decoded and encoded (`EncodedAudioReader`).
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
