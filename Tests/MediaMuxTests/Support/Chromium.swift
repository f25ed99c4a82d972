import Foundation

/// Headless Chromium, for what a browser makes of a file. `make test`
/// installs it (Debian's `chromium`).
enum Chromium {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static var executable: String? {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/snap/bin/chromium", "/usr/bin/google-chrome"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// A page script function: the picture a video element shows, drawn on a
    /// canvas (returned, with its 2D context) and hashed (FNV-1a over its RGBA bytes, in hex).
    static let pictureScript = """
        function picture(v) {
          const c = document.createElement("canvas"); c.width = v.videoWidth; c.height = v.videoHeight;
          const g = c.getContext("2d"); g.drawImage(v, 0, 0);
          const d = g.getImageData(0, 0, c.width, c.height).data;
          let h = 0x811c9dc5;
          for (let i = 0; i < d.length; i++) { h ^= d[i]; h = Math.imul(h, 0x01000193) >>> 0; }
          return { canvas: c, context: g, hash: h.toString(16) };
        }
        // The picture once two looks 50 ms apart agree (at most 10 looks):
        // on a loaded machine the seeked event can come before the frame
        // sought is the one drawn.
        function settledPicture(v, done) {
          let last = null, looks = 0;
          const look = () => {
            const p = picture(v);
            if (p.hash === last || ++looks >= 10) { done(p); } else { last = p.hash; setTimeout(look, 50); }
          };
          look();
        }
        """

    /// Loads `page` (a file) and returns the text of its `<pre id=out>` once
    /// the page's scripts have had `budget` milliseconds of virtual time.
    static func run(page: String, budget: Int = 10_000) throws -> String {
        try run(url: URL(fileURLWithPath: page).absoluteString, budget: budget)
    }

    /// Loads `url` (a page from the test server, or a file URL) as `run(page:budget:)` does.
    static func run(url: String, budget: Int = 10_000) throws -> String {
        guard let executable else { throw Failure(description: "Chromium is not installed (make test installs it)") }
        let arguments = [
            "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files", "--mute-audio",
            "--autoplay-policy=no-user-gesture-required", "--virtual-time-budget=\(budget)", "--dump-dom", url,
        ]
        let data = try ExternalTool.run(executable, arguments, keeping: .output, seconds: 90).text
        let dom = String(decoding: data, as: UTF8.self)
        guard let start = dom.range(of: "<pre id=\"out\">"), let end = dom.range(of: "</pre>", range: start.upperBound..<dom.endIndex) else {
            throw Failure(description: "no result in Chromium's page: \(dom.prefix(300))")
        }
        return String(dom[start.upperBound..<end.lowerBound])
    }
}
