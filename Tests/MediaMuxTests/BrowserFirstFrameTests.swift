import Foundation
import Testing
import TestSupport
@testable import MediaMux
@testable import MediaMuxCore
@testable import MediaMuxPreview

/// What a browser shows first: Chromium's first picture of each output is
/// its first picture of the source. Chromium plays H.264, not HEVC here.
@Suite(.tags(.browser), .skippedByTag, .offTheCooperativePool)
struct BrowserFirstFrameTests {
    /// For each file: the frame index its first picture shows (the binary
    /// columns of the frame-index fixtures) and a hash of its pixels.
    static let page = """
        <html><body><pre id=out></pre><script>
        const out = document.getElementById("out");
        const files = FILES;
        \(Chromium.pictureScript)
        for (const name of files) {
          const v = document.createElement("video");
          v.muted = true; v.preload = "auto";
          // The picture at 0 once a seek to 0 has finished decoding it: on a
          // loaded machine the first loadeddata can come before the frame is ready.
          v.onloadeddata = () => { v.onloadeddata = null; v.currentTime = 0; };
          v.onseeked = () => settledPicture(v, (shown) => {
            let index = 0;
            for (let k = 0; k < 8 && 15 * k + 7 < shown.canvas.width; k++) {
              if (shown.context.getImageData(15 * k + 7, Math.floor(shown.canvas.height / 2), 1, 1).data[0] > 128) index |= 1 << k;
            }
            out.textContent += name + " " + v.currentTime + " " + index + " " + shown.hash + "\\n";
          });
          v.onerror = () => { out.textContent += name + " error\\n"; };
          v.src = name;
        }
        </script></body></html>
        """

    struct Shown: Equatable {
        var time: String
        var index: Int
        var hash: String
    }

    static func firstPictures(_ files: [String], in folder: TemporaryFolder) throws -> [String: Shown] {
        let list = "[" + files.map { "\"\($0)\"" }.joined(separator: ",") + "]"
        let page = folder.path("page.html")
        try Data(Self.page.replacingOccurrences(of: "FILES", with: list).utf8).write(to: URL(fileURLWithPath: page))
        var shown: [String: Shown] = [:]
        for line in try Chromium.run(page: page).split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 4, let index = Int(fields[2]) else { continue }
            shown[fields[0]] = Shown(time: fields[1], index: index, hash: fields[3])
        }
        return shown
    }

    @Test func theFirstPictureIsTheSources() async throws {
        let shown = try await expectFirstPicturesMatch(["h264_frame_index_negative_cts.mp4", "h264_negative_start.mp4"])
        // Frame 0, in the source and in the copy.
        #expect(shown["source-h264_frame_index_negative_cts.mp4"]?.index == 0)
        #expect(shown["h264_frame_index_negative_cts.mp4.out.mp4"]?.index == 0)
    }

    /// An Apple movie with B-frames and negative composition offsets.
    @Test(Samples.required) func theFirstPictureOfARealFileIsTheSources() async throws {
        _ = try await expectFirstPicturesMatch([.sample("apple_h264_bframes_audio_starts_44ms_late.mov")])
    }

    /// Merges each source, then has Chromium show the source and its copy:
    /// the same picture at 0.
    private func expectFirstPicturesMatch(_ sources: [MediaFile]) async throws -> [String: Shown] {
        let folder = try TemporaryFolder()
        var files: [String] = []
        for source in sources {
            let name = (source.path as NSString).lastPathComponent
            let (copy, output) = ("source-" + name, name + ".out.mp4")
            try FileManager.default.copyItem(atPath: source.path, toPath: folder.path(copy))
            _ = try await MuxEngine().merge(
                video: source.path, audio: Fixtures.path("aac_7s.m4a"), output: folder.path(output),
                options: MergeOptions(orientation: .keep))
            files += [copy, output]
        }
        let shown = try Self.firstPictures(files, in: folder)
        #expect(shown.count == files.count, "Chromium showed \(shown)")
        for index in stride(from: 0, to: files.count, by: 2) {
            let source = try #require(shown[files[index]])
            let output = try #require(shown[files[index + 1]])
            #expect(output.time == "0" && source.time == "0")
            #expect(output.hash == source.hash, "\(files[index]): \(source), output: \(output)")
        }
        return shown
    }
}
