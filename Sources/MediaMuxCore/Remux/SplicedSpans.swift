import MediaMuxBase
internal import CFFmpeg

/// A composition's copied video whose frame-exact cuts fall inside GOPs
/// (`MergePlan.Track.cutEncoding`): its spans in the track's order, each
/// read from its source when the one before is done. A copied span's
/// packets are the source's; an encoded span's frames are decoded and
/// encoded anew by an encoder of its own (`EncodedVideoReader`, cut mode),
/// its packets rewritten into the sample entry's form: NAL units after
/// 4-byte lengths rather than start codes, and no parameter sets in them.
/// Every span is placed where the plan places it, its decode times lowered
/// as its `Join` says; what a copied span's reader hands out to be shown
/// before its start (leading pictures) is left out.
///
/// The output's sample entry takes `configuration`: the source's avcC with
/// the encoders' sequence and picture parameter sets added under an id of
/// their own. Every encoder of the track is opened alike and must write the
/// same sets; one that does not stops the merge rather than write frames
/// the entry does not describe.
final class SplicedSpans: PacketSource {
    let timeBase: AVRational
    /// The avcC the output's sample entry takes.
    let configuration: [UInt8]
    private let track: MergePlan.Track
    private let cut: CutEncoding
    private let inputs: SpanInputs
    private let output: String
    private let cancellation: CancellationFlag
    /// The frame rate every encoder is told (the first clip's), which its parameter sets say.
    private let frameRate: AVRational
    /// The encoders' parameter sets, as `configuration` holds them.
    private let encoderSets: [[UInt8]]
    private let tick: MediaTime
    private let endTick: Int64
    private var following: ArraySlice<MergePlan.Span>
    private var current: Reader?
    /// Ticks added to the current span's presentation and decode times, and taken off its decode times.
    private var shift: Int64 = 0
    private var decodeLowering: Int64 = 0
    /// The current span's first packet is yet to come, and begins a clip after the first.
    private var splices = false
    private var packetsThisSpan = 0
    private var spanWarnings: [String] = []
    private var failure: (any Error)?
    private var rejected = 0
    /// Frames encoded at cuts so far.
    private(set) var framesEncoded = 0

    private enum Reader {
        case copied(TrackReader, declared: Int?)
        case encoded(EncodedVideoReader)
    }

    init(inputs: SpanInputs, track: MergePlan.Track, cut: CutEncoding, output: String, cancellation: CancellationFlag) throws {
        self.inputs = inputs
        self.track = track
        self.cut = cut
        self.output = output
        self.cancellation = cancellation
        tick = track.timeBase
        timeBase = AVRational(tick: track.timeBase)
        endTick = track.end.ticks(of: tick, rounding: .up)
        following = track.spans.filter { $0.source != nil }[...]
        let stream = try inputs.own.plannedStream(track.streamIndex, kind: .video)
        let rate = stream.pointee.avg_frame_rate
        frameRate = rate.num > 0 && rate.den > 0 ? rate : AVRational(num: 0, den: 1)
        // An encoder opened as each cut's will be, for its parameter sets.
        let probe = try VideoSpanEncoder(cut: cut, stream: stream, frameRate: frameRate, timeBase: timeBase, path: track.path, output: output)
        encoderSets = Self.parameterSets(of: probe.context)
        guard let joined = Self.configuration(cut, adding: encoderSets) else {
            throw MediaMuxError.unexpected(
                path: output, detail: "\(cut.encoder) wrote parameter sets for a cut's frames that cannot join the video's configuration (\(cut.summary))")
        }
        configuration = joined
    }

