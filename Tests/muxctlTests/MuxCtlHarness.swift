import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs the built `muxctl` binary as a child process. Everything here is test
/// plumbing: locating the binary and fixtures, capturing output, temp folders.
enum MuxCtl {
    /// `<package root>`.
    static var packageRoot: URL { TestMedia.packageRoot }

    /// The download cache every launched `muxctl` uses.
    static let testCacheDirectory = FileManager.default.temporaryDirectory
        .appendingPathComponent("muxctlTests-cache-\(ProcessInfo.processInfo.processIdentifier)").path

    /// Absolute path of a file in `TestMedia`.
    static func fixture(_ name: String) -> String { TestMedia.fixture(name) }

    /// The `muxctl` built alongside the test bundle. `MUXCTL_BINARY` overrides,
    /// and then it is that binary or none (CI runs the tests against the
    /// release build this way; a wrong path must not fall back to the debug one).
    static let binary: URL? = {
        if let override = ProcessInfo.processInfo.environment["MUXCTL_BINARY"], !override.isEmpty {
            let url = URL(fileURLWithPath: override)
            return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
        }
        var candidates: [URL] = []
        // Linux: Bundle.main is the folder holding the `.xctest` executable.
        // macOS: the `.xctest` bundle sits in the products folder.
        let bundle = Bundle.main.bundleURL
        candidates.append(bundle.appendingPathComponent("muxctl"))
        candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("muxctl"))
        if let executable = Bundle.main.executableURL {
            candidates.append(executable.deletingLastPathComponent().appendingPathComponent("muxctl"))
        }
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("muxctl"))
        }
        let arg0 = URL(fileURLWithPath: CommandLine.arguments.first ?? "")
        candidates.append(arg0.deletingLastPathComponent().appendingPathComponent("muxctl"))
        candidates.append(packageRoot.appendingPathComponent(".build/debug/muxctl"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// Starts `muxctl` with `arguments`, in `directory` (default: the package root,
    /// so `TestMedia/...` relative paths work).
    /// `environment` adds to (or overrides) the test run's own.
    /// `launcher` runs first and execs muxctl (same process, so signals reach
    /// it): `MuxCtl.fileSizeLimit(kilobytes:)`, `MuxCtl.asUnprivileged`.
    static func launch(
        _ arguments: [String], in directory: URL = packageRoot, environment: [String: String] = [:], launcher: [String] = []
    ) throws -> RunningMuxCtl {
        guard let binary else {
            throw HarnessError("muxctl binary not found (MUXCTL_BINARY, next to the test bundle, .build/debug); run `swift build`")
        }
        return try RunningMuxCtl(binary: binary, arguments: arguments, directory: directory, environment: environment, launcher: launcher)
    }

    /// A shell that limits the size of any file muxctl writes to `kilobytes`
    /// (`ulimit -f`, which POSIX counts in 512-byte blocks), then execs it.
    static func fileSizeLimit(kilobytes: Int) -> [String] {
        ["/bin/sh", "-c", "ulimit -f \(kilobytes * 2) && exec \"$0\" \"$@\""]
    }

    /// Runs muxctl as `nobody` when the tests run as root, for whom folder
    /// permissions would not hold (util-linux's setpriv, which execs it).
    static var asUnprivileged: [String] {
        geteuid() == 0 ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : []
    }

    /// How long a run may take before it counts as hung and is killed. A
    /// guard against hangs, not a measure of speed: under a sanitizer, on 2
    /// cores, beside the suites that decode on threads of their own, a
    /// fresh-clone run's `muxctl download` of a missing URL had printed its
    /// error and not yet ended after 120 s.
    #if MEDIAMUX_SANITIZER_ADDRESS || MEDIAMUX_SANITIZER_THREAD
    static let hangsAfter: Double = 360
    #else
    static let hangsAfter: Double = 120
    #endif

    /// Runs `muxctl` to completion (killed after `timeout` seconds).
    static func run(
        _ arguments: [String], in directory: URL = packageRoot, environment: [String: String] = [:],
        launcher: [String] = [], timeout: Double = MuxCtl.hangsAfter
    ) async throws -> RunResult {
        try await launch(arguments, in: directory, environment: environment, launcher: launcher).finish(timeout: timeout)
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// What one run of `muxctl` did.
struct RunResult: CustomStringConvertible, Sendable {
    var arguments: [String]
    /// Exit status, or the signal number when `killedBySignal`.
    var status: Int32
    var killedBySignal: Bool
    var timedOut: Bool
    var stdout: String
    /// Standard output's bytes as they came (a fragmented MP4 for `-`).
    var stdoutBytes = Data()
    var stderr: String

    var exited: Bool { !killedBySignal && !timedOut }
    var stderrLines: [String] { stderr.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) }
    var firstErrorLine: String { stderrLines.first ?? "" }

    /// Signs of a crash rather than a reported error.
    var looksLikeCrash: Bool {
        let text = stdout + stderr
        return ["Fatal error", "Stack dump", "Segmentation fault", "Illegal instruction", "Current stack trace",
                "Assertion failed", "Precondition failed", "💣"].contains { text.contains($0) }
            || (killedBySignal && [SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGTRAP, SIGFPE].contains(status))
    }

    var description: String {
        let how = timedOut ? "TIMED OUT" : killedBySignal ? "killed by signal \(status)" : "exit \(status)"
        return "muxctl \(arguments.joined(separator: " ")) → \(how)\n--- stdout ---\n\(stdout)\n--- stderr ---\n\(stderr)"
    }
}

/// A started `muxctl` whose stdout and stderr are drained on background threads.
final class RunningMuxCtl: @unchecked Sendable {
    let process = Process()
    let arguments: [String]
    private let out = Pipe()
    private let err = Pipe()
    private let drained = DispatchGroup()
    private let lock = NSLock()
    private var outData = Data()
    private var errData = Data()

    init(binary: URL, arguments: [String], directory: URL, environment extra: [String: String] = [:], launcher: [String] = []) throws {
        self.arguments = arguments
        if let first = launcher.first {
            process.executableURL = URL(fileURLWithPath: first)
            process.arguments = launcher.dropFirst() + [binary.path] + arguments
        } else {
            process.executableURL = binary
            process.arguments = arguments
        }
        process.currentDirectoryURL = directory
        // Downloads go to a cache of the test run's own, never the user's ~/.cache.
        var environment = ProcessInfo.processInfo.environment
        environment["MUXCTL_CACHE_DIR"] = MuxCtl.testCacheDirectory
        environment.merge(extra) { $1 }
        process.environment = environment
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        drain(out.fileHandleForReading) { self.outData = $0 }
        drain(err.fileHandleForReading) { self.errData = $0 }
    }

    private func drain(_ handle: FileHandle, into store: @escaping @Sendable (Data) -> Void) {
        drained.enter()
        let group = drained
        let lock = self.lock
        Thread.detachNewThread {
            let data = handle.readDataToEndOfFile()
            lock.lock()
            store(data)
            lock.unlock()
            group.leave()
        }
    }

    var pid: pid_t { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    func send(_ signalNumber: Int32) {
        kill(pid, signalNumber)
    }

    /// Waits for exit and the end of both streams, killing the process after `timeout`.
    func finish(timeout: Double = MuxCtl.hangsAfter) async -> RunResult {
        await withCheckedContinuation { (continuation: CheckedContinuation<RunResult, Never>) in
            Thread.detachNewThread {
                var timedOut = false
                if self.drained.wait(timeout: .now() + timeout) == .timedOut {
                    timedOut = true
                    kill(self.pid, SIGKILL)
                    self.drained.wait()
                }
                self.process.waitUntilExit()
                self.lock.lock()
                let bytes = self.outData
                let stdout = String(decoding: bytes, as: UTF8.self)
                let stderr = String(decoding: self.errData, as: UTF8.self)
                self.lock.unlock()
                continuation.resume(returning: RunResult(
                    arguments: self.arguments,
                    status: self.process.terminationStatus,
                    killedBySignal: self.process.terminationReason == .uncaughtSignal,
                    timedOut: timedOut,
                    stdout: stdout, stdoutBytes: bytes, stderr: stderr))
            }
        }
    }
}

/// A fresh folder per test, with `in/` for inputs a test makes and `out/` for
/// outputs, so "the output folder is empty" means exactly that. Call `remove()`.
final class Scratch: @unchecked Sendable {
    let root: URL
    let inputs: URL
    let outputs: URL

    init() throws {
        root = FileManager.default.temporaryDirectory
            .appendingPathComponent("muxctlTests-\(UUID().uuidString)", isDirectory: true)
        inputs = root.appendingPathComponent("in", isDirectory: true)
        outputs = root.appendingPathComponent("out", isDirectory: true)
        try FileManager.default.createDirectory(at: inputs, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: outputs, withIntermediateDirectories: true)
    }

    func output(_ name: String) -> String { outputs.appendingPathComponent(name).path }
    func input(_ name: String) -> String { inputs.appendingPathComponent(name).path }

    /// Every entry of the output folder, hidden ones included, sorted.
    var outputFolder: [String] { Self.list(outputs.path) }

    static func list(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    static func partials(in folder: String) -> [String] {
        list(folder).filter { $0.hasSuffix(".partial") || $0.contains(".mediamux-") }
    }

    /// Whether process `pid` has a file of `folder` open: an output being
    /// written, which on Linux has no name until it is complete (its
    /// /proc entry reads "FOLDER/#INODE (deleted)").
    static func isWriting(in folder: String, pid: pid_t) -> Bool {
        let descriptors = "/proc/\(pid)/fd"
        return list(descriptors).contains { entry in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: descriptors + "/" + entry))?.hasPrefix(folder + "/") == true
        }
    }

    func remove() {
        try? FileManager.default.removeItem(at: root)
    }
}

/// `data` as one JSON object, or nil.
func jsonObject(_ text: String) -> [String: Any]? {
    guard let data = text.data(using: .utf8) else { return nil }
    return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
}

func number(_ value: Any?) -> Double? {
    (value as? NSNumber)?.doubleValue
}

func fileBytes(_ path: String) -> Data? {
    FileManager.default.contents(atPath: path)
}

func fileExists(_ path: String) -> Bool {
    FileManager.default.fileExists(atPath: path)
}

/// `muxctl probe --json PATH`, parsed; records an issue and returns nil on failure.
func probeJSON(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any]? {
    let result = try await MuxCtl.run(["probe", path, "--json"])
    #expect(result.exited && result.status == 0, "probe of \(path) failed: \(result)", sourceLocation: sourceLocation)
    guard result.status == 0 else { return nil }
    let object = jsonObject(result.stdout)
    #expect(object != nil, "probe --json did not print a JSON object: \(result)", sourceLocation: sourceLocation)
    return object
}
