import MediaMuxBase
internal import CFFmpeg

/// A video track encoded as the plan's encoding says, span after span: each
/// encode span's packets (`SpanReaders`, which read the packets a copy would
/// keep) decoded on a decoder of its own, and every picture handed, at its
/// time on the track, to the track's one encoder (`VideoSpanEncoder`), in
/// the track's time base whatever the sources' are, so that a variable frame
/// rate stays variable. A span's pictures before its start are dropped but
/// the one on screen there, which is shown from the start; those from its
/// end on are dropped. A later span is placed where the plan places it, and
/// the picture before it is shown until then, over a held span too. Handed
/// out a few packets at a time.
final class EncodedVideoReader: PacketSource {
    let timeBase: AVRational
    private let readers: SpanReaders
    private let track: MergePlan.Track
    /// The span being decoded.
    private var span: DecodedSpan
    /// The track's one encoder, which every span's pictures go to.
    private let encoder: VideoSpanEncoder
    /// The pictures the encoding was made for: a span whose source's differ says so (`Span.Reading.picture`).
    private let ownPicture: MergePlan.Span.SourcePicture?
    private let cancellation: CancellationFlag
    private let endTick: Int64
    /// Rejected packets, by source file, of the spans done.
    private var rejected: [(path: String, count: Int)] = []

    /// Frames handed to the encoder.
    var framesEncoded: Int { encoder.framesEncoded }

    /// Source packets decoded at each turn: enough to keep the muxer fed, few enough to keep memory flat.
    private static let packetsPerTurn = 8

    /// How the pictures are encoded: re-framed as the track's encoding says,
    /// or (a smart cut's frames) as decoded (`VideoSpanEncoder.init(cut:...)`).
    enum Encoder {
        case reframing(VideoEncoding, globalHeaders: Bool)
        case cut(CutEncoding, frameRate: AVRational)
    }

    convenience init(
        inputs: SpanInputs, track: MergePlan.Track, encoding: VideoEncoding, output: String, globalHeaders: Bool, cancellation: CancellationFlag
    ) throws {
        try self.init(inputs: inputs, track: track, encoder: .reframing(encoding, globalHeaders: globalHeaders), output: output, cancellation: cancellation)
    }

    init(inputs: SpanInputs, track: MergePlan.Track, encoder kind: Encoder, output: String, cancellation: CancellationFlag) throws {
        self.cancellation = cancellation
        self.track = track
        readers = try SpanReaders(inputs: inputs, track: track, decision: .encode)
        let inputStream = try readers.inputs.own.plannedStream(track.streamIndex, kind: .video)
        timeBase = readers.first.timeBase
        endTick = track.end.ticks(of: track.timeBase, rounding: .up)
        span = try DecodedSpan(
            reader: readers.first, stream: inputStream, place: 0, end: readers.firstEnd.ticks(of: track.timeBase, rounding: .up))
        switch kind {
        case .reframing(let encoding, let globalHeaders):
            encoder = try VideoSpanEncoder(
                encoding: encoding, stream: inputStream, timeBase: timeBase, globalHeaders: globalHeaders, path: track.path, output: output)
            ownPicture = .init(turn: encoding.turn, shown: encoding.picture)
        case .cut(let cut, let frameRate):
            encoder = try VideoSpanEncoder(cut: cut, stream: inputStream, frameRate: frameRate, timeBase: timeBase, path: track.path, output: output)
            ownPicture = nil
        }
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
        try readers.checkComplete(declaredPackets: declaredPackets)
    }

    var damagedPackets: Int { rejected.reduce(span.decoder.rejectedPackets) { $0 + $1.count } }

    var warnings: [String] {
        var counts: [(path: String, count: Int)] = []
        for (path, count) in rejected + [(span.decoder.path, span.decoder.rejectedPackets)] where count > 0 {
            if let index = counts.firstIndex(where: { $0.path == path }) { counts[index].count += count } else { counts.append((path, count)) }
        }
        let damaged = counts.map { path, count in
            "\(path): \(count) damaged video frame\(count == 1 ? "" : "s") could not be decoded and \(count == 1 ? "was" : "were") left out"
        }
        return damaged
    }

