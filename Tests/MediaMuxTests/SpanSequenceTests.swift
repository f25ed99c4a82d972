import Foundation
import MediaMuxBase
import Testing
import TestSupport
@testable import MediaMuxCore

/// One output track made of spans from several files: the executor walks
/// the track's spans in order, each read from its own source, into the
/// track's one sample entry. Judged by the tests' MP4 reader and decoder:
/// the samples' count, bytes and times, each span placed at the sum of the
/// durations before it, the track ending exactly at its end, and the
/// pictures of each span those of its own source's range.
@Suite(.tags(.heavy), .skippedByTag, .offTheCooperativePool)
struct SpanSequenceTests {
    /// Runs the ffmpeg CLI for fixtures.
    private func makeFixtures(_ steps: [[String]]) throws {
        let ffmpeg = try #require(["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first { FileManager.default.isExecutableFile(atPath: $0) })
        for arguments in steps {
            let made = try ExternalTool.run(ffmpeg, ["-nostdin", "-v", "error", "-y"] + arguments, keeping: .errors, seconds: 120)
            #expect(made.status == 0, "\(String(decoding: made.text, as: UTF8.self))")
        }
    }

    /// A span of the video stream of `path` from `from` to `to` seconds on
    /// its own timeline (its first picture at 0), placed at `place` on the
    /// output's, read as a track of that file would read it.
    private func span(
        of path: String, from: MediaTime, to: MediaTime, place: MediaTime, decision: MergePlan.Span.Decision
    ) throws -> MergePlan.Span {
        let info = try Prober(cancellation: CancellationFlag()).probe(path: path)
        let stream = try #require(info.videoStreams.first)
        let track = try MergePlanner.track(stream, in: info, role: .video, keepsMetadata: false)
        let zero = track.sourceStart + track.origin
        return MergePlan.Span(
            source: .init(path: path, streamIndex: stream.index, reading: .init(of: track)), sourceRange: (zero + from)..<(zero + to),
            place: place, duration: to - from, decision: decision, reason: "a test's span")
    }

    private func seconds(_ value: Int64, _ scale: Int64 = 1) -> MediaTime { MediaTime(value: value, timescale: scale) }

    /// The decoded pictures of a file's video track, with their luma, and their times in seconds from its first.
    private func pictures(_ path: String) throws -> (track: MP4File.Track, frames: [TrackDecoder.Frame], times: [Double]) {
        let track = try #require(try MP4File(path: path).videoTracks.first)
        let frames = try TrackDecoder.frames(of: track, keepingLuma: true)
        let start = track.presentedStart
        return (track, frames, frames.map { Double($0.time - start) / Double(track.mediaTimescale) })
    }

    @Test func encodeSpansFromTwoFilesShareTheTracksOneEncoder() throws {
        let folder = try TemporaryFolder()
        // Two sources that differ in time base (1/12800, 1/90000), frame rate
        // (25, 30), size (320x180, 640x360) and pictures; with B-frames in the
        // first. Both say BT.709, as the encoding writes, so that their luma
        // can be compared with the output's as it is.
        let first = folder.path("first.mp4")
        let second = folder.path("second.mp4")
        let bt709 = ["-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709"]
        try makeFixtures([
            ["-f", "lavfi", "-i", "testsrc=size=320x180:rate=25:duration=3", "-c:v", "libx264", "-preset", "veryfast", "-bf", "2", "-g", "25",
             "-pix_fmt", "yuv420p"] + bt709 + [first],
            ["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30:duration=3", "-c:v", "libx264", "-preset", "veryfast", "-g", "30",
             "-pix_fmt", "yuv420p", "-video_track_timescale", "90000"] + bt709 + [second],
        ])
        let info = try Prober(cancellation: CancellationFlag()).probe(path: first)
        let stream = try #require(info.videoStreams.first)
        let encoding = VideoEncoding.testClip(of: stream, frame: VideoSize(width: 320, height: 180), quality: 18)
        let output = folder.path("out.mp4")
        // 2 s of the first from its start, then 1 s of the second from 0.5 s in.
        var plan = try MergePlanner.clipPlan(
            .init(output: output, overwrite: false, videoStream: stream.index, start: .zero(), end: seconds(2), video: encoding, sound: nil),
            of: info)
        var video = plan.video
        video.spans.append(try span(of: second, from: seconds(1, 2), to: seconds(3, 2), place: seconds(2), decision: .encode))
        video.end = seconds(3)
        plan.video = video
        plan.end = seconds(3)
        _ = try Remuxer.carryOut(plan, cancellation: CancellationFlag(), progress: nil)

        let (track, frames, times) = try pictures(output)
        #expect(track.sampleEntryCount == 1)
        #expect(track.mediaTimescale == 12800, "the track's time base, the first source's")
        #expect(track.sampleCount == 50 + 30)
        #expect(frames.count == 50 + 30)
        // Each picture at its place: the first's at k/25, the second's at 2 + k/30 (within a tick of 1/12800).
        let expected = (0..<50).map { Double($0) / 25 } + (0..<30).map { 2 + Double($0) / 30 }
        #expect(times.count == expected.count)
        for (time, wanted) in zip(times, expected) where abs(time - wanted) > 1.0 / 12800 {
            Issue.record("a picture at \(time) s, expected at \(wanted) s")
        }
        // The last picture is shown to the end, where the edit list ends the track.
        let movie = try MP4File(path: output)
        let shown = track.presentedDuration(movieTimescale: movie.movieTimescale)
        #expect(abs(shown - 3) < 0.001, "the track ends at \(shown) s")
        #expect(track.presentedEnd >= 3 - 0.001)

        // The pictures are each source's own, from its range.
        let firstSource = try pictures(first)
        let secondSource = try pictures(second)
        let firstAtZero = try #require(firstSource.frames.first?.luma)
        let secondAtHalf = try #require(zip(secondSource.frames, secondSource.times).first { abs($0.1 - 0.5) < 0.001 }?.0.luma)
        let secondAtOneAndAHalfLess = try #require(zip(secondSource.frames, secondSource.times).first { abs($0.1 - (1.5 - 1.0 / 30)) < 0.001 }?.0.luma)
        let outputFirst = try #require(frames[0].luma)
        let outputJoin = try #require(frames[50].luma)
        let outputLast = try #require(frames[79].luma)
        #expect(outputFirst.psnr(against: firstAtZero) > 30)
        #expect(outputJoin.psnr(against: try secondAtHalf.scaled(width: 320, height: 180)) > 30)
        #expect(outputLast.psnr(against: try secondAtOneAndAHalfLess.scaled(width: 320, height: 180)) > 30)
        // And not the other source's at the join.
        #expect(outputJoin.psnr(against: try #require(firstSource.frames.last?.luma)) < 20)
    }

