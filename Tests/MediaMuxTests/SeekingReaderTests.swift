import Foundation
import MediaMuxBase
import Testing
import TestSupport
@testable import MediaMuxCore

/// A span that starts far into its source is read from a seek: a
/// soundtrack started 40 minutes into a one-hour file, and a preview clip's
/// video span 40 minutes into a one-hour H.264 file with B-frames (read on
/// the media timeline, its edit list left to MediaMux), read no more of the
/// file than spans at its beginning and as long, and their packets are the
/// file's own from the right sample on (judged by the tests' MP4 reader).
@Suite(.tags(.heavy), .skippedByTag)
struct SeekingReaderTests {
    /// What reading the soundtrack's span took: the bytes read from the file, and the packets' bytes in order.
    private struct Read {
        var bytes: Int64
        var packets: [Data]
    }

    /// The plan's soundtrack, read as a merge reads it, to its end.
    private func readSoundtrack(video: String, audio: String, offset: MediaTime, folder: TemporaryFolder) async throws -> Read {
        let options = MergeOptions(audio: AudioOptions(offset: offset))
        let plan = try await MergeEngine().plan(video: video, audio: audio, output: folder.path("out.mp4"), options: options)
        #expect(plan.audio!.isCopied)
        let inputs = try SpanInputs(track: plan.audio!, cancellation: CancellationFlag())
        let demuxer = inputs.own
        let source = try CopiedSpans(inputs: inputs, track: plan.audio!)
        var packets: [Data] = []
        while let buffer = try source.next() {
            packets.append(Data(bytes: buffer.pointer.pointee.data, count: Int(buffer.pointer.pointee.size)))
            source.reuse(buffer)
        }
        return Read(bytes: demuxer.bytesRead, packets: packets)
    }

    /// The video span of a preview clip from `start`, `length` long, read as the clip's executor reads it.
    private func readClipVideo(_ path: String, from start: MediaTime, length: MediaTime) throws -> Read {
        let info = try Prober(cancellation: CancellationFlag()).probe(path: path)
        let stream = try #require(info.videoStreams.first)
        let encoding = VideoEncoding.testClip(of: stream, frame: VideoSize(width: 320, height: 180))
        let plan = try MergePlanner.clipPlan(
            .init(output: "clip.mp4", overwrite: false, videoStream: stream.index, start: start, end: start + length, video: encoding, sound: nil),
            of: info)
        #expect(plan.video.timestamps != .demuxer, "the media timeline, as a merge reads MP4 video")
        let demuxer = try DemuxerHandle(path: path, ignoringEditLists: true)
        let reader = try TrackReader(demuxer: demuxer, track: plan.video, end: plan.video.end)
        var packets: [Data] = []
        while let buffer = try reader.next() {
            packets.append(Data(bytes: buffer.pointer.pointee.data, count: Int(buffer.pointer.pointee.size)))
            reader.reuse(buffer)
        }
        return Read(bytes: demuxer.bytesRead, packets: packets)
    }

    /// Runs the ffmpeg CLI for a fixture.
    private func makeFixture(_ steps: [[String]]) throws {
        let ffmpeg = try #require(["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first { FileManager.default.isExecutableFile(atPath: $0) })
        for arguments in steps {
            let made = try ExternalTool.run(ffmpeg, ["-nostdin", "-v", "error", "-y"] + arguments, keeping: .errors, seconds: 120)
            #expect(made.status == 0, "\(String(decoding: made.text, as: UTF8.self))")
        }
    }

