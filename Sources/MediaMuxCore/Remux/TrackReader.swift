import MediaMuxBase
import MediaMuxContainers
internal import CFFmpeg

/// Reads one stream of an input in decode order and hands out exactly the
/// packets the plan keeps, with timestamps moved onto the output timeline.
///
/// The cut: a packet is kept when it is presented before the end, and so is
/// every packet decoded before a kept one (with B-frames a frame shown before
/// the end can depend on one shown after it; the edit list hides that one).
/// Once a packet's DTS reaches the end nothing later can be shown before it.
///
/// On the media's own timeline (`Timestamps.media`) the demuxer ignores the
/// edit list, so the reader also drops what lies before the start: every
/// packet decoded before the last keyframe shown at or before it. A track
/// with a `leadIn` (a soundtrack whose beginning is skipped) keeps only the
/// packets before the start that prime the decoder; a video read from a
/// later start (a preview clip's span), the packets from the keyframe shown
/// at or before it. When the skipped part is long it reads none of it: in
/// MP4, MOV and Matroska (whose packets are the container's samples,
/// wherever reading starts) it seeks to the sync sample at or before the
/// lead-in, on the media timeline too (whose decode times count from the
/// first sample's, which the index gives), so that a span 40 minutes into a
/// file reads what a span at its start reads.
final class TrackReader {
    let demuxer: DemuxerHandle
    let streamIndex: Int32
    /// A copied track whose samples all lie in movie fragments is read by
    /// MediaMux (`MergePlan.Track.readsOwnFragments`); nil reads the demuxer's packets.
    private let fragments: FragmentPackets?
    /// The time base of the packets handed out: the plan's working one.
    let timeBase: AVRational
    private let inputTimeBase: AVRational
    /// Packets come in a coarser time base than the plan's (WebM's milliseconds for audio).
    private let rescales: Bool
    /// Output-timeline ticks (input time base) before which a packet is presented.
    private let endTick: Int64
    /// Where the packets kept are cut: what is presented from here on is left out.
    let end: MediaTime
    /// Where the source's own content should reach: short of it, a file that ends is truncated.
    private let sourceEndTick: Int64
    /// Ticks of packets before the start kept to prime the decoder; nil keeps them all.
    private let leadInTicks: Int64?
    /// Where to seek before the first read (the input's time base): the
    /// first time a skipped beginning's lead-in needs; nil reads from the start.
    private var seekTarget: Int64?
    /// The seek has been made to this time, and the first packet after it is yet to be checked.
    private var landing: Int64?
    /// Reading began at a seek, so the packets before it were not counted.
    private var sought = false
    /// Sync samples sought back past one shown after the target, before reading from the start instead.
    private static let mostSeeksBack = 4
    private var seeksBack = 0
    /// Packets wholly before the start, held while they may be needed to prime the decoder.
    private var priming: [PacketBuffer] = []
    private var primed = false
    private let originTick: Int64
    /// Audio frames are trimmed so that the last one ends exactly at the end.
    private let trimsLastDuration: Bool
    /// PCM: bytes a sample takes in every channel, and the samples' time base,
    /// so that a trimmed packet loses the samples past its new end.
    private let pcmFrame: (bytes: Int32, tick: AVRational)?
    /// `.media`: ticks each DTS is lowered by, beyond undoing the demuxer's own shift.
    private let decodeShift: Int64?
    /// The demuxer's DTS of the first sample, which decodes at 0 on the media timeline.
    private var demuxerDecodeBase: Int64?
    private let marksFirstRandomAccessPoint: Bool
    private let codec: String
    private let missingSamples: Int?
    private let damagedFragment: String?
    /// Bytes of packets that hold no audio (junk before an MP3's first frame), left out.
    private var junkBytes = 0
    /// A fragmented file: how many of its samples are whole, as its fragment headers count them; nothing past them is read.
    private let wholeSamples: Int?
    /// "video" or "audio", for messages.
    private let kind: String
    private let isAudio: Bool
    /// Packets before the start, from the last keyframe seen at or before it.
    private var leadIn: [PacketBuffer] = []
    private var trimsLeadIn: Bool
    private let joining: Bool
    private var waiting: [PacketBuffer] = []
    private var queue = PacketQueue()
    private var finished = false
    /// Leading packets whose DTS the demuxer does not know yet.
    private var undated: [PacketBuffer] = []
    private var lastDTS: Int64?
    private var lastDuration: Int64 = 0
    /// What was seen, to tell a complete track from a truncated one.
    private(set) var packetsRead = 0
    private(set) var reachedEndOfFile = false
    /// The end of the latest-ending packet read, relative to the output's zero.
    private(set) var contentEnd: Int64 = .min

