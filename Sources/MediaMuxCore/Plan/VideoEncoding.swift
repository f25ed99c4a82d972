import MediaMuxBase
import MediaMuxContainers

/// Video re-framed: decoded, turned upright, fitted into a frame of the
/// other shape and encoded, every frame at its own presentation time.
public struct VideoEncoding: Sendable, Equatable {
    /// FFmpeg's name of the codec written: "h264" or "hevc".
    public var codec: String
    /// FFmpeg's name of the encoder: "libx264" or "libx265".
    public var encoder: String
    /// The source's codec.
    public var sourceCodec: String
    /// The output frame.
    public var frame: VideoSize
    /// The picture as shown, upright, before it is fitted.
    public var picture: VideoSize
    /// How the picture fills the frame.
    public var fit: Fit
    /// What shows the coded picture upright.
    public var turn: PictureTurn
    /// Bits a sample: 8, or 10 for a source of more than 8 (HDR among them).
    public var bitDepth: Int
    /// The encoder's constant rate factor.
    public var quality: Int
    /// The encoder's preset.
    public var preset: String
    /// How the picture's colour is written.
    public var colour: Colour
    /// Why the video is encoded.
    public var reason: String
    /// What the encoding changes besides the frame ("AV1 is encoded HEVC: this
    /// FFmpeg has no AV1 encoder MediaMux uses", "Dolby Vision is dropped...").
    public var notes: [String]

    package init(
        codec: String, encoder: String, sourceCodec: String, frame: VideoSize, picture: VideoSize, fit: Fit, turn: PictureTurn,
        bitDepth: Int, quality: Int, preset: String, colour: Colour = .kept, reason: String, notes: [String]
    ) {
        self.codec = codec
        self.encoder = encoder
        self.sourceCodec = sourceCodec
        self.frame = frame
        self.picture = picture
        self.fit = fit
        self.turn = turn
        self.bitDepth = bitDepth
        self.quality = quality
        self.preset = preset
        self.colour = colour
        self.reason = reason
        self.notes = notes
    }

    /// How an encoding writes the picture's colour.
    public enum Colour: String, Sendable, Equatable {
        /// As the source has it: its primaries, transfer, matrix and range,
        /// and 10 bits for a source of more (a merge's re-framing).
        case kept
        /// 8-bit BT.709 in limited range, converted from the matrix and
        /// range each picture is decoded with: what previews are made in.
        /// A picture that declares no matrix libswscale knows is read as
        /// BT.709 above 576 lines and BT.601 up to them, as players assume.
        case bt709
    }

    /// One line: "h264 -> h264 1920x1080 (blur), crf 23, veryfast (portrait video in a landscape frame)".
    public var summary: String {
        let depth = bitDepth > 8 ? " \(bitDepth)-bit" : ""
        return "\(sourceCodec) -> \(codec)\(depth) \(frame) (\(fit.rawValue)), crf \(quality), \(preset) (\(reason))"
            + notes.map { "; " + $0 }.joined()
    }
}

/// Pure: whether the video is copied or re-framed, and how it is encoded.
extension MergePlanner {
    /// The encoders MediaMux re-frames with, by the codec they write, and
    /// their defaults: the lowest cost that keeps the centred picture
    /// visually lossless, over 40 dB of luma PSNR against the source on
    /// synthetic and real clips alike (the grid is in Merging's Orientation).
    package static let videoEncoders: [String: (encoder: String, quality: Int, preset: String)] = [
        "h264": ("libx264", 23, "veryfast"),
        "hevc": ("libx265", 23, "superfast"),
    ]