    @Test func aClipFortyMinutesInReadsNoMoreThanOneAtTheStart() async throws {
        let folder = try TemporaryFolder()
        // One hour of H.264 with two B-frames and a keyframe every 2.5 s (10 s
        // encoded, then repeated by copy: 13 MB).
        let ten = folder.path("ten.mp4")
        let hour = folder.path("hour.mp4")
        try makeFixture([
            ["-f", "lavfi", "-i", "testsrc=size=320x180:rate=10:duration=10", "-c:v", "libx264", "-preset", "veryfast", "-bf", "2", "-g", "25",
             "-pix_fmt", "yuv420p", ten],
            ["-stream_loop", "359", "-i", ten, "-c", "copy", hour],
        ])
        // Both start 0.35 s past a frame, 1.35 s past a keyframe.
        let length = MediaTime(value: 2, timescale: 1)
        let atStart = try readClipVideo(hour, from: MediaTime(value: 335, timescale: 100), length: length)
        let fortyMinutesIn = try readClipVideo(hour, from: MediaTime(value: 240_335, timescale: 100), length: length)
        // Read through, the 40 minutes before would be 8.8 MB more.
        #expect(fortyMinutesIn.bytes <= atStart.bytes + 64 * 1024, "\(fortyMinutesIn.bytes) bytes read 40 minutes in, \(atStart.bytes) at the start")
        #expect(atStart.bytes < 512 * 1024)

        // The packets are the file's samples in decode order, from the
        // keyframe shown at or before the start (40 minutes and 2.5 s) to the
        // last one decoded before a frame shown past the end (40:05.35).
        let track = try #require(try MP4File(path: hour).videoTracks.first)
        let scale = Double(track.mediaTimescale)
        let shift = track.editList?.first { !$0.isEmpty }?.mediaTime ?? 0
        let shown = track.compositionTimes.map { Double($0 - shift) / scale }
        let first = try #require(shown.indices.last { track.isSyncSample($0) && shown[$0] <= 2403.35 })
        let last = try #require(shown.indices.last { shown[$0] < 2405.35 })
        let expected = try (first...last).map { try track.sampleData($0) }
        #expect(fortyMinutesIn.packets.count == expected.count)
        #expect(fortyMinutesIn.packets == expected)
        // The same stretch of the ten seconds repeated: what it decodes to is checked by the clip tests.
        #expect(fortyMinutesIn.packets == atStart.packets)
    }

    @Test func aSpanFortyMinutesInReadsNoMoreThanOneAtTheStart() async throws {
        let folder = try TemporaryFolder()
        // One hour of AAC (10 s encoded, then repeated by copy: 3 MB of media data).
        let ten = folder.path("ten.m4a")
        let hour = folder.path("hour.m4a")
        try makeFixture([
            ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=8000:duration=10", "-ac", "1", "-c:a", "aac", "-b:a", "24k", ten],
            ["-stream_loop", "359", "-i", ten, "-c", "copy", hour],
        ])
        // The video lasts 26 s, so each span does.
        let video = Fixtures.path("h264_26s_2fps.mp4")
        let atStart = try await readSoundtrack(video: video, audio: hour, offset: .zero(), folder: folder)
        let fortyMinutesIn = try await readSoundtrack(video: video, audio: hour, offset: MediaTime(value: -2400, timescale: 1), folder: folder)

        // Read through, the 40 minutes before would be 7 MB more. The seek
        // reads a little more than the span: the lead-in that primes the
        // decoder (0.1 s, 300 bytes here) and what FFmpeg's reads round up to.
        #expect(fortyMinutesIn.bytes <= atStart.bytes + 32 * 1024, "\(fortyMinutesIn.bytes) bytes read 40 minutes in, \(atStart.bytes) at the start")
        #expect(atStart.bytes < 512 * 1024)

        // The packets are the file's samples from the last one presented at or
        // before the lead-in's start (40 minutes less 0.1 s) to the last one
        // presented before the span's end (40 minutes and 26 s).
        let track = try #require(try MP4File(path: hour).tracks.first { $0.isAudio })
        let scale = Double(track.mediaTimescale)
        let shift = track.editList?.first { !$0.isEmpty }?.mediaTime ?? 0
        let presented = track.decodeTimes.map { Double($0 - shift) / scale }
        let first = try #require(presented.lastIndex { $0 <= 2400 - MergePlanner.leadIn.seconds })
        let last = try #require(presented.lastIndex { $0 < 2426 })
        let expected = try (first...last).map { try track.sampleData($0) }
        #expect(fortyMinutesIn.packets.count == expected.count)
        #expect(fortyMinutesIn.packets == expected)
    }
}