    /// - Parameter joining: the track is a span after the first
    ///   (`MergePlan.Track.reading(_:remaining:)`): no edit list can hide what
    ///   lies before its start, so it starts with the packet shown at the
    ///   start (for a video, the keyframe at or before it) and keeps none to
    ///   prime an audio decoder.
    init(demuxer: DemuxerHandle, track: MergePlan.Track, end: MediaTime, joining: Bool = false) throws {
        self.demuxer = demuxer
        streamIndex = Int32(track.streamIndex)
        let stream = demuxer.stream(track.streamIndex)
        inputTimeBase = stream.pointee.time_base
        timeBase = AVRational(tick: track.timeBase)
        rescales = av_cmp_q(inputTimeBase, timeBase) != 0
        originTick = track.origin.ticks(of: track.timeBase, rounding: .nearest)
        self.end = end
        endTick = end.ticks(of: track.timeBase, rounding: .up)
        sourceEndTick = min(end, track.sourceEnd).ticks(of: track.timeBase, rounding: .up)
        leadInTicks = track.leadIn?.ticks(of: track.timeBase, rounding: .up)
        trimsLastDuration = track.trimsLastSample
        let parameters = stream.pointee.codecpar.pointee
        pcmFrame = track.codec.hasPrefix("pcm_") && parameters.block_align > 0 && parameters.sample_rate > 0
            ? (parameters.block_align, AVRational(num: 1, den: parameters.sample_rate)) : nil
        let isVideo = stream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO
        if case .media(let shift) = track.timestamps {
            decodeShift = shift
        } else {
            decodeShift = nil
        }
        // A video read from a later start (a clip's span) keeps what decodes
        // the frame on screen there, as the media timeline always does.
        trimsLeadIn = joining || decodeShift != nil || (isVideo && track.leadIn != nil)
        self.joining = joining
        marksFirstRandomAccessPoint = track.marksFirstRandomAccessPoint
        codec = track.codec
        missingSamples = track.missingSamples
        damagedFragment = track.damagedFragment
        // A fragmented file's whole samples are counted from its fragment headers.
        wholeSamples = track.isFragmented ? track.sampleCount : nil
        kind = isVideo ? "video" : "audio"
        isAudio = !isVideo
        if let samples = track.readsOwnFragments {
            fragments = try FragmentPackets(
                path: demuxer.path, samples: samples, isAudio: isAudio, ignoringEditList: decodeShift != nil,
                cancellation: demuxer.cancellation)
        } else {
            fragments = nil
        }
        demuxer.keepOnly(track.streamIndex)
        // The media timeline counts decode times from the first sample's,
        // which a seek skips: its index entry gives it instead.
        let firstDecodeTime = avformat_index_get_entry(stream, 0)?.pointee.timestamp
        seekTarget = fragments == nil && !track.isFragmented && (decodeShift == nil || firstDecodeTime != nil)
            && demuxer.packetsAreContainerSamples
            ? Self.seekTarget(stream, origin: originTick, leadIn: leadInTicks, in: timeBase) : nil
        if seekTarget != nil, decodeShift != nil, let firstDecodeTime {
            demuxerDecodeBase = rescales ? av_rescale_q(firstDecodeTime, inputTimeBase, timeBase) : firstDecodeTime
        }
    }

    /// A skip shorter than this is read through rather than sought past.
    static let shortestSkipSought = MediaTime(value: 1, timescale: 2)