    @Test func copySpansFromTwoFilesKeepEveryPacketInOneSampleEntry() async throws {
        let folder = try TemporaryFolder()
        // One encode cut in two by copy at a keyframe, the second half stored
        // in another time base (1/90000): two files with one decoder configuration.
        let whole = folder.path("whole.mp4")
        let head = folder.path("head.mp4")
        let tail = folder.path("tail.mp4")
        try makeFixtures([
            ["-f", "lavfi", "-i", "testsrc=size=320x180:rate=25:duration=4", "-c:v", "libx264", "-preset", "veryfast", "-bf", "0", "-g", "25",
             "-pix_fmt", "yuv420p", whole],
            ["-i", whole, "-t", "2", "-c", "copy", head],
            ["-ss", "2", "-i", whole, "-c", "copy", "-video_track_timescale", "90000", tail],
        ])
        let headTrack = try #require(try MP4File(path: head).videoTracks.first)
        let tailTrack = try #require(try MP4File(path: tail).videoTracks.first)
        #expect(headTrack.sampleEntryBoxes.first { $0.type == "avcC" } == tailTrack.sampleEntryBoxes.first { $0.type == "avcC" })
        #expect(tailTrack.mediaTimescale == 90000)

        let output = folder.path("out.mp4")
        var plan = try await MergeEngine().plan(video: head, audio: Fixtures.path("aac_2s.m4a"), output: output)
        var video = plan.video
        #expect(video.isCopied)
        video.spans.append(try span(of: tail, from: .zero(), to: seconds(2), place: seconds(2), decision: .copy))
        video.end = seconds(4)
        plan.tracks = [video]
        plan.end = seconds(4)
        // The room the merge reserved was for the head's samples alone.
        plan.movieHeader = .movedToFront
        _ = try Remuxer.carryOut(plan, cancellation: CancellationFlag(), progress: nil)

        let written = try #require(try MP4File(path: output).videoTracks.first)
        #expect(written.sampleEntryCount == 1)
        #expect(written.sampleCount == headTrack.sampleCount + tailTrack.sampleCount)
        // Every packet as it was, in order.
        let wanted = try (0..<headTrack.sampleCount).map { try headTrack.sampleData($0) } + (0..<tailTrack.sampleCount).map { try tailTrack.sampleData($0) }
        let copied = try (0..<written.sampleCount).map { try written.sampleData($0) }
        #expect(copied == wanted)
        // At k/25 s from the first picture, the second file's first at 2 s, and the track ends at 4 s.
        let start = written.presentedStart
        let times = written.compositionTimes.map { Double($0 - start) / Double(written.mediaTimescale) }.sorted()
        for (index, time) in times.enumerated() where abs(time - Double(index) / 25) > 1.0 / Double(written.mediaTimescale) {
            Issue.record("sample \(index) at \(time) s")
        }
        #expect((0..<written.sampleCount).filter(written.isSyncSample) == [0, 25, 50, 75])
        #expect(abs(written.presentedEnd - 4) < 0.001, "the track ends at \(written.presentedEnd) s")
        #expect(try TrackDecoder.frames(of: written).count == 100)
    }

