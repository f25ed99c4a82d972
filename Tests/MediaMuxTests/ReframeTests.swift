import Foundation
import Testing
import TestSupport
@testable import MediaMuxBase
@testable import MediaMux
@testable import MediaMuxCore
@testable import MediaMuxPreview

/// Video re-framed into a frame of the other shape, judged by the tests'
/// own reading and decoding: the frame's shape, every source frame once at
/// its own time, the picture upright where it belongs (by PSNR against the
/// source frame turned by the tests and scaled by libswscale's bicubic, so
/// a sideways or upside-down picture fails), and the sides. One at a time:
/// each encoder takes every core.
@Suite(.serialized, .tags(.heavy), .skippedByTag, .offTheCooperativePool)
struct ReframeTests {
    static let phone = Fixtures.path("phone_portrait_h264_aac.mp4")
    static let song = Fixtures.path("aac_7s.m4a")

    /// The turn a display matrix makes, as this test reads it: a mirror
    /// across the vertical axis first, then a clockwise rotation.
    static func turn(of track: MP4File.Track) -> (degrees: Int, mirrored: Bool) {
        let signs = [track.matrix[0], track.matrix[1], track.matrix[3], track.matrix[4]].map { $0.signum() }
        switch (signs[0], signs[1], signs[2], signs[3]) {
        case (0, 1, -1, 0): return (90, false)
        case (-1, 0, 0, -1): return (180, false)
        case (0, -1, 1, 0): return (270, false)
        case (-1, 0, 0, 1): return (0, true)
        case (1, 0, 0, -1): return (180, true)
        case (0, 1, 1, 0): return (270, true)
        case (0, -1, -1, 0): return (90, true)
        default: return (0, false)
        }
    }

    /// Where the picture goes in the frame: its whole, centred (pad, blur), or
    /// covering the frame (crop), both sides even, the offset even.
    static func placement(of picture: VideoSize, in frame: VideoSize, fit: Fit) -> (scaled: VideoSize, x: Int, y: Int) {
        let across = Double(frame.width) / Double(picture.width), down = Double(frame.height) / Double(picture.height)
        let scale = fit == .crop ? max(across, down) : min(across, down)
        func even(_ value: Double) -> Int { Int((value / 2).rounded()) * 2 }
        let scaled = VideoSize(
            width: max(fit == .crop ? frame.width : 2, even(Double(picture.width) * scale)),
            height: max(fit == .crop ? frame.height : 2, even(Double(picture.height) * scale)))
        return (scaled, abs(frame.width - scaled.width) / 4 * 2, abs(frame.height - scaled.height) / 4 * 2)
    }

    struct Outcome {
        var report: MergeReport
        var output: MP4File
        var meanPSNR: Double
        var frames: [TrackDecoder.Frame]
    }

    /// Merges `video` re-framed, and checks what every re-framing must hold.
    static func reframe(
        _ video: String, orientation: Orientation, fit: Fit = .blur, frameSize: VideoSize? = nil, folder: TemporaryFolder,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Outcome {
        let output = folder.path("out-\(fit.rawValue).mp4")
        let report = try await MuxEngine().merge(
            video: video, audio: song, output: output,
            options: MergeOptions(orientation: orientation, video: VideoOptions(fit: fit, frameSize: frameSize))).merge
        let sourceFile = try MP4File(path: video)
        let outputFile = try MP4File(path: output)
        let source = try #require(sourceFile.videoTracks.first)
        let written = try #require(outputFile.videoTracks.first)
        // The frame's shape, shown as it is coded.
        #expect(written.rotationClockwiseDegrees == 0, sourceLocation: sourceLocation)
        #expect(orientation == .landscape ? written.width > written.height : written.height > written.width, sourceLocation: sourceLocation)
        let encoding = try #require(report.video.reframing)
        #expect(Int(written.width) == encoding.frame.width && Int(written.height) == encoding.frame.height, sourceLocation: sourceLocation)

        // Every frame the source shows, once, at its time (the edits' starts aligned).
        let shown = try DecodedFrameTests.shown(source, movieTimescale: sourceFile.movieTimescale, keepingLuma: true)
        let made = try DecodedFrameTests.shown(written, movieTimescale: outputFile.movieTimescale, keepingLuma: true)
        #expect(made.count == shown.count, "\(made.count) frames shown of the source's \(shown.count)", sourceLocation: sourceLocation)
        func start(_ track: MP4File.Track) -> Int64 { track.presentedStart }
        let (sourceScale, outputScale) = (Int64(source.mediaTimescale), Int64(written.mediaTimescale))
        for (index, (was, now)) in zip(shown, made).enumerated() {
            #expect((now.time - start(written)) * sourceScale == (was.time - start(source)) * outputScale,
                    "frame \(index) is shown at another time", sourceLocation: sourceLocation)
        }

        // The picture upright in its place, against the source turned by this test.
        let (degrees, mirrored) = turn(of: source)
        let frame = VideoSize(width: Int(written.width), height: Int(written.height))
        var psnr: [Double] = []
        for (was, now) in zip(shown, made) {
            let upright = try #require(was.luma).turned(clockwise: degrees, mirrored: mirrored)
            let place = placement(of: VideoSize(width: upright.width, height: upright.height), in: frame, fit: fit)
            let reference = try upright.scaled(width: place.scaled.width, height: place.scaled.height)
            let picture = try #require(now.luma)
            switch fit {
            case .crop:
                psnr.append(picture.psnr(against: reference.cropped(x: place.x, y: place.y, width: frame.width, height: frame.height)))
            case .pad, .blur:
                let centre = picture.cropped(x: place.x, y: place.y, width: place.scaled.width, height: place.scaled.height)
                psnr.append(centre.psnr(against: reference))
            }
        }
        let mean = psnr.reduce(0, +) / Double(max(psnr.count, 1))
        return Outcome(report: report, output: outputFile, meanPSNR: mean, frames: made)
    }