    /// The input time of the first packet a skipped beginning's lead-in
    /// needs (the output's zero less the lead-in), when it lies more than
    /// `shortestSkipSought` past the stream's first packet; nil otherwise.
    private static func seekTarget(
        _ stream: UnsafeMutablePointer<AVStream>, origin: Int64, leadIn: Int64?, in timeBase: AVRational
    ) -> Int64? {
        guard let leadIn else { return nil }
        let inputBase = stream.pointee.time_base
        let target = av_rescale_q_rnd(
            origin.saturatingSubtracting(leadIn), timeBase, inputBase, AVRounding(rawValue: AV_ROUND_DOWN.rawValue | AV_ROUND_PASS_MINMAX.rawValue))
        let first = avformat_index_get_entry(stream, 0)?.pointee.timestamp ?? stream.pointee.start_time
        let start = first == noTimestamp ? 0 : first
        let skipped = MediaTime(ticks: target.saturatingSubtracting(start), in: inputBase)
        return skipped > shortestSkipSought ? target : nil
    }

    /// The next kept packet, its timestamps relative to the output's zero in
    /// the input time base; nil when the track is done. The caller owns it
    /// until it hands it back with `reuse`.
    func next() throws -> PacketBuffer? {
        while true {
            if let packet = queue.pop() { return packet }
            if finished { return nil }
            try pull()
        }
    }

    /// Throws when the file ended before the planned end and before all the
    /// packets its container declares: a truncated or damaged file, whose copy
    /// would silently stop short.
    func checkComplete(declaredPackets: Int?) throws {
        guard reachedEndOfFile else { return }
        // After a seek the packets before it were not read, so not counted:
        // the index tells whether the file ends before samples it declares.
        if sought, let overrun = demuxer.indexOverrun(of: Int(streamIndex)) {
            throw MediaMuxError.damaged(
                path: demuxer.path, detail: "the \(kind)'s samples run to byte \(overrun.needed) but the file ends at \(overrun.present)")
        }
        if let declaredPackets, !sought {
            guard packetsRead < declaredPackets else { return }
            throw MediaMuxError.damaged(
                path: demuxer.path, detail: "only \(packetsRead) of \(declaredPackets) packets of stream \(streamIndex) could be read")
        }
        // Without a declared count, the packets themselves must reach the end (within a second of slack).
        let slack = MediaTime(1).ticks(in: timeBase)
        guard contentEnd < sourceEndTick.saturatingSubtracting(slack) else { return }
        let seconds = fixedPoint(Double(max(contentEnd, 0)) * av_q2d(timeBase), decimals: 3)
        throw MediaMuxError.damaged(path: demuxer.path, detail: "stream \(streamIndex) stops at \(seconds) s, before its declared end")
    }

    func reuse(_ buffer: PacketBuffer) {
        queue.reuse(buffer)
    }

    /// A fragmented input cut short or damaged, MP3 junk: what was lost, once the packets are read.
    var warnings: [String] {
        var said: [String] = []
        if let missingSamples, missingSamples > 0 {
            let plural = missingSamples == 1 ? "" : "s"
            said.append("\(demuxer.path): the file is cut short inside a fragment: \(missingSamples) \(kind) sample\(plural) it declares \(missingSamples == 1 ? "is" : "are") missing; the whole ones before the cut are kept")
        }
        if let damagedFragment {
            said.append("\(demuxer.path): \(damagedFragment): the \(kind) samples before it are kept, and the rest of the file is left out")
        }
        if junkBytes > 0 {
            said.append("\(demuxer.path): \(junkBytes) bytes before its first MP3 frame are not audio and were left out")
        }
        return said
    }

    /// The last sample must last until the end: demuxers often lose the last
    /// sample's duration (MP4's final stts delta, Matroska's block durations),
    /// and a track whose media stops short of its edit reads as shorter.
    /// Audio is cut to end exactly there.
    func makeFinal(_ packet: UnsafeMutablePointer<AVPacket>) {
        let reach = endTick.saturatingSubtracting(packet.pointee.dts)
        if trimsLastDuration {
            trim(packet, to: reach)
        } else if packet.pointee.duration < reach {
            packet.pointee.duration = reach
        }
    }

