import MediaMuxBase
import MediaMuxContainers
import Testing
@testable import MediaMux
@testable import MediaMuxCore

/// The orientation rule and the re-framing it leads to, without FFmpeg:
/// copied as shown unless a frame of the other shape is asked for; the turn
/// every display matrix makes; frame sizes, fits and encoders.
struct FramingRuleTests {
    /// (source clockwise rotation, coded W, H, orientation) -> the rotation
    /// copied, or nil when the video is re-framed.
    static let cases: [(Int, Int, Int, Orientation, Int?)] = [
        // Keep: whatever the shape, copied with its own rotation.
        (0, 1920, 1080, .keep, 0),
        (180, 1920, 1080, .keep, 180),
        (90, 1920, 1080, .keep, 90),  // a phone held upright: portrait, upright
        (270, 1920, 1080, .keep, 270),
        (0, 1080, 1920, .keep, 0),
        (90, 640, 640, .keep, 90),
        // Landscape: landscape and square copied; portrait re-framed.
        (0, 1920, 1080, .landscape, 0),
        (180, 1920, 1080, .landscape, 180),
        (90, 1080, 1920, .landscape, 90),
        (0, 640, 640, .landscape, 0),
        (270, 640, 640, .landscape, 270),
        (90, 1920, 1080, .landscape, nil),
        (270, 1920, 1080, .landscape, nil),
        (0, 1080, 1920, .landscape, nil),
        (180, 1080, 1920, .landscape, nil),
        // Portrait: the mirror image; square counts as landscape.
        (90, 1920, 1080, .portrait, 90),
        (0, 1080, 1920, .portrait, 0),
        (0, 1920, 1080, .portrait, nil),
        (90, 1080, 1920, .portrait, nil),
        (0, 640, 640, .portrait, nil),
    ]

    @Test(arguments: cases)
    func rule(_ example: (Int, Int, Int, Orientation, Int?)) {
        let (source, width, height, orientation, copied) = example
        let shown = source % 180 == 0 ? VideoSize(width: width, height: height) : VideoSize(width: height, height: width)
        let framing = decideFraming(
            shown: shown, codedWidth: width, codedHeight: height, sourceRotation: source, orientation: orientation, override: nil)
        switch framing {
        case .copied(let decision):
            #expect(decision.degrees == copied, "source \(source)° \(width)x\(height) \(orientation)")
            #expect(decision.keepsSourceMatrix && !decision.chosenByCaller)
            // A portrait video kept says how to re-frame it.
            #expect((decision.reframedBy == .landscape) == (orientation == .keep && shown.height > shown.width))
            #expect(decision.reason.contains("(copied;"))
        case .reframed(let into, _):
            #expect(copied == nil, "source \(source)° \(width)x\(height) \(orientation) was re-framed")
            #expect(into == orientation)
        }
    }

    @Test func aRotationGivenIsWrittenByCopy() {
        let framing = decideFraming(
            shown: VideoSize(width: 1080, height: 1920), codedWidth: 1920, codedHeight: 1080, sourceRotation: 90,
            orientation: .landscape, override: 180)
        #expect(framing == .copied(RotationDecision(degrees: 180, reason: "set by the caller", chosenByCaller: true)))
    }

    /// Every quarter turn and mirror a display matrix makes, in 16.16 (as
    /// tkhd stores it, and FFmpeg's side data), and what is not one.
    @Test func everyMatrixHasItsTurn() {
        let one: Int32 = 0x10000
        func matrix(_ a: Int32, _ b: Int32, _ c: Int32, _ d: Int32) -> [Int32] { [a, b, 0, c, d, 0, 0, 0, 0x4000_0000] }
        let table: [([Int32], PictureTurn?)] = [
            (matrix(one, 0, 0, one), PictureTurn.none),
            (matrix(0, one, -one, 0), .clockwise90),
            (matrix(-one, 0, 0, -one), .half),
            (matrix(0, -one, one, 0), .clockwise270),
            (matrix(-one, 0, 0, one), .mirrored),
            (matrix(one, 0, 0, -one), .flipped),
            (matrix(0, one, one, 0), .transposed),
            (matrix(0, -one, -one, 0), .antitransposed),
            (matrix(one, one / 2, 0, one), nil),  // a skew
        ]
        for (values, turn) in table {
            #expect(PictureTurn(matrix: values) == turn, "\(values)")
        }
        #expect(PictureTurn.allCases.filter(\.swapsSides) == [.clockwise90, .clockwise270, .transposed, .antitransposed])
        #expect(PictureTurn.clockwise90.filters == "transpose=clock" && PictureTurn.transposed.filters == "transpose=cclock_flip")
        #expect([0, 90, 180, 270, -90, 450].map(PictureTurn.init(clockwise:)) == [.none, .clockwise90, .half, .clockwise270, .clockwise270, .clockwise90])
    }

