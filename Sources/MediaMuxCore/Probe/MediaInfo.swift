import MediaMuxBase
import MediaMuxContainers
/// What MediaMux knows about a media file after probing it. Plain values:
/// Sendable, comparable, and free of FFmpeg types.
public struct MediaInfo: Sendable, Equatable {
    /// The file probed, as the caller named it.
    public var path: String
    /// FFmpeg's demuxer name, for example `mov,mp4,m4a,3gp,3g2,mj2` or `matroska,webm`.
    public var format: String
    /// FFmpeg's long name for the format: "QuickTime / MOV".
    public var formatDescription: String
    /// The container's own duration, when it declares one.
    public var containerDuration: MediaTime?
    /// Bytes of the file's metadata tags (keys and values), which an output copies.
    public var metadataBytes: Int
    /// The file's metadata tags as FFmpeg reads them (title, creation_time,
    /// com.apple.quicktime.make...).
    public var tags: [String: String] = [:]
    /// Every stream of the file, in the file's order; `StreamInfo.index` is the position.
    public var streams: [StreamInfo]
    /// MP4/MOV: the movie-level metadata boxes as the file has them.
    package var movieMetadata: MovieMetadataBoxes?

    /// A file's facts as a test or a caller's own prober states them.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - format: FFmpeg's demuxer name.
    ///   - formatDescription: FFmpeg's long name; nil repeats `format`.
    ///   - containerDuration: The container's own duration, when it declares one.
    ///   - metadataBytes: Bytes of the file's metadata tags.
    ///   - tags: The file's metadata tags.
    ///   - streams: Every stream, in the file's order.
    public init(
        path: String, format: String, formatDescription: String? = nil, containerDuration: MediaTime? = nil,
        metadataBytes: Int = 0, tags: [String: String] = [:], streams: [StreamInfo]
    ) {
        self.init(
            path: path, format: format, formatDescription: formatDescription ?? format, containerDuration: containerDuration,
            metadataBytes: metadataBytes, tags: tags, streams: streams, movieMetadata: nil)
    }

    package init(
        path: String, format: String, formatDescription: String, containerDuration: MediaTime?, metadataBytes: Int,
        tags: [String: String], streams: [StreamInfo], movieMetadata: MovieMetadataBoxes?
    ) {
        self.path = path
        self.format = format
        self.formatDescription = formatDescription
        self.containerDuration = containerDuration
        self.metadataBytes = metadataBytes
        self.tags = tags
        self.streams = streams
        self.movieMetadata = movieMetadata
    }

    /// Video streams that are pictures in motion: cover art is left out.
    public var videoStreams: [StreamInfo] { streams.filter { $0.kind == .video && !$0.isAttachedPicture } }
    /// The audio streams, in the file's order.
    public var audioStreams: [StreamInfo] { streams.filter { $0.kind == .audio } }

    /// The first video stream: the one a merge or a preview takes unless told otherwise.
    public var video: StreamInfo? { videoStreams.first }
    /// The first audio stream: the one a merge takes from its audio file unless told otherwise.
    public var audio: StreamInfo? { audioStreams.first }

    /// How long the file plays: from the earliest start to the latest end of
    /// its video and audio streams, or the container's duration when they do
    /// not say.
    public var duration: MediaTime? {
        let timed = (videoStreams + audioStreams).compactMap { stream in stream.start.flatMap { start in stream.end.map { (start, $0) } } }
        guard let first = timed.map(\.0).min(), let last = timed.map(\.1).max() else { return containerDuration }
        return last - first
    }

    /// The first video's picture as players show it (see `StreamInfo.displaySize`).
    public var displaySize: VideoSize? { video?.displaySize }

    /// The first video's clockwise display rotation: 0, 90, 180 or 270.
    public var rotation: Int? { video?.rotation }
}

/// A picture's width and height in pixels.
public struct VideoSize: Sendable, Hashable, CustomStringConvertible {
    /// Pixels across.
    public var width: Int
    /// Pixels down.
    public var height: Int

    /// A picture size.
    ///
    /// - Parameters:
    ///   - width: Pixels across.
    ///   - height: Pixels down.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// "1920x1080".
    public var description: String { "\(width)x\(height)" }

    /// A size as written: "1920x1080" (an X too); nil for anything else.
    ///
    /// - Parameter text: Width and height in pixels with an x between.
    public init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]) else { return nil }
        self.init(width: width, height: height)
    }
}

/// What MediaMux knows about one stream of a file: its codec, where its
/// presentation starts and ends, and its picture or sound.
public struct StreamInfo: Sendable, Equatable {
    /// What a stream carries, as FFmpeg classes it.
    public enum Kind: String, Sendable {
        /// `video` (cover art included, see `isAttachedPicture`), `audio`,
        /// `subtitle`, `data` (timecode, timed metadata), `attachment`
        /// (fonts), or `other`.
        case video, audio, subtitle, data, attachment, other
    }

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