    /// The source's avcC or hvcC with the encoder's parameter sets added
    /// (HEVC's given the cut's ids first); nil when they are not one set of
    /// each kind, or do not join.
    private static func configuration(_ cut: CutEncoding, adding sets: [[UInt8]]) -> [UInt8]? {
        if cut.codec == "hevc" {
            func only(_ type: Int) -> [UInt8]? {
                let found = sets.filter { ($0.first.map { Int($0 >> 1) & 0x3F }) == type }
                return found.count == 1 ? found[0] : nil
            }
            let ids = cut.parameterSets
            guard let video = ids.video, let vps = only(HEVCConfiguration.videoParameterSet), let sps = only(HEVCConfiguration.sequenceParameterSet),
                  let pps = only(HEVCConfiguration.pictureParameterSet), HEVCParameterSets.pictureIDs(pps)?.picture == 0,
                  let newVPS = HEVCParameterSets.video(vps, id: video),
                  let newSPS = HEVCParameterSets.sequence(sps, video: video, sequence: ids.sequence),
                  let newPPS = HEVCParameterSets.picture(pps, picture: ids.picture, sequence: ids.sequence),
                  let source = HEVCConfiguration(cut.configuration), let level = HEVCParameterSets.sequenceLevel(sps),
                  let joined = source.adding(video: newVPS, sequence: newSPS, picture: newPPS, level: level)
            else { return nil }
            return joined.bytes
        }
        let sps = sets.filter { ($0.first ?? 0) & 0x1F == 7 }
        let pps = sets.filter { ($0.first ?? 0) & 0x1F == 8 }
        guard sps.count == 1, pps.count == 1, let source = AVCConfiguration(cut.configuration),
              let joined = source.adding(sequenceSet: sps[0], pictureSet: pps[0])
        else { return nil }
        return joined.bytes
    }

    /// The NAL units of an encoder's extradata (Annex B, as libx264 gives it with global headers).
    private static func parameterSets(of context: UnsafeMutablePointer<AVCodecContext>) -> [[UInt8]] {
        guard let data = context.pointee.extradata, context.pointee.extradata_size > 0 else { return [] }
        let bytes = UnsafeBufferPointer(start: data, count: Int(context.pointee.extradata_size))
        return AVCConfiguration.annexBUnits(bytes).map { Array(bytes[$0]) }
    }

    var warnings: [String] {
        var said: [String] = []
        for warning in spanWarnings where !said.contains(warning) { said.append(warning) }
        return said
    }

    var damagedPackets: Int { rejected }

    func next() throws -> PacketBuffer? {
        while true {
            if let reader = current {
                switch reader {
                case .copied(let copy, _):
                    if let buffer = try copy.next() {
                        let packet = buffer.pointer
                        // Shown before the clip's start: an open GOP's leading picture.
                        if packet.pointee.pts < 0 {
                            copy.reuse(buffer)
                            continue
                        }
                        if splices {
                            splices = false
                            try copy.markSplice(packet)
                        }
                        return place(buffer)
                    }
                case .encoded(let encoded):
                    if let buffer = try encoded.next() {
                        try inSampleForm(buffer.pointer)
                        splices = false
                        return place(buffer)
                    }
                }
                try endSpan()
            }
            guard let span = following.popFirst() else { return nil }
            try begin(span)
        }
    }

    private func place(_ buffer: PacketBuffer) -> PacketBuffer {
        let packet = buffer.pointer
        packet.pointee.pts = packet.pointee.pts.saturatingAdding(shift)
        packet.pointee.dts = packet.pointee.dts.saturatingAdding(shift).saturatingSubtracting(decodeLowering)
        packetsThisSpan += 1
        return buffer
    }

    /// Opens the span's source, read from the start of its range (`MergePlan.Track.reading(_:remaining:)`).
    private func begin(_ span: MergePlan.Span) throws {
        guard let view = track.reading(span, remaining: track.end - span.place) else {
            throw MediaMuxError.unexpected(path: track.path, detail: "internal error: a span to read has no source; please report it")
        }
        shift = span.place.ticks(of: tick, rounding: .nearest)
        decodeLowering = span.join?.decodeLowering.ticks(of: tick, rounding: .nearest) ?? 0
        splices = span.place > .zero()
        packetsThisSpan = 0
        switch span.decision {
        case .copy:
            let reader = try TrackReader(demuxer: inputs.demuxer(for: view), track: view, end: view.end, joining: true)
            current = .copied(reader, declared: view.sampleCount)
        case .encode:
            let encoded = try EncodedVideoReader(
                inputs: SpanInputs(track: view, cancellation: cancellation), track: view, encoder: .cut(cut, frameRate: frameRate),
                output: output, cancellation: cancellation)
            let sets = Self.parameterSets(of: encoded.encoderContext)
            guard sets == encoderSets else {
                throw MediaMuxError.unexpected(
                    path: output,
                    detail: "internal error: \(cut.encoder) wrote other parameter sets for the cut at \(span.place.secondsText()) s than the sample entry holds; please report it")
            }
            current = .encoded(encoded)
        case .hold, .silence:
            current = nil
        }
    }

