import Foundation
import MediaMuxBase
import Testing
import TestSupport
@testable import MediaMuxCore

/// A copied span that starts far into its source is read from a seek: a
/// soundtrack started 40 minutes into a one-hour file reads no more of the
/// file than one started at its beginning and as long, and its packets are
/// the file's own from the right sample on (judged by the tests' MP4 reader).
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
        #expect(plan.audio.isCopied)
        let demuxer = try DemuxerHandle(path: audio)
        let source = try CopiedSpans(demuxer: demuxer, track: plan.audio)
        var packets: [Data] = []
        while let buffer = try source.next() {
            packets.append(Data(bytes: buffer.pointer.pointee.data, count: Int(buffer.pointer.pointee.size)))
            source.reuse(buffer)
        }
        return Read(bytes: demuxer.bytesRead, packets: packets)
    }

    @Test func aSpanFortyMinutesInReadsNoMoreThanOneAtTheStart() async throws {
        let folder = try TemporaryFolder()
        let ffmpeg = try #require(["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first { FileManager.default.isExecutableFile(atPath: $0) })
        // One hour of AAC (10 s encoded, then repeated by copy: 3 MB of media data).
        let ten = folder.path("ten.m4a")
        let hour = folder.path("hour.m4a")
        for arguments in [
            ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=8000:duration=10", "-ac", "1", "-c:a", "aac", "-b:a", "24k", ten],
            ["-stream_loop", "359", "-i", ten, "-c", "copy", hour],
        ] {
            let made = try ExternalTool.run(ffmpeg, ["-nostdin", "-v", "error", "-y"] + arguments, keeping: .errors, seconds: 120)
            #expect(made.status == 0, "\(String(decoding: made.text, as: UTF8.self))")
        }
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