    /// The presets x264 and x265 both have, fastest first.
    package static let videoPresets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]

    /// Transfer characteristics of high dynamic range (FFmpeg's names): PQ and HLG.
    static let highDynamicRange: Set<String> = ["smpte2084", "arib-std-b67"]

    /// The rotation written, and for a video re-framed its encoding.
    func videoFraming(
        _ stream: StreamInfo, in info: MediaInfo, container: MergePlan.Container, options: MergeOptions, output: String
    ) throws -> (RotationDecision, VideoEncoding?) {
        let width = stream.width ?? 0, height = stream.height ?? 0
        let shown = stream.displaySize ?? VideoSize(width: width, height: height)
        let framing = decideFraming(
            shown: shown, codedWidth: width, codedHeight: height, sourceRotation: stream.rotation,
            orientation: options.orientation, override: options.rotation)
        guard case .reframed(let orientation, let shape) = framing else {
            guard case .copied(var rotation) = framing else { return (RotationDecision(degrees: 0, reason: ""), nil) }
            if stream.hasUnusualMatrix && !rotation.keepsSourceMatrix {
                // A rotation the caller gives replaces the whole matrix.
                rotation.reason += "; the source's display matrix also mirrors or skews the picture, which is not kept"
            }
            return (rotation, nil)
        }
        let frame = try Self.frame(for: shown, into: orientation, asked: options.video.frameSize, output: output)
        if let profile = DolbyVisionConfiguration(stream.sampleEntry)?.profile, profile == 5 {
            throw MediaMuxError.invalidOption(option: "MergeOptions.orientation", message:
                "\(info.path): Dolby Vision profile 5 cannot be re-framed faithfully (its pictures are IPT, which only its "
                    + "metadata turns into colour); the default orientation (keep: upright, copied) keeps it whole")
        }
        let encoding = try videoEncoding(
            stream, shown: shown, frame: frame, options: options.video,
            reason: "\(shape.rawValue) video in a \(orientation.rawValue) frame", output: output)
        guard canStore(encoding.codec, container) else {
            throw MediaMuxError.codecNotSupportedInContainer(codec: encoding.codec, container: container.rawValue, path: output)
        }
        let rotation = RotationDecision(
            degrees: 0, reason: "\(shape.rawValue) video re-framed upright into a \(orientation.rawValue) \(frame) frame (encoded)")
        return (rotation, encoding)
    }

    /// The options only an encode uses, set for video that is copied: a
    /// warning that names them and says why they go unused, or nil.
    static func unusedEncodingOptions(_ options: VideoOptions, copied rotation: RotationDecision) -> String? {
        let asked = [
            options.quality.map { "quality (CRF \($0))" }, options.preset.map { "preset \"\($0)\"" },
            options.frameSize.map { "frame size \($0)" },
        ].compactMap { $0 }
        guard !asked.isEmpty else { return nil }
        let why = rotation.chosenByCaller || rotation.reason.isEmpty ? "its rotation is written as asked" : rotation.reason
        return "the video \(spokenList(asked)) asked for \(asked.count == 1 ? "is" : "are") not used, as the video is copied, not encoded: \(why)"
    }

    /// The quality and preset asked for video that is encoded (re-framed,
    /// or a cut's frames): a CRF of 0 to 51 and a preset both x264 and x265 have.
    static func checkEncoderOptions(_ options: VideoOptions, output: String) throws {
        if let quality = options.quality, !(0...51).contains(quality) {
            throw MediaMuxError.invalidOption(option: "MergeOptions.video.quality", message: "\(output): the video quality (CRF) must be 0 to 51, not \(quality)")
        }
        if let preset = options.preset, !Self.videoPresets.contains(preset) {
            throw MediaMuxError.invalidOption(option: "MergeOptions.video.preset", message:
                "\(output): the video preset must be one of \(Self.videoPresets.joined(separator: ", ")), not \(preset)")
        }
    }

    /// The smallest side of a frame: x265 3.5 (Debian 12's and 13's) corrupts
    /// its heap on 10-bit pictures 48 pixels wide (tried: 48x48 to 48x200
    /// abort, 64 and more to 240 by eights, 1080 and 1920 do not).
    static let smallestFrameSide = 64
    /// The largest side a re-framed picture may have.
    static let largestFrameSide = 8192

    /// The frame: 16:9 (9:16 in portrait) with its short side the picture's
    /// short side as shown, even, and at least `smallestFrameSide`; or the
    /// caller's, when it has the shape asked for.
    static func frame(for shown: VideoSize, into orientation: Orientation, asked: VideoSize?, output: String) throws -> VideoSize {
        let wide = orientation != .portrait
        if let asked {
            guard (smallestFrameSide...largestFrameSide).contains(asked.width), (smallestFrameSide...largestFrameSide).contains(asked.height) else {
                throw MediaMuxError.invalidOption(option: "MergeOptions.video.frameSize", message: "\(output): the frame size must be \(smallestFrameSide) to \(largestFrameSide) pixels a side, not \(asked)")
            }
            guard asked.width % 2 == 0, asked.height % 2 == 0 else {
                throw MediaMuxError.invalidOption(option: "MergeOptions.video.frameSize", message: "\(output): the frame size must be even both ways (4:2:0 pictures), not \(asked)")
            }
            guard wide ? asked.width >= asked.height : asked.height >= asked.width else {
                throw MediaMuxError.invalidOption(option: "MergeOptions.video.frameSize", message: "\(output): a \(orientation.rawValue) frame cannot be \(asked)")
            }
            return asked
        }
        let short = max(smallestFrameSide, min(shown.width, shown.height) / 2 * 2)
        let long = max(2, Int((Double(short) * 16 / 9 / 2).rounded()) * 2)
        return wide ? VideoSize(width: long, height: short) : VideoSize(width: short, height: long)
    }

    /// The encoder: the source's codec family where MediaMux encodes it
    /// (H.264, HEVC); otherwise HEVC for more than 8 bits or HDR, H.264 else.
    func videoEncoding(
        _ stream: StreamInfo, shown: VideoSize, frame: VideoSize, options: VideoOptions, reason: String, output: String
    ) throws -> VideoEncoding {
        let deep = (stream.bitDepth ?? 8) > 8
        let bright = stream.colourTransfer.map(Self.highDynamicRange.contains) ?? false
        var notes: [String] = []
        var codec = stream.codec
        if Self.videoEncoders[codec] == nil {
            codec = deep || bright ? "hevc" : "h264"
            let why = deep || bright ? (bright ? "HDR" : "\(stream.bitDepth ?? 10)-bit") : "8-bit"
            notes.append("\(Self.displayName(stream.codec)) is encoded \(Self.displayName(codec)) (\(why))")
        }
        guard let chosen = Self.videoEncoders[codec], hasEncoder(chosen.encoder) else {
            throw MediaMuxError.invalidOption(option: "MergeOptions.orientation", message:
                "\(output): the video must be encoded to re-frame it, and this FFmpeg has no \(Self.videoEncoders[codec]?.encoder ?? codec) encoder")
        }
        try Self.checkEncoderOptions(options, output: output)
        if let profile = DolbyVisionConfiguration(stream.sampleEntry) {
            let base = profile.compatibleWith.map { " (\($0) kept)" } ?? ""
            notes.append("Dolby Vision profile \(profile.profileName) is dropped\(base): its metadata cannot be re-encoded")
        }
        return VideoEncoding(
            codec: codec, encoder: chosen.encoder, sourceCodec: stream.codec, frame: frame, picture: shown,
            fit: options.fit, turn: stream.uprightTurn, bitDepth: deep ? 10 : 8, quality: options.quality ?? chosen.quality,
            preset: options.preset ?? chosen.preset, reason: reason, notes: notes)
    }
}

