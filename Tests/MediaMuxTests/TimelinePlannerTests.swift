import Testing
import MediaMuxBase
@testable import MediaMuxCore

/// The planner's end policy, loop and offset: every combination of policy,
/// soundtrack length, looping and offset, with the codecs that can and
/// cannot repeat by copy. Pure: probed facts built by hand.
struct TimelinePlannerTests {
    /// 10.01 s of HEVC.
    static let video = PlannerTests.phoneVideo
    static let videoEnd = MediaTime(value: 900_900, timescale: 90000)

    static func soundtrack(_ codec: String = "aac", seconds: Int64, path: String = "song.m4a") -> MediaInfo {
        PlannerTests.info(path, [PlannerTests.stream(0, .audio, codec: codec, scale: 48000, end: seconds * 48000)])
    }

    let planner = MergePlanner(canStore: muxerAccepts)

    func plan(
        _ audio: MediaInfo, _ end: EndPolicy = .shortest, loops: Bool = false, offset: MediaTime = .zero(),
        codec: AudioOptions.Codec = .automatic, output: String = "o.mp4"
    ) throws -> MergePlan {
        try planner.plan(
            video: Self.video, audio: audio, output: output, outputFacts: PlannerTests.freshOutput,
            options: MergeOptions(end: end, audio: AudioOptions(codec: codec, offset: offset, loops: loops)))
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var policy: EndPolicy
        var audioSeconds: Int64
        var loops: Bool
        var codec = "aac"
        var output = "o.mp4"
        // Expected:
        var end: MediaTime
        var reason: MergePlan.EndReason
        var audioEnd: MediaTime
        var plays: Int?
        /// nil: copied.
        var encodedBecause: String?
        var testDescription: String {
            "--end \(policy.rawValue), \(codec) \(audioSeconds) s\(loops ? ", looped" : "") into \(output)"
        }
    }

    static let ten = videoEnd
    static let cases: [Case] = [
        // Shortest, the default.
        Case(policy: .shortest, audioSeconds: 4, loops: false, end: 4, reason: .audioEndsFirst, audioEnd: 4),
        Case(policy: .shortest, audioSeconds: 20, loops: false, end: ten, reason: .videoEndsFirst, audioEnd: ten),
        // A loop reaches the video's end: 4 + 4 + 2.01 s.
        Case(policy: .shortest, audioSeconds: 4, loops: true, end: ten, reason: .audioRepeated, audioEnd: ten, plays: 3,
             encodedBecause: "looped, and AAC cannot repeat by copy"),
        // A longer soundtrack needs no loop, so it is still copied.
        Case(policy: .shortest, audioSeconds: 20, loops: true, end: ten, reason: .videoEndsFirst, audioEnd: ten),
        // The whole video.
        Case(policy: .video, audioSeconds: 4, loops: false, end: ten, reason: .audioStopsEarly, audioEnd: 4),
        Case(policy: .video, audioSeconds: 20, loops: false, end: ten, reason: .videoEndsFirst, audioEnd: ten),
        Case(policy: .video, audioSeconds: 4, loops: true, end: ten, reason: .audioRepeated, audioEnd: ten, plays: 3,
             encodedBecause: "looped, and AAC cannot repeat by copy"),
        Case(policy: .video, audioSeconds: 4, loops: true, codec: "mp3", end: ten, reason: .audioRepeated, audioEnd: ten, plays: 3,
             encodedBecause: "looped, and MP3 cannot repeat by copy"),
        Case(policy: .video, audioSeconds: 4, loops: true, codec: "opus", end: ten, reason: .audioRepeated, audioEnd: ten, plays: 3,
             encodedBecause: "looped, and Opus cannot repeat by copy"),
        // Packets that stand alone repeat by copy.
        Case(policy: .video, audioSeconds: 4, loops: true, codec: "alac", end: ten, reason: .audioRepeated, audioEnd: ten, plays: 3),
        Case(policy: .video, audioSeconds: 4, loops: true, codec: "pcm_s16le", output: "o.mov", end: ten, reason: .audioRepeated,
             audioEnd: ten, plays: 3),
        // ...but where the container cannot carry them, the container's refusal is the reason.
        Case(policy: .video, audioSeconds: 4, loops: true, codec: "pcm_s16le", end: ten, reason: .audioRepeated, audioEnd: ten,
             plays: 3, encodedBecause: "MP4 cannot carry PCM"),
        // The whole soundtrack.
        Case(policy: .audio, audioSeconds: 20, loops: false, end: 20, reason: .lastFrameHeld, audioEnd: 20),
        Case(policy: .audio, audioSeconds: 4, loops: false, end: 4, reason: .audioEndsFirst, audioEnd: 4),
    ]

