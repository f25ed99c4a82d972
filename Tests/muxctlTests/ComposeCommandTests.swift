import Foundation
import Testing
import TestSupport

@Suite("compose")
struct ComposeCommandTests {
    @Test("clips cut at keyframes: the summary and --json say where each cut landed")
    func keyframeCuts() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("three.mp4")
        let source = MuxCtl.fixture("h264_bframes_aac.mp4")
        let result = try await MuxCtl.run([
            "compose", output, "--clip", "\(source)@0.5-2.5", "--clip", "\(source)@0:01-0:03.000", "--clip", "\(source)@3-", "--cut", "keyframe",
        ])
        #expect(result.exited && result.status == 0, "\(result)")
        #expect(result.stdout.contains("wrote \(output): 6.000 s"), "\(result)")
        #expect(result.stdout.contains("clip 1 at 0.000 s: \(source) from 0.000 to 3.000 s, copied; start moved back to the keyframe at 0.000 s (asked 0.500 s); end moved to the keyframe at 3.000 s (asked 2.500 s)"), "\(result)")
        #expect(result.stdout.contains("clip 2 at 3.000 s: \(source) from 1.000 to 3.000 s, copied"), "\(result)")
        #expect(result.stdout.contains("clip 3 at 5.000 s: \(source) from 3.000 to 4.000 s, copied"), "\(result)")
        #expect(scratch.outputFolder == ["three.mp4"])