    /// The stream's position in the file, from 0, counting every kind.
    public var index: Int
    /// What the stream carries.
    public var kind: Kind
    /// FFmpeg's codec name: "h264", "hevc", "aac", "pcm_s16le"...; "none"
    /// for a codec this FFmpeg has no name for (see `unreadableCodec`).
    public var codec: String
    /// The container's four-character code for it, when there is one ("avc1", "mp4a").
    public var codecTag: String?
    /// For a codec this FFmpeg has no name for: its four-character code,
    /// what it is where known, and that this FFmpeg cannot read it
    /// ("vvc1: VVC (H.266), which FFmpeg 5.1.9 cannot read"). Nil otherwise.
    public var unreadableCodec: String? {
        guard codec == "none" else { return nil }
        return UnnamedCodec.describe(tag: codecTag)
    }
    /// The codec profile, when FFmpeg names one ("High", "LC", "Main 10").
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
    /// How `start` and `end` were established.
    public var timing: Timing
    /// How many packets (samples) the stream has, where the container says or
    /// the packets were counted.
    public var packetCount: Int?
    /// A fragmented MP4 cut short inside a fragment: the samples it declares
    /// whose data is not in the file. `packetCount` counts only whole ones.
    public var missingSamples: Int?
    /// A fragmented MP4 whose fragment headers break off: where, and why
    /// ("the fragment header at byte 5120 is damaged (...)"). Nothing after
    /// it is read; `packetCount` counts the samples before it.
    public var damagedFragment: String?
    /// An MP4/MOV stream with samples in movie fragments.
    public var isFragmented = false
    /// A fragmented stream whose samples lie in its movie fragments (and in
    /// the moov's sample table, if it has no edit list), in one plain sample
    /// entry: MediaMux reads them itself when it copies them. Nil otherwise.
    public var fragmentSamples: FragmentSamples?
    /// True for a still picture attached to the file (cover art), which
    /// merges and previews do not take for the video.
    public var isAttachedPicture: Bool
    /// The stream's language tag, as the file has it ("eng", "und").
    public var language: String?
    /// The bit rate in bits per second, where known.
    public var bitRate: Int?
    /// Bytes of codec configuration (avcC, hvcC, esds, ...) and tags carried into a copy.
    public var headerBytes: Int

    // Video
    /// The coded picture width in pixels (video only), before pixel aspect and rotation.
    public var width: Int?
    /// The coded picture height in pixels (video only).
    public var height: Int?
    /// The clockwise rotation players apply when showing the picture: 0, 90, 180 or 270.
    public var rotation: Int
    /// True when the display matrix is something other than a pure rotation (a mirror, say).
    public var hasUnusualMatrix: Bool
    /// The average frame rate in frames a second, where known (video only).
    public var frameRate: Double?
    /// The shape of one coded pixel, width over height (1:1 when square or unknown).
    public var pixelAspect: PixelAspect = PixelAspect()
    /// Bits a sample of the decoded pictures (8, 10, 12), where known (video only).
    public var bitDepth: Int?
    /// The transfer characteristic, FFmpeg's name ("bt709"; "smpte2084" for
    /// PQ and "arib-std-b67" for HLG, the HDR ones), where the stream says (video only).
    public var colourTransfer: String?
    /// The display matrix's nine values as the file has them (a, b, u, c, d,
    /// v, x, y, w), where it has one (video only).
    package var displayMatrix: [Int32]?

    // Audio
    /// Samples a second (audio only).
    public var sampleRate: Int?
    /// The channel count (audio only).
    public var channels: Int?
    /// Encoder priming in samples, where the file declares it.
    public var priming: Int?

    /// The track's own timeline from its sample table, for MP4/MOV tracks
    /// whose edits one output edit can repeat; nil elsewhere.
    package var mediaTimeline: MediaTimeline?
    /// The codec's configuration as FFmpeg holds it (its extradata: an
    /// AudioSpecificConfig, an avcC...); nil when not probed.
    package var configuration: [UInt8]?
    /// MP4/MOV: the track's first sample entry, with the boxes inside it.
    package var sampleEntry: BoxNode?
    /// MP4/MOV: the track's boxes besides its header, edits and media.
    package var trackBoxes: [BoxNode] = []

