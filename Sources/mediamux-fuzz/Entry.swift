import Dispatch
import MediaMuxBase
import MediaMuxFuzzing

// Two programs from one file. Built normally, `mediamux-fuzz FILE|FOLDER...`
// runs the exercise over each file and says which broke a promise. Built
// with `-sanitize=fuzzer -D MEDIAMUX_LIBFUZZER` (Fuzz/run.sh), it hands
// itself to libFuzzer's driver, which calls the exercise with each mutated input.

/// The exercise's own folder (in memory where there is /dev/shm), and the
/// well-formed partners of the merges, from the repository's TestMedia.
private func makeExercise() -> FuzzExercise {
    let scratch = isFolder("/dev/shm") ? "/dev/shm" : "/tmp"
    let media = environmentValue("MEDIAMUX_TEST_MEDIA")
        ?? folderPart(of: folderPart(of: folderPart(of: #filePath))) + "/TestMedia"
    return FuzzExercise(
        folder: "\(scratch)/mediamux-fuzz-\(processID)",
        video: media + "/h264_frame_index.mp4", audio: media + "/aac_2s.m4a")
}

/// Waits for the exercise on this thread: libFuzzer's callback is synchronous.
private func runToEnd(_ exercise: FuzzExercise, _ bytes: [UInt8]) -> [FuzzExercise.Violation] {
    // Written by the task before it signals, read after the wait: the
    // semaphore orders the two.
    final class Outcome: @unchecked Sendable { var violations: [FuzzExercise.Violation] = [] }
    let outcome = Outcome()
    let done = DispatchSemaphore(value: 0)
    Task {
        outcome.violations = await exercise.run(bytes)
        done.signal()
    }
    done.wait()
    return outcome.violations
}

/// One line on standard error.
private func say(_ line: String) {
    writeToStandardError(line + "\n")
}

#if MEDIAMUX_LIBFUZZER
/// libFuzzer's entry for a program that has a main of its own (SwiftPM gives
/// every executable one): it parses libFuzzer's flags and calls `fuzzOneInput`.
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

private let exercise = makeExercise()

/// One input: the exercise, and an abort that libFuzzer records as a crash
/// (with the input) when a promise was broken.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let violations = runToEnd(exercise, bytes)
    guard violations.isEmpty else {
        for violation in violations { say("mediamux-fuzz: \(violation)") }
        abortProcess()
    }
    return 0
}

@main
enum Fuzz {
    static func main() {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exitProcess(runFuzzerDriver(&argc, &argv, { data, size in fuzzOneInput(data, size) }))
    }
}
#else
@main
enum Replay {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard !arguments.isEmpty else {
            say("usage: mediamux-fuzz FILE|FOLDER...")
            exitProcess(2)
        }
        let exercise = makeExercise()
        var files = 0
        var broken = 0
        for argument in arguments {
            let paths = isFolder(argument) ? folderNames(argument).sorted().map { argument + "/" + $0 } : [argument]
            for path in paths where isRegularFile(path) {
                guard let bytes = readWholeFile(path) else {
                    say("\(path): cannot be read")
                    exitProcess(2)
                }
                files += 1
                let violations = runToEnd(exercise, bytes)
                for violation in violations { print("\(path): \(violation)") }
                if !violations.isEmpty { broken += 1 }
            }
        }
        removeFolder(exercise.folder)
        print("\(files) files, \(broken) broke a promise")
        exitProcess(broken == 0 ? 0 : 1)
    }
}
#endif
