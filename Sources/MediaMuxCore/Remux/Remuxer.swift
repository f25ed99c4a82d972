import MediaMuxBase
package import CFFmpeg

/// Sees each video packet a merge copies, on the output's timeline, just
/// before it is written: the hook through which other modules make things
/// from a merge in the same pass (the preview module's thumbnails). The core
/// knows nothing of what an observer makes.
package protocol PacketObserver: AnyObject {
    /// Must not change the packet. An error stops this observer with a
    /// warning, never the merge.
    func observe(_ packet: UnsafeMutablePointer<AVPacket>, timeBase: AVRational) throws
}

/// An observer to make once the video input is open, from its stream.
package struct PacketObserving {
    /// What the observer makes, for the report's warnings ("thumbnails").
    package var product: String
    package var make: (_ videoStream: UnsafeMutablePointer<AVStream>) throws -> any PacketObserver

    package init(product: String, make: @escaping (UnsafeMutablePointer<AVStream>) throws -> any PacketObserver) {
        self.product = product
        self.make = make
    }
}

/// What a plan's execution wrote, track by track in the plan's order: what
/// the job's report is made of (a merge's `MergeReport`, a preview clip's).
package struct PlanExecution {
    /// Each output track as written, in the plan's order.
    package var tracks: [MergeReport.Track]
    /// The output's size in bytes (the bytes streamed, for a stream).
    package var fileBytes: Int
    package var elapsed: Duration
    /// What went wrong on the side without failing the job.
    package var warnings: [String]
}

