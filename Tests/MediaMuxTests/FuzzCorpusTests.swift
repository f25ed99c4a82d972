import Foundation
import MediaMuxFuzzing
import TestSupport
import Testing

/// The fuzzer's corpus, run on every build: the seeds, what the fuzzer
/// kept for reaching new code, and every input that once broke something
/// (TestMedia/fuzz). Each goes through the exercise the fuzzer runs: the
/// box reader, probe, plan, a merge each way and frame decoding, with the
/// contract checked (a failure names a file in MediaMux's own words and
/// leaves nothing behind; a merge writes a file that probes again).
@Suite(.tags(.heavy), .skippedByTag, .offTheCooperativePool) struct FuzzCorpusTests {
    static let folders = ["seeds", "corpus", "regressions"]

    @Test(arguments: folders)
    func everyInputKeepsThePromises(_ folder: String) async throws {
        let source = Fixtures.path("fuzz/" + folder)
        let names = try FileManager.default.contentsOfDirectory(atPath: source).filter { !$0.hasPrefix(".") && $0 != "README.md" }.sorted()
        // A folder that lost its files would pass without testing anything.
        #expect(names.count >= 1, "TestMedia/fuzz/\(folder) is empty")
        let scratch = try TemporaryFolder()
        let exercise = FuzzExercise(folder: scratch.path("work"), video: Fixtures.path("h264_frame_index.mp4"), audio: Fixtures.path("aac_2s.m4a"))
        for name in names {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source + "/" + name)))
            for violation in await exercise.run(bytes) {
                Issue.record("TestMedia/fuzz/\(folder)/\(name): \(violation)")
            }
        }
    }

    /// The exercise itself can fail: an input the contract forbids is seen.
    @Test func theExerciseSeesABrokenPromise() async throws {
        let scratch = try TemporaryFolder()
        let exercise = FuzzExercise(folder: scratch.path("work"), video: Fixtures.path("h264_frame_index.mp4"), audio: Fixtures.path("aac_2s.m4a"))
        // A file left in the exercise's folder is a leftover of whichever merge fails.
        #expect(FileManager.default.createFile(atPath: scratch.path("work/.merged.mp4.mediamux-1.partial"), contents: Data([1])))
        let violations = await exercise.run(Array("not media".utf8))
        #expect(violations.contains { $0.problem.contains("left behind") })
    }
}
