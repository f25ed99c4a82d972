import MediaMuxBase
/// What MediaMux knows about a media file after probing it. Plain values:
/// Sendable, comparable, and free of FFmpeg types.
public struct MediaInfo: Sendable, Equatable {
    public var path: String
    /// FFmpeg's demuxer name, for example `mov,mp4,m4a,3gp,3g2,mj2` or `matroska,webm`.
    public var format: String
    public var formatDescription: String
    /// The container's own duration, when it declares one.
    public var containerDuration: MediaTime?
    /// Bytes of the file's metadata tags (keys and values), which an output copies.
    public var metadataBytes: Int
    /// The file's metadata tags as FFmpeg reads them (title, creation_time,
    /// com.apple.quicktime.make...).
    public var tags: [String: String] = [:]
    public var streams: [StreamInfo]
    /// MP4/MOV: the movie-level metadata boxes as the file has them.
    package var movieMetadata: MovieMetadataBoxes?

    /// Video streams that are pictures in motion: cover art is left out.
    public var videoStreams: [StreamInfo] { streams.filter { $0.kind == .video && !$0.isAttachedPicture } }
    public var audioStreams: [StreamInfo] { streams.filter { $0.kind == .audio } }
}

public struct StreamInfo: Sendable, Equatable {
    public enum Kind: String, Sendable { case video, audio, subtitle, data, attachment, other }

    /// How `start` and `end` were established.
    public enum Timing: String, Sendable {
        /// From the container's index and edit lists (MP4, MOV).
        case container
        /// From the container, with the encoder delay and padding of an iTunSMPB tag removed.
        case iTunSMPB
        /// By reading every packet of the stream (containers without an exact index).
        case packetScan
        /// Neither the container nor the packets tell.
        case unknown
    }

    public var index: Int
    public var kind: Kind
    public var codec: String
    public var codecTag: String?
    public var profile: String?
    /// One tick of the stream's timestamps.
    public var timeBase: MediaTime
    /// The point of the file's timestamps that is time zero for this stream:
    /// 0 for MP4/MOV (whose edit lists already place it), the container's start
    /// time elsewhere, and the first real sample after encoder priming for AAC
    /// that declares its priming only in an iTunSMPB tag.
    public var origin: MediaTime
    /// When the stream's first sample is presented, relative to `origin`.
    public var start: MediaTime?
    /// When the stream's presentation ends, relative to `origin`.
    public var end: MediaTime?
    public var timing: Timing
    public var packetCount: Int?
    public var isAttachedPicture: Bool
    public var language: String?
    public var bitRate: Int?
    /// Bytes of codec configuration (avcC, hvcC, esds, ...) and tags carried into a copy.
    public var headerBytes: Int

    // Video
    public var width: Int?
    public var height: Int?
    /// The clockwise rotation players apply when showing the picture: 0, 90, 180 or 270.
    public var rotation: Int
    /// True when the display matrix is something other than a pure rotation (a mirror, say).
    public var hasUnusualMatrix: Bool
    public var frameRate: Double?
    /// The shape of one coded pixel, width over height (1:1 when square or unknown).
    public var pixelAspect: PixelAspect = PixelAspect()

    // Audio
    public var sampleRate: Int?
    public var channels: Int?
    /// Encoder priming in samples, where the file declares it.
    public var priming: Int?

    /// The track's own timeline from its sample table, for MP4/MOV tracks
    /// whose edits one output edit can repeat; nil elsewhere.
    package var mediaTimeline: MediaTimeline?
    /// MP4/MOV: the track's first sample entry, with the boxes inside it.
    package var sampleEntry: BoxNode?
    /// MP4/MOV: the track's boxes besides its header, edits and media.
    package var trackBoxes: [BoxNode] = []

    /// `end - start`, when both are known.
    public var duration: MediaTime? {
        guard let start, let end else { return nil }
        return end - start
    }

    /// Width and height as shown, after the display rotation. Pixels are counted
    /// as coded: `pixelAspect` widens or narrows the picture on top of this.
    public var displaySize: (width: Int, height: Int)? {
        guard let width, let height else { return nil }
        return rotation % 180 == 0 ? (width, height) : (height, width)
    }
}

/// The width of a pixel over its height; MP4's `pasp`, H.264's VUI aspect ratio.
public struct PixelAspect: Sendable, Equatable {
    public var width: Int
    public var height: Int

    /// A non-positive part means unknown, which counts as square.
    public init(width: Int = 1, height: Int = 1) {
        (self.width, self.height) = width > 0 && height > 0 ? (width, height) : (1, 1)
    }

    public var isSquare: Bool { width == height }
    public var ratio: Double { Double(width) / Double(height) }
}

/// An MP4/MOV track's timing as its sample table and edit list state it,
/// independent of how a demuxer interprets them. FFmpeg 5.1 misplaces the
/// start of an edit list over negative composition offsets (by 0.35 s in an
/// iPhone clip), and presents some samples before their decode time when the
/// deepest offset is in the last two ctts entries.
package struct MediaTimeline: Sendable, Equatable {
    /// Where the presentation starts, in the media's composition time.
    package var start: MediaTime
    /// The deepest a sample is presented before it is decoded, in ticks of
    /// the track's time base; 0 when none is.
    package var presentationLead: Int64
    /// Samples in the track.
    package var sampleCount: Int?
}
