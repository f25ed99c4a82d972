import Foundation
import Testing
@testable import MediaMux

/// A batch manifest is read whole and checked before any work: jobs with
/// their options and previews, paths from the manifest's folder, and every
/// problem naming the manifest, the job and the field.
struct BatchManifestTests {
    func parse(_ text: String, path: String = "/shared/batch/jobs.json") throws(MediaMuxError) -> BatchManifest {
        try BatchManifest.parse(Data(text.utf8), path: path)
    }

    @Test func mergeAndPreviewJobs() throws {
        let manifest = try parse("""
            {"jobs": [
              {"video": "clips/a.mp4", "audio": "https://example.com/song.m4a", "output": "out/a.mp4",
               "end": "video", "loopAudio": true, "audioOffset": -1.5, "loudness": -16, "audioBitrate": "128k",
               "keepOriginalAudio": true, "orientation": "keep", "preview": {"sheet": true, "clip": true}},
              {"video": "/abs/v.mov", "audio": "song.wav", "output": "out/b.mp4", "mixOriginal": -12, "fadeIn": 2, "layout": "fragmented",
               "orientation": "landscape", "fit": "pad", "size": "1280x720", "videoQuality": 21, "videoPreset": "medium",
               "preview": {"sheet": {"path": "sheets/b.png", "frames": 6, "columns": 3, "size": 200}, "clip": {"seconds": 4, "height": 240}}},
              {"input": "clips/c.mp4", "preview": {"sheet": "c.png"}}
            ]}
            """)
        #expect(manifest.jobs.count == 3)
        let first = manifest.jobs[0]
        guard case .merge(let video, let audio, let output, let options) = first.work else {
            Issue.record("not a merge: \(first.work)")
            return
        }
        #expect(video == "/shared/batch/clips/a.mp4" && audio == "https://example.com/song.m4a" && output == "/shared/batch/out/a.mp4")
        #expect(options.end == .video && options.audio.loops && options.audio.offset == -1.5)
        #expect(options.audio.loudness == -16 && options.audio.bitRate == 128_000 && options.originalAudio == .kept)
        #expect(options.orientation == .keep && options.faststart && options.keepsMetadata && options.layout == .movie)
        #expect(first.sheet == BatchJob.Sheet(path: "/shared/batch/out/a.sheet.png", options: ContactSheetOptions()))
        #expect(first.clip == BatchJob.Clip(path: "/shared/batch/out/a.preview.mp4", options: PreviewClipOptions()))

        let second = manifest.jobs[1]
        guard case .merge(let video2, let audio2, _, let options2) = second.work else {
            Issue.record("not a merge: \(second.work)")
            return
        }
        #expect(video2 == "/abs/v.mov" && audio2 == "/shared/batch/song.wav")
        #expect(options2.originalAudio == .mixed(level: -12) && options2.audio.fadeIn == 2)
        #expect(options2.orientation == .landscape && options2.layout == .fragmented)
        #expect(options2.video == VideoOptions(fit: .pad, frameSize: VideoSize(width: 1280, height: 720), quality: 21, preset: "medium"))
        // Unsaid, the library's defaults.
        #expect(options.video == VideoOptions() && MergeOptions().orientation == .keep)
        #expect(second.sheet == BatchJob.Sheet(path: "/shared/batch/sheets/b.png", options: ContactSheetOptions(frames: 6, columns: 3, tileSize: 200)))
        var clipOptions = PreviewClipOptions()
        clipOptions.duration = 4
        clipOptions.height = 240
        #expect(second.clip == BatchJob.Clip(path: "/shared/batch/out/b.preview.mp4", options: clipOptions))

        let third = manifest.jobs[2]
        #expect(third.work == .preview(input: "/shared/batch/clips/c.mp4"))
        #expect(third.sheet?.path == "/shared/batch/c.png" && third.clip == nil)
        #expect(manifest.jobs.map(\.index) == [0, 1, 2])
    }

