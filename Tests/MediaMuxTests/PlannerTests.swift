import Testing
@testable import MediaMux
@testable import MediaMuxCore
@testable import MediaMuxPreview

/// The planner is pure: these build probed facts by hand and check decisions.
struct PlannerTests {
    static func stream(
        _ index: Int, _ kind: StreamInfo.Kind, codec: String, scale: Int64, start: Int64 = 0, end: Int64?,
        packets: Int? = 100, rotation: Int = 0, width: Int? = nil, height: Int? = nil, coverArt: Bool = false
    ) -> StreamInfo {
        StreamInfo(
            index: index, kind: kind, codec: codec, codecTag: nil, profile: nil,
            timeBase: MediaTime(value: 1, timescale: scale), origin: .zero(scale),
            start: MediaTime(value: start, timescale: scale), end: end.map { MediaTime(value: $0, timescale: scale) },
            timing: .container, packetCount: packets, isAttachedPicture: coverArt, language: nil, bitRate: nil, headerBytes: 40,
            width: width, height: height, rotation: rotation, hasUnusualMatrix: false, frameRate: nil,
            sampleRate: kind == .audio ? Int(scale) : nil, channels: kind == .audio ? 2 : nil, priming: nil)
    }

    static func info(_ path: String, _ streams: [StreamInfo]) -> MediaInfo {
        MediaInfo(path: path, format: "mov,mp4,m4a,3gp,3g2,mj2", formatDescription: "QuickTime / MOV", containerDuration: nil, metadataBytes: 300, streams: streams)
    }

    static let phoneVideo = info("phone.mov", [
        stream(0, .audio, codec: "aac", scale: 44100, end: 441_000),
        stream(1, .video, codec: "hevc", scale: 90000, end: 900_900, rotation: 90, width: 1920, height: 1080),
    ])
    static let song = info("song.m4a", [stream(0, .audio, codec: "aac", scale: 44100, end: 308_700)])  // 7.0 s
    static let freshOutput = OutputFacts(exists: false, folderExists: true, inputBytes: 10_000_000)
    let planner = MergePlanner(canStore: { codec, container in codec != "pcm_s24le" || container == .mov }, hasEncoder: { _ in false })

    @Test func endsWhereTheShorterInputEnds() throws {
        let plan = try planner.plan(video: Self.phoneVideo, audio: Self.song, output: "out.mp4", outputFacts: Self.freshOutput, options: MergeOptions())
        #expect(plan.end == MediaTime(value: 7, timescale: 1))
        #expect(plan.endReason == .audioEndsFirst)
        #expect(plan.video.streamIndex == 1)
        #expect(plan.audio!.streamIndex == 0)
        #expect(plan.video.codecTag == "hvc1")
        // Shown portrait, copied with its own matrix.
        #expect(plan.rotation.degrees == 90 && plan.rotation.keepsSourceMatrix && plan.rotation.reframedBy == .landscape)
        #expect(plan.video.isCopied)

        let longSong = Self.info("long.m4a", [Self.stream(0, .audio, codec: "aac", scale: 48000, end: 960_000)])  // 20 s
        let videoFirst = try planner.plan(video: Self.phoneVideo, audio: longSong, output: "out.mov", outputFacts: Self.freshOutput, options: MergeOptions())
        #expect(videoFirst.end == MediaTime(value: 900_900, timescale: 90000))
        #expect(videoFirst.endReason == .videoEndsFirst)
        #expect(videoFirst.container == .mov)
    }

    @Test func faststartReservesRoomFromSampleCounts() throws {
        let plan = try planner.plan(video: Self.phoneVideo, audio: Self.song, output: "out.mp4", outputFacts: Self.freshOutput, options: MergeOptions())
        guard case .reservedAtFront(let bytes) = plan.movieHeader else {
            Issue.record("expected a reserved moov, got \(plan.movieHeader)")
            return
        }
        // 100 video samples at 25 bytes, 100 audio samples at 12, their chunks, and the fixed boxes.
        #expect(bytes >= 100 * 25 + 100 * 12 + 8192 && bytes < 32 * 1024)
        let noFaststart = try planner.plan(video: Self.phoneVideo, audio: Self.song, output: "out.mp4", outputFacts: Self.freshOutput, options: MergeOptions(faststart: false))
        #expect(noFaststart.movieHeader == .atEnd)
    }

