import Foundation
import TestSupport
import Testing
@testable import MediaMux
@testable import MediaMuxCore

/// What headless Chromium makes of transcoded, looped, moved and held
/// outputs: the duration it reports, to the millisecond, and for a held last
/// frame the picture it shows past the video's own end.
@Suite(.tags(.browser), .skippedByTag, .offTheCooperativePool)
struct BrowserTimelineTests {
    /// One video element per file and per seek (headless Chromium leaves a
    /// second seek of one element unfinished): a line with the duration, or
    /// with the time and a hash of the picture shown there.
    static let page = """
        <html><body><pre id=out></pre><script>
        const out = document.getElementById("out");
        const files = FILES;
        \(Chromium.pictureScript)
        for (const [name, seeks] of files) {
          for (const at of [null].concat(seeks)) {
            const v = document.createElement("video");
            v.muted = true; v.preload = "auto";
            v.onloadedmetadata = () => {
              if (at === null) { out.textContent += name + " duration " + v.duration + "\\n"; } else { v.currentTime = at; }
            };
            v.onseeked = () => settledPicture(v, (p) => { out.textContent += name + " " + at + " " + p.hash + "\\n"; });
            v.onerror = () => { out.textContent += name + " error\\n"; };
            v.src = name;
          }
        }
        </script></body></html>
        """

    /// Plays files of `folder` in Chromium, each once for its duration and
    /// once per seek: the durations, and the picture hash at each seek, by file name.
    static func play(
        _ files: [(name: String, seeks: [Double])], in folder: TemporaryFolder
    ) throws -> (durations: [String: Double], pictures: [String: [String: String]]) {
        let list = "[" + files.map { "[\"\($0.name)\", [\($0.seeks.map { String($0) }.joined(separator: ","))]]" }.joined(separator: ",") + "]"
        let page = folder.path("page.html")
        try Data(Self.page.replacingOccurrences(of: "FILES", with: list).utf8).write(to: URL(fileURLWithPath: page))
        var durations: [String: Double] = [:]
        var pictures: [String: [String: String]] = [:]
        // 30 s of virtual time, not the usual 10, and up to 3 runs of a page
        // that came back incomplete. Chromium's virtual time runs on while
        // its media threads decode in real time: on 2 cores under a
        // sanitizer, beside the tests that decode on threads of their own,
        // fresh-clone runs gave every duration and not all of the pictures
        // (seeks still pending when the budget ran out). A missing answer is
        // asked again; a wrong one is never.
        for attempt in 1...3 {
            durations = [:]
            pictures = [:]
            for line in try Chromium.run(page: page, budget: 30_000).split(separator: "\n") {
                let fields = line.split(separator: " ").map(String.init)
                guard fields.count == 3 else { continue }
                if fields[1] == "duration" { durations[fields[0]] = Double(fields[2]) } else { pictures[fields[0], default: [:]][fields[1]] = fields[2] }
            }
            let complete = files.allSatisfy { durations[$0.name] != nil && (pictures[$0.name]?.count ?? 0) == Set($0.seeks).count }
            if complete || attempt == 3 { break }
        }
        return (durations, pictures)
    }

    @Test func durationsAndTheHeldFrame() async throws {
        let folder = try TemporaryFolder()
        let video = Fixtures.path("h264_bframes_aac.mp4")
        let engine = MuxEngine()
        let jobs: [(output: String, audio: String, options: MergeOptions, seconds: Double)] = [
            ("flac.mp4", "flac_3s.flac", MergeOptions(), 3),
            ("vorbis.mp4", "vorbis_2s.ogg", MergeOptions(), 2),
            ("looped.mp4", "aac_chirp_1.5s.m4a", MergeOptions(end: .video, audio: AudioOptions(loops: true)), 4),
            ("later.mp4", "aac_chirp_1.5s.m4a", MergeOptions(end: .video, audio: AudioOptions(offset: 0.75)), 4),
            ("earlier.mp4", "aac_7s.m4a", MergeOptions(audio: AudioOptions(offset: -4.5)), 2.8),
            ("held.mp4", "aac_7s.m4a", MergeOptions(end: .audio), 7.3),
        ]
        for job in jobs {
            _ = try await engine.merge(video: video, audio: Fixtures.path(job.audio), output: folder.path(job.output), options: job.options)
        }
        // The held output: the video's last frame (shown from 3.967 s), before and long after the
        // video's end, and for contrast an earlier one (the picture has a running counter).
        let seeks: [String: [Double]] = ["held.mp4": [2.0, 3.98, 5.5, 7.25]]
        let (durations, pictures) = try Self.play(jobs.map { ($0.output, seeks[$0.output] ?? []) }, in: folder)
        for job in jobs {
            let duration = try #require(durations[job.output], "Chromium gave no duration for \(job.output): \(durations)")
            #expect(abs(duration - job.seconds) < 0.001, "\(job.output): Chromium says \(duration) s, expected \(job.seconds)")
        }
        let held = pictures["held.mp4"] ?? [:]
        #expect(held.count == 4, "Chromium showed \(held)")
        let last = held["3.98"]
        #expect(last != nil && held["5.5"] == last && held["7.25"] == last, "the held frame changes: \(held)")
        #expect(held["2"] != last, "the frame at 2 s is the last frame: \(held)")
    }
}