    /// The band left of the picture, when there is one.
    static func leftSide(_ frame: TrackDecoder.Frame, picture: VideoSize, in size: VideoSize) throws -> (side: LumaPlane, centre: LumaPlane)? {
        let place = placement(of: picture, in: size, fit: .pad)
        guard place.x >= 8 else { return nil }
        let luma = try #require(frame.luma)
        return (luma.cropped(x: 0, y: 0, width: place.x, height: size.height), luma.cropped(x: place.x, y: 0, width: place.x, height: size.height))
    }

    /// A phone's portrait clip (coded 640x360, turned 90°) into a landscape
    /// frame of 640x360, each way of filling it.
    @Test(arguments: Fit.allCases)
    func aPortraitPhoneClipIntoALandscapeFrame(_ fit: Fit) async throws {
        let folder = try TemporaryFolder()
        let outcome = try await Self.reframe(Self.phone, orientation: .landscape, fit: fit, folder: folder)
        #expect(outcome.meanPSNR >= 40, "mean PSNR \(outcome.meanPSNR) dB")
        #expect(outcome.report.video.reframing?.frame == VideoSize(width: 640, height: 360))
        #expect(outcome.output.videoTracks.first?.sampleFormat == "avc1")
        #expect(outcome.report.rotation.reason == "portrait video re-framed upright into a landscape 640x360 frame (encoded)")
        guard fit != .crop else { return }
        let frame = try #require(outcome.frames.dropFirst(outcome.frames.count / 2).first)
        let (side, centre) = try #require(try Self.leftSide(frame, picture: VideoSize(width: 360, height: 640), in: VideoSize(width: 640, height: 360)))
        if fit == .pad {
            #expect(side.mean < 20, "the pad is not black: \(side.mean)")
        } else {
            // Blurred sides: not black, and not the picture beside them.
            #expect(side.mean > 30, "the blurred side is black: \(side.mean)")
            #expect(side.psnr(against: centre) < 25)
        }
        #expect(folder.contents == ["out-\(fit.rawValue).mp4"])
    }

    /// Landscape content (320x240) into a portrait frame, for vertical-video platforms.
    @Test func landscapeIntoAPortraitFrame() async throws {
        let folder = try TemporaryFolder()
        let outcome = try await Self.reframe(Fixtures.path("h264_bframes_aac.mp4"), orientation: .portrait, fit: .pad, folder: folder)
        #expect(outcome.report.video.reframing?.frame == VideoSize(width: 240, height: 426))
        #expect(outcome.meanPSNR >= 40, "mean PSNR \(outcome.meanPSNR) dB")
    }

    /// A fragmented MP4 whose composition offsets are negative (version-1
    /// `trun`s): FFmpeg's reader presents its frames two frames late, which
    /// cut the last two at the end; read from its fragments by MediaMux,
    /// every frame is re-framed, each at its time.
    @Test func aFragmentedSourceWithNegativeOffsetsKeepsEveryFrame() async throws {
        let folder = try TemporaryFolder()
        let outcome = try await Self.reframe(Fixtures.path("fmp4_negative_cts.mp4"), orientation: .portrait, fit: .pad, folder: folder)
        #expect(outcome.frames.count == 60, "\(outcome.frames.count) frames of the source's 60")
        #expect(outcome.meanPSNR >= 40, "mean PSNR \(outcome.meanPSNR) dB")
    }