    private func pull() throws {
        if let target = seekTarget {
            seekTarget = nil
            sought = demuxer.seek(Int(streamIndex), to: target)
            landing = sought ? target : nil
        }
        let buffer = try queue.blankBuffer()
        // Past the cut of a fragmented file only a sample's first bytes are
        // there, and past a damaged fragment header the demuxer fails: once
        // every whole sample is in, nothing more is read.
        if let wholeSamples, packetsRead >= wholeSamples {
            endOfInput(returning: buffer)
            return
        }
        guard try fragments?.read(into: buffer, streamIndex: streamIndex) ?? demuxer.read(into: buffer) else {
            endOfInput(returning: buffer)
            return
        }
        let packet = buffer.pointer
        guard packet.pointee.stream_index == streamIndex else {
            queue.reuse(buffer)
            return
        }
        if let target = landing {
            landing = nil
            if try landed(packet, past: target) {
                queue.reuse(buffer)
                return
            }
        }
        if !packetHoldsAudio(packet, stream: demuxer.stream(Int(streamIndex))) {
            junkBytes += Int(packet.pointee.size)
            queue.reuse(buffer)
            return
        }
        packetsRead += 1
        if packetsRead == 1, marksFirstRandomAccessPoint { markIfRandomAccessPoint(packet) }
        if packet.pointee.pts == noTimestamp { packet.pointee.pts = packet.pointee.dts }
        guard packet.pointee.pts != noTimestamp else {
            throw MediaMuxError.damaged(path: demuxer.path, detail: "a packet of stream \(streamIndex) has no timestamp")
        }
        if rescales {
            // Into a finer time base: exact.
            packet.pointee.pts = av_rescale_q(packet.pointee.pts, inputTimeBase, timeBase)
            if packet.pointee.dts != noTimestamp { packet.pointee.dts = av_rescale_q(packet.pointee.dts, inputTimeBase, timeBase) }
            packet.pointee.duration = av_rescale_q(packet.pointee.duration, inputTimeBase, timeBase)
        }
        if let decodeShift, packet.pointee.dts != noTimestamp {
            // With the edit list ignored, the demuxer's first DTS is minus the
            // shift it chose itself; the media timeline puts it at 0.
            let base = demuxerDecodeBase ?? packet.pointee.dts
            demuxerDecodeBase = base
            packet.pointee.dts = packet.pointee.dts.saturatingSubtracting(base).saturatingSubtracting(decodeShift)
        }
        if packet.pointee.dts != noTimestamp, packet.pointee.pts < packet.pointee.dts {
            throw MediaMuxError.damaged(
                path: demuxer.path,
                detail: "a frame of stream \(streamIndex) is shown before it is decoded, by more than the file's composition offsets declare")
        }
        if packet.pointee.dts == noTimestamp {
            if let lastDTS {
                packet.pointee.dts = min(lastDTS.saturatingAdding(max(lastDuration, 1)), packet.pointee.pts)
            } else {
                undated.append(buffer)
                return
            }
        }
        if !undated.isEmpty { backfill(before: packet.pointee.dts) }
        accept(buffer)
    }

    /// Whether the first packet after the seek comes after `target`, the
    /// first time the lead-in needs, or says no time. MP4's index finds a
    /// sync sample by its decode time, and with B-frames one decoded before
    /// the target can be shown after it: the sync sample before it is sought
    /// next, a few times at most. A format that seeks only near a time, or
    /// one with no earlier sync sample, is read again from its start, as
    /// without a seek.
    private func landed(_ packet: UnsafeMutablePointer<AVPacket>, past target: Int64) throws -> Bool {
        let time = packet.pointee.pts != noTimestamp ? packet.pointee.pts : packet.pointee.dts
        guard time == noTimestamp || time > target else { return false }
        let decoded = packet.pointee.dts
        if seeksBack < Self.mostSeeksBack, decoded != noTimestamp, decoded <= target,
           demuxer.seek(Int(streamIndex), to: decoded.saturatingSubtracting(1)) {
            seeksBack += 1
            landing = target
            return true
        }
        try demuxer.rewind(Int(streamIndex))
        sought = false
        return true
    }