    @Test(arguments: [
        // Shown size, orientation, the frame.
        (VideoSize(width: 1080, height: 1920), Orientation.landscape, VideoSize(width: 1920, height: 1080)),
        (VideoSize(width: 720, height: 1280), .landscape, VideoSize(width: 1280, height: 720)),
        (VideoSize(width: 360, height: 640), .landscape, VideoSize(width: 640, height: 360)),
        (VideoSize(width: 240, height: 320), .landscape, VideoSize(width: 426, height: 240)),
        (VideoSize(width: 1920, height: 1080), .portrait, VideoSize(width: 1080, height: 1920)),
        (VideoSize(width: 640, height: 640), .portrait, VideoSize(width: 640, height: 1138)),
        (VideoSize(width: 1081, height: 1921), .landscape, VideoSize(width: 1920, height: 1080)),
        // Never under 64 a side (x265 fails on some smaller 10-bit pictures).
        (VideoSize(width: 64, height: 48), .portrait, VideoSize(width: 64, height: 114)),
    ])
    func theFrameIsSixteenByNineAtTheShortSide(_ shown: VideoSize, _ orientation: Orientation, _ frame: VideoSize) throws {
        #expect(try MergePlanner.frame(for: shown, into: orientation, asked: nil, output: "o.mp4") == frame)
    }

