import Testing
import MediaMuxBase
import MediaMuxContainers
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

    let planner = MergePlanner(canStore: muxerAccepts, hasEncoder: encoderAvailable)

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
             plays: 3, encodedBecause: "few players read PCM in MP4"),
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
        #expect(planned.audio!.end == example.audioEnd)
        #expect(planned.audio!.plays == (example.plays ?? 1))
        #expect(planned.audio!.encoding?.reason == example.encodedBecause)
        // The video always plays to the output's end, holding its last frame past its own.
        #expect(planned.video.end == example.end)
        #expect(planned.video.sourceEnd == Self.videoEnd)
        for track in [planned.video, planned.audio] {
            // The spans follow one another with no gap, up to the track's end.
            for (before, after) in zip(track!.spans, track!.spans.dropFirst()) { #expect(after.place == before.end) }
            #expect(track!.spans.first?.place == track!.sourceStart)
            #expect(track!.spans.last?.end == track!.end)
        }
        let video = planned.video.spans
        #expect(video.map(\.decision) == (example.end > Self.videoEnd ? [.copy, .hold] : [.copy]))
        let audio = planned.audio!.spans
        #expect(Set(audio.map(\.decision)) == [example.encodedBecause == nil ? .copy : .encode])
        if audio.count > 1 {
            // Each repeat plays the source from its first sample, a period long but for the last, cut at the end.
            let period = MediaTime(value: example.audioSeconds, timescale: 1)
            #expect(audio.dropFirst().allSatisfy { $0.sourceRange?.lowerBound == .zero() })
            #expect(audio.dropFirst().dropLast().allSatisfy { $0.duration == period })
            #expect(audio.last.map { $0.duration <= period } == true)
            #expect(audio.last?.reason.hasSuffix("played again (\(audio.count) of \(audio.count))") == true)
        }
    }

    @Test func sameLengthEndsTogether() throws {
        let same = PlannerTests.info("same.m4a", [PlannerTests.stream(0, .audio, codec: "aac", scale: 90000, end: 900_900)])
        for policy in EndPolicy.allCases {
            let planned = try plan(same, policy, loops: policy != .audio)
            #expect(planned.end == Self.videoEnd && planned.endReason == .sameLength && planned.audio!.plays == 1 && planned.audio!.encoding == nil)
        }
    }

    @Test func aLaterStartWaitsInTheEditList() throws {
        let planned = try plan(Self.soundtrack(seconds: 4), .video, offset: 2)
        #expect(planned.audio!.sourceStart == 2 && planned.audio!.sourceEnd == 6 && planned.audio!.end == 6)
        #expect(planned.audio!.origin == -2)
        #expect(planned.audio!.leadIn == nil && planned.audio!.encoding == nil)
        #expect(planned.endReason == .audioStopsEarly && planned.end == Self.videoEnd)
        // With --end audio the output lasts until the moved soundtrack ends.
        let held = try plan(Self.soundtrack(seconds: 9), .audio, offset: 2)
        #expect(held.end == 11 && held.endReason == .lastFrameHeld && held.video.end == 11)
        // Looped, the first play starts late and the repeats follow it.
        let looped = try plan(Self.soundtrack(seconds: 4), .video, loops: true, offset: 2)
        #expect(looped.audio!.sourceStart == 2 && looped.audio!.end == Self.videoEnd)
        #expect(looped.audio!.spans.map(\.place) == [2, 6, 10] && looped.audio!.spans.map { $0.sourceRange?.lowerBound } == [0, 0, 0])
        #expect(looped.audio!.spans.last?.end == Self.videoEnd)
    }

    @Test func anEarlierStartSkipsTheBeginningByCopy() throws {
        let planned = try plan(Self.soundtrack(seconds: 4), offset: -1.5)
        #expect(planned.audio!.sourceStart == .zero() && planned.audio!.sourceEnd == 2.5 && planned.audio!.end == 2.5)
        #expect(planned.audio!.origin == 1.5)
        #expect(planned.audio!.leadIn == MergePlanner.leadIn)
        #expect(planned.audio!.encoding == nil)
        #expect(planned.end == 2.5 && planned.endReason == .audioEndsFirst)
        // Encoded, the skipped part is where the encoder's input starts.
        let flac = try plan(Self.soundtrack("flac", seconds: 4, path: "song.flac"), offset: -1.5)
        #expect(flac.audio!.encoding?.reason == "MP4 cannot carry FLAC" && flac.audio!.origin == 1.5)
    }

    @Test func offsetsThatLeaveNothingToPlay() throws {
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.audio.offset", message: "song.m4a: an offset of -5.000 s skips all of its 4.000 s")) {
            try plan(Self.soundtrack(seconds: 4), offset: -5)
        }
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.audio.offset", message: "song.m4a: an offset of -4.000 s skips all of its 4.000 s")) {
            try plan(Self.soundtrack(seconds: 4), offset: -4)
        }
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.audio.offset", message: "song.m4a: an offset of 12.000 s starts it at 12.000 s, after the video ends at 10.010 s")) {
            try plan(Self.soundtrack(seconds: 4), .video, offset: 12)
        }
    }

    @Test func refusals() throws {
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.audio.loops", message: "o.mp4: the audio can repeat only up to the end of the video, not when the output ends with the audio")) {
            try plan(Self.soundtrack(seconds: 4), .audio, loops: true)
        }
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.audio.codec", message: "o.mp4: AAC cannot repeat by copy, since each repeat would begin with the encoder's priming; let it be encoded")) {
            try plan(Self.soundtrack(seconds: 4), .video, loops: true, codec: .copy)
        }
        // ALAC can.
        let alac = try plan(Self.soundtrack("alac", seconds: 4), .video, loops: true, codec: .copy)
        #expect(alac.audio!.encoding == nil && alac.audio!.plays == 3)
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