/// A Dolby Vision configuration box (dvcC, dvvC, dvwC) of an MP4 sample
/// entry: ETSI TS 103 572's record.
struct DolbyVisionConfiguration: Equatable {
    var profile: Int
    var level: Int
    /// The base layer's signal compatibility: 1 HDR10, 2 SDR, 4 HLG.
    var compatibility: Int

    init?(_ entry: BoxNode?) {
        guard let box = entry?.children?.first(where: { ["dvcC", "dvvC", "dvwC"].contains($0.type) }), box.head.count >= 5 else { return nil }
        let bytes = box.head
        profile = Int(bytes[2] >> 1)
        level = Int((bytes[2] & 1) << 5 | bytes[3] >> 3)
        compatibility = Int(bytes[4] >> 4)
    }

    /// "8.4": the profile with its compatibility, as Apple and Dolby name them.
    var profileName: String { profile == 8 && compatibility > 0 ? "8.\(compatibility)" : "\(profile)" }

    /// What the base layer is without the Dolby Vision metadata.
    var compatibleWith: String? {
        switch compatibility {
        case 1: "HDR10"
        case 2: "SDR"
        case 4: "HLG"
        default: nil
        }
    }
}

extension VideoEncoding {
    /// Nothing but a scale and a turn into 8-bit BT.709 that fills the
    /// frame (a preview clip's): libswscale and a turn of the pixels make
    /// it (`ScaledUprightPictures`) without loading libavfilter, which on
    /// Debian maps 11 MB of libraries. Their pictures are the graph's with
    /// one filter thread: swscale in one slice (more slices round
    /// differently at their edges).
    var isScaleAndTurn: Bool { colour == .bt709 && bitDepth == 8 && fit == .pad && contained == frame }