    @Test func encodedSoundFromTwoFilesPlaysEachRangeInTurnWithoutAGap() async throws {
        let folder = try TemporaryFolder()
        // A 4 s video; a 2 s tone of 440 Hz at 44.1 kHz mono; and at 48 kHz
        // stereo, 660 Hz for 0.5 s, 1000 Hz for 1.5 s, then 1500 Hz.
        let video = folder.path("video.mp4")
        let low = folder.path("low.m4a")
        let steps = folder.path("steps.m4a")
        try makeFixtures([
            ["-f", "lavfi", "-i", "testsrc=size=160x90:rate=25:duration=4", "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", video],
            ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=2", "-c:a", "aac", low],
            ["-f", "lavfi", "-i", "sine=frequency=660:sample_rate=48000:duration=0.5", "-f", "lavfi", "-i",
             "sine=frequency=1000:sample_rate=48000:duration=1.5", "-f", "lavfi", "-i", "sine=frequency=1500:sample_rate=48000:duration=1",
             "-filter_complex", "[0][1][2]concat=n=3:v=0:a=1,aformat=channel_layouts=stereo", "-c:a", "aac", steps],
        ])
        let output = folder.path("out.mp4")
        // The soundtrack encoded at 48 kHz, the whole video kept: the low tone plays its 2 s.
        let options = MergeOptions(end: .video, audio: AudioOptions(codec: .aac, sampleRate: 48000))
        var plan = try await MergeEngine().plan(video: video, audio: low, output: output, options: options)
        var audio = plan.audio
        #expect(audio!.encoding != nil && audio!.end == seconds(2) && audio!.spans.count == 1)
        let lowStream = try #require(audio!.spans.first?.source)
        let lowStart = try #require(audio!.spans.first?.sourceRange?.lowerBound)
        let stepsInfo = try Prober(cancellation: CancellationFlag()).probe(path: steps)
        let stepsStream = try #require(stepsInfo.audioStreams.first)
        let stepsStart = stepsStream.start ?? .zero()
        // Then 0.5 s to 1.75 s of the steps (the 1000 Hz), a quarter second
        // of silence, and the low tone's first half second again.
        audio!.spans.append(MergePlan.Span(
            source: .init(path: steps, streamIndex: stepsStream.index), sourceRange: (stepsStart + seconds(1, 2))..<(stepsStart + seconds(7, 4)),
            place: seconds(2), duration: seconds(5, 4), decision: .encode, reason: "a test's span"))
        audio!.spans.append(MergePlan.Span(
            source: nil, sourceRange: nil, place: seconds(13, 4), duration: seconds(1, 4), decision: .silence, reason: "a test's silence"))
        audio!.spans.append(MergePlan.Span(
            source: lowStream, sourceRange: lowStart..<(lowStart + seconds(1, 2)), place: seconds(7, 2), duration: seconds(1, 2),
            decision: .encode, reason: "a test's span"))
        audio!.end = seconds(4)
        plan.audio = audio
        _ = try Remuxer.carryOut(plan, cancellation: CancellationFlag(), progress: nil)

        let file = try MP4File(path: output)
        let track = try #require(file.audioTracks.first)
        #expect(track.sampleEntryCount == 1)
        let played = try AudioSamples.played(track, movieTimescale: file.movieTimescale)
        #expect(played.sampleRate == 48000)
        #expect(played.count == 4 * 48000, "\(played.count) samples")
        let samples = played.channels[0]
        func tone(_ from: Double, _ to: Double) -> Double {
            AudioSamples.frequency(samples[Int(from * 48000)..<min(Int(to * 48000), samples.count)], sampleRate: 48000)
        }
        #expect(abs(tone(0.05, 1.95) - 440) < 2, "\(tone(0.05, 1.95)) Hz")
        #expect(abs(tone(2.02, 3.23) - 1000) < 2, "\(tone(2.02, 3.23)) Hz: the steps from 0.5 s to 1.75 s")
        #expect(abs(tone(3.52, 3.98) - 440) < 2, "\(tone(3.52, 3.98)) Hz: the low tone again")
        // Silent where the plan says, and nowhere else: every other 10 ms carries its tone.
        let window = 480
        let quiet = stride(from: window, to: samples.count - window, by: window).filter {
            AudioSamples.rmsDecibels(samples[$0..<($0 + window)]) < -40
        }
        let planned = Int(3.24 * 48000)...Int(3.51 * 48000)
        #expect(quiet.filter { !planned.contains($0) }.isEmpty, "silent at \(quiet.filter { !planned.contains($0) }.prefix(5).map { Double($0) / 48000 }) s")
        // The encoder's ringing at either edge aside.
        #expect(AudioSamples.rmsDecibels(samples[Int(3.28 * 48000)..<Int(3.47 * 48000)]) < -60)
    }
}