    /// A variable frame rate stays variable: each frame keeps its own time.
    @Test func variableFrameRateStaysVariable() async throws {
        let folder = try TemporaryFolder()
        let outcome = try await Self.reframe(Fixtures.path("h264_vfr.mp4"), orientation: .portrait, fit: .crop, folder: folder)
        #expect(outcome.meanPSNR >= 40, "mean PSNR \(outcome.meanPSNR) dB")
        let track = try #require(outcome.output.videoTracks.first)
        #expect(Set(zip(track.decodeTimes, track.decodeTimes.dropFirst()).map { $1 - $0 }).count >= 3, "\(track.timeToSample)")
        // The end is exact: 2.5 s.
        #expect(abs(Double(outcome.output.movieDuration) / Double(outcome.output.movieTimescale) - 2.5) < 0.001)
        #expect(abs(track.presentedDuration(movieTimescale: outcome.output.movieTimescale) - 2.5) < 0.001)
    }

    /// A matrix that mirrors the picture is kept as it is by a copy, and
    /// undone in the pixels by a re-framing.
    @Test func aMirroringMatrix() async throws {
        let folder = try TemporaryFolder()
        let mirrored = try Self.mirroredFixture(in: folder)
        let copied = folder.path("copied.mp4")
        let report = try await MuxEngine().merge(video: mirrored, audio: Self.song, output: copied)
        #expect(report.merge.video.reframing == nil)
        #expect(try MP4File(path: copied).videoTracks.first?.matrix == MP4File(path: mirrored).videoTracks.first?.matrix)
        let outcome = try await Self.reframe(mirrored, orientation: .portrait, fit: .pad, folder: folder)
        #expect(outcome.report.video.reframing?.turn == .mirrored)
        #expect(outcome.meanPSNR >= 40, "mean PSNR \(outcome.meanPSNR) dB")
    }

    /// A preview clip turns its pictures by the rule a re-framing does: a
    /// mirroring matrix is undone in the pixels (the clip's own matrix is the
    /// identity). Before preview clips went through the core's encoder they
    /// read the rotation alone and kept the picture mirrored.
    @Test func aPreviewClipUndoesAMirror() async throws {
        let folder = try TemporaryFolder()
        let mirrored = try Self.mirroredFixture(in: folder)
        let source = try #require(try MP4File(path: mirrored).videoTracks.first)
        let clip = folder.path("clip.mp4")
        _ = try await MuxEngine().previews.previewClip(
            of: mirrored, output: clip, options: PreviewClipOptions(start: 0, duration: 0.5, height: Int(source.height)))
        let written = try #require(try MP4File(path: clip).videoTracks.first)
        #expect(written.matrix == [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x4000_0000])
        let was = try #require(try TrackDecoder.frames(of: source, keepingLuma: true).first?.luma)
        let now = try #require(try TrackDecoder.frames(of: written, keepingLuma: true).first?.luma)
        #expect(now.width == was.width && now.height == was.height)
        // The clip converts the 240-line source's BT.601 to BT.709, which
        // moves luma too: about 24 dB against the source mirrored, under 5 as coded.
        let undone = now.psnr(against: was.mirrored())
        let kept = now.psnr(against: was)
        #expect(undone >= 20 && undone > kept + 15, "against the source mirrored \(undone) dB, as coded \(kept) dB")
    }

    /// Frames, and a merge's thumbnails of a copy (which keeps the source's
    /// matrix), are turned by the same rule: the mirrored file's pictures are
    /// the plain file's, mirrored back pixel for pixel.
    @Test func framesAndThumbnailsUndoAMirror() async throws {
        let folder = try TemporaryFolder()
        let mirrored = try Self.mirroredFixture(in: folder)
        let plain = Fixtures.path("h264_bframes_aac.mp4")
        let options = FrameOptions(selection: .times([0, 1]), size: nil)
        let expected = try await PreviewTests.collect(plain, options).map { Self.mirroredPixels($0) }
        let shown = try await PreviewTests.collect(mirrored, options).map(\.pixels)
        #expect(expected.count == 2 && shown == expected)
        #expect(try await PreviewTests.collect(plain, options).map(\.pixels) != shown, "a picture that is its own mirror")

        let thumbnails = Locked<[PreviewFrame]>([])
        let job = MergeJob(video: mirrored, audio: Self.song, output: folder.path("copied.mp4"), thumbnails: ThumbnailOptions(size: 320, every: 1))
        _ = try await MuxEngine().merge(job, thumbnail: { frame in thumbnails.withLock { $0.append(frame) } })
        let first = try #require(thumbnails.withLock { $0 }.first)
        #expect(first.time == 0 && first.width == 320 && first.height == 240)
        #expect(first.pixels == expected.first)
    }