    @Test func videoIsShownFromZero() throws {
        // A video starting 0.5 s into its file (after its own audio) starts the output.
        let late = Self.info("late.mov", [
            Self.stream(0, .audio, codec: "aac", scale: 48000, end: 480_000),
            Self.stream(1, .video, codec: "h264", scale: 90000, start: 45000, end: 495_000, width: 640, height: 360),
        ])
        let plan = try planner.plan(video: late, audio: Self.song, output: "o.mp4", outputFacts: Self.freshOutput, options: MergeOptions())
        #expect(plan.video.origin == MediaTime(value: 1, timescale: 2))
        #expect(plan.video.sourceStart == .zero())
        #expect(plan.end == MediaTime(value: 5, timescale: 1))
        #expect(plan.endReason == .videoEndsFirst)
    }

    @Test func coverArtIsNotAVideoStream() throws {
        let withArt = Self.info("art.mp4", [
            Self.stream(0, .video, codec: "mjpeg", scale: 90000, end: 90000, width: 600, height: 600, coverArt: true),
            Self.stream(1, .video, codec: "h264", scale: 90000, end: 900_000, width: 640, height: 360),
        ])
        let plan = try planner.plan(video: withArt, audio: Self.song, output: "o.mp4", outputFacts: Self.freshOutput, options: MergeOptions())
        #expect(plan.video.streamIndex == 1)
    }

