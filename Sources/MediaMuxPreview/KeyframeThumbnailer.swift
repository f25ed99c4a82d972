import MediaMuxBase
import MediaMuxCore
internal import CFFmpeg

/// Makes thumbnails from the keyframes a merge copies, in the same pass:
/// each chosen keyframe is decoded on its own (a keyframe needs no other
/// frame), scaled, turned as the output is shown, and handed out. Which
/// keyframes, what size and which turn come from the plan.
final class KeyframeThumbnailer: PacketObserver {
    private let plan: ThumbnailPlan
    private let decoder: DecoderHandle
    private let converter: PictureConverter
    private let frame: FrameBuffer
    private let handler: @Sendable (PreviewFrame) -> Void
    /// The first keyframe counts whatever its time (one before zero is shown at zero).
    private var nextDue = -Double.infinity
    private var made = 0

    init(plan: ThumbnailPlan, stream: UnsafeMutablePointer<AVStream>, path: String, handler: @escaping @Sendable (PreviewFrame) -> Void) throws {
        self.plan = plan
        self.handler = handler
        // One thread: each keyframe is decoded alone and drained at once.
        decoder = try DecoderHandle(stream: stream, path: path, threads: 1)
        converter = try PictureConverter(path: path, picture: plan.picture, layout: .rgb)
        frame = try FrameBuffer()
    }

    /// Looks at a video packet about to be written, its timestamps on the
    /// output's timeline in `timeBase`.
    func observe(_ packet: UnsafeMutablePointer<AVPacket>, timeBase: AVRational) throws {
        guard (packet.pointee.flags & AV_PKT_FLAG_KEY) != 0, packet.pointee.pts != noTimestamp else { return }
        let time = MediaTime(value: Int64(timeBase.num) * packet.pointee.pts, timescale: Int64(max(timeBase.den, 1)))
        guard time.seconds >= nextDue, made < plan.most else { return }
        decoder.flush()
        _ = try decoder.send(packet)
        _ = try decoder.send(nil)
        guard try decoder.receive(into: frame) == .frame else { return }
        let shown = time < .zero() ? MediaTime.zero() : time
        handler(try converter.picture(frame, time: shown))
        made += 1
        av_frame_unref(frame.pointer)
        // At least a whole spacing after this one.
        nextDue = time.seconds + plan.spacing.seconds - 1e-9
    }
}