    @Test func anAskedFrameMustFit() throws {
        let portrait = VideoSize(width: 1080, height: 1920)
        #expect(try MergePlanner.frame(for: portrait, into: .landscape, asked: VideoSize(width: 1280, height: 720), output: "o.mp4") == VideoSize(width: 1280, height: 720))
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.video.frameSize", message: "o.mp4: a landscape frame cannot be 720x1280")) {
            try MergePlanner.frame(for: portrait, into: .landscape, asked: VideoSize(width: 720, height: 1280), output: "o.mp4")
        }
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.video.frameSize", message: "o.mp4: the frame size must be even both ways (4:2:0 pictures), not 1279x720")) {
            try MergePlanner.frame(for: portrait, into: .landscape, asked: VideoSize(width: 1279, height: 720), output: "o.mp4")
        }
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.video.frameSize", message: "o.mp4: the frame size must be 64 to 8192 pixels a side, not 9000x720")) {
            try MergePlanner.frame(for: portrait, into: .landscape, asked: VideoSize(width: 9000, height: 720), output: "o.mp4")
        }
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.video.frameSize", message: "o.mp4: the frame size must be 64 to 8192 pixels a side, not 96x48")) {
            try MergePlanner.frame(for: portrait, into: .landscape, asked: VideoSize(width: 96, height: 48), output: "o.mp4")
        }
    }

    static func encoding(fit: Fit, turn: PictureTurn = .clockwise90) -> VideoEncoding {
        VideoEncoding(
            codec: "h264", encoder: "libx264", sourceCodec: "h264", frame: VideoSize(width: 1920, height: 1080),
            picture: VideoSize(width: 1080, height: 1920), fit: fit, turn: turn, bitDepth: 8, quality: 18, preset: "veryfast",
            reason: "portrait video in a landscape frame", notes: [])
    }

    /// The graphs, with the sizes worked out by hand: the picture 1080x1920
    /// scaled into 1920x1080 is 607.5 wide (608, even), covering it 3413.3
    /// high (3414); centred at even positions. `pad` and `blur` scale the
    /// coded picture (1920x1080, turned a quarter) before turning it; `crop`
    /// turns first. The blurred sides come from the scaled picture.
    @Test func eachFitHasItsGraph() {
        #expect(Self.encoding(fit: .pad).filterGraph == "[in0]scale=1080:608,transpose=clock,pad=1920:1080:656:0:black,setsar=1")
        #expect(Self.encoding(fit: .crop).filterGraph == "[in0]transpose=clock,scale=1920:3414,crop=1920:1080:0:1166,setsar=1")
        let background = "[back]scale=480:852,crop=480:270,boxblur=luma_radius=22:luma_power=2:chroma_radius=11:chroma_power=2,"
            + "lutyuv=y=minval+(val-minval)*0.6,scale=1920:1080,split=2[b0][b1];[b0]crop=656:1080:0:0[before];"
            + "[b1]crop=656:1080:1264:0[after];[before][picture][after]hstack=inputs=3,setsar=1"
        #expect(Self.encoding(fit: .blur, turn: .none).filterGraph == "[in0]scale=608:1080,split=2[back][picture];" + background)
        #expect(Self.encoding(fit: .blur).filterGraph == "[in0]scale=1080:608,transpose=clock,split=2[back][picture];" + background)
        // A half turn and a mirror keep the sides where they are.
        #expect(Self.encoding(fit: .blur, turn: .half).filterGraph == "[in0]scale=608:1080,hflip,vflip,split=2[back][picture];" + background)
        #expect(Self.encoding(fit: .pad, turn: .antitransposed).filterGraph == "[in0]scale=1080:608,transpose=clock_flip,pad=1920:1080:656:0:black,setsar=1")
    }

    /// `blur` stacks the sides above and below in a portrait frame, stacks
    /// one side when the gap is too small to split evenly, and none when the
    /// picture fills the frame.
    @Test func blurSidesFollowTheGap() {
        var portrait = Self.encoding(fit: .blur, turn: .none)
        (portrait.picture, portrait.frame) = (VideoSize(width: 1920, height: 1080), VideoSize(width: 1080, height: 1920))
        #expect(portrait.filterGraph == "[in0]scale=1080:608,split=2[back][picture];[back]scale=852:480,crop=270:480,"
            + "boxblur=luma_radius=22:luma_power=2:chroma_radius=11:chroma_power=2,lutyuv=y=minval+(val-minval)*0.6,scale=1080:1920,"
            + "split=2[b0][b1];[b0]crop=1080:656:0:0[before];[b1]crop=1080:656:0:1264[after];[before][picture][after]vstack=inputs=3,setsar=1")
        var narrow = Self.encoding(fit: .blur, turn: .none)
        (narrow.picture, narrow.frame) = (VideoSize(width: 1078, height: 1080), VideoSize(width: 1080, height: 1080))
        #expect(narrow.filterGraph.hasSuffix(",crop=2:1080:1078:0[after];[picture][after]hstack=inputs=2,setsar=1"), "\(narrow.filterGraph)")
        var same = Self.encoding(fit: .blur, turn: .clockwise90)
        same.frame = VideoSize(width: 1080, height: 1920)
        #expect(same.filterGraph == "[in0]scale=1920:1080,transpose=clock,setsar=1")
    }

    static func video(codec: String, bitDepth: Int? = 8, transfer: String? = nil, dolbyVision: [UInt8]? = nil) -> StreamInfo {
        var stream = PlannerTests.stream(0, .video, codec: codec, scale: 90000, end: 900_000, rotation: 90, width: 1920, height: 1080)
        stream.bitDepth = bitDepth
        stream.colourTransfer = transfer
        if let dolbyVision {
            stream.sampleEntry = BoxNode(type: "hvc1", head: [], children: [BoxNode(type: "dvvC", head: dolbyVision), BoxNode(type: "colr", head: [1])])
        }
        return stream
    }

    static let encoders = MergePlanner(canStore: muxerAccepts, hasEncoder: { ["libx264", "libx265"].contains($0) })

    @Test(arguments: [
        // Source codec, bits, transfer -> codec written, bits, note.
        ("h264", 8, nil, "h264", 8, nil),
        ("hevc", 10, "arib-std-b67", "hevc", 10, nil),
        ("av1", 10, "smpte2084", "hevc", 10, "AV1 is encoded HEVC (HDR)"),
        ("av1", 8, nil, "h264", 8, "AV1 is encoded H.264 (8-bit)"),
        ("vp9", 10, nil, "hevc", 10, "VP9 is encoded HEVC (10-bit)"),
        ("vp8", 8, "bt709", "h264", 8, "VP8 is encoded H.264 (8-bit)"),
    ] as [(String, Int, String?, String, Int, String?)])
    func theEncoderFollowsTheSource(_ example: (String, Int, String?, String, Int, String?)) throws {
        let (source, bits, transfer, codec, depth, note) = example
        let encoding = try Self.encoders.videoEncoding(
            Self.video(codec: source, bitDepth: bits, transfer: transfer), shown: VideoSize(width: 1080, height: 1920),
            frame: VideoSize(width: 1920, height: 1080), options: VideoOptions(), reason: "r", output: "o.mp4")
        #expect(encoding.codec == codec && encoding.bitDepth == depth)
        #expect(encoding.encoder == (codec == "h264" ? "libx264" : "libx265"))
        #expect(encoding.notes == (note.map { [$0] } ?? []))
        #expect((encoding.quality, encoding.preset) == (codec == "h264" ? (23, "veryfast") : (23, "superfast")))
        #expect(encoding.turn == .clockwise90)
    }

    @Test func theCallersQualityAndPresetWin() throws {
        let encoding = try Self.encoders.videoEncoding(
            Self.video(codec: "h264"), shown: VideoSize(width: 1080, height: 1920), frame: VideoSize(width: 1920, height: 1080),
            options: VideoOptions(fit: .pad, quality: 23, preset: "slow"), reason: "r", output: "o.mp4")
        #expect((encoding.quality, encoding.preset, encoding.fit) == (23, "slow", .pad))
        #expect(encoding.summary == "h264 -> h264 1920x1080 (pad), crf 23, slow (r)")
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.video.quality", message: "o.mp4: the video quality (CRF) must be 0 to 51, not 60")) {
            try Self.encoders.videoEncoding(
                Self.video(codec: "h264"), shown: VideoSize(width: 1080, height: 1920), frame: VideoSize(width: 1920, height: 1080),
                options: VideoOptions(quality: 60), reason: "r", output: "o.mp4")
        }
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.video.preset", message:
            "o.mp4: the video preset must be one of ultrafast, superfast, veryfast, faster, fast, medium, slow, slower, veryslow, placebo, not quick")) {
            try Self.encoders.videoEncoding(
                Self.video(codec: "h264"), shown: VideoSize(width: 1080, height: 1920), frame: VideoSize(width: 1920, height: 1080),
                options: VideoOptions(preset: "quick"), reason: "r", output: "o.mp4")
        }
        let without = MergePlanner(canStore: muxerAccepts, hasEncoder: { $0 != "libx265" })
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.orientation", message: "o.mp4: the video must be encoded to re-frame it, and this FFmpeg has no libx265 encoder")) {
            try without.videoEncoding(
                Self.video(codec: "hevc"), shown: VideoSize(width: 1080, height: 1920), frame: VideoSize(width: 1920, height: 1080),
                options: VideoOptions(), reason: "r", output: "o.mp4")
        }
    }

    /// Dolby Vision 8.4 (dvvC: profile 8, level 4, RPU and base layer,
    /// compatibility 4, HLG) loses its metadata, said; profile 5 (IPT) is refused.
    @Test func dolbyVision() throws {
        let profile84: [UInt8] = [1, 0, 0x10, 0x25, 0x40]
        let phone = PlannerTests.info("dv.mov", [Self.video(codec: "hevc", bitDepth: 10, transfer: "arib-std-b67", dolbyVision: profile84)])
        let plan = try Self.encoders.plan(
            video: phone, audio: PlannerTests.song, output: "o.mp4", outputFacts: PlannerTests.freshOutput,
            options: MergeOptions(orientation: .landscape))
        let encoding = try #require(plan.video.reframing)
        #expect(encoding.notes == ["Dolby Vision profile 8.4 is dropped (HLG kept): its metadata cannot be re-encoded"])
        // Only the colour travels into the encoded entry, under the encoder's type.
        #expect(plan.video.sampleEntry?.boxes.map(\.type) == ["colr"])
        #expect(plan.video.codec == "hevc" && plan.video.codecTag == "hvc1" && !plan.video.isCopied)
        #expect(plan.rotation == RotationDecision(degrees: 0, reason: "portrait video re-framed upright into a landscape 1920x1080 frame (encoded)"))

        let profile5: [UInt8] = [1, 0, 0x0A, 0x0B, 0x00]
        let ipt = PlannerTests.info("dv5.mp4", [Self.video(codec: "hevc", bitDepth: 10, dolbyVision: profile5)])
        #expect(throws: MediaMuxError.self) {
            try Self.encoders.plan(
                video: ipt, audio: PlannerTests.song, output: "o.mp4", outputFacts: PlannerTests.freshOutput,
                options: MergeOptions(orientation: .landscape))
        }
        // Kept as it is shown, profile 5 is copied whole.
        let kept = try Self.encoders.plan(video: ipt, audio: PlannerTests.song, output: "o.mp4", outputFacts: PlannerTests.freshOutput, options: MergeOptions())
        #expect(kept.video.isCopied && kept.rotation.degrees == 90)
    }

    /// Encoding options for video that is copied are not used, and the plan says so and why.
    @Test func encodingOptionsForCopiedVideoAreSaidToGoUnused() throws {
        let phone = PlannerTests.info("phone.mov", [Self.video(codec: "h264")])
        func warnings(_ orientation: Orientation, _ video: VideoOptions) throws -> [String] {
            try Self.encoders.plan(
                video: phone, audio: PlannerTests.song, output: "o.mp4", outputFacts: PlannerTests.freshOutput,
                options: MergeOptions(orientation: orientation, video: video)).warnings
        }
        let copied = try Self.encoders.plan(
            video: phone, audio: PlannerTests.song, output: "o.mp4", outputFacts: PlannerTests.freshOutput, options: MergeOptions())
        #expect(copied.warnings.isEmpty)
        #expect(try warnings(.keep, VideoOptions(quality: 18)) == [
            "the video quality (CRF 18) asked for is not used, as the video is copied, not encoded: \(copied.rotation.reason)"
        ])
        #expect(try warnings(.keep, VideoOptions(frameSize: VideoSize(width: 1280, height: 720), quality: 18, preset: "slow")) == [
            "the video quality (CRF 18), preset \"slow\" and frame size 1280x720 asked for are not used, as the video is copied, not encoded: \(copied.rotation.reason)"
        ])
        // A rotation the caller gives is written by copy as well.
        let rotated = try Self.encoders.plan(
            video: phone, audio: PlannerTests.song, output: "o.mp4", outputFacts: PlannerTests.freshOutput,
            options: MergeOptions(rotation: 90, video: VideoOptions(preset: "slow")))
        #expect(rotated.warnings == [
            "the video preset \"slow\" asked for is not used, as the video is copied, not encoded: its rotation is written as asked"
        ])
        // Re-framed, the same options are used: nothing to say.
        #expect(try warnings(.landscape, VideoOptions(quality: 18, preset: "slow")).isEmpty)
    }

    /// A video re-framed need not be a codec the container takes: it is encoded.
    @Test func aCodecTheContainerRefusesIsReframedAnyway() throws {
        let webm = PlannerTests.info("call.webm", [Self.video(codec: "vp8")])
        #expect(throws: MediaMuxError.codecNotSupportedInContainer(codec: "vp8", container: "mp4", path: "o.mp4")) {
            try Self.encoders.plan(video: webm, audio: PlannerTests.song, output: "o.mp4", outputFacts: PlannerTests.freshOutput, options: MergeOptions())
        }
        let plan = try Self.encoders.plan(
            video: webm, audio: PlannerTests.song, output: "o.mp4", outputFacts: PlannerTests.freshOutput, options: MergeOptions(orientation: .landscape))
        #expect(plan.video.reframing?.codec == "h264")
    }

    @Test func bitDepthFromTheConfigurationRecord() {
        var hvcC = [UInt8](repeating: 0, count: 23)
        hvcC[0] = 1
        hvcC[17] = 0xFA  // reserved bits, then bitDepthLumaMinus8 = 2
        #expect(VideoConfiguration.bitDepth(codec: "hevc", configuration: hvcC) == 10)
        #expect(VideoConfiguration.bitDepth(codec: "av1", configuration: [0x81, 0x08, 0x4C, 0x00]) == 10)
        #expect(VideoConfiguration.bitDepth(codec: "av1", configuration: [0x81, 0x08, 0x0C, 0x00]) == 8)
        #expect(VideoConfiguration.bitDepth(codec: "h264", configuration: [1, 100, 0, 31]) == 8)
        #expect(VideoConfiguration.bitDepth(codec: "h264", configuration: [1, 110, 0, 31]) == nil)
        #expect(VideoConfiguration.bitDepth(codec: "hevc", configuration: []) == nil)
    }
}