    /// The current span is done: whether its source held what it declares is kept for `checkComplete`.
    private func endSpan() throws {
        guard let reader = current else { return }
        current = nil
        do {
            switch reader {
            case .copied(let copy, let declared):
                guard packetsThisSpan > 0 else {
                    throw MediaMuxError.damaged(path: copy.demuxer.path, detail: "a span of its video found no packets to copy")
                }
                spanWarnings += copy.warnings
                inputs.release(copy.demuxer)
                try copy.checkComplete(declaredPackets: declared)
            case .encoded(let encoded):
                spanWarnings += encoded.warnings
                rejected += encoded.damagedPackets
                framesEncoded += encoded.framesEncoded
                try encoded.checkComplete(declaredPackets: nil)
            }
        } catch let error as MediaMuxError where error.code == .damaged {
            failure = failure ?? error
        }
    }

    /// An encoded packet as the sample entry wants it: each NAL unit after
    /// its length in 4 bytes (the encoders write start codes), parameter
    /// sets and access unit delimiters left out (the entry holds the sets),
    /// HEVC's slices naming the cut's picture parameter set.
    private func inSampleForm(_ packet: UnsafeMutablePointer<AVPacket>) throws {
        guard let data = packet.pointee.data, packet.pointee.size > 0 else { return }
        let bytes = UnsafeBufferPointer(start: data, count: Int(packet.pointee.size))
        var units: [[UInt8]] = []
        for range in AVCConfiguration.annexBUnits(bytes) {
            let unit = Array(bytes[range])
            if cut.codec == "hevc" {
                let type = Int(unit[0] >> 1) & 0x3F
                if (32...35).contains(type) { continue }
                guard type < 32 else {
                    units.append(unit)
                    continue
                }
                guard let renamed = HEVCParameterSets.slice(unit, picture: cut.parameterSets.picture) else {
                    throw MediaMuxError.unexpected(
                        path: output, detail: "internal error: \(cut.encoder) wrote a slice whose parameter set could not be renamed; please report it")
                }
                units.append(renamed)
            } else if ![7, 8, 9].contains(unit[0] & 0x1F) {
                units.append(unit)
            }
        }
        let size = units.reduce(0) { $0 + 4 + $1.count }
        guard let buffer = av_buffer_alloc(size + Int(AV_INPUT_BUFFER_PADDING_SIZE)), let out = buffer.pointee.data else {
            throw MediaMuxError.outOfMemory("rewriting an encoded packet at a cut", path: output)
        }
        var offset = 0
        for unit in units {
            let length = UInt32(unit.count)
            out[offset] = UInt8(length >> 24)
            out[offset + 1] = UInt8((length >> 16) & 0xFF)
            out[offset + 2] = UInt8((length >> 8) & 0xFF)
            out[offset + 3] = UInt8(length & 0xFF)
            offset += 4
            for byte in unit {
                out[offset] = byte
                offset += 1
            }
        }
        memset(out + size, 0, Int(AV_INPUT_BUFFER_PADDING_SIZE))
        av_buffer_unref(&packet.pointee.buf)
        packet.pointee.buf = buffer
        packet.pointee.data = out
        packet.pointee.size = Int32(size)
    }

    func reuse(_ buffer: PacketBuffer) {
        switch current {
        case .copied(let copy, _): copy.reuse(buffer)
        case .encoded(let encoded): encoded.reuse(buffer)
        case nil: av_packet_unref(buffer.pointer)
        }
    }

    /// The last packet lasts until the track's end (a held last frame included).
    func makeFinal(_ packet: UnsafeMutablePointer<AVPacket>) {
        packet.pointee.duration = max(endTick.saturatingSubtracting(packet.pointee.dts), 0)
    }

    func checkComplete(declaredPackets: Int?) throws {
        try endSpan()
        if let failure { throw failure }
    }
}
