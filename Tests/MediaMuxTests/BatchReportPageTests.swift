import Foundation
import TestSupport
import Testing
@testable import MediaMux

/// The HTML report of a batch, opened from disk in headless Chromium: every
/// preview clip plays far enough to report its duration and size, shows its
/// first picture as a poster until played, every contact sheet loads, and
/// the page refers to nothing outside its folder.
@Suite(.tags(.browser), .skippedByTag, .offTheCooperativePool)
struct BatchReportPageTests {
    /// Loads the report in a frame and lists what the browser made of each
    /// image and video in it.
    static let page = """
        <html><body><pre id=out></pre>
        <iframe id=report src="report/index.html" width=1200 height=800></iframe>
        <script>
        const out = document.getElementById("out");
        document.getElementById("report").onload = (event) => {
          const doc = event.target.contentDocument;
          for (const img of doc.querySelectorAll("img")) {
            const say = () => { out.textContent += "img " + img.getAttribute("src") + " " + img.naturalWidth + " " + img.naturalHeight + "\\n"; };
            if (img.complete) { say(); } else { img.onload = say; img.onerror = say; }
          }
          for (const v of doc.querySelectorAll("video")) {
            const poster = new Image();
            poster.onload = poster.onerror = () => { out.textContent += "poster " + v.getAttribute("poster") + " " + poster.naturalWidth + " " + poster.naturalHeight + "\\n"; };
            poster.src = v.poster;
            const say = () => { out.textContent += "video " + v.getAttribute("src") + " " + v.duration + " " + v.videoWidth + " " + v.videoHeight + "\\n"; };
            if (v.readyState >= 1) { say(); } else { v.onloadedmetadata = say; v.onerror = () => { out.textContent += "video " + v.getAttribute("src") + " error\\n"; }; }
          }
          out.textContent += "jobs " + doc.querySelectorAll("section.job").length + "\\n";
        };
        </script></body></html>
        """

    @Test func everyClipPlaysAndEveryImageLoadsFromDisk() async throws {
        let folder = try TemporaryFolder()
        try Data("""
            {"jobs": [
              {"video": "\(Fixtures.path("h264_bframes_aac.mp4"))", "audio": "\(Fixtures.path("aac_7s.m4a"))", "output": "out/a.mp4",
               "preview": {"sheet": true, "clip": true}},
              {"video": "\(Fixtures.path("h264_rot90.mp4"))", "audio": "\(Fixtures.path("flac_3s.flac"))", "output": "out/b.mp4"},
              {"video": "\(Fixtures.path("text_file.mp4"))", "audio": "\(Fixtures.path("aac_7s.m4a"))", "output": "out/c.mp4"},
              {"input": "\(Fixtures.path("h264_rot270.mp4"))", "preview": {"sheet": "out/d.png"}}
            ]}
            """.utf8).write(to: URL(fileURLWithPath: folder.path("jobs.json")))
        let report = folder.path("report")
        let manifest = try BatchReportPage.addingPreviews(to: try BatchManifest.load(folder.path("jobs.json")), folder: report)
        let outcome = try await MuxEngine().runBatch(manifest)
        #expect(outcome.jobs.map(\.status) == [.done, .done, .failed, .done])
        let index = try await BatchReportPage.write(outcome, to: report)
        #expect(index == report + "/index.html")

        // Relative paths only, each to a file in the report's folder; no scripts, nothing from elsewhere.
        let html = try String(contentsOfFile: index, encoding: .utf8)
        #expect(!html.contains("<script") && !html.contains("://") && !html.contains("url("))
        let references = html.matches(of: /(?:src|href|poster)="([^"]*)"/).map { String($0.output.1) }
        #expect(references.count == 9)
        for reference in references {
            #expect(!reference.hasPrefix("/") && !reference.contains(".."), "\(reference)")
            #expect(FileManager.default.fileExists(atPath: report + "/" + reference), "\(reference)")
        }
        #expect(html.contains("text_file.mp4: not a media file"))
        #expect(html.contains("transcoded: flac -&gt; aac"))
        #expect(html.contains("rotation 0°") && html.contains("portrait video kept upright (copied; coded 320x240, turned 90°); orientation landscape re-frames it (encodes)"))

        let check = folder.path("check.html")
        try Data(Self.page.utf8).write(to: URL(fileURLWithPath: check))
        let lines = try Chromium.run(page: check).split(separator: "\n").map(String.init)
        #expect(lines.contains("jobs 4"), "\(lines)")
        let images = lines.filter { $0.hasPrefix("img ") }.map { $0.split(separator: " ") }
        let videos = lines.filter { $0.hasPrefix("video ") }.map { $0.split(separator: " ") }
        #expect(images.count == 3 && videos.count == 3, "\(lines)")
        for image in images {
            #expect(image.count == 4 && (Int(image[2]) ?? 0) > 0 && (Int(image[3]) ?? 0) > 0, "\(image)")
        }
        // Each clip's duration as the report states it, and its picture's size.
        let clips = Dictionary(uniqueKeysWithValues: outcome.jobs.compactMap { job in job.clip.map { ("media/job-\(job.index).preview.mp4", $0) } })
        for video in videos {
            #expect(video.count == 5, "\(video)")
            guard video.count == 5, let facts = clips[String(video[1])], let seconds = Double(video[2]) else { continue }
            #expect(abs(seconds - facts.duration) < 0.05, "\(video) against \(facts)")
            #expect(Int(video[3]) == facts.width && Int(video[4]) == facts.height, "\(video) against \(facts)")
        }
        // Each poster is the clip's picture, at its size.
        let posters = lines.filter { $0.hasPrefix("poster ") }.map { $0.split(separator: " ") }
        #expect(posters.count == 3, "\(lines)")
        for poster in posters {
            guard poster.count == 4, let facts = clips[String(poster[1]).replacingOccurrences(of: ".poster.jpg", with: ".preview.mp4")] else {
                Issue.record("\(poster)")
                continue
            }
            #expect(Int(poster[2]) == facts.width && Int(poster[3]) == facts.height, "\(poster) against \(facts)")
        }
    }
}