    @Test(arguments: cases)
    func endPolicy(_ example: Case) throws {
        let planned = try plan(
            Self.soundtrack(example.codec, seconds: example.audioSeconds), example.policy, loops: example.loops,
            output: example.output)
        #expect(planned.end == example.end)
        #expect(planned.endReason == example.reason)
        #expect(planned.audio.end == example.audioEnd)
        #expect(planned.audio.loop?.plays == example.plays)
        #expect(planned.audio.encoding?.reason == example.encodedBecause)
        // The video always plays to the output's end, holding its last frame past its own.
        #expect(planned.video.end == example.end)
        #expect(planned.video.sourceEnd == Self.videoEnd)
        if let loop = planned.audio.loop {
            #expect(loop.period == MediaTime(value: example.audioSeconds, timescale: 1))
        }
    }

    @Test func sameLengthEndsTogether() throws {
        let same = PlannerTests.info("same.m4a", [PlannerTests.stream(0, .audio, codec: "aac", scale: 90000, end: 900_900)])
        for policy in EndPolicy.allCases {
            let planned = try plan(same, policy, loops: policy != .audio)
            #expect(planned.end == Self.videoEnd && planned.endReason == .sameLength && planned.audio.loop == nil && planned.audio.encoding == nil)
        }
    }

    @Test func aLaterStartWaitsInTheEditList() throws {
        let planned = try plan(Self.soundtrack(seconds: 4), .video, offset: 2)
        #expect(planned.audio.sourceStart == 2 && planned.audio.sourceEnd == 6 && planned.audio.end == 6)
        #expect(planned.audio.origin == -2)
        #expect(planned.audio.leadIn == nil && planned.audio.encoding == nil)
        #expect(planned.endReason == .audioStopsEarly && planned.end == Self.videoEnd)
        // With --end audio the output lasts until the moved soundtrack ends.
        let held = try plan(Self.soundtrack(seconds: 9), .audio, offset: 2)
        #expect(held.end == 11 && held.endReason == .lastFrameHeld && held.video.end == 11)
        // Looped, the first play starts late and the repeats follow it.
        let looped = try plan(Self.soundtrack(seconds: 4), .video, loops: true, offset: 2)
        #expect(looped.audio.sourceStart == 2 && looped.audio.end == Self.videoEnd)
        #expect(looped.audio.loop == MergePlan.Loop(period: 4, plays: 3))
    }

    @Test func anEarlierStartSkipsTheBeginningByCopy() throws {
        let planned = try plan(Self.soundtrack(seconds: 4), offset: -1.5)
        #expect(planned.audio.sourceStart == .zero() && planned.audio.sourceEnd == 2.5 && planned.audio.end == 2.5)
        #expect(planned.audio.origin == 1.5)
        #expect(planned.audio.leadIn == MergePlanner.leadIn)
        #expect(planned.audio.encoding == nil)
        #expect(planned.end == 2.5 && planned.endReason == .audioEndsFirst)
        // Encoded, the skipped part is where the encoder's input starts.
        let flac = try plan(Self.soundtrack("flac", seconds: 4, path: "song.flac"), offset: -1.5)
        #expect(flac.audio.encoding?.reason == "MP4 cannot carry FLAC" && flac.audio.origin == 1.5)
    }

    @Test func offsetsThatLeaveNothingToPlay() throws {
        #expect(throws: MediaMuxError.invalidOption("song.m4a: an offset of -5.000 s skips all of its 4.000 s")) {
            try plan(Self.soundtrack(seconds: 4), offset: -5)
        }
        #expect(throws: MediaMuxError.invalidOption("song.m4a: an offset of -4.000 s skips all of its 4.000 s")) {
            try plan(Self.soundtrack(seconds: 4), offset: -4)
        }
        #expect(throws: MediaMuxError.invalidOption("song.m4a: an offset of 12.000 s starts it at 12.000 s, after the video ends at 10.010 s")) {
            try plan(Self.soundtrack(seconds: 4), .video, offset: 12)
        }
    }

    @Test func refusals() throws {
        #expect(throws: MediaMuxError.invalidOption("o.mp4: the audio can repeat only up to the end of the video, not when the output ends with the audio")) {
            try plan(Self.soundtrack(seconds: 4), .audio, loops: true)
        }
        #expect(throws: MediaMuxError.invalidOption("o.mp4: AAC cannot repeat by copy, since each repeat would begin with the encoder's priming; let it be encoded")) {
            try plan(Self.soundtrack(seconds: 4), .video, loops: true, codec: .copy)
        }
        // ALAC can.
        let alac = try plan(Self.soundtrack("alac", seconds: 4), .video, loops: true, codec: .copy)
        #expect(alac.audio.encoding == nil && alac.audio.loop?.plays == 3)
    }

    /// Room for a looped copy's samples: every play's.
    @Test func faststartRoomCountsEveryPlay() throws {
        let once = try plan(Self.soundtrack("alac", seconds: 4), .video)
        let looped = try plan(Self.soundtrack("alac", seconds: 4), .video, loops: true)
        guard case .reservedAtFront(let small) = once.movieHeader, case .reservedAtFront(let large) = looped.movieHeader else {
            Issue.record("expected reserved moovs: \(once.movieHeader), \(looped.movieHeader)")
            return
        }
        // 100 packets a play at 12 bytes each, two more plays.
        #expect(large - small >= 2 * 100 * 12)
    }
}
