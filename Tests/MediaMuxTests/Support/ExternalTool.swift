import Foundation

/// Runs a program the tests drive (a browser, a media player), keeping one
/// of its output streams; one that hangs is killed after `seconds`, which
/// closes its output. Killed, not asked to end: gst-launch blocks SIGTERM in
/// its threads, and one waiting for a decoder it lacks never ended.
enum ExternalTool {
    enum Stream { case output, errors }

    static func run(_ executable: String, _ arguments: [String], keeping stream: Stream, seconds: Double) throws -> (status: Int32, text: Data) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = stream == .output ? pipe : FileHandle.nullDevice
        process.standardError = stream == .errors ? pipe : FileHandle.nullDevice
        try process.run()
        let watchdog = DispatchWorkItem { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: watchdog)
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        watchdog.cancel()
        return (process.terminationStatus, data)
    }
}