/// Volume, fades and loudness in the planner: each is a reason to encode,
/// none goes with copying, and their values and lengths are checked; and the
/// filters execution runs for them.
struct AudioEffectsPlannerTests {
    let planner = MergePlanner(canStore: muxerAccepts, hasEncoder: encoderAvailable)

    func plan(_ options: AudioOptions, seconds: Int64 = 4) throws -> MergePlan {
        try planner.plan(
            video: TimelinePlannerTests.video, audio: TimelinePlannerTests.soundtrack(seconds: seconds), output: "o.mp4",
            outputFacts: PlannerTests.freshOutput, options: MergeOptions(audio: options))
    }

    @Test(arguments: [
        (AudioOptions(volume: -6), "set to -6.0 dB"),
        (AudioOptions(fadeIn: 2), "faded in over 2.000 s"),
        (AudioOptions(fadeOut: 1.5), "faded out over 1.500 s"),
        (AudioOptions(loudness: -16), "brought to -16.0 LUFS"),
        (AudioOptions(volume: 3, fadeIn: 1, fadeOut: 1), "set to 3.0 dB, faded in over 1.000 s, faded out over 1.000 s"),
    ])
    func effectsAreReasonsToEncode(_ options: AudioOptions, _ reason: String) throws {
        let encoding = try #require(try plan(options).audio!.encoding)
        #expect(encoding.reason == reason)
        #expect(encoding.effects == options.effects)
    }

    @Test func refusals() throws {
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.audio.codec", message: "o.mp4: the audio cannot be copied and set to -6.0 dB at once")) {
            try plan(AudioOptions(codec: .copy, volume: -6))
        }
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.audio.loudness", message: "o.mp4: a volume and a loudness both set the level; choose one")) {
            try plan(AudioOptions(volume: -6, loudness: -16))
        }
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.audio.volume", message: "o.mp4: a volume of 80.0 dB is out of range (-60 to 40 dB)")) {
            try plan(AudioOptions(volume: 80))
        }
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.audio.loudness", message: "o.mp4: a loudness of 3.0 LUFS is out of range (-70 to -5 LUFS)")) {
            try plan(AudioOptions(loudness: 3))
        }
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.audio.fadeOut", message: "song.m4a: a fade out of 5.000 s is longer than the 4.000 s it plays for")) {
            try plan(AudioOptions(fadeOut: 5))
        }
        // The length that counts is the one played: skipped by an offset, 3 s are left.
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.audio.fadeIn", message: "song.m4a: a fade in of 3.500 s is longer than the 3.000 s it plays for")) {
            try plan(AudioOptions(offset: -1, fadeIn: 3.5))
        }
    }

    /// The filters, positioned to the sample.
    @Test func filters() {
        let effects = AudioEffects(volume: -6, fadeIn: 0.5, fadeOut: 1)
        #expect(effects.filters(samples: 144_000, rate: 48000, adjustment: nil)
            == "volume=-6.0000dB,afade=t=in:ss=0:ns=24000,afade=t=out:ss=96000:ns=48000")
        #expect(AudioEffects().filters(samples: 144_000, rate: 48000, adjustment: nil) == nil)
        let loud = AudioEffects(loudness: -16)
        let gentle = LoudnessAdjustment(measured: -20, truePeak: -8, gain: 4, limited: false)
        #expect(loud.filters(samples: 1000, rate: 44100, adjustment: gentle) == "volume=4.0000dB")
        let limited = LoudnessAdjustment(measured: -30, truePeak: -3, gain: 14, limited: true)
        #expect(loud.filters(samples: 1000, rate: 44100, adjustment: limited)
            == "volume=14.0000dB,aresample=176400,alimiter=limit=0.794328:level=false:latency=true:attack=1:release=100,aresample=44100")
    }
}

