import Foundation
import NIOCore
import NIOConcurrencyHelpers
import TestSupport
import Testing
@testable import MediaMux
@testable import MediaMuxCore

/// Fragmented MP4 output, to a file and streamed as it is made: the same
/// packets, times, sample entries and edit lists as the movie output of the
/// same merge, read by the tests' own MP4 reader from the moof/trun boxes;
/// what GStreamer, ffprobe and Chromium (from disk and through Media Source
/// Extensions, from the test server on 127.0.0.1) make of it; and a writer
/// that stops.
@Suite(.offTheCooperativePool)
struct FragmentedOutputTests {
    struct Job: Sendable {
        var video: String
        var audio: String
        var options = MergeOptions()
    }

    /// B-frames and AAC priming (edit lists on both tracks), a soundtrack
    /// starting late (an empty edit), a last frame held, and HDR10 sample
    /// entries whose boxes are carried from the source.
    static let jobs: [String: Job] = [
        "bframes": Job(video: "h264_bframes_aac.mp4", audio: "aac_7s.m4a"),
        "late": Job(video: "h264_bframes_aac.mp4", audio: "aac_chirp_1.5s.m4a", options: MergeOptions(end: .video, audio: AudioOptions(offset: 0.75))),
        "held": Job(video: "h264_bframes_aac.mp4", audio: "aac_7s.m4a", options: MergeOptions(end: .audio)),
        "hdr10": Job(video: "hevc_hdr10_entry_boxes.mp4", audio: "aac_2s.m4a"),
        // The sound starts 0.33 s in and ends 1.83 s in, inside the video's 55th frame.
        "cut": Job(video: "h264_bframes_aac.mp4", audio: "aac_chirp_1.5s.m4a", options: MergeOptions(audio: AudioOptions(offset: 0.33))),
    ]

    /// The three outputs of one job: the movie, fragments to a file, fragments streamed.
    struct Outputs {
        var movie: String
        var fragmented: String
        var streamed: [UInt8]
        var report: MergeReport
        var streamReport: MergeReport
    }

    static func merge(_ job: Job, named name: String, in folder: TemporaryFolder) async throws -> Outputs {
        let engine = MuxEngine()
        let video = Fixtures.path(job.video)
        let audio = Fixtures.path(job.audio)
        let movie = folder.path(name + "-movie.mp4")
        let fragmented = folder.path(name + "-fragmented.mp4")
        _ = try await engine.merge(video: video, audio: audio, output: movie, options: job.options)
        var options = job.options
        options.layout = .fragmented
        let report = try await engine.merge(video: video, audio: audio, output: fragmented, options: options)
        let pieces = NIOLockedValueBox<[UInt8]>([])
        let stream = MergeStream(name: "the test's writer") { chunk in pieces.withLockedValue { $0 += chunk.readableBytesView } }
        let streamReport = try await engine.merge(MergeJob(video: video, audio: audio, output: .stream(stream), options: job.options))
        return Outputs(movie: movie, fragmented: fragmented, streamed: pieces.withLockedValue { $0 }, report: report.merge, streamReport: streamReport.merge)
    }