    private func endOfInput(returning buffer: PacketBuffer) {
        // Packets still without a DTS were never reordered: decode order is presentation order.
        for undatedBuffer in undated { undatedBuffer.pointer.pointee.dts = undatedBuffer.pointer.pointee.pts }
        let leftovers = undated
        undated.removeAll()
        leftovers.forEach(accept)
        endLeadIn()
        endPriming()
        reachedEndOfFile = true
        finish(returning: buffer)
    }

    /// Matroska stores only presentation times; FFmpeg's parser derives DTS
    /// after a few frames of B-frame delay. The leading packets get the DTS
    /// that precede the first known one by their durations.
    private func backfill(before firstKnown: Int64) {
        var dts = firstKnown
        for buffer in undated.reversed() {
            dts = dts.saturatingSubtracting(max(buffer.pointer.pointee.duration, 1))
            buffer.pointer.pointee.dts = min(dts, buffer.pointer.pointee.pts)
            dts = buffer.pointer.pointee.dts
        }
        let dated = undated
        undated.removeAll()
        dated.forEach(accept)
    }

    /// Applies the cut to one packet with both timestamps known.
    private func accept(_ buffer: PacketBuffer) {
        let packet = buffer.pointer
        lastDTS = packet.pointee.dts
        lastDuration = packet.pointee.duration
        packet.pointee.pts = packet.pointee.pts.saturatingSubtracting(originTick)
        packet.pointee.dts = packet.pointee.dts.saturatingSubtracting(originTick)
        contentEnd = max(contentEnd, packet.pointee.pts.saturatingAdding(max(packet.pointee.duration, 0)))
        guard !finished else {
            queue.reuse(buffer)
            return
        }
        if trimsLeadIn, holdsInLeadIn(buffer) { return }
        if let leadInTicks, isAudio, !joining, !primed, holdsForPriming(buffer, leadIn: leadInTicks) { return }
        cut(buffer)
    }

    /// Holds a packet that ends at or before the start, dropping the held
    /// ones no longer needed: those before the last that starts `leadIn`
    /// or more before it. The first packet past the start releases them.
    private func holdsForPriming(_ buffer: PacketBuffer, leadIn: Int64) -> Bool {
        let packet = buffer.pointer.pointee
        guard packet.pts.saturatingAdding(max(packet.duration, 0)) <= 0 else {
            endPriming()
            return false
        }
        priming.append(buffer)
        while priming.count > 1, priming[1].pointer.pointee.pts <= -leadIn {
            queue.reuse(priming.removeFirst())
        }
        return true
    }

    private func endPriming() {
        primed = true
        let held = priming
        priming.removeAll()
        held.forEach(cut)
    }

    /// Before the start (0 on the output timeline) only the packets from the
    /// last keyframe presented at or before it are needed. A keyframe shown
    /// after it, or any packet decoded after it, ends the lead-in: no later
    /// keyframe can be shown at or before the start.
    private func holdsInLeadIn(_ buffer: PacketBuffer) -> Bool {
        let packet = buffer.pointer.pointee
        let isKeyframe = (packet.flags & AV_PKT_FLAG_KEY) != 0
        if isKeyframe, packet.pts <= 0 {
            queue.reuse(leadIn)
            leadIn.removeAll(keepingCapacity: true)
        }
        if (isKeyframe && packet.pts > 0) || packet.dts > 0 {
            endLeadIn()
            return false
        }
        leadIn.append(buffer)
        return true
    }

    private func endLeadIn() {
        trimsLeadIn = false
        let held = leadIn
        leadIn.removeAll()
        held.forEach(cut)
    }