/// The video's own audio in the planner: kept as a disabled second track, or
/// mixed into the soundtrack, which is then encoded and spans the output.
struct OriginalAudioPlannerTests {
    let planner = MergePlanner(canStore: muxerAccepts, hasEncoder: encoderAvailable)

    func plan(_ original: OriginalAudio, video: MediaInfo = PlannerTests.phoneVideo, audio: AudioOptions = AudioOptions(), end: EndPolicy = .shortest) throws -> MergePlan {
        try planner.plan(
            video: video, audio: TimelinePlannerTests.soundtrack(seconds: 4), output: "o.mp4",
            outputFacts: PlannerTests.freshOutput, options: MergeOptions(end: end, audio: audio, originalAudio: original))
    }

    @Test func keptAsADisabledSecondTrack() throws {
        let planned = try plan(.kept, end: .video)
        let kept = try #require(planned.originalAudio)
        #expect(kept.path == "phone.mov" && kept.streamIndex == 0 && !kept.isEnabled && kept.encoding == nil)
        #expect(kept.sourceStart == .zero() && kept.end == 10)  // its own 10 s
        #expect(planned.audio!.isEnabled && planned.audio!.encoding == nil)
        #expect(!planned.leftOut.contains { $0.path == "phone.mov" && $0.streamIndex == 0 })
        #expect(planned.tracks.count == 3 && planned.mix == nil)
        // Ending with the output: here the 4 s soundtrack's.
        #expect(try plan(.kept).originalAudio?.end == 4)
        // PCM the MP4 cannot carry is encoded.
        let pcmVideo = PlannerTests.info("cam.mov", [
            PlannerTests.stream(0, .video, codec: "h264", scale: 90000, end: 900_000, width: 1920, height: 1080),
            PlannerTests.stream(1, .audio, codec: "pcm_s24le", scale: 48000, end: 480_000),
        ])
        #expect(try plan(.kept, video: pcmVideo).originalAudio?.encoding?.reason == "few players read PCM in MP4")
    }

    @Test func mixedIntoTheSoundtrack() throws {
        let planned = try plan(.mixed(level: -12), audio: AudioOptions(offset: 1), end: .video)
        let mix = try #require(planned.mix)
        #expect(mix.level == -12 && mix.original.path == "phone.mov" && planned.originalAudio == nil)
        #expect(planned.audio!.encoding?.reason == "mixed with the video's own audio at -12.0 dB")
        // One track over the whole output, though the soundtrack starts at 1 s and stops at 5 s.
        #expect(planned.audio!.sourceStart == .zero() && planned.audio!.end == TimelinePlannerTests.videoEnd)
        // One encoded span to the end: no held frame on a sound track.
        #expect(planned.audio!.spans.map(\.decision) == [.encode])
        #expect(planned.audio!.spans.first?.end == TimelinePlannerTests.videoEnd)
        #expect(planned.tracks.count == 2)
        #expect(!planned.leftOut.contains { $0.path == "phone.mov" && $0.streamIndex == 0 })
    }

    @Test func refusals() throws {
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.audio.codec", message: "o.mp4: the audio cannot be copied and mixed with the video's own audio at -6.0 dB at once")) {
            try plan(.mixed(level: -6), audio: AudioOptions(codec: .copy))
        }
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.originalAudio", message: "o.mp4: a mixing level of 30.0 dB is out of range (-60 to 20 dB)")) {
            try plan(.mixed(level: 30))
        }
        let silentVideo = PlannerTests.info("silent.mp4", [PlannerTests.stream(0, .video, codec: "h264", scale: 90000, end: 900_000, width: 640, height: 360)])
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.originalAudio", message: "silent.mp4: has no audio of its own to keep")) { try plan(.kept, video: silentVideo) }
        #expect(throws: MediaMuxError.invalidOption(option: "MergeOptions.originalAudio", message: "silent.mp4: has no audio of its own to mix")) { try plan(.mixed(level: 0), video: silentVideo) }
    }
}