    /// Decodes a few source packets and encodes what they give; at a span's
    /// end, the next span; after the last, the encoder's delayed packets.
    private func advance() throws {
        for _ in 0..<Self.packetsPerTurn {
            if cancellation.isRaised { throw MediaMuxError.cancelled(path: track.path) }
            guard try span.decodeNext(into: encoder) else {
                if try beginNextSpan() { continue }
                try encoder.finish(until: endTick)
                return
            }
        }
    }

    /// Moves on to the next encode span, its decoder on its own stream; false after the last.
    private func beginNextSpan() throws -> Bool {
        guard readers.hasFollowing else { return false }
        rejected.append((span.decoder.path, span.decoder.rejectedPackets))
        guard let (next, view) = try readers.begin(placed: nil) else { return false }
        let place = next.place.ticks(of: track.timeBase, rounding: .nearest)
        let stream = try readers.current.demuxer.plannedStream(view.streamIndex, kind: .video)
        if let picture = next.source?.reading?.picture ?? ownPicture { try encoder.takePictures(turned: picture.turn, shown: picture.shown) }
        span = try DecodedSpan(reader: readers.current, stream: stream, place: place, end: view.end.ticks(of: track.timeBase, rounding: .up))
        return true
    }
}

/// One span's pictures: its packets decoded, and each picture handed to the
/// track's encoder at its time on the track (the span's own time, from the
/// start of its range, plus where the span is placed).
private final class DecodedSpan {
    let decoder: DecoderHandle
    private let reader: TrackReader
    /// Where the span's tick 0 lies on the track, in the track's ticks.
    private let place: Int64
    /// The span's end, in its own ticks: pictures from here on are left out.
    private let end: Int64
    /// The latest picture before the start, held until the next tells whether
    /// it is on screen at the start. Pictures from the start on go straight to
    /// the encoder, so that none is kept beyond the decoder's own.
    private var held: FrameBuffer?
    private var heldTime: Int64 = 0
    private var spareFrame: FrameBuffer
    private var done = false

    init(reader: TrackReader, stream: UnsafeMutablePointer<AVStream>, place: Int64, end: Int64) throws {
        self.reader = reader
        self.place = place
        self.end = end
        // Two frame threads, not the cores + 1 of FFmpeg's automatic count: the
        // encoder, on a thread of its own, is the bottleneck, and each decoder
        // thread holds a picture (the frame handed to the encoder costs one).
        decoder = try DecoderHandle(stream: stream, path: reader.demuxer.path, threads: 2)
        // The reader's packets are in the track's time base, whatever the stream's.
        decoder.context.pointee.pkt_timebase = reader.timeBase
        spareFrame = try FrameBuffer()
    }

    /// Decodes the next packet and hands the encoder what it gives; at the
    /// span's end, the decoder's last pictures and the one held. False once done.
    func decodeNext(into encoder: VideoSpanEncoder) throws -> Bool {
        guard !done else { return false }
        guard let buffer = try reader.next() else {
            try decode(nil, into: encoder)
            if let current = held {
                held = nil
                // On screen from the start until the next picture, the next span's or the track's end.
                try encoder.encode(current, at: place + max(heldTime, 0))
            }
            done = true
            return false
        }
        defer { reader.reuse(buffer) }
        try decode(buffer.pointer, into: encoder)
        return true
    }

    /// Hands the decoder a packet (nil: the end), taking the pictures it gives meanwhile.
    private func decode(_ packet: UnsafeMutablePointer<AVPacket>?, into encoder: VideoSpanEncoder) throws {
        while true {
            let accepted = try decoder.send(packet)
            while case .frame = try decoder.receive(into: spareFrame) { try take(spareFrame, into: encoder) }
            if accepted { return }
        }
    }

    /// A decoded picture, in presentation order. Before the start it is held:
    /// the picture held before it is dropped, unless this one comes after the
    /// start, which makes that one the picture on screen at the start.
    private func take(_ frame: FrameBuffer, into encoder: VideoSpanEncoder) throws {
        guard let time = frame.timestamp, time < end else {
            av_frame_unref(frame.pointer)
            return
        }
        let released = held
        if let current = held {
            held = nil
            if time > 0 {
                // The picture on screen at the start is shown from the start.
                try encoder.encode(current, at: place + max(heldTime, 0), until: place + time)
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
        try encoder.encode(frame, at: place + time)
    }
}
