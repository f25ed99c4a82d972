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

    /// Loads `page` (a file) and returns the text of its `<pre id=out>` once
    /// the page's scripts have had `budget` milliseconds of virtual time.
    static func run(page: String, budget: Int = 10_000) throws -> String {
        guard let executable else { throw Failure(description: "Chromium is not installed (make test installs it)") }
        let arguments = [
            "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files", "--mute-audio",
            "--virtual-time-budget=\(budget)", "--dump-dom", URL(fileURLWithPath: page).absoluteString,
        ]
        let data = try ExternalTool.run(executable, arguments, keeping: .output, seconds: 90).text
        let dom = String(decoding: data, as: UTF8.self)
        guard let start = dom.range(of: "<pre id=\"out\">"), let end = dom.range(of: "</pre>", range: start.upperBound..<dom.endIndex) else {
            throw Failure(description: "no result in Chromium's page: \(dom.prefix(300))")
        }
        return String(dom[start.upperBound..<end.lowerBound])
    }
}