    @Test func refusals() throws {
        let options = MergeOptions()
        #expect(throws: MediaMuxError.unsupportedOutputExtension(path: "o.avi", extension: "avi", accepted: ["mp4", "m4v", "mov"])) {
            try planner.plan(video: Self.phoneVideo, audio: Self.song, output: "o.avi", outputFacts: Self.freshOutput, options: options)
        }
        #expect(MediaMuxError.unsupportedOutputExtension(path: "o.avi", extension: "avi", accepted: MergePlan.Container.allExtensions).description
            == "o.avi: unsupported output type (.avi); use .mp4, .m4v or .mov")
        #expect(MergePlan.Container(extension: "M4V") == .mp4 && MergePlan.Container(extension: "mkv") == nil)
        #expect(throws: MediaMuxError.outputExists(path: "o.mp4")) {
            try planner.plan(video: Self.phoneVideo, audio: Self.song, output: "o.mp4",
                             outputFacts: OutputFacts(exists: true, folderExists: true, inputBytes: 0), options: options)
        }
        #expect(throws: MediaMuxError.outputDirectoryMissing(path: "none/o.mp4")) {
            try planner.plan(video: Self.phoneVideo, audio: Self.song, output: "none/o.mp4",
                             outputFacts: OutputFacts(exists: false, folderExists: false, inputBytes: 0), options: options)
        }
        #expect(throws: MediaMuxError.noStream(kind: .video, path: "song.m4a")) {
            try planner.plan(video: Self.song, audio: Self.song, output: "o.mp4", outputFacts: Self.freshOutput, options: options)
        }
        #expect(throws: MediaMuxError.streamIndexOutOfRange(kind: .audio, index: 3, available: 1, path: "song.m4a")) {
            try planner.plan(video: Self.phoneVideo, audio: Self.song, output: "o.mp4", outputFacts: Self.freshOutput, options: MergeOptions(audioStream: 3))
        }
        // Audio the container cannot carry is encoded, or with copying asked for, refused.
        var copying = options
        copying.audio.codec = .copy
        let studio = Self.info("take.wav", [Self.stream(0, .audio, codec: "pcm_s24le", scale: 48000, end: 96000)])
        #expect(throws: MediaMuxError.codecNotSupportedInContainer(codec: "pcm_s24le", container: "mp4", path: "o.mp4")) {
            try planner.plan(video: Self.phoneVideo, audio: studio, output: "o.mp4", outputFacts: Self.freshOutput, options: copying)
        }
        #expect(try planner.plan(video: Self.phoneVideo, audio: studio, output: "o.mp4", outputFacts: Self.freshOutput, options: options).audio!.encoding != nil)
        // FFmpeg 5.1 lists Opus for MOV but refuses it when writing the header ("only supported in MP4").
        let browser = Self.info("call.webm", [Self.stream(0, .audio, codec: "opus", scale: 48000, end: 96000)])
        #expect(throws: MediaMuxError.codecNotSupportedInContainer(codec: "opus", container: "mov", path: "o.mov")) {
            try MergePlanner(canStore: muxerAccepts, hasEncoder: encoderAvailable).plan(
                video: Self.phoneVideo, audio: browser, output: "o.mov", outputFacts: Self.freshOutput, options: copying)
        }
        // A video codec the container cannot carry is an error whatever the options.
        let screen = Self.info("screen.mkv", [Self.stream(0, .video, codec: "prores", scale: 1000, end: 10000, width: 640, height: 360)])
        #expect(throws: MediaMuxError.codecNotSupportedInContainer(codec: "prores", container: "mp4", path: "o.mp4")) {
            try MergePlanner(canStore: muxerAccepts, hasEncoder: encoderAvailable).plan(
                video: screen, audio: Self.song, output: "o.mp4", outputFacts: Self.freshOutput, options: options)
        }
        // H.264 without parameter sets (an avc1 entry without avcC) would get
        // the first packet's bytes as its configuration from FFmpeg's muxer.
        var bare = Self.stream(0, .video, codec: "h264", scale: 1000, end: 10000, width: 640, height: 360)
        bare.configuration = []
        #expect(throws: MediaMuxError.damaged(path: "bare.mp4", detail: "its H.264 video has no decoder configuration (no parameter sets)")) {
            try planner.plan(video: Self.info("bare.mp4", [bare]), audio: Self.song, output: "o.mp4", outputFacts: Self.freshOutput, options: options)
        }
        bare.configuration = [1, 100, 0, 31]
        #expect(throws: Never.self) {
            try planner.plan(video: Self.info("bare.mp4", [bare]), audio: Self.song, output: "o.mp4", outputFacts: Self.freshOutput, options: options)
        }
        #expect(muxerAccepts("opus", .mp4) && muxerAccepts("aac", .mov) && !muxerAccepts("flac", .mp4) && !muxerAccepts("truehd", .mov))
        // Video MOV refuses at its header ("only supported in MP4"): an AV1 phone clip merged into .mov, found with a real file.
        #expect(muxerAccepts("av1", .mp4) && muxerAccepts("vp9", .mp4) && !muxerAccepts("av1", .mov) && !muxerAccepts("vp9", .mov) && !muxerAccepts("vp8", .mov))
        let unknown = Self.info("stream.m4a", [Self.stream(0, .audio, codec: "aac", scale: 44100, end: nil)])
        #expect(throws: MediaMuxError.unknownDuration(kind: .audio, path: "stream.m4a")) {
            try planner.plan(video: Self.phoneVideo, audio: unknown, output: "o.mp4", outputFacts: Self.freshOutput, options: options)
        }
    }

    @Test func exactTimeArithmetic() {
        let a = MediaTime(value: 1940, timescale: 44100)
        #expect(a.converted(to: 90000, rounding: .down).value == 3959)
        #expect(a.converted(to: 90000, rounding: .up).value == 3960)
        #expect(MediaTime(value: 7119, timescale: 22050) < MediaTime(value: 32286, timescale: 100_000))
        #expect(MediaTime(value: 1, timescale: 2) == MediaTime(value: 45000, timescale: 90000))
        #expect((MediaTime(value: 1, timescale: 3) + MediaTime(value: 1, timescale: 6)) == MediaTime(value: 1, timescale: 2))
        // Tick counts in a time base with a numerator: 1/25 s ticks of 2 s.
        #expect(MediaTime(value: 2, timescale: 1).ticks(of: MediaTime(value: 1, timescale: 25), rounding: .up) == 50)
        #expect(MediaTime(value: 2, timescale: 1).ticks(of: MediaTime(value: 3, timescale: 100), rounding: .up) == 67)
    }

    @Test func gaplessTag() {
        let smpb = ITunesGaplessInfo(" 00000000 00000A40 000001F1 0000000000001BCF 00000000 00000000")
        #expect(smpb == ITunesGaplessInfo(" 0 A40 1F1 1BCF"))
        #expect(smpb?.priming == 2624 && smpb?.padding == 497 && smpb?.valid == 7119)
        #expect(ITunesGaplessInfo("garbage") == nil)
    }
}