    /// Keeps a packet presented before the end and those decoded before it.
    private func cut(_ buffer: PacketBuffer) {
        let packet = buffer.pointer
        guard !finished else {
            queue.reuse(buffer)
            return
        }
        if packet.pointee.dts >= endTick {
            finish(returning: buffer)
            return
        }
        guard packet.pointee.pts < endTick else {
            waiting.append(buffer)
            return
        }
        if trimsLastDuration, packet.pointee.pts.saturatingAdding(packet.pointee.duration) > endTick {
            trim(packet, to: endTick - packet.pointee.pts)
        }
        queue.push(waiting)
        waiting.removeAll(keepingCapacity: true)
        queue.push(CollectionOfOne(buffer))
    }

    /// Shortens an audio packet to `duration`. Players trim a coded frame
    /// by its duration; PCM's samples are its bytes, so they go too, and the
    /// sample tables agree with the media.
    func trim(_ packet: UnsafeMutablePointer<AVPacket>, to duration: Int64) {
        packet.pointee.duration = max(duration, 0)
        guard let pcmFrame else { return }
        let samples = av_rescale_q(packet.pointee.duration, timeBase, pcmFrame.tick)
        let bytes = samples * Int64(pcmFrame.bytes)
        if bytes < Int64(packet.pointee.size) { av_shrink_packet(packet, Int32(bytes)) }
    }

    /// The stream's codec configuration (an avcC or hvcC record); nil when it has none.
    private var configuration: UnsafeBufferPointer<UInt8>? {
        let parameters = demuxer.stream(Int(streamIndex)).pointee.codecpar.pointee
        guard let extradata = parameters.extradata, parameters.extradata_size > 0 else { return nil }
        return UnsafeBufferPointer(start: extradata, count: Int(parameters.extradata_size))
    }

    /// Whether a copy may begin a clip in the middle of a track at `packet`,
    /// a keyframe (see `RandomAccess.joins`).
    func joins(_ packet: UnsafeMutablePointer<AVPacket>) -> Bool {
        guard let configuration, let data = packet.pointee.data, packet.pointee.size > 0 else { return !RandomAccess.understands(codec: codec) }
        return RandomAccess.joins(codec: codec, configuration: configuration, sample: UnsafeBufferPointer(start: data, count: Int(packet.pointee.size)))
    }

    /// Makes `packet`, the first of a clip in the middle of a track, a splice
    /// point (`RandomAccess.markSplice`): its bytes are the source's but for
    /// the NAL unit types that say so.
    func markSplice(_ packet: UnsafeMutablePointer<AVPacket>) throws {
        guard codec == "hevc", let configuration else { return }
        guard av_packet_make_writable(packet) >= 0, let data = packet.pointee.data else {
            throw MediaMuxError.outOfMemory("copying a packet to mark a splice", path: demuxer.path)
        }
        RandomAccess.markSplice(
            codec: codec, configuration: configuration, sample: UnsafeMutableBufferPointer(start: data, count: Int(packet.pointee.size)))
    }

    /// Sets the keyframe flag on a packet whose bitstream starts a coded
    /// sequence although the container did not mark it.
    private func markIfRandomAccessPoint(_ packet: UnsafeMutablePointer<AVPacket>) {
        guard (packet.pointee.flags & AV_PKT_FLAG_KEY) == 0, let data = packet.pointee.data, packet.pointee.size > 0 else { return }
        let parameters = demuxer.stream(Int(streamIndex)).pointee.codecpar.pointee
        guard let extradata = parameters.extradata, parameters.extradata_size > 0 else { return }
        let configuration = UnsafeBufferPointer(start: extradata, count: Int(parameters.extradata_size))
        let sample = UnsafeBufferPointer(start: data, count: Int(packet.pointee.size))
        if RandomAccess.startsDecoding(codec: codec, configuration: configuration, sample: sample) {
            packet.pointee.flags |= AV_PKT_FLAG_KEY
        }
    }

    private func finish(returning buffer: PacketBuffer) {
        finished = true
        queue.reuse(buffer)
        queue.reuse(waiting)
        waiting.removeAll()
    }
}