    @Test(arguments: [
        ("not json", "jobs.json: is not JSON"),
        ("[]", "jobs.json: a manifest is an object with a \"jobs\" list"),
        (#"{"jobs": [], "extra": 1}"#, "jobs.json: unknown field \"extra\""),
        (#"{"jobs": [3]}"#, "jobs.json: jobs[0]: a job is an object, not a number"),
        (#"{"jobs": [{"audio": "a.m4a", "output": "o.mp4"}]}"#, "jobs.json: jobs[0].video: is missing"),
        (#"{"jobs": [{"video": "v.mp4", "audio": "a.m4a", "ouput": "o.mp4"}]}"#, "jobs.json: jobs[0].output: is missing"),
        (#"{"jobs": [{"video": "v.mp4", "audio": "a.m4a", "output": "o.mp4", "loudnes": -16}]}"#,
         "jobs.json: jobs[0]: unknown field \"loudnes\"; did you mean \"loudness\"?"),
        (#"{"jobs": [{"video": "v.mp4", "audio": "a.m4a", "output": "o.mp4", "audioOffset": "soon"}]}"#,
         "jobs.json: jobs[0].audioOffset: must be a number of seconds"),
        (#"{"jobs": [{"video": "v.mp4", "audio": "a.m4a", "output": "o.mp4", "end": "longest"}]}"#,
         "jobs.json: jobs[0].end: must be one of \"audio\", \"shortest\", \"video\""),
        (#"{"jobs": [{"video": "v.mp4", "audio": "a.m4a", "output": "o.mp4", "rotate": 45}]}"#,
         "jobs.json: jobs[0].rotate: must be 0, 90, 180 or 270, not 45"),
        (#"{"jobs": [{"video": "v.mp4", "audio": "a.m4a", "output": "o.mp4", "fit": "stretch"}]}"#,
         "jobs.json: jobs[0].fit: must be one of \"blur\", \"crop\", \"pad\""),
        (#"{"jobs": [{"video": "v.mp4", "audio": "a.m4a", "output": "o.mp4", "size": "wide"}]}"#,
         "jobs.json: jobs[0].size: must be a size such as \"1920x1080\", not \"wide\""),
        (#"{"jobs": [{"video": "v.mp4", "audio": "a.m4a", "output": "o.mp4", "orientation": "sideways"}]}"#,
         "jobs.json: jobs[0].orientation: must be one of \"keep\", \"landscape\", \"portrait\""),
        (#"{"jobs": [{"video": "v.mp4", "audio": "a.m4a", "output": "o.mp4", "fadeOut": -1}]}"#,
         "jobs.json: jobs[0].fadeOut: must be a number of seconds, 0 or more"),
        (#"{"jobs": [{"video": "v.mp4", "audio": 7, "output": "o.mp4"}]}"#,
         "jobs.json: jobs[0].audio: must be a file path or an http(s) URL, not a number"),
        (#"{"jobs": [{"input": "v.mp4", "output": "o.mp4"}]}"#,
         "jobs.json: jobs[0].output: a job with \"input\" makes previews only"),
        (#"{"jobs": [{"input": "v.mp4", "preview": {"sheet": {"frames": 0}}}]}"#,
         "jobs.json: jobs[0].preview.sheet.frames: must be a whole number of at least 1"),
        (#"{"jobs": [{"input": "v.mp4", "preview": {"gif": true}}]}"#,
         "jobs.json: jobs[0].preview: unknown field \"gif\""),
        (#"{"jobs": [{"video": "v.mp4", "audio": "a.m4a", "output": "o.mp4"}, {"video": "w.mp4", "audio": "a.m4a", "output": "o.mp4"}]}"#,
         "jobs.json: jobs[1] writes o.mp4, as jobs[0] does"),
        (#"{"jobs": [{"video": "v.mp4", "audio": "a.m4a", "output": "o.mp4", "keepOriginalAudio": true, "mixOriginal": -6}]}"#,
         "jobs.json: jobs[0].mixOriginal: goes with \"keepOriginalAudio\": false"),
    ])
    func problemsNameTheJobAndTheField(_ text: String, _ message: String) {
        do {
            _ = try parse(text, path: "jobs.json")
            Issue.record("no error for \(text)")
        } catch {
            #expect(error.kind == .option)
            #expect(error.description.contains(message), "\(error.description)")
        }
    }

    @Test func aMissingManifestIsNamed() {
        #expect(throws: MediaMuxError.fileNotFound(path: "/nonexistent/jobs.json")) {
            try BatchManifest.load("/nonexistent/jobs.json")
        }
    }
}

/// Shards split a manifest's jobs so that N machines together do each exactly once.
struct BatchShardTests {
    static func manifest(jobs count: Int) throws -> BatchManifest {
        let jobs = (0..<count).map { #"{"video": "v\#($0).mp4", "audio": "a.m4a", "output": "o\#($0).mp4"}"# }
        return try BatchManifest.parse(Data(#"{"jobs": [\#(jobs.joined(separator: ","))]}"#.utf8), path: "jobs.json")
    }

    @Test(arguments: [(1, 1), (7, 3), (10, 4), (3, 5)])
    func everyJobOnceAcrossTheShards(_ jobs: Int, _ shards: Int) throws {
        let manifest = try Self.manifest(jobs: jobs)
        let taken = try (0..<shards).flatMap { try BatchShard(index: $0, count: shards).jobs(of: manifest).map(\.index) }
        #expect(taken.sorted() == Array(0..<jobs))
        let sizes = try (0..<shards).map { try BatchShard(index: $0, count: shards).jobs(of: manifest).count }
        #expect((sizes.max() ?? 0) - (sizes.min() ?? 0) <= 1)
    }

    @Test func parsing() throws {
        #expect(try BatchShard(parsing: "2/5") == BatchShard(index: 2, count: 5))
        #expect(BatchShard.whole.jobs(of: try Self.manifest(jobs: 4)).count == 4)
        for text in ["5/5", "-1/3", "1", "a/b", "1/0", "0/3/1"] {
            #expect(throws: MediaMuxError.self) { try BatchShard(parsing: text) }
        }
    }
}
