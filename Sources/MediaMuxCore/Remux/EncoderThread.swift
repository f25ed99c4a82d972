import MediaMuxBase
internal import CFFmpeg
import NIOConcurrencyHelpers
import NIOPosix

/// A video encoder on a thread of its own, one frame behind the filters:
/// while it takes a frame (libx264 and libx265 wait there for a frame
/// thread of their own to come free), the next one is decoded and
/// filtered. One frame waits at the most: the one handed over, held until
/// the encoder has taken it. Its packets are collected here for the
/// reader's thread, which alone touches the muxer's queue.
///
/// The thread is not the runtime's: a merge holds a pool thread while it
/// waits for this one, so the encoder cannot queue behind other merges.
final class EncoderThread: @unchecked Sendable {
    /// The handoff's states.
    private enum Slot: Int {
        /// Free for the next frame.
        case free
        /// Holds a frame to encode, or with `ending` the end: the encoder
        /// is flushed and the thread ends.
        case full
        /// The thread has ended.
        case finished
    }

    private let encoder: EncoderHandle
    /// The frame handed over; the encoder's alone while the slot says `.frame`.
    private let slot: FrameBuffer
    /// Set with the slot full: the end rather than a frame.
    private var ending = false
    private let handoff = ConditionLock<Int>(value: Slot.free.rawValue)
    private let thread = NIOThreadPool(numberOfThreads: 1)
    /// Encoded packets not yet taken, and the encoder's failure; behind `lock`.
    private let lock = NIOLock()
    private var packets: [UnsafeMutablePointer<AVPacket>] = []
    private var failure: (any Error)?
    private var isRunning = false

    init(encoder: EncoderHandle) throws {
        self.encoder = encoder
        slot = try FrameBuffer()
    }

    deinit {
        // A reader abandoned mid-way (cancelled, failed): the thread is told to end.
        if isRunning { end() }
        try? thread.syncShutdownGracefully()
        for var packet in packets as [UnsafeMutablePointer<AVPacket>?] { av_packet_free(&packet) }
    }

    /// Hands `frame` over (its reference is moved; `frame` is left blank),
    /// once the encoder has taken the one before. Throws the encoder's failure.
    func encode(_ frame: UnsafeMutablePointer<AVFrame>) throws {
        startIfNeeded()
        handoff.lock(whenValue: Slot.free.rawValue)
        av_frame_move_ref(slot.pointer, frame)
        ending = false
        handoff.unlock(withValue: Slot.full.rawValue)
        try throwFailure()
    }

    /// Flushes the encoder and waits for its thread to end.
    func finish() throws {
        startIfNeeded()
        end()
        try throwFailure()
    }

    private func end() {
        handoff.lock(whenValue: Slot.free.rawValue)
        ending = true
        handoff.unlock(withValue: Slot.full.rawValue)
        handoff.lock(whenValue: Slot.finished.rawValue)
        handoff.unlock()
        isRunning = false
    }

    /// The packets encoded since the last call, in order; the caller frees them.
    func takePackets() -> [UnsafeMutablePointer<AVPacket>] {
        lock.withLock {
            defer { packets.removeAll(keepingCapacity: true) }
            return packets
        }
    }

    private func throwFailure() throws {
        if let failure = lock.withLock({ failure }) { throw failure }
    }

    private func startIfNeeded() {
        guard !isRunning else { return }
        isRunning = true
        thread.start()
        thread.submit { [self] _ in run() }
    }

    /// The thread: encodes each frame handed over, then the end.
    private func run() {
        while true {
            // Held while the frame is encoded: the next one waits for the slot.
            handoff.lock(whenValue: Slot.full.rawValue)
            let ending = self.ending
            if lock.withLock({ failure == nil }) {
                do {
                    try encoder.encode(ending ? nil : slot.pointer, what: "video") { packet in
                        guard let kept = av_packet_alloc() else {
                            throw MediaMuxError.outOfMemory("keeping an encoded packet", path: "-")
                        }
                        av_packet_move_ref(kept, packet)
                        lock.withLock { packets.append(kept) }
                    }
                } catch {
                    lock.withLock { failure = error }
                }
            }
            av_frame_unref(slot.pointer)
            handoff.unlock(withValue: ending ? Slot.finished.rawValue : Slot.free.rawValue)
            if ending { return }
        }
    }
}