    /// The picture scaled to fit inside the frame, whole: its size, both sides even.
    var contained: VideoSize {
        let scale = min(Double(frame.width) / Double(picture.width), Double(frame.height) / Double(picture.height))
        return VideoSize(width: Self.even(Double(picture.width) * scale), height: Self.even(Double(picture.height) * scale))
    }

    /// The picture scaled to cover the frame: its size, both sides even and at least the frame's.
    var covering: VideoSize {
        let scale = max(Double(frame.width) / Double(picture.width), Double(frame.height) / Double(picture.height))
        return VideoSize(
            width: max(frame.width, Self.even(Double(picture.width) * scale)), height: max(frame.height, Self.even(Double(picture.height) * scale)))
    }

    private static func even(_ value: Double) -> Int { max(2, Int((value / 2).rounded()) * 2) }

    /// Where a picture `gap` pixels smaller than the frame (or larger, for
    /// the crop) starts, centred at an even position for 4:2:0 chroma.
    private static func centred(_ gap: Int) -> Int { gap / 4 * 2 }

    /// libavfilter's graph from a decoded picture (input [in0]) to the frame:
    /// turned upright and fitted (scaled with swscale's bicubic). For `pad` and
    /// `blur` the picture is scaled before it is turned, in its coded
    /// orientation, so that the turn moves the fitted picture's pixels rather
    /// than the source's (a third of them for a 1080x1920 phone clip in a
    /// 1920x1080 frame); `crop` turns first, as its picture grows. Blurred sides
    /// are the fitted picture covering the frame at a quarter of its size,
    /// box-blurred, darkened to 60 % and scaled up; the picture is stacked whole
    /// between them (`hstack` or `vstack`: a copy, where `overlay` would blend
    /// through an 8-bit alpha plane). Positions are even, for 4:2:0 chroma;
    /// pixels come out square. The ffmpeg CLI runs the same graph as
    /// `-filter_complex` with [in0] named [0:v] (and `-noautorotate`, the turn
    /// being in it).
    public var filterGraph: String { filterGraph(scaling: "") }