    /// A stream's facts as a test or a caller's own prober states them. Each
    /// parameter sets the property of the same name; what a test does not
    /// state is unknown, zero, or false.
    ///
    /// - Parameters:
    ///   - index: The stream's position in the file.
    ///   - kind: What the stream carries.
    ///   - codec: FFmpeg's codec name.
    ///   - codecTag: The container's four-character code.
    ///   - profile: The codec profile's name.
    ///   - timeBase: One tick of the stream's timestamps.
    ///   - origin: The file time that is this stream's zero.
    ///   - start: When the first sample is presented, from `origin`.
    ///   - end: When the presentation ends, from `origin`.
    ///   - timing: How `start` and `end` were established.
    ///   - packetCount: How many packets the stream has.
    ///   - isAttachedPicture: True for cover art.
    ///   - language: The language tag.
    ///   - bitRate: Bits per second.
    ///   - headerBytes: Bytes of codec configuration and tags.
    ///   - width: Coded width (video).
    ///   - height: Coded height (video).
    ///   - rotation: Clockwise display rotation (video): 0, 90, 180 or 270.
    ///   - hasUnusualMatrix: True when the display matrix mirrors or skews (video).
    ///   - frameRate: Average frames a second (video).
    ///   - pixelAspect: The shape of one coded pixel (video).
    ///   - sampleRate: Samples a second (audio).
    ///   - channels: Channel count (audio).
    ///   - priming: Encoder priming in samples (audio).
    public init(
        index: Int, kind: Kind, codec: String, codecTag: String? = nil, profile: String? = nil,
        timeBase: MediaTime, origin: MediaTime = .zero(), start: MediaTime? = nil, end: MediaTime? = nil,
        timing: Timing = .unknown, packetCount: Int? = nil, isAttachedPicture: Bool = false, language: String? = nil,
        bitRate: Int? = nil, headerBytes: Int = 0, width: Int? = nil, height: Int? = nil, rotation: Int = 0,
        hasUnusualMatrix: Bool = false, frameRate: Double? = nil, pixelAspect: PixelAspect = PixelAspect(),
        sampleRate: Int? = nil, channels: Int? = nil, priming: Int? = nil
    ) {
        self.index = index
        self.kind = kind
        self.codec = codec
        self.codecTag = codecTag
        self.profile = profile
        self.timeBase = timeBase
        self.origin = origin
        self.start = start
        self.end = end
        self.timing = timing
        self.packetCount = packetCount
        self.isAttachedPicture = isAttachedPicture
        self.language = language
        self.bitRate = bitRate
        self.headerBytes = headerBytes
        self.width = width
        self.height = height
        self.rotation = rotation
        self.hasUnusualMatrix = hasUnusualMatrix
        self.frameRate = frameRate
        self.pixelAspect = pixelAspect
        self.sampleRate = sampleRate
        self.channels = channels
        self.priming = priming
    }

    /// `end - start`, when both are known.
    public var duration: MediaTime? {
        guard let start, let end else { return nil }
        return end - start
    }

    /// Width and height as players show the picture: non-square pixels
    /// widened or narrowed (`pixelAspect`, the width changing), then turned
    /// by the display rotation.
    public var displaySize: VideoSize? {
        guard let width, let height, width > 0, height > 0 else { return nil }
        let shownWidth = pixelAspect.isSquare
            ? width : Int(min(max((Double(width) * pixelAspect.ratio).rounded(), 1), Double(Int32.max)))
        return rotation % 180 == 0
            ? VideoSize(width: shownWidth, height: height) : VideoSize(width: height, height: shownWidth)
    }
}

/// The width of a pixel over its height; MP4's `pasp`, H.264's VUI aspect ratio.
public struct PixelAspect: Sendable, Equatable {
    /// The pixel's width, in units of `height`.
    public var width: Int
    /// The pixel's height.
    public var height: Int

    /// A non-positive part means unknown, which counts as square.
    ///
    /// - Parameters:
    ///   - width: The pixel's width, as the stream declares it.
    ///   - height: The pixel's height, as the stream declares it.
    public init(width: Int = 1, height: Int = 1) {
        (self.width, self.height) = width > 0 && height > 0 ? (width, height) : (1, 1)
    }

    /// True when pixels are as wide as they are tall.
    public var isSquare: Bool { width == height }
    /// Width over height: above 1 for pixels shown wider than coded.
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

/// A track of a fragmented MP4 whose samples lie in movie fragments (and
/// in its sample table, when it has no edit list) and share one sample
/// entry, unencrypted: the
/// samples a copy reads with MediaMux's own fragment reader. FFmpeg's reader
/// keeps an index entry for every sample it has handed out (about 32 bytes
/// each: 17 MB for an hour of 30 fps video and 48 kHz AAC), so a copy
/// through it grows with the recording.
public struct FragmentSamples: Sendable, Equatable {
    /// The track's track_ID.
    public var trackID: Int
    /// How far before its decode time a sample is presented at most: minus
    /// the most negative composition offset, in media ticks (0 when none is negative).
    public var presentationLead: Int64
    /// Samples in the moov's sample table, before the fragments' (0 for an empty moov).
    public var tableSamples: Int

    public init(trackID: Int, presentationLead: Int64, tableSamples: Int = 0) {
        self.trackID = trackID
        self.presentationLead = presentationLead
        self.tableSamples = tableSamples
    }
}
