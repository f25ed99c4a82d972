import MediaMuxBase
import MediaMuxCore
internal import CFFmpeg

/// Decoded video frames of one stream in presentation order, with their times
/// on the video's own timeline; seeks on request. No policy: the frame reader
/// decides where to seek and which frames to keep.
final class VideoFrameSource {
    let demuxer: DemuxerHandle
    let decoder: DecoderHandle
    let streamIndex: Int
    let timeBase: AVRational
    /// The timestamp of the video's first presented frame: time zero.
    let zero: Int64
    private let packet: PacketBuffer
    private let cancellation: CancellationFlag
    private var draining = false
    private var finished = false
    /// True once a frame has come out since the last seek.
    private(set) var decodedSinceSeek = 0

    /// `zero` is where the probe found the video's first frame: on the file's
    /// timeline, or with `ignoringEditLists` in the track's composition time.
    init(
        path: String, streamIndex: Int, zero: MediaTime, ignoringEditLists: Bool = false, threads: Int = 0,
        cancellation: CancellationFlag
    ) throws {
        self.cancellation = cancellation
        demuxer = try DemuxerHandle(path: path, cancellation: cancellation, ignoringEditLists: ignoringEditLists)
        let stream = try demuxer.plannedStream(streamIndex, kind: .video)
        self.streamIndex = streamIndex
        timeBase = stream.pointee.time_base
        let perTick = MediaTime(value: Int64(max(timeBase.num, 1)), timescale: Int64(max(timeBase.den, 1)))
        self.zero = zero.converted(to: perTick.timescale, rounding: .nearest).value / perTick.value
        decoder = try DecoderHandle(stream: stream, path: path, threads: threads)
        packet = try PacketBuffer()
        demuxer.keepOnly(streamIndex)
    }

    /// The video stream read.
    var stream: UnsafeMutablePointer<AVStream> { demuxer.stream(streamIndex) }

    /// A timestamp of the stream as a time on the video's timeline.
    func time(_ timestamp: Int64) -> MediaTime {
        MediaTime(value: Int64(timeBase.num) * (timestamp - zero), timescale: Int64(max(timeBase.den, 1)))
    }

    /// The stream timestamp of a time on the video's timeline, rounded down.
    /// A thousandth of a tick counts as on the tick: times computed in
    /// floating point (4 s / 12 * 2.5) land a hair below the frame they name.
    func timestamp(_ seconds: Double) -> Int64 {
        let ticks = seconds * Double(timeBase.den) / Double(max(timeBase.num, 1))
        guard ticks.isFinite else { return ticks > 0 ? Int64.max / 2 : zero }
        return zero + Int64((ticks + 1e-3).rounded(.down))
    }

    /// The presentation time of the keyframe at or before `timestamp`, from
    /// the container's index, when it has one.
    func keyframe(atOrBefore timestamp: Int64) -> Int64? {
        let stream = demuxer.stream(streamIndex)
        let position = av_index_search_timestamp(stream, timestamp, AVSEEK_FLAG_BACKWARD)
        guard position >= 0, let entry = avformat_index_get_entry(stream, position) else { return nil }
        return entry.pointee.timestamp
    }

    /// Moves to the keyframe at or before `timestamp` (the video's start for
    /// anything before it) and forgets decoded state.
    func seek(to timestamp: Int64) throws {
        let point = max(timestamp, zero)
        var code = avformat_seek_file(demuxer.context, Int32(streamIndex), Int64.min, point, point, AVSEEK_FLAG_BACKWARD)
        if code < 0 && point > zero {
            // Some demuxers cannot find a point before this one; the start always works.
            code = avformat_seek_file(demuxer.context, Int32(streamIndex), Int64.min, zero, zero, AVSEEK_FLAG_BACKWARD)
        }
        if code < 0, let first = avformat_index_get_entry(demuxer.stream(streamIndex), 0)?.pointee.timestamp {
            // No sync sample before the start in the index: phones leave
            // their first IDR picture out of it. Decoding starts at the first sample.
            code = avformat_seek_file(demuxer.context, Int32(streamIndex), Int64.min, first, first, AVSEEK_FLAG_BACKWARD | AVSEEK_FLAG_ANY)
        }
        if cancellation.isRaised { throw MediaMuxError.cancelled(path: demuxer.path) }
        try inputCheck(code, "the video's index gives no place to start decoding from", path: demuxer.path)
        decoder.flush()
        draining = false
        finished = false
        decodedSinceSeek = 0
    }

    /// The next frame in presentation order, decoded into `frame`; false at
    /// the end of the stream.
    func next(into frame: FrameBuffer) throws -> Bool {
        while true {
            switch try decoder.receive(into: frame) {
            case .frame:
                decodedSinceSeek += 1
                return true
            case .finished:
                finished = true
                return false
            case .needsInput:
                if finished || draining {
                    // The decoder asked for input after the end: nothing more will come.
                    return false
                }
                try feed()
            }
        }
    }

    /// Reads the next packet of the video stream into the decoder.
    private func feed() throws {
        guard try demuxer.read(into: packet, of: streamIndex) else {
            if let overrun = demuxer.indexOverrun(of: streamIndex) {
                throw MediaMuxError.damaged(
                    path: demuxer.path, detail: "the video's samples run to byte \(overrun.needed) but the file ends at \(overrun.present)")
            }
            draining = true
            _ = try decoder.send(nil)
            return
        }
        // receive() gave back everything it held, so the decoder takes the packet.
        guard try decoder.send(packet.pointer) else {
            throw MediaMuxError.ffmpeg(operation: "decoding", path: demuxer.path, code: FFmpegCode.tryAgain, message: "the decoder refused input while holding no frame")
        }
    }
}