    /// The graph for a decoded picture whose matrix is `matrix` (H.273's
    /// number, FFmpeg's AVColorSpace), `height` lines high, in full range or
    /// not: `filterGraph`, whose first scale also converts the colour when
    /// the encoding writes BT.709 (see `Colour.bt709`).
    func filterGraph(decoded matrix: UInt32, height: Int, fullRange: Bool) -> String {
        guard colour == .bt709 else { return filterGraph }
        let known = readingMatrix(declared: Int32(bitPattern: matrix), height: height)
        let names: [Int32: String] = [1: "bt709", 4: "fcc", 5: "bt601", 6: "bt601", 7: "smpte240m", 9: "bt2020", 10: "bt2020"]
        let from = names[known] ?? "bt601"
        return filterGraph(scaling: ":in_color_matrix=\(from):out_color_matrix=bt709:in_range=\(fullRange ? "pc" : "tv"):out_range=tv")
    }

    /// The graph, with `scaling` after the size of the scale that fits the picture.
    private func filterGraph(scaling: String) -> String {
        let (width, height) = (frame.width, frame.height)
        let turned: String = turn.filters.isEmpty ? "" : "," + turn.filters
        /// Scaled to `size` as shown, then turned.
        func scaledUpright(_ size: VideoSize) -> String {
            let coded = turn.swapsSides ? VideoSize(width: size.height, height: size.width) : size
            return "[in0]scale=\(coded.width):\(coded.height)" + scaling + turned
        }
        switch fit {
        case .pad:
            let inner = contained
            // A picture that fills the frame has nothing to pad (a preview's).
            guard inner != frame else { return scaledUpright(inner) + ",setsar=1" }
            let place = "\(Self.centred(width - inner.width)):\(Self.centred(height - inner.height))"
            return scaledUpright(inner) + ",pad=\(width):\(height):\(place):black,setsar=1"
        case .crop:
            let outer = covering
            let x = Self.centred(outer.width - width), y = Self.centred(outer.height - height)
            let upright: String = turn.filters.isEmpty ? "[in0]" : "[in0]" + turn.filters + ","
            return upright + "scale=\(outer.width):\(outer.height)" + scaling + ",crop=\(width):\(height):\(x):\(y),setsar=1"
        case .blur:
            return blurGraph(picture: scaledUpright(contained))
        }
    }

    /// `blur`'s graph from the picture fitted and upright (`picture`, a chain from [in0]).
    private func blurGraph(picture: String) -> String {
        let (width, height) = (frame.width, frame.height)
        let inner = contained
        // The picture fills the frame one way; the sides are what is left the other way.
        let across = inner.height == height
        let gap = across ? width - inner.width : height - inner.height
        guard gap > 0 else { return picture + ",setsar=1" }
        let before = Self.centred(gap)
        let after = gap - before
        func side(_ offset: Int, _ size: Int) -> String {
            across ? "crop=\(size):\(height):\(offset):0" : "crop=\(width):\(size):0:\(offset)"
        }
        let outer = covering
        let quarter = VideoSize(width: max(2, outer.width / 8 * 2), height: max(2, outer.height / 8 * 2))
        let small = VideoSize(width: max(2, width / 8 * 2), height: max(2, height / 8 * 2))
        let radius = max(1, min(small.width, small.height) / 12)
        let shrunk: String = "[back]scale=\(quarter.width):\(quarter.height),crop=\(small.width):\(small.height),"
        let blurred: String = "boxblur=luma_radius=\(radius):luma_power=2:chroma_radius=\(max(1, radius / 2)):chroma_power=2,"
        let background: String = shrunk + blurred + "lutyuv=y=minval+(val-minval)*0.6,scale=\(width):\(height)"
        let stack: String = across ? "hstack" : "vstack"
        let afterSide: String = side((across ? inner.width : inner.height) + before, after)
        let head: String = picture + ",split=2[back][picture];" + background
        if before == 0 {
            return head + "," + afterSide + "[after];[picture][after]" + stack + "=inputs=2,setsar=1"
        }
        let sides: String = ",split=2[b0][b1];[b0]" + side(0, before) + "[before];[b1]" + afterSide + "[after];"
        return head + sides + "[before][picture][after]" + stack + "=inputs=3,setsar=1"
    }
}
