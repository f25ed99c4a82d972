import MediaMuxBase
import MediaMuxCore

/// Thumbnails a merge makes from the keyframes it copies, in the same pass.
public struct ThumbnailOptions: Sendable, Equatable {
    /// The longest side of the upright picture.
    public var size: Int
    /// At least this long between two thumbnails; nil spaces about 12 over the output.
    public var every: MediaTime?

    /// Thumbnail options.
    ///
    /// - Parameters:
    ///   - size: The longest side of the upright picture, 1 to 8192 pixels.
    ///   - every: The least time between two thumbnails, more than zero; nil
    ///     for a twelfth of the output.
    public init(size: Int = 320, every: MediaTime? = nil) {
        self.size = size
        self.every = every
    }
}

/// Which keyframes of a merge become thumbnails and how they look: upright
/// as the output is shown (its written rotation), at most one per `spacing`.
public struct ThumbnailPlan: Sendable, Equatable {
    /// The least time between two thumbnails, in whole milliseconds.
    public var spacing: MediaTime
    /// At most this many (9999, so that four-digit names sort).
    public var most: Int
    /// The size of each thumbnail, upright, and how it is scaled and turned.
    public var picture: PictureSize

    /// Pure: thumbnails spaced `every` apart, or a twelfth of the
    /// merge's output; nil for a video that declares no picture size.
    ///
    /// - Parameters:
    ///   - options: The thumbnails asked for.
    ///   - plan: The merge they come from: its end, its written rotation, and the frame of a video it re-frames.
    ///   - video: The video stream copied, for its coded size and pixel aspect.
    /// - Throws: `MediaMuxError.invalidOption` when `options` are out of range
    ///   (see `ThumbnailOptions.validate()`).
    public init?(_ options: ThumbnailOptions, merge plan: MergePlan, video: StreamInfo) throws(MediaMuxError) {
        try options.validate()
        guard let width = video.width, let height = video.height, width > 0, height > 0 else { return nil }
        let end = plan.end
        // Whole milliseconds, from 1 ms to about 11 days: beyond that, one thumbnail.
        let every = min(max(options.every?.seconds ?? end.seconds / 12, 0.001), 1e9)
        spacing = MediaTime(value: Int64((every * 1000).rounded()), timescale: 1000)
        // A video re-framed is written as its frame: square pixels, upright.
        let frame = plan.video.reframing?.frame
        picture = PictureSize(
            codedWidth: frame?.width ?? width, codedHeight: frame?.height ?? height, aspect: frame == nil ? video.pixelAspect : PixelAspect(),
            turn: plan.rotation.turn(of: video), longest: options.size)
        most = Int(min(9999, end.seconds / every + 1))
    }
}

extension ThumbnailPlan {
    /// The merge observer that makes thumbnails of the keyframes copied and
    /// hands them to `handler`, on the merge's thread.
    package static func observing(
        _ options: ThumbnailOptions, handler: @escaping @Sendable (PreviewFrame) -> Void
    ) -> @Sendable (MergePlan, StreamInfo) throws -> PacketObserving? {
        { plan, video in
            guard let thumbnails = try ThumbnailPlan(options, merge: plan, video: video) else { return nil }
            return PacketObserving(product: "thumbnails") { stream in
                try KeyframeThumbnailer(plan: thumbnails, stream: stream, path: plan.video.path, handler: handler)
            }
        }
    }
}

extension ThumbnailOptions {
    /// What is wrong with `size` as the longest side of a picture (a
    /// thumbnail's, a frame's), in words that follow the setting's name
    /// ("must be between 1 and 8192 pixels, not 0"); nil when nothing.
    public static func sizeProblem(_ size: Int) -> String? {
        (1...PreviewPlanner.largestSide).contains(size) ? nil : "must be between 1 and \(PreviewPlanner.largestSide) pixels, not \(size)"
    }

    /// Throws the option error a merge with these thumbnails would.
    ///
    /// - Throws: `MediaMuxError.invalidOption` for a size outside 1-8192
    ///   pixels, or a spacing of zero or less.
    public func validate() throws(MediaMuxError) {
        if let problem = Self.sizeProblem(size) { throw .invalidOption(option: "ThumbnailOptions.size", message: "thumbnail size \(problem)") }
        if let every, every <= .zero() {
            throw .invalidOption(option: "ThumbnailOptions.every", message: "thumbnails must be more than 0 seconds apart, not \(every.seconds)")
        }
    }
}