    /// The same samples, shown at the same times, as the movie of the same
    /// merge. A video's sample durations differ at its end alone: they add
    /// up to the time it is shown (see `playersAgreeOnWhereTheFragmentsEnd`),
    /// where the movie's last sample reaches the end of its media; the
    /// decode times after a frame the end cuts short come earlier by what it
    /// loses ("cut"), each sample shown when the movie shows it.
    @Test(arguments: ["bframes", "late", "held", "hdr10", "cut"])
    func theFragmentsHoldWhatTheMovieHolds(_ name: String) async throws {
        let folder = try TemporaryFolder()
        let outputs = try await Self.merge(try #require(Self.jobs[name]), named: name, in: folder)
        // Streamed and written to a file, the bytes are the same.
        let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: outputs.fragmented)))
        #expect(outputs.streamed == written, "\(name): streamed \(outputs.streamed.count) bytes, the file has \(written.count)")
        #expect(outputs.streamReport.fileBytes == outputs.streamed.count && outputs.report.fileBytes == written.count)
        #expect(outputs.streamReport.output == "the test's writer")

        let movie = try MP4File(path: outputs.movie)
        let fragments = try MP4File(path: outputs.fragmented)
        #expect(movie.fragmentCount == 0)
        // One fragment from each keyframe (every 2 s in these clips, at least one).
        #expect(fragments.fragmentCount >= (name == "hdr10" ? 1 : 2), "\(name): \(fragments.fragmentCount) fragments")
        // The initialisation segment first: ftyp, then moov with mvex and mehd; then moof/mdat pairs.
        #expect(fragments.topLevelBoxes.prefix(3).map(\.type) == ["ftyp", "moov", "moof"])
        #expect(Set(fragments.topLevelBoxes.dropFirst(2).map(\.type)) == ["moof", "mdat"])
        #expect(!fragments.moov.find("mvex/mehd").isEmpty)
        #expect(fragments.movieTimescale == movie.movieTimescale && fragments.movieDuration == movie.movieDuration)
        try #require(fragments.tracks.count == movie.tracks.count)
        for (copy, original) in zip(fragments.tracks, movie.tracks) {
            let what = "\(name) track \(original.trackID)"
            Self.expectSameDescription(copy, original, what)
            try #require(copy.sampleCount == original.sampleCount, "\(what): \(copy.sampleCount) samples, the movie has \(original.sampleCount)")
            let start = original.decodeTimes.first ?? 0
            let copyStart = copy.decodeTimes.first ?? 0
            for index in 0..<original.sampleCount {
                let shown = copy.decodeTimes[index] - copyStart + Int64(copy.compositionOffsets[index])
                #expect(shown == original.decodeTimes[index] - start + Int64(original.compositionOffsets[index]), "\(what) sample \(index): presentation time")
                #expect(index == 0 || copy.decodeTimes[index] > copy.decodeTimes[index - 1], "\(what) sample \(index): decode time")
                #expect(copy.isSyncSample(index) == original.isSyncSample(index), "\(what) sample \(index): sync")
                #expect(try copy.sampleData(index) == original.sampleData(index), "\(what) sample \(index): bytes")
            }
            if original.isVideo {
                let presented = (copy.editList ?? []).filter { !$0.isEmpty }.reduce(0) { $0 + $1.segmentDuration }
                let inMedia = Double(presented) * Double(copy.mediaTimescale) / Double(fragments.movieTimescale)
                #expect(abs(Double(copy.mediaDuration) - inMedia) <= 1, "\(what): media duration \(copy.mediaDuration), shown for \(inMedia)")
            } else {
                #expect(copy.mediaDuration == original.mediaDuration, "\(what): media duration")
            }
        }
        // Where the presentation ends, by the edit lists and the movie timescale: the plan's end.
        let end = outputs.report.duration.seconds
        let ends = fragments.tracks.map { $0.presentedDuration(movieTimescale: fragments.movieTimescale) }
        #expect(abs((ends.max() ?? 0) - end) < 0.001, "\(name): tracks end at \(ends), the merge at \(end) s")
        #expect(abs(Double(fragments.movieDuration) / Double(fragments.movieTimescale) - end) < 0.001)
    }

    /// What two outputs of one merge share whatever their layout: a track
    /// read without issues, its sample entry (but the muxer's own tallies of
    /// the bit rate, which fragments written as they go cannot know: btrt,
    /// and an encoded track's esds bit rates), format, matrix, enabled flag,
    /// timescale and edit list.
    static func expectSameDescription(_ copy: MP4File.Track, _ original: MP4File.Track, _ what: String) {
        #expect(copy.issues.isEmpty, "\(what): \(copy.issues)")
        let entry = { (track: MP4File.Track) in
            track.sampleEntryBoxes.filter { $0.type != "btrt" }.map { $0.type == "esds" ? withoutBitRates($0.bytes) : $0.bytes }
        }
        #expect(entry(copy) == entry(original), "\(what): sample entry")
        #expect(copy.sampleFormat == original.sampleFormat && copy.matrix == original.matrix && copy.isEnabled == original.isEnabled)
        #expect(copy.mediaTimescale == original.mediaTimescale)
        #expect(copy.editList?.map(\.segmentDuration) == original.editList?.map(\.segmentDuration), "\(what): edit durations")
        #expect(copy.editList?.map(\.mediaTime) == original.editList?.map(\.mediaTime), "\(what): edit media times")
    }

    /// An esds box with the DecoderConfigDescriptor's maxBitrate and
    /// avgBitrate (ISO/IEC 14496-1, 7.2.6.5-6) zeroed. After the box header
    /// and version: the ES_Descriptor (tag 3, a size of 1 to 4 bytes, ES_ID,
    /// flags and the fields they announce), then the DecoderConfigDescriptor
    /// (tag 4, its size, objectTypeIndication, streamType, bufferSizeDB).
    static func withoutBitRates(_ esds: [UInt8]) -> [UInt8] {
        var bytes = esds
        func skipSize(_ at: inout Int) {
            while at < bytes.count, bytes[at] & 0x80 != 0 { at += 1 }
            at += 1
        }
        var at = 12
        guard at < bytes.count, bytes[at] == 0x03 else { return bytes }
        at += 1
        skipSize(&at)
        guard at + 3 <= bytes.count else { return bytes }
        let flags = bytes[at + 2]
        at += 3
        if flags & 0x80 != 0 { at += 2 }
        if flags & 0x40 != 0, at < bytes.count { at += 1 + Int(bytes[at]) }
        if flags & 0x20 != 0 { at += 2 }
        guard at < bytes.count, bytes[at] == 0x04 else { return bytes }
        at += 1
        skipSize(&at)
        at += 5
        guard at + 8 <= bytes.count else { return bytes }
        bytes.replaceSubrange(at..<at + 8, with: [UInt8](repeating: 0, count: 8))
        return bytes
    }

    /// GStreamer (qtdemux, which honours the edit lists and mehd) gives the
    /// movie's duration; ffprobe reads the same packets. FFmpeg's mov demuxer
    /// applies only the start of an edit list in fragments, not its end, so
    /// its duration estimate runs to the media's end (as it does for
    /// fragments FFmpeg writes itself): that is not compared.
    @Test(.tags(.gstreamer), .skippedByTag) func gstreamerAndFFprobeAgree() async throws {
        for (name, expected) in [("bframes", 4.0), ("held", 7.3)] {
            let folder = try TemporaryFolder()
            let outputs = try await Self.merge(Self.jobs[name]!, named: name, in: folder)
            let said = try GStreamer.discoveredDuration(of: outputs.fragmented)
            #expect(abs(said - expected) < 0.001, "\(name): GStreamer says \(said) s")
            #expect(abs(outputs.report.duration.seconds - expected) < 0.001)
            for kind in ["v", "a"] {
                let fragmented = try FFprobe.packetDigest(outputs.fragmented, stream: kind)
                let movie = try FFprobe.packetDigest(outputs.movie, stream: kind)
                let differ = zip(fragmented, movie).enumerated().first { $0.element.0 != $0.element.1 }
                let same = fragmented == movie
                #expect(same, "\(name) \(kind): \(fragmented.count) and \(movie.count) packets; first difference: \(String(describing: differ))")
            }
        }
    }

    /// Where the fragments end, as players read it. FFmpeg's mov demuxer
    /// (and Chromium from disk, through it) applies only the start of an
    /// edit list in fragments and takes a track's length from its samples'
    /// durations, which add up to the time the video is shown; GStreamer
    /// reads the edit lists. All give the movie's end to the millisecond:
    /// a B-frame video (a start edit for its reorder delay), a last frame
    /// held, and an end inside a frame. The sound as FFmpeg reads it: 5.1
    /// puts the AAC priming before the start and ends it at the end; 7.1
    /// starts it at the start and counts the priming in its duration, as
    /// for the fragments FFmpeg writes itself.
    @Test(.tags(.gstreamer, .browser), .skippedByTag, arguments: [("bframes", 4.0), ("held", 7.3), ("cut", 1.83)])
    func playersAgreeOnWhereTheFragmentsEnd(_ name: String, _ end: Double) async throws {
        let folder = try TemporaryFolder()
        let outputs = try await Self.merge(try #require(Self.jobs[name]), named: name, in: folder)
        #expect(abs(outputs.report.duration.seconds - end) < 0.001, "\(name): the merge lasts \(outputs.report.duration.seconds) s")
        try Self.expectPlayersAgree(on: name + "-fragmented.mp4", in: folder, end: end)
    }

    /// GStreamer, ffprobe and Chromium from disk on where fragmented output
    /// `name` (in `folder`) ends (see `playersAgreeOnWhereTheFragmentsEnd`).
    static func expectPlayersAgree(on name: String, in folder: TemporaryFolder, end: Double) throws {
        let path = folder.path(name)
        let gstreamer = try GStreamer.discoveredDuration(of: path)
        #expect(abs(gstreamer - end) < 0.001, "\(name): GStreamer says \(gstreamer) s")
        let video = try FFprobe.streamTimes(path, stream: "v")
        #expect(abs(video.start) < 0.001 && abs(video.start + video.duration - end) < 0.001, "\(name): ffprobe's video \(video)")
        let audio = try FFprobe.streamTimes(path, stream: "a")
        let sound = try #require(try MP4File(path: path).tracks.first { $0.isAudio })
        let priming = Double(sound.editList?.last?.mediaTime ?? 0) / Double(sound.mediaTimescale)
        let audioEnd = audio.start + audio.duration - (FFmpegRelease.isSevenOrLater ? priming : 0)
        #expect(priming > 0 && abs(audioEnd - end) < 0.001, "\(name): ffprobe's audio \(audio), priming \(priming) s")
        // Chromium from disk reads the sound as FFmpeg 7.1 does: the longer track, the output's length.
        let (durations, _) = try BrowserTimelineTests.play([(name, [])], in: folder)
        let chromium = try #require(durations[name], "Chromium gave no duration: \(durations)")
        #expect(abs(chromium - (end + priming)) < 0.001, "\(name): Chromium says \(chromium) s")
    }

    /// Chromium plays the fragments from disk, showing the movie output's
    /// pictures at the same moments, and appended through Media Source
    /// Extensions by a page from the test server, in pieces that cut boxes
    /// anywhere: all of it buffered from 0, and at 2 s the movie's picture
    /// there. Media Source draws through another path, whose colours differ
    /// by about 5 levels on average, so its picture is only told apart from
    /// the movie's half a second either side (about 11-14 levels away);
    /// the frame-exact timing is the tests' own reader's to check.
    @Test(.tags(.browser, .network), .skippedByTag) func chromiumPlaysTheFragmentsFromDiskAndThroughMediaSource() async throws {
        let folder = try TemporaryFolder()
        let outputs = try await Self.merge(Self.jobs["bframes"]!, named: "bframes", in: folder)
        let server = try await TestHTTPServer.start()
        defer { Task { try? await server.stop() } }
        server.serve("/fragments.mp4", body: outputs.streamed, contentType: "video/mp4")
        server.serve("/movie.mp4", body: try [UInt8](Data(contentsOf: URL(fileURLWithPath: outputs.movie))), contentType: "video/mp4")
        let codec = try #require(try MP4File(path: outputs.fragmented).videoTracks.first?.avcCodecString)
        server.serve(
            "/page.html", body: Array(Self.page.replacingOccurrences(of: "CODECS", with: "\(codec),mp4a.40.2").utf8), contentType: "text/html")
        let text = try Chromium.run(url: server.url("/page.html"), budget: 20_000)
        var lines: [String: [String]] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            if let first = fields.first { lines[first] = Array(fields.dropFirst()) }
        }
        // From disk: the same pictures as the movie, at three moments.
        for at in ["1", "2", "3.9"] {
            let movie = lines["movie-" + at]?.first
            #expect(movie != nil && lines["disk-" + at]?.first == movie, "at \(at) s; Chromium said: \(text)")
        }
        // Through Media Source: everything buffered, from the start.
        let buffered = try #require(lines["buffered"], "Chromium said: \(text)").compactMap(Double.init)
        try #require(buffered.count == 2, "Chromium said: \(text)")
        #expect(abs(buffered[0]) < 0.001 && abs(buffered[1] - 4.0) < 0.001, "Media Source buffered \(buffered)")
        let differences = try #require(lines["difference"], "Chromium said: \(text)").compactMap(Double.init)
        try #require(differences.count == 3, "Chromium said: \(text)")
        // At 2 s it shows the movie's picture at 2 s, not one from half a second either side.
        #expect(differences[0] * 2 < min(differences[1], differences[2]), "mean differences from the movie at 2 s, 1.5 s and 2.5 s: \(differences)")
    }

    static let page = """
        <html><body><pre id=out></pre><script>
        const out = document.getElementById("out");
        const say = (line) => { out.textContent += line + "\\n"; };
        window.onunhandledrejection = (e) => say("error " + e.reason);
        \(Chromium.pictureScript)
        // Resolves with the picture a video element shows at `at`.
        function pictureAt(src, at) {
          return new Promise((done) => {
            const v = document.createElement("video"); v.muted = true; v.preload = "auto";
            v.onloadedmetadata = () => { v.currentTime = at; };
            v.onseeked = () => settledPicture(v, done);
            v.onerror = () => say("error " + src);
            v.src = src;
          });
        }
        // The mean difference left once each colour channel of `a` is
        // fitted to `b`'s by a line (least squares): what remains is the
        // picture, not the colour conversion, which differs between the
        // two decoding paths.
        function meanDifference(a, b) {
          const x = a.context.getImageData(0, 0, a.canvas.width, a.canvas.height).data;
          const y = b.context.getImageData(0, 0, b.canvas.width, b.canvas.height).data;
          if (x.length !== y.length) return 255;
          const n = x.length / 4;
          let total = 0;
          for (let c = 0; c < 3; c++) {
            let sx = 0, sy = 0, sxx = 0, sxy = 0;
            for (let i = c; i < x.length; i += 4) { sx += x[i]; sy += y[i]; sxx += x[i] * x[i]; sxy += x[i] * y[i]; }
            const slope = (n * sxy - sx * sy) / Math.max(1e-9, n * sxx - sx * sx);
            const offset = (sy - slope * sx) / n;
            for (let i = c; i < x.length; i += 4) total += Math.abs(slope * x[i] + offset - y[i]);
          }
          return total / (3 * n);
        }
        // Every element at once: headless Chromium leaves some loads unfinished when they queue.
        const moments = [1, 2, 3.9];
        const reference = Promise.all([pictureAt("/movie.mp4", 2.0), pictureAt("/movie.mp4", 1.5), pictureAt("/movie.mp4", 2.5)]);
        Promise.all(moments.flatMap((at) => [pictureAt("/movie.mp4", at), pictureAt("/fragments.mp4", at)])).then((pictures) => {
          moments.forEach((at, i) => { say("movie-" + at + " " + pictures[2 * i].hash); say("disk-" + at + " " + pictures[2 * i + 1].hash); });
        });
        (async () => {
          const media = new MediaSource();
          const v = document.createElement("video"); v.muted = true;
          media.addEventListener("sourceopen", async () => {
            const buffer = media.addSourceBuffer('video/mp4; codecs="CODECS"');
            const bytes = new Uint8Array(await (await fetch("/fragments.mp4")).arrayBuffer());
            let at = 0;
            buffer.onupdateend = async () => {
              if (at < bytes.length) { buffer.appendBuffer(bytes.subarray(at, at + 7001)); at += 7001; return; }
              if (media.readyState !== "open") return;
              media.endOfStream();
              const ranges = buffer.buffered;
              say("buffered " + ranges.start(0) + " " + ranges.end(ranges.length - 1));
              v.onseeked = () => settledPicture(v, async (shown) => {
                const [same, before, after] = await reference;
                say("difference " + meanDifference(shown, same) + " " + meanDifference(shown, before) + " " + meanDifference(shown, after));
              });
              v.currentTime = 2.0;
            };
            buffer.onerror = () => say("error appending");
            buffer.appendBuffer(bytes.subarray(0, 7001)); at = 7001;
          });
          v.src = URL.createObjectURL(media);
        })();
        </script></body></html>
        """

    @Test func aWriterThatStopsEndsTheMergeNamingTheStream() async throws {
        struct Stop: Error {}
        let count = NIOLockedValueBox(0)
        let stream = MergeStream(name: "response") { _ in
            if count.withLockedValue({ $0 += 1; return $0 }) == 1 { throw Stop() }
        }
        await #expect {
            _ = try await MuxEngine().merge(MergeJob(video: Fixtures.path("h264_bframes_aac.mp4"), audio: Fixtures.path("aac_7s.m4a"), output: .stream(stream)))
        } throws: { error in
            guard let error = error as? MediaMuxError, case .outputNotWritable(let path, let reason) = error.failure else { return false }
            return path == "response" && reason.contains("Stop")
        }
        #expect(count.withLockedValue { $0 } == 1, "the writer was called after it threw")
    }

    @Test func aCancelledStreamEndsCleanly() async throws {
        let started = NIOLockedValueBox(false)
        let stream = MergeStream(name: "response") { _ in
            started.withLockedValue { $0 = true }
            try await Task.sleep(for: .seconds(30))
        }
        let task = Task {
            try await MuxEngine().merge(MergeJob(video: Fixtures.path("h264_bframes_aac.mp4"), audio: Fixtures.path("aac_7s.m4a"), output: .stream(stream)))
        }
        while !started.withLockedValue({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        task.cancel()
        let result = await task.result
        guard case .failure(let error) = result, let error = error as? MediaMuxError else {
            Issue.record("a cancelled stream gave \(result)")
            return
        }
        #expect(error.kind == .cancelled || error.kind == .output, "\(error)")
    }

    @Test func fragmentsAreMP4Only() async throws {
        let folder = try TemporaryFolder()
        await #expect {
            _ = try await MuxEngine().merge(
                video: Fixtures.path("h264_bframes_aac.mp4"), audio: Fixtures.path("aac_7s.m4a"), output: folder.path("out.mov"),
                options: MergeOptions(layout: .fragmented))
        } throws: { error in
            guard let error = error as? MediaMuxError, error.option == "MergeOptions.layout" else { return false }
            return error.description.contains("fragmented output is MP4")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty)
    }
}

extension MP4File.Track {
    /// The RFC 6381 codecs parameter of an H.264 track ("avc1.64001f"), from its avcC.
    var avcCodecString: String? {
        // The box with its header: configurationVersion, then profile, compatibility and level.
        guard let avcC = sampleEntryBoxes.first(where: { $0.type == "avcC" })?.bytes, avcC.count >= 12 else { return nil }
        return "avc1." + avcC[9...11].map { String(format: "%02x", $0) }.joined()
    }
}