        let json = try await MuxCtl.run([
            "compose", output, "--clip", "\(source)@0.5-2.5", "--clip", "\(source)@1-3", "--cut", "keyframe", "--json", "-y",
        ])
        #expect(json.exited && json.status == 0, "\(json)")
        let report = try #require(jsonObject(json.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(json)")
        let clips = try #require(report["clips"] as? [[String: Any]], "\(report)")
        #expect(clips.count == 2)
        #expect(clips.compactMap { number($0["from"]) } == [0, 1])
        #expect(clips.compactMap { number($0["to"]) } == [3, 3])
        #expect(clips.compactMap { number($0["start"]) } == [0, 3])
    }

    @Test("clips without sound and no soundtrack: the video alone, and the summary and --json say there is no audio")
    func noSound() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("silent.mp4")
        let source = MuxCtl.fixture("h264_26s_2fps.mp4")
        let result = try await MuxCtl.run(["compose", output, "--clip", "\(source)@20-", "--clip", "\(source)@10-20"])
        #expect(result.exited && result.status == 0, "\(result)")
        #expect(result.stdout.contains("wrote \(output): 16.000 s"), "\(result)")
        #expect(result.stdout.contains("  audio: none (no clip has sound, and no soundtrack was given)"), "\(result)")
        let json = try await MuxCtl.run(["compose", output, "--clip", "\(source)@20-", "--clip", "\(source)@10-20", "--json", "-y"])
        #expect(json.exited && json.status == 0, "\(json)")
        let report = try #require(jsonObject(json.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(json)")
        #expect(report["audio"] == nil && report["video"] != nil, "\(report)")
        #expect(scratch.outputFolder == ["silent.mp4"])
    }

    @Test("a keyframe cut that cannot copy is one line naming the clip, exit status 2 (an option's), nothing written")
    func refusedCut() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("refused.mp4")
        let source = MuxCtl.fixture("h264_bframes_aac.mp4")
        let other = MuxCtl.fixture("hevc_hev1.mp4")
        let result = try await MuxCtl.run(["compose", output, "--clip", source, "--clip", other, "--cut", "keyframe"])
        #expect(result.exited && result.status == 2, "\(result)")
        #expect(!result.looksLikeCrash, "\(result)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result)")
        #expect(result.stderr.hasPrefix("error: clips[1] (\(other)): its video codec (hevc, not h264) differs from the first clip's"), "\(result)")
        #expect(scratch.outputFolder.isEmpty, "stray files: \(scratch.outputFolder)")
    }

    @Test("an exact cut inside a GOP encodes its frames there, and the summary says so")
    func encodedCut() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let output = scratch.output("encoded.mp4")
        let source = MuxCtl.fixture("h264_bframes_aac.mp4")
        let result = try await MuxCtl.run(["compose", output, "--clip", "\(source)@1.5-3"])
        #expect(result.exited && result.status == 0, "\(result)")
        #expect(result.stdout.contains("wrote \(output): 1.500 s"), "\(result)")
        #expect(result.stdout.contains("clip 1 at 0.000 s: \(source) from 1.500 to 3.000 s, start re-encoded: 15 frames before the keyframe at 2.000 s; copied from 2.000 s to 3.000 s"), "\(result)")
        #expect(result.stdout.contains("copied from \(source), the frames at cuts inside GOPs encoded: libx264 high, crf 18, veryfast, parameter sets 1"), "\(result)")
        #expect(!result.stdout.contains("played"), "\(result)")
        // The encoder options a cut uses are checked before anything is written.
        let bad = try await MuxCtl.run(["compose", scratch.output("bad.mp4"), "--clip", "\(source)@1.5-3", "--video-preset", "fastest"])
        #expect(bad.status == 2 && bad.stderr.contains("the video preset must be one of"), "\(bad)")
        #expect(!FileManager.default.fileExists(atPath: scratch.output("bad.mp4")))
    }

    @Test("a timeline names the clips, the output and the options; a batch job may be a composition")
    func timelineAndBatch() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let source = MuxCtl.fixture("h264_bframes_aac.mp4")
        let timeline = scratch.output("trip.json")
        try Data(#"{"output": "trip.mp4", "cut": "keyframe", "clips": ["\#(source)@0.5-2.5", {"file": "\#(source)", "from": 1, "to": "0:03"}]}"#.utf8)
            .write(to: URL(fileURLWithPath: timeline))
        let result = try await MuxCtl.run(["compose", timeline])
        #expect(result.exited && result.status == 0, "\(result)")
        #expect(result.stdout.contains("wrote \(scratch.output("trip.mp4")): 5.000 s"), "\(result)")
        let again = try await MuxCtl.run(["compose", timeline])
        #expect(again.status == 2 && again.stderr.contains("already exists"), "without --force: \(again)")
        #expect(try await MuxCtl.run(["compose", timeline, "--force"]).status == 0)
        let mixed = try await MuxCtl.run(["compose", timeline, "--clip", source])
        #expect(mixed.status == 64 && mixed.stderr.contains("is a timeline"), "\(mixed)")

        let manifest = scratch.output("jobs.json")
        try Data(#"{"jobs": [{"clips": ["\#(source)@1-3", "\#(source)@0-1"], "output": "out/c.mp4", "preview": {"sheet": true}}]}"#.utf8)
            .write(to: URL(fileURLWithPath: manifest))
        let batch = try await MuxCtl.run(["batch", manifest, "--json"])
        #expect(batch.exited && batch.status == 0, "\(batch)")
        let report = try #require(jsonObject(batch.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(batch)")
        let jobs = try #require(report["jobs"] as? [[String: Any]])
        let merge = try #require(jobs.first?["merge"] as? [String: Any], "\(jobs)")
        #expect(number(merge["duration"]) == 3)
        #expect((merge["clips"] as? [[String: Any]])?.count == 2, "\(merge)")
        #expect(FileManager.default.fileExists(atPath: scratch.output("out/c.sheet.png")))
    }

    @Test("a clip typed wrong, or none at all, is a usage error", arguments: [
        (["--clip", "a.mp4@2:75-3"], "--clip"),
        ([], "give at least one --clip"),
        (["--clip", "a.mp4", "--cut", "nearest"], "--cut"),
    ])
    func usage(_ extra: [String], _ words: String) async throws {
        let result = try await MuxCtl.run(["compose", "/tmp/never.mp4"] + extra)
        #expect(result.exited && result.status == 64, "swift-argument-parser's EX_USAGE: \(result)")
        #expect(result.stderr.contains(words), "\(result)")
    }
}
