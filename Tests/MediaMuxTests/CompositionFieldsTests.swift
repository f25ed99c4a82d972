import Foundation
import MediaMuxBase
import Testing
@testable import MediaMux
@testable import MediaMuxCore

/// Compositions as people write them: a clip typed `FILE@IN-OUT`, a time in
/// seconds or `h:mm:ss.fff`, a batch manifest's composition job, and a
/// timeline file, each problem named by the file and the field.
struct CompositionFieldsTests {
    @Test(arguments: [
        ("12.5", 12.5), ("0:03", 3), ("1:02.5", 62.5), ("0:01:02.500", 62.5), ("1:00:00", 3600), ("0", 0),
    ])
    func timecodes(_ text: String, _ seconds: Double) throws {
        let time = try #require(MediaTime(timecode: text))
        #expect(abs(time.seconds - seconds) < 1e-6)
    }

    @Test(arguments: ["", "-1", "1:60", "1:2:3:4", "a", "1e3", "1.5.2", "0:-1", ":5"])
    func notTimecodes(_ text: String) {
        #expect(MediaTime(timecode: text) == nil, "\(text)")
    }

    @Test func clipsAsTyped() throws {
        let cases: [(String, Composition.Clip)] = [
            ("a.mp4", .init("a.mp4")),
            ("a.mp4@1-3", .init("a.mp4", from: MediaTime(seconds: 1), to: MediaTime(seconds: 3))),
            ("dir/a b.mp4@0:01.5-", .init("dir/a b.mp4", from: MediaTime(seconds: 1.5))),
            ("a.mp4@-1:00", .init("a.mp4", to: MediaTime(seconds: 60))),
            ("me@home.mp4", .init("me@home.mp4")),
            ("x@y@2-4", .init("x@y", from: MediaTime(seconds: 2), to: MediaTime(seconds: 4))),
        ]
        for (text, clip) in cases { #expect(Composition.Clip(parsing: text) == clip, "\(text)") }
        for text in ["", "a.mp4@1:75-2", "a.mp4@-", "@1-2", "a.mp4@1-2-3"] { #expect(Composition.Clip(parsing: text) == nil, "\(text)") }
    }

    @Test func aManifestsCompositionJob() throws {
        let manifest = try BatchManifest.parse(Data("""
            {"jobs": [{"clips": ["a.mp4@1-3", {"file": "/abs/b.mp4", "from": "0:02", "to": 4.5}], "soundtrack": "https://example.com/s.m4a",
              "cut": "keyframe", "output": "out/c.mp4", "end": "video", "fadeOut": 2, "preview": {"sheet": true}}]}
            """.utf8), path: "/shared/batch/jobs.json")
        let job = try #require(manifest.jobs.first)
        guard case .compose(let composition, let output) = job.work else {
            Issue.record("not a composition: \(job.work)")
            return
        }
        #expect(output == "/shared/batch/out/c.mp4")
        #expect(composition.clips == [
            .init("/shared/batch/a.mp4", from: MediaTime(seconds: 1), to: MediaTime(seconds: 3)),
            .init("/abs/b.mp4", from: MediaTime(seconds: 2), to: MediaTime(seconds: 4.5)),
        ])
        #expect(composition.soundtrack == "https://example.com/s.m4a")
        #expect(composition.cut == .keyframe)
        #expect(composition.options.end == .video)
        #expect(composition.options.audio.fadeOut == MediaTime(seconds: 2))
        #expect(job.sheet?.path == "/shared/batch/out/c.sheet.png")
        #expect(job.writes == ["/shared/batch/out/c.mp4", "/shared/batch/out/c.sheet.png"])
    }

    @Test(arguments: [
        (#"{"jobs": [{"clips": [], "output": "o.mp4"}]}"#, "jobs.json: jobs[0].clips: must be a list of clips"),
        (#"{"jobs": [{"clips": ["a.mp4@1:75-2"], "output": "o.mp4"}]}"#, "jobs.json: jobs[0].clips[0]: must be \"FILE\" or \"FILE@IN-OUT\""),
        (#"{"jobs": [{"clips": [{"file": "a.mp4", "from": "soon"}], "output": "o.mp4"}]}"#, "jobs.json: jobs[0].clips[0].from: must be a time"),
        (#"{"jobs": [{"clips": [{"file": "a.mp4", "start": 1}], "output": "o.mp4"}]}"#, "jobs.json: jobs[0].clips[0]: unknown field \"start\""),
        (#"{"jobs": [{"clips": ["a.mp4"], "video": "v.mp4", "output": "o.mp4"}]}"#, "jobs.json: jobs[0].video: a job with \"clips\" is a composition"),
        (#"{"jobs": [{"clips": ["a.mp4"]}]}"#, "jobs.json: jobs[0].output: is missing"),
        (#"{"jobs": [{"clips": ["a.mp4"], "output": "o.mp4", "cut": "nearest"}]}"#, "jobs.json: jobs[0].cut: must be one of \"exact\", \"keyframe\""),
    ])
    func compositionProblemsNameTheJobAndTheField(_ text: String, _ message: String) {
        do {
            _ = try BatchManifest.parse(Data(text.utf8), path: "jobs.json")
            Issue.record("no error for \(text)")
        } catch {
            #expect(error.kind == .option)
            #expect(error.description.contains(message), "\(error.description)")
        }
    }

    @Test func aTimelineIsOneJobFromItsFolder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("timeline-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let timeline = folder.appendingPathComponent("trip.json").path
        try Data(#"{"output": "trip.mp4", "soundtrack": "song.m4a", "clips": ["a.mp4@2-7", "b.mp4"], "loopAudio": true, "end": "video"}"#.utf8)
            .write(to: URL(fileURLWithPath: timeline))
        let job = try CompositionJob.load(timeline: timeline)
        #expect(job.output.name == folder.path + "/trip.mp4")
        #expect(job.composition.clips.map(\.path) == [folder.path + "/a.mp4", folder.path + "/b.mp4"])
        #expect(job.composition.soundtrack == folder.path + "/song.m4a")
        #expect(job.composition.options.audio.loops)

        try Data(#"{"output": "trip.mp4", "clips": ["a.mp4"], "preview": {"sheet": true}}"#.utf8).write(to: URL(fileURLWithPath: timeline))
        let error = try #require(throws: MediaMuxError.self) { try CompositionJob.load(timeline: timeline) }
        #expect(error.description == "\(timeline): unknown field \"preview\"", "\(error)")
    }
}
