import MediaMuxBase
internal import CFFmpeg

/// The video re-framed as the plan's encoding says: the packets a copy
/// would keep (`TrackReader`), decoded on the decoder's frame threads,
/// turned and fitted by a libavfilter graph, and encoded, each frame at its
/// own presentation time, so that a variable frame rate stays variable.
/// Frames before the start are dropped but the one on screen there, which
/// is shown from the start; frames from the end on are dropped. Handed out
/// a few packets at a time.
final class EncodedVideoReader: PacketSource {
    let timeBase: AVRational
    private let source: TrackReader
    private let decoder: DecoderHandle
    /// The track's one encoder, which the decoded frames go to.
    private let encoder: VideoSpanEncoder
    private let path: String
    private let cancellation: CancellationFlag
    private let endTick: Int64
    /// The latest frame before the start, held until the next tells whether
    /// it is on screen at the start. Frames from the start on go straight to
    /// the encoder, so that no decoded picture is kept beyond the decoder's own.
    private var held: FrameBuffer?
    private var heldTime: Int64 = 0
    private var spareFrame: FrameBuffer

    /// Frames handed to the encoder.
    var framesEncoded: Int { encoder.framesEncoded }

    /// Source packets decoded at each turn: enough to keep the muxer fed, few enough to keep memory flat.
    private static let packetsPerTurn = 8

    init(
        demuxer: DemuxerHandle, track: MergePlan.Track, encoding: VideoEncoding, output: String, globalHeaders: Bool,
        cancellation: CancellationFlag
    ) throws {
        self.cancellation = cancellation
        path = track.path
        let inputStream = try demuxer.plannedStream(track.streamIndex, kind: .video)
        source = try TrackReader(demuxer: demuxer, track: track, end: track.end)
        timeBase = source.timeBase
        endTick = track.end.ticks(of: track.timeBase, rounding: .up)
        // Two frame threads, not the cores + 1 of FFmpeg's automatic count: the
        // encoder, on a thread of its own, is the bottleneck, and each decoder
        // thread holds a picture (the frame handed to the encoder costs one).
        decoder = try DecoderHandle(stream: inputStream, path: track.path, threads: 2)
        spareFrame = try FrameBuffer()
        encoder = try VideoSpanEncoder(
            encoding: encoding, stream: inputStream, timeBase: timeBase, globalHeaders: globalHeaders, path: track.path, output: output)
    }

    /// The encoder, for the muxer's stream parameters.
    var encoderContext: UnsafeMutablePointer<AVCodecContext> { encoder.context }

    func next() throws -> PacketBuffer? {
        while true {
            if let packet = encoder.next() { return packet }
            if encoder.isDrained { return nil }
            try advance()
        }
    }

    func reuse(_ buffer: PacketBuffer) {
        encoder.reuse(buffer)
    }

    /// The last packet in decode order lasts at least until the end, as a copy's does.
    func makeFinal(_ packet: UnsafeMutablePointer<AVPacket>) {
        let reach = endTick.saturatingSubtracting(packet.pointee.dts)
        if packet.pointee.duration < reach { packet.pointee.duration = reach }
    }

    func checkComplete(declaredPackets: Int?) throws {
        try source.checkComplete(declaredPackets: declaredPackets)
    }

    var damagedPackets: Int { decoder.rejectedPackets }

    var warnings: [String] {
        let count = decoder.rejectedPackets
        guard count > 0 else { return [] }
        return ["\(path): \(count) damaged video frame\(count == 1 ? "" : "s") could not be decoded and \(count == 1 ? "was" : "were") left out"]
    }

    /// Decodes a few source packets and encodes what they give; at the
    /// source's end, the rest and the encoder's delayed packets.
    private func advance() throws {
        for _ in 0..<Self.packetsPerTurn {
            if cancellation.isRaised { throw MediaMuxError.cancelled(path: path) }
            guard let buffer = try source.next() else {
                try decode(nil)
                if let current = held {
                    held = nil
                    try encoder.encode(current, at: max(heldTime, 0), until: endTick)
                }
                try encoder.finish(until: endTick)
                return
            }
            defer { source.reuse(buffer) }
            try decode(buffer.pointer)
        }
    }

    /// Hands the decoder a packet (nil: the end), taking the frames it gives meanwhile.
    private func decode(_ packet: UnsafeMutablePointer<AVPacket>?) throws {
        while true {
            let accepted = try decoder.send(packet)
            while case .frame = try decoder.receive(into: spareFrame) { try take(spareFrame) }
            if accepted { return }
        }
    }

    /// A decoded frame, in presentation order. Before the start it is held:
    /// the frame held before it is dropped, unless this one comes after the
    /// start, which makes that one the picture on screen at the start.
    private func take(_ frame: FrameBuffer) throws {
        guard let time = frame.timestamp, time < endTick else {
            av_frame_unref(frame.pointer)
            return
        }
        let released = held
        if let current = held {
            held = nil
            if time > 0 {
                // The picture on screen at the start is shown from the start.
                try encoder.encode(current, at: max(heldTime, 0), until: time)
            } else {
                av_frame_unref(current.pointer)
            }
        }
        if time < 0 {
            held = frame
            heldTime = time
            spareFrame = try released ?? FrameBuffer()
            return
        }
        try encoder.encode(frame, at: time)
    }
}