    /// An RGB(A) picture's pixels mirrored left to right.
    static func mirroredPixels(_ frame: PreviewFrame) -> [UInt8] {
        let size = frame.layout.bytesPerPixel
        var out = frame.pixels
        for y in 0..<frame.height {
            for x in 0..<frame.width {
                let to = (y * frame.width + x) * size, from = (y * frame.width + frame.width - 1 - x) * size
                for byte in 0..<size { out[to + byte] = frame.pixels[from + byte] }
            }
        }
        return out
    }

    /// The B-frame fixture (320x240) with a matrix that mirrors it left to right.
    static func mirroredFixture(in folder: TemporaryFolder) throws -> String {
        let mirrored = folder.path("mirrored.mp4")
        try FileManager.default.copyItem(atPath: Fixtures.path("h264_bframes_aac.mp4"), toPath: mirrored)
        let one: Int32 = 0x10000
        try patchMatrix(of: mirrored, to: [-one, 0, 0, 0, one, 0, 320 * one, 0, 0x4000_0000])
        return mirrored
    }

    /// Writes the nine matrix values into the first video track's tkhd (version 0).
    static func patchMatrix(of path: String, to values: [Int32]) throws {
        let file = try MP4File(path: path)
        let tkhd = try #require(file.videoTracks.first?.box.children.first { $0.type == "tkhd" })
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(tkhd.box.payloadOffset + 40))
        handle.write(Data(values.flatMap { withUnsafeBytes(of: $0.bigEndian, Array.init) }))
    }

    /// 10-bit PQ HEVC with HDR10's boxes, into a portrait frame: still
    /// 10-bit HEVC (hvc1), with colr, mdcv and clli byte for byte.
    @Test func hdr10StaysHDR10() async throws {
        let folder = try TemporaryFolder()
        let video = Fixtures.path("hevc_hdr10_entry_boxes.mp4")
        let outcome = try await Self.reframe(video, orientation: .portrait, fit: .pad, folder: folder)
        #expect(outcome.meanPSNR >= 40, "mean PSNR \(outcome.meanPSNR) dB")
        let written = try #require(outcome.output.videoTracks.first)
        #expect(written.sampleFormat == "hvc1")
        let hvcC = try #require(written.sampleEntryBoxes.first { $0.type == "hvcC" })
        #expect(hvcC.bytes.count > 25 && hvcC.bytes[8 + 17] & 0x07 == 2, "10 bits a sample")
        let source = try #require(try MP4File(path: video).videoTracks.first)
        for type in ["colr", "mdcv", "clli", "amve"] {
            let box = try #require(source.sampleEntryBoxes.first { $0.type == type })
            #expect(written.sampleEntryBoxes.filter { $0.type == type }.map(\.bytes) == [box.bytes], "\(type)")
        }
        // Nothing that describes the source's coding: no clap (its aperture), no unknown box.
        #expect(!written.sampleEntryBoxes.contains { ["clap", "zzzz"].contains($0.type) })
    }

    /// A preview clip of the same file is 8-bit BT.709 H.264: it carries
    /// none of the source's colour boxes, which would call its pictures PQ
    /// with HDR10's mastering display. Its own colr, if any, says BT.709.
    @Test func aPreviewClipOfHDR10LeavesItsColourBoxesBehind() async throws {
        let folder = try TemporaryFolder()
        let clip = folder.path("clip.mp4")
        _ = try await MuxEngine().previews.previewClip(
            of: Fixtures.path("hevc_hdr10_entry_boxes.mp4"), output: clip, options: PreviewClipOptions(start: 0, duration: 1, height: 120))
        let written = try #require(try MP4File(path: clip).videoTracks.first)
        #expect(written.sampleFormat == "avc1")
        let types = written.sampleEntryBoxes.map(\.type)
        #expect(!types.contains { ["mdcv", "clli", "amve"].contains($0) }, "\(types)")
        for colr in written.sampleEntryBoxes where colr.type == "colr" {
            // nclx or nclc: primaries, transfer, matrix all 1 (BT.709).
            #expect(Array(colr.bytes[12..<18]) == [0, 1, 0, 1, 0, 1], "\(colr.bytes)")
        }
    }

    /// Real portrait phone clips (10-bit HLG HEVC): upright in a landscape
    /// frame, still 10-bit HLG, at least 36 dB (their sensor noise costs bits).
    /// Both carry Dolby Vision 8.4, which is dropped, and the summary says so.
    @Test(Samples.required, arguments: ["iphone_hevc_rot90_aac_mebx_0.3s.mp4", "iphone14pro_hevc_dolbyvision84_hlg_rot90_0.1s.mov"])
    func realPhoneClipsIntoALandscapeFrame(_ name: String) async throws {
        let folder = try TemporaryFolder()
        let outcome = try await Self.reframe(Samples.path(name), orientation: .landscape, fit: .blur, folder: folder)
        #expect(outcome.meanPSNR >= 36, "mean PSNR \(outcome.meanPSNR) dB")
        let encoding = try #require(outcome.report.video.reframing)
        #expect(encoding.codec == "hevc" && encoding.bitDepth == 10)
        let written = try #require(outcome.output.videoTracks.first)
        #expect(written.sampleFormat == "hvc1")
        #expect(!written.sampleEntryBoxes.contains { ["dvvC", "dvcC"].contains($0.type) })
        // HLG with BT.2020, as the source's colr says (nclc: primaries 9, transfer 18, matrix 9).
        let colr = try #require(written.sampleEntryBoxes.first { $0.type == "colr" })
        #expect(Array(colr.bytes[8...]).starts(with: Array("nclc".utf8) + [0, 9, 0, 18, 0, 9]), "\(colr.bytes)")
        let notes = encoding.notes.joined()
        #expect(notes.contains("Dolby Vision profile 8.4 is dropped (HLG kept)"), "\(notes)")
    }

    /// GStreamer, which shares nothing with FFmpeg, decodes the re-framed
    /// HDR10 output as 10-bit, at the frame's size, with the source's colour:
    /// PQ BT.2020 as it reads the source, and the mastering display and light
    /// levels of the source's mdcv and clli. How it writes the mastering
    /// display differs by version: GStreamer 1.22 (Debian 12) reads x265's SEI
    /// and lists R, G, B, the white point and the luminance in 1/10000 cd/m²
    /// (35400:14600:8500:39850:6550:2300:15635:16450:10000000:50); 1.26
    /// (Debian 13) reads the mdcv box, lists G, B, R and gives the luminance
    /// as 152:0 (the box's 10000000 and 50 over 65536). The primaries and white
    /// point are compared, whatever the order.
    @Test(.tags(.gstreamer), .skippedByTag) func gstreamerDecodesTheHDROutputWithItsColour() async throws {
        let folder = try TemporaryFolder()
        let source = Fixtures.path("hevc_hdr10_entry_boxes.mp4")
        let outcome = try await Self.reframe(source, orientation: .portrait, fit: .blur, folder: folder)
        func fields(_ caps: String) -> [String: String] {
            Dictionary(caps.split(separator: ", ").compactMap { field in
                let parts = field.split(separator: "=", maxSplits: 1)
                return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
            }, uniquingKeysWith: { first, _ in first })
        }
        let written = fields(try GStreamer.decodedCaps(of: outcome.output.path))
        let read = fields(try GStreamer.decodedCaps(of: source))
        #expect(written["format"] == "(string)I420_10LE" && written["width"] == "(int)64" && written["height"] == "(int)114", "\(written)")
        #expect(written["colorimetry"] == "(string)bt2100-pq" && written["colorimetry"] == read["colorimetry"], "\(written), the source's \(read)")
        #expect(written["content-light-level"] == "(string)1000:400", "\(written)")
        let display = (written["mastering-display-info"] ?? "").replacingOccurrences(of: "(string)", with: "").split(separator: ":").compactMap { Int($0) }
        #expect(display.count == 10 && display.prefix(6).sorted() == [2300, 6550, 8500, 14600, 35400, 39850] && Array(display[6..<8]) == [15635, 16450],
                "\(written["mastering-display-info"] ?? "no mastering display")")
    }

    /// Chromium shows the H.264 output landscape, at the frame's size and the clip's length.
    @Test(.tags(.browser), .skippedByTag) func chromiumShowsItLandscape() async throws {
        let folder = try TemporaryFolder()
        _ = try await Self.reframe(Self.phone, orientation: .landscape, fit: .blur, folder: folder)
        let page = folder.path("page.html")
        try Data("""
            <html><body><pre id=out></pre><script>
            const v = document.createElement("video");
            v.muted = true; v.preload = "auto";
            v.onloadeddata = () => { document.getElementById("out").textContent = v.videoWidth + " " + v.videoHeight + " " + v.duration; };
            v.onerror = () => { document.getElementById("out").textContent = "error"; };
            v.src = "out-blur.mp4";
            </script></body></html>
            """.utf8).write(to: URL(fileURLWithPath: page))
        let shown = try Chromium.run(page: page).split(separator: " ").map(String.init)
        #expect(shown.count == 3 && shown[0] == "640" && shown[1] == "360", "\(shown)")
        #expect(abs((Double(shown.last ?? "") ?? 0) - 3.0) < 0.001, "\(shown)")
    }

    /// A frame the decoder cannot read (its NAL unit's length says more than
    /// the sample holds) is skipped, counted and reported; the rest are encoded.
    @Test func aDamagedFrameIsSkippedAndCounted() async throws {
        let folder = try TemporaryFolder()
        let damaged = try Fixtures.withADamagedLastFrame(in: folder)
        let track = try #require(try MP4File(path: damaged).videoTracks.first)
        let report = try await MuxEngine().merge(
            video: damaged, audio: Self.song, output: folder.path("o.mp4"), options: MergeOptions(orientation: .portrait)).merge
        #expect(report.video.damagedPackets == 1)
        #expect(report.warnings.contains("\(damaged): 1 damaged video frame could not be decoded and was left out"), "\(report.warnings)")
        #expect(try MP4File(path: folder.path("o.mp4")).videoTracks.first?.sampleCount == track.sampleCount - 1)
    }

    /// Dolby Vision profile 5 (IPT) cannot be re-framed: refused, nothing written.
    @Test func dolbyVisionProfile5IsRefused() async throws {
        let folder = try TemporaryFolder()
        let video = Fixtures.path("hevc_dv_profile5.mp4")
        await #expect {
            try await MuxEngine().merge(video: video, audio: Self.song, output: folder.path("o.mp4"), options: MergeOptions(orientation: .portrait))
        } throws: { error in
            (error as? MediaMuxError)?.description.contains("the default orientation (keep: upright, copied) keeps it whole") == true
        }
        #expect(folder.contents.isEmpty)
    }

    /// Progress counts frames: encoded against those planned.
    @Test func progressCountsFrames() async throws {
        let folder = try TemporaryFolder()
        let seen = Locked<[MergeProgress]>([])
        _ = try await MuxEngine().merge(
            video: Self.phone, audio: Self.song, output: folder.path("o.mp4"), options: MergeOptions(orientation: .landscape),
            progress: { progress in if case .merging(let step) = progress { seen.withLock { $0.append(step) } } })
        let reports = seen.withLock { $0 }
        #expect(reports.allSatisfy { $0.framesPlanned == 90 })
        #expect(reports.last?.framesEncoded == 90)
        let counts = reports.compactMap(\.framesEncoded)
        #expect(counts == counts.sorted())
    }

    /// Cancelled while encoding (from the progress handler, on the merge's
    /// own thread): stopped within a frame or two, nothing left behind.
    @Test func cancellationWhileEncodingLeavesNothing() async throws {
        let folder = try TemporaryFolder()
        let output = folder.path("o.mp4")
        let state = Locked<(task: Task<MuxReport, any Error>?, asked: Bool, framesThen: Int?)>((nil, false, nil))
        let task = Task {
            try await MuxEngine().merge(
                video: Self.phone, audio: Self.song, output: output, options: MergeOptions(orientation: .landscape),
                progress: { progress in
                    guard case .merging(let step) = progress, let frames = step.framesEncoded, frames > 0 else { return }
                    let task = state.withLock { state -> Task<MuxReport, any Error>? in
                        guard !state.asked else { return nil }
                        state.asked = true
                        state.framesThen = frames
                        return state.task
                    }
                    task?.cancel()
                })
        }
        if state.withLock({ state in state.task = task; return state.asked }) { task.cancel() }
        await #expect(throws: MediaMuxError.cancelled(path: output)) { _ = try await task.value }
        #expect(try #require(state.withLock { $0.framesThen }) < 90)
        #expect(folder.contents.isEmpty, "left behind: \(folder.contents)")
    }
}
