import MediaMuxBase
import MediaMuxCore
internal import CFFmpeg

/// Carries out a clip plan: decodes the span, hands its pictures to the
/// core's video encoder (scaled, turned upright and encoded H.264 by
/// `VideoSpanEncoder`, as a merge's re-framing is) and its sound to the
/// core's AAC encoder, and writes a faststart MP4 beside the output that
/// becomes the output only when complete.
final class ClipWriter {
    private let plan: ClipPlan
    private let cancellation: CancellationFlag
    private var progress: ProgressReporter
    /// The video track's time base: 1/90000 s holds 24, 25, 30 and 29.97 fps frames exactly.
    private static let videoTimeBase = AVRational(num: 1, den: 90000)

    /// The decoder's threads (0 lets FFmpeg choose).
    private let threads: Int

    init(plan: ClipPlan, threads: Int, cancellation: CancellationFlag, progress: ((PreviewProgress) -> Void)?) {
        self.threads = threads
        self.plan = plan
        self.cancellation = cancellation
        self.progress = ProgressReporter(progress)
    }

    func run() throws -> PreviewClipReport {
        let temporary = TemporaryOutput(finalPath: plan.output)
        do {
            let written = try write(to: temporary.path)
            // Finishing (the encoders' last frames, the trailer, faststart)
            // checks no flag: a cancellation meanwhile still leaves nothing.
            if cancellation.isRaised { throw MediaMuxError.cancelled(path: plan.input) }
            let bytes = try temporary.commit(overwrite: plan.overwrite)
            progress.finish(done: written.frames)
            return PreviewClipReport(
                output: plan.output, start: plan.start.converted(to: 90000, rounding: .nearest),
                duration: plan.duration.converted(to: 90000, rounding: .nearest), width: plan.frames.width,
                height: plan.frames.height, videoFrames: written.frames, hasAudio: written.audioSamples > 0, bytes: bytes)
        } catch {
            temporary.discard()
            throw error
        }
    }

    /// A time on the clip's timeline in ticks of the video's time base, to the nearest.
    private static func ticks(_ time: MediaTime) -> Int64 { time.ticks(of: MediaTime(value: 1, timescale: 90000), rounding: .nearest) }

    private func write(to path: String) throws -> (frames: Int, audioSamples: Int64) {
        let reader = try FrameReader(plan: plan.frames, threads: threads, cancellation: cancellation)
        let muxer = try MuxerHandle(path: path, reportedPath: plan.output, muxer: "mp4")
        let video = try VideoSpanEncoder(
            encoding: plan.video, stream: reader.stream, timeBase: Self.videoTimeBase, globalHeaders: muxer.wantsGlobalHeaders,
            path: plan.input, output: plan.output)
        let videoIndex = try muxer.addStream(encodedBy: video.context).pointee.index
        var audio: AudioSpanEncoder?
        var audioIndex: Int32 = -1
        let audioRate = Int64(plan.audio?.sampleRate ?? 1)
        if let part = plan.audio {
            // The clip's audio, cut to its span to the sample; a track that
            // starts after the clip does gets silence first, so that it starts
            // with the picture.
            let made = try AudioSpanEncoder(
                demuxer: DemuxerHandle(path: plan.input, cancellation: cancellation), streamIndex: part.streamIndex, zero: plan.frames.zero + plan.start,
                samples: plan.duration.ticks(of: MediaTime(value: 1, timescale: audioRate), rounding: .nearest),
                settings: .init(sampleRate: part.sampleRate, channels: part.channels, bitRate: plan.audioBitRate),
                output: plan.output, globalHeaders: muxer.wantsGlobalHeaders, cancellation: cancellation)
            audioIndex = try muxer.addStream(encodedBy: made.context).pointee.index
            audio = made
        }
        try muxer.open(options: ["movflags": "+faststart"])

        func writer(_ index: Int32, from timeBase: AVRational) -> (UnsafeMutablePointer<AVPacket>) throws -> Void {
            { packet in
                packet.pointee.stream_index = index
                av_packet_rescale_ts(packet, timeBase, muxer.stream(Int(index)).pointee.time_base)
                try muxer.writeInterleaved(packet)
            }
        }
        let writeVideo = writer(videoIndex, from: Self.videoTimeBase)
        let writeAudio = writer(audioIndex, from: AVRational(num: 1, den: Int32(audioRate)))
        func writeEncodedVideo() throws {
            while let packet = video.next() {
                defer { video.reuse(packet) }
                try writeVideo(packet.pointer)
            }
        }

        let clipEnd = Self.ticks(plan.duration)
        let picture = try FrameBuffer()
        var last: Int64?
        while let (frame, time) = try reader.nextDecoded() {
            // The frame shown at the start may begin before it: the clip shows it from 0.
            let ticks = max(0, Self.ticks(time - plan.start))
            if let previous = last, ticks <= previous { continue }
            guard ticks < clipEnd else { break }
            // Audio first, to half a second past this picture, so the muxer's queue stays short.
            try audio?.encode(until: (ticks + 45000) * audioRate / 90000, write: writeAudio)
            try ffmpegCheck(av_frame_ref(picture.pointer, frame.pointer), "keeping a picture", path: plan.input)
            try video.encode(picture, at: ticks)
            try writeEncodedVideo()
            last = ticks
            // How many frames the clip has is known only at its end; how much of its time is encoded, all along.
            progress.report(done: video.framesEncoded, total: nil, fraction: Double(ticks) / Double(max(clipEnd, 1)))
        }
        guard last != nil else {
            throw MediaMuxError.damaged(path: plan.input, detail: "no picture could be decoded after \(fixedPoint(plan.start.seconds, decimals: 3)) s")
        }
        try video.finish(until: clipEnd)
        try writeEncodedVideo()
        try audio?.finish(write: writeAudio)
        try muxer.finish()
        return (video.framesEncoded, audio?.sourceSamples ?? 0)
    }
}