/// Carries out a MergePlan: copies the planned packets (or, for a track
/// the plan encodes, the encoder's) through the writer the plan's layout
/// needs (see `MovieWriter`), which writes the exact edit lists and puts
/// the output where it goes. Makes no decisions of its own.
package final class Remuxer {
    private let plan: MergePlan
    private let destination: MergeDestination
    private let cancellation: CancellationFlag
    private let progress: (@Sendable (MergeProgress) -> Void)?
    private var throttle = ProgressThrottle()
    /// The latest time written in any track: the progress. Tracks take
    /// turns a window at a time, so a packet can be earlier than the one
    /// before it in another track; the progress never goes back.
    private var furthestWritten = MediaTime.zero()
    private let observing: PacketObserving?
    private var observer: (any PacketObserver)?
    private var warnings: [String] = []
    /// By output track.
    private var damagedPackets: [Int] = []
    private var loudness: [LoudnessAdjustment?] = []
    /// The video's encoder, when it is re-framed: its frame count goes into the progress.
    private var encodedVideo: EncodedVideoReader?

    init(
        plan: MergePlan, destination: MergeDestination = .file, cancellation: CancellationFlag,
        progress: (@Sendable (MergeProgress) -> Void)?, observing: PacketObserving? = nil
    ) {
        self.plan = plan
        warnings = plan.warnings
        self.destination = destination
        self.cancellation = cancellation
        self.progress = progress
        self.observing = observing
    }

    /// Per output track: what was written, for the report.
    private struct Written {
        var packets = 0
        var bytes = 0
        var lastDTS: Int64 = .min
    }

    /// Carries out `plan` on the calling thread (inside `runFFmpeg`): how a
    /// job other than a merge (a preview clip) runs its plan.
    package static func carryOut(
        _ plan: MergePlan, cancellation: CancellationFlag, progress: (@Sendable (MergeProgress) -> Void)?
    ) throws -> PlanExecution {
        try Remuxer(plan: plan, cancellation: cancellation, progress: progress).run()
    }

    /// What a started plan has open, and where its packet loop stands.
    private final class Running {
        let writer: any MovieWriter
        let readers: [any PacketSource]
        /// Each track's next packet: one of lookahead tells which packet is the last.
        var current: [PacketBuffer?]
        var written: [Written]
        /// The interleave window being written, and the track within it.
        var windowEnd: Double
        var track = 0
        let started: ContinuousClock.Instant

        init(writer: any MovieWriter, readers: [any PacketSource], current: [PacketBuffer?], windowEnd: Double, started: ContinuousClock.Instant) {
            self.writer = writer
            self.readers = readers
            self.current = current
            written = Array(repeating: Written(), count: readers.count)
            self.windowEnd = windowEnd
            self.started = started
        }
    }

    private var running: Running?
    private let clock = ContinuousClock()

    /// The whole plan on the calling thread: `start`, `advance` to the end, `complete`.
    func run() throws -> PlanExecution {
        try start()
        _ = try advance { false }
        return try complete()
    }

    /// Opens the inputs and the output, and writes the output's header:
    /// every failure that can be known before the first packet is known
    /// here (an input that cannot be opened as planned, a track with no
    /// packet, a muxer or encoder that refuses the streams).
    func start() throws {
        try namingTheOutput {
            let started = clock.now
            let writer = try plan.writer(to: destination)
            let muxer = writer.muxer

            // Each track reads files of its own (the video's own audio reads the video file again).
            var readers: [any PacketSource] = []
            var videoInput: DemuxerHandle?
            for track in plan.tracks {
                let inputs = try SpanInputs(track: track, cancellation: cancellation)
                if track.role == .video {
                    muxer.copyMetadata(from: inputs.own, plan.metadata.fileTags)
                    videoInput = inputs.own
                }
                readers.append(try source(for: track, inputs: inputs, muxer: muxer))
            }
            try writer.open()
            if let observing, let videoInput {
                do {
                    // What is written: the input's packets, or for a video re-framed (or cut) the output stream's.
                    observer = try observing.make(
                        plan.video.reframing == nil && plan.video.cutEncoding == nil
                            ? videoInput.plannedStream(plan.video.streamIndex, kind: .video) : muxer.stream(plan.index(of: .video)))
                } catch {
                    warnings.append("no \(observing.product): \(describe(error))")
                }
            }
            // The first packets place each track's media in the edit lists.
            let current = try readers.map { try $0.next() }
            try writer.begin(movieRewrite(firstPackets: current, readers: readers, writer: writer))
            running = Running(writer: writer, readers: readers, current: current, windowEnd: plan.interleaveWindow.seconds, started: started)
        }
    }

    /// Writes packets, alternating between the tracks one interleave window
    /// at a time (so that each track's samples sit in large chunks and the
    /// moov stays small), until `enough` says so (asked before each packet)
    /// or none is left.
    ///
    /// - Returns: True when every packet is written.
    func advance(until enough: () -> Bool) throws -> Bool {
        try namingTheOutput {
            guard let running else { throw notStarted }
            let videoIndex = plan.index(of: .video)
            while let index = nextTrack(running) {
                if enough() { return false }
                guard let buffer = running.current[index] else { continue }
                if cancellation.isRaised { throw MediaMuxError.cancelled(path: plan.outputPath) }
                let reader = running.readers[index]
                let packet = buffer.pointer
                let following = try reader.next()
                if following == nil { reader.makeFinal(packet) }
                if index == videoIndex { show(packet, timeBase: reader.timeBase) }
                try write(
                    packet, from: reader.timeBase, stream: index, isLast: following == nil, writer: running.writer,
                    written: &running.written[index])
                reader.reuse(buffer)
                running.current[index] = following
            }
            return true
        }
    }

    /// The track whose packet is next, or nil when none is left: the
    /// current one while its next packet falls in the window, else the
    /// next track, else the next window from the first track.
    private func nextTrack(_ running: Running) -> Int? {
        while true {
            if running.track < running.readers.count {
                if let buffer = running.current[running.track],
                   Double(buffer.pointer.pointee.dts) * av_q2d(running.readers[running.track].timeBase) < running.windowEnd {
                    return running.track
                }
                running.track += 1
            } else {
                guard running.current.contains(where: { $0 != nil }) else { return nil }
                running.track = 0
                running.windowEnd += plan.interleaveWindow.seconds
            }
        }
    }

    /// Once every packet is written: checks that each input was read whole,
    /// writes the trailer, and completes the output (a file moved into place).
    func complete() throws -> PlanExecution {
        try namingTheOutput {
            guard let running else { throw notStarted }
            let (readers, writer, written) = (running.readers, running.writer, running.written)
            let muxer = writer.muxer
            for (reader, track) in zip(readers, plan.tracks) {
                try reader.checkComplete(declaredPackets: track.sampleCount)
            }
            warnings += readers.flatMap(\.warnings)
            damagedPackets = readers.map(\.damagedPackets)
            loudness = readers.map { ($0 as? EncodedAudioReader)?.loudness }
            try writer.finish()
            if cancellation.isRaised { throw MediaMuxError.cancelled(path: plan.outputPath) }
            try checkStored(muxer: muxer, written: written)
            let size = try writer.commit()
            warnings += writer.warnings
            let elapsed = clock.now - running.started
            progress?(progressReport(written: plan.end))
            self.running = nil
            return PlanExecution(
                tracks: plan.tracks.indices.map { trackWritten($0, written: written[$0], muxer: muxer) }, fileBytes: size, elapsed: elapsed,
                warnings: warnings)
        }
    }

    private var notStarted: MediaMuxError {
        .unexpected(path: plan.outputPath, detail: "internal error: a plan carried on before it started; please report it")
    }

    /// A cancellation (raised on an input's read, say) names the output.
    private func namingTheOutput<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as MediaMuxError where error.code == .cancelled {
            throw MediaMuxError.cancelled(path: plan.outputPath)
        }
    }

    /// Where a track's packets come from: the input's own, copied (the
    /// video with the display matrix the plan says), span after span; or an
    /// encoder's (the video re-framed, the audio encoded).
    private func source(for track: MergePlan.Track, inputs: SpanInputs, muxer: MuxerHandle) throws -> any PacketSource {
        // What each packet source reads: a copied track's packets (its last picture held over
        // what follows), a re-framed video's pictures (held likewise), an encoded track's sound and silence.
        let readable: Set<MergePlan.Span.Decision> =
            track.reframing != nil ? [.encode, .hold] : track.encoding != nil ? [.encode, .silence]
            : track.cutEncoding != nil ? [.copy, .encode, .hold] : [.copy, .hold]
        if let span = track.spans.first(where: { !readable.contains($0.decision) }) {
            throw MediaMuxError.unexpected(
                path: track.path,
                detail: "internal error: a span planned as \(span.decision.rawValue) in a track \(track.isCopied ? "copied" : "encoded") whole cannot be carried out; please report it")
        }
        let input = inputs.own
        let stream = try input.plannedStream(track.streamIndex, kind: track.role.kind)
        if let reframing = track.reframing {
            let encoded = try EncodedVideoReader(
                inputs: inputs, track: track, encoding: reframing, output: plan.outputPath,
                globalHeaders: muxer.wantsGlobalHeaders, cancellation: cancellation)
            encodedVideo = encoded
            _ = try muxer.addStream(
                encodedBy: encoded.encoderContext, tagsOf: stream, tags: plan.metadata.streamTags, codecTag: track.codecTag)
            return encoded
        }
        if let encoding = track.encoding {
            let encoded = try EncodedAudioReader(
                demuxer: input, track: track, encoding: encoding, mix: track.role == .soundtrack ? plan.mix : nil, output: plan.outputPath,
                globalHeaders: muxer.wantsGlobalHeaders, cancellation: cancellation)
            _ = try muxer.addStream(encodedBy: encoded.encoderContext, tagsOf: stream, tags: plan.metadata.streamTags)
            return encoded
        }
        let matrix: MuxerHandle.DisplayMatrix
        switch track.role {
        case .video: matrix = plan.rotation.keepsSourceMatrix ? .source : .rotation(plan.rotation.degrees)
        case .soundtrack, .originalAudio: matrix = .none
        }
        if let cut = track.cutEncoding {
            let spliced = try SplicedSpans(inputs: inputs, track: track, cut: cut, output: plan.outputPath, cancellation: cancellation)
            _ = try muxer.addStream(
                copying: stream, codecTag: track.codecTag, matrix: matrix, tags: plan.metadata.streamTags, configuration: spliced.configuration)
            return spliced
        }
        _ = try muxer.addStream(
            copying: stream, codecTag: track.codecTag, standIn: track.standIn, matrix: matrix, tags: plan.metadata.streamTags)
        return try CopiedSpans(inputs: inputs, track: track)
    }

    /// What an observer makes is a by-product: its failure ends it with a
    /// warning, never the merge.
    private func show(_ packet: UnsafeMutablePointer<AVPacket>, timeBase: AVRational) {
        guard let observer, let observing else { return }
        do {
            try observer.observe(packet, timeBase: timeBase)
        } catch {
            self.observer = nil
            warnings.append("\(observing.product) stopped: \(describe(error))")
        }
    }

    private func write(
        _ packet: UnsafeMutablePointer<AVPacket>, from input: AVRational, stream index: Int, isLast: Bool,
        writer: any MovieWriter, written: inout Written
    ) throws {
        let muxer = writer.muxer
        let output = muxer.stream(index).pointee.time_base
        var dts = Self.ticks(packet.pointee.dts, from: input, to: output)
        var pts = Self.ticks(packet.pointee.pts, from: input, to: output)
        // Rounding into a coarser time base can make two DTS equal; the muxer needs them increasing.
        if dts <= written.lastDTS {
            dts = written.lastDTS.saturatingAdding(1)
            pts = max(pts, dts)
        }
        packet.pointee.dts = dts
        packet.pointee.pts = pts
        packet.pointee.duration = av_rescale_q(packet.pointee.duration, input, output)
        packet.pointee.stream_index = Int32(index)
        packet.pointee.pos = -1
        written.packets += 1
        written.bytes += Int(packet.pointee.size)
        written.lastDTS = dts
        let copied = plan.tracks[index].isCopied
        let codec = muxer.stream(index).pointee.codecpar.pointee.codec_id
        if let reason = unstorableReason(packet, in: output, codec: codec, copied: copied) {
            throw refusedPacket(index, at: MediaTime(ticks: pts, in: output), because: reason)
        }
        do {
            try writer.write(packet, isLast: isLast)
        } catch let error as MediaMuxError {
            // The muxer, or the bitstream filter it applies, refused a copied
            // packet as it is (an ADTS header, a truncated frame, VP9 frames
            // mixing superframes and bare ones, an H.264 stream it has no
            // code for): the input is at fault.
            guard copied, case .ffmpeg(_, _, let code, let message) = error.failure,
                [CFFmpeg_AVERROR_INVALIDDATA(), FFmpegCode.notAvailable, CFFmpeg_AVERROR_PATCHWELCOME()].contains(code)
            else { throw error }
            throw refusedPacket(index, at: MediaTime(ticks: pts, in: output), because: "FFmpeg: \(message)")
        }
        furthestWritten = max(furthestWritten, MediaTime(ticks: dts, in: output))
        if let progress, throttle.isDue() {
            progress(progressReport(written: furthestWritten))
        }
    }

    private func progressReport(written: MediaTime) -> MergeProgress {
        MergeProgress(
            written: written, total: plan.end, framesEncoded: encodedVideo?.framesEncoded,
            framesPlanned: encodedVideo == nil ? nil : plan.video.sampleCount)
    }

    /// Why the container cannot store `packet` as it is, or nil when it can:
    /// what FFmpeg's mov muxer would refuse naming the output, or store
    /// wrong without a word. Its times are in `timeBase`.
    private func unstorableReason(
        _ packet: UnsafeMutablePointer<AVPacket>, in timeBase: AVRational, codec: AVCodecID, copied: Bool
    ) -> String? {
        let offset = packet.pointee.pts.saturatingSubtracting(packet.pointee.dts)
        // MP4 keeps a sample's duration and its composition offset in 32
        // bits: the muxer refuses a longer duration with "Invalid argument"
        // and cuts a larger offset short without a word. A damaged stream
        // showing a frame hours after decoding it gets both.
        let seconds = { (ticks: Int64) in MediaTime(ticks: ticks, in: timeBase).secondsText() }
        if !(Int64(Int32.min)...Int64(Int32.max)).contains(offset) {
            return "it is shown \(seconds(offset)) s after it is decoded, further apart than MP4 can store"
        }
        if packet.pointee.duration > Int64(Int32.max) {
            return "it lasts \(seconds(packet.pointee.duration)) s, longer than MP4 can store"
        }
        // The mov muxer rewrites AV1 packets OBU by OBU and, in FFmpeg 5.1,
        // stores a packet it cannot parse with its error code for a size:
        // a file no reader opens.
        if copied, codec == AV_CODEC_ID_AV1,
           !AV1Packet.isWellFormed(UnsafeRawBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size))) {
            return "its AV1 units (OBUs) overrun it"
        }
        return nil
    }

    /// A copied packet the container cannot store as it is: the input's damage.
    private func refusedPacket(_ index: Int, at time: MediaTime, because reason: String) -> MediaMuxError {
        let track = plan.tracks[index]
        return .damaged(
            path: track.path,
            detail: "the \(track.role.kind.rawValue) packet at \(time.secondsText()) s cannot be stored in \(plan.container.rawValue.uppercased()); \(reason)")
    }

    /// A time of the input's in the output track's time base, rounded to the nearest tick.
    private static func ticks(_ value: Int64, from input: AVRational, to output: AVRational) -> Int64 {
        av_rescale_q_rnd(value, input, output, AVRounding(rawValue: AV_ROUND_NEAR_INF.rawValue | AV_ROUND_PASS_MINMAX.rawValue))
    }

    /// The planned start and end of each track for its edit list and the
    /// durations, and the source's sample-entry boxes and metadata. The
    /// start comes from the plan, not from the packets: a late track's
    /// first packets may be priming, decoded but never shown. The media
    /// time is counted from the track's first packet, where FFmpeg's muxer
    /// starts its media timeline, in a movie and in fragments alike.
    private func movieRewrite(firstPackets: [PacketBuffer?], readers: [any PacketSource], writer: any MovieWriter) throws -> MovieRewrite {
        let movieScale = plan.movieTimescale
        var timings: [TrackTiming] = []
        for (index, planned) in plan.tracks.enumerated() {
            guard let first = firstPackets[index] else {
                // An input cut short says so first.
                try readers[index].checkComplete(declaredPackets: planned.sampleCount)
                throw MediaMuxError.damaged(path: planned.path, detail: "no packets could be read before the end")
            }
            let base = writer.muxer.stream(index).pointee.time_base
            let firstDTS = Self.ticks(first.pointer.pointee.dts, from: readers[index].timeBase, to: base)
            let start = planned.sourceStart.ticks(in: base, rounding: .nearest)
            let delay = planned.sourceStart.converted(to: movieScale, rounding: .nearest).value
            let end = planned.end.converted(to: movieScale, rounding: .nearest).value
            timings.append(TrackTiming(delay: delay, mediaTime: start.saturatingSubtracting(firstDTS), end: end))
        }
        return MovieRewrite(
            movieEnd: plan.end.converted(to: movieScale, rounding: .nearest).value, timings: timings,
            sampleEntries: plan.tracks.map(\.sampleEntry), trackBoxes: plan.tracks.map(\.trackBoxes), enabled: plan.tracks.map(\.isEnabled),
            metadata: plan.metadata.boxes)
    }

    /// FFmpeg's muxer leaves out a track it kept no packet of (its
    /// bitstream filter, VP9's superframe one, may hold them all back).
    private func checkStored(muxer: MuxerHandle, written: [Written]) throws {
        for (index, planned) in plan.tracks.enumerated() where muxer.stream(index).pointee.nb_frames == 0 {
            throw MediaMuxError.damaged(
                path: planned.path,
                detail: "none of its \(planned.role.kind.rawValue) packets could be stored: FFmpeg's muxer kept none of the \(written[index].packets) it was given")
        }
    }

    /// Output track `index` as written.
    private func trackWritten(_ index: Int, written: Written, muxer: MuxerHandle) -> MergeReport.Track {
        let planned = plan.tracks[index]
        let tag = muxer.stream(index).pointee.codecpar.pointee.codec_tag
        let muxerTag = tag == 0 ? planned.codecTag : String(decoding: (0..<4).map { UInt8((tag >> (8 * $0)) & 0xFF) }, as: UTF8.self)
        var track = MergeReport.Track(
            source: planned.path, streamIndex: planned.streamIndex, codec: planned.codec, codecTag: planned.sampleEntry?.restoredType ?? muxerTag,
            start: planned.sourceStart, duration: planned.end - planned.sourceStart,
            packets: written.packets, bytes: written.bytes, encoding: planned.encoding)
        track.reframing = planned.reframing
        track.cutEncoding = planned.cutEncoding
        track.plays = planned.plays
        track.damagedPackets = damagedPackets[index]
        track.loudness = loudness[index]
        if let held = planned.spans.last(where: { $0.decision == .hold }) { track.heldLastFrame = held.duration }
        return track
    }
}

private func describe(_ error: any Error) -> String {
    (error as? MediaMuxError)?.description ?? "\(error)"
}
