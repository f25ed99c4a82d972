// MediaMuxPreview alone (with the core it re-exports): a CI step that never
// downloads compiles no HTTP or TLS stack.
import MediaMuxPreview
#if canImport(Glibc)
import Glibc
#endif

/// A CI step's work, in process: a preview clip and a contact sheet of every
/// video in a folder, a few at a time on one engine, each failure a line
/// naming its file, and a non-zero exit status if any failed.
///
///     preview-folder INPUT-FOLDER OUTPUT-FOLDER
@main
struct PreviewFolder {
    static func main() async {
        let arguments = CommandLine.arguments
        guard arguments.count == 3 else {
            print("usage: preview-folder INPUT-FOLDER OUTPUT-FOLDER")
            exit(2)
        }
        let (input, output) = (arguments[1], arguments[2])
        let videos = files(in: input).filter { name in [".mp4", ".mov", ".m4v", ".mkv", ".webm"].contains { name.lowercased().hasSuffix($0) } }
        let engine = PreviewEngine()
        let failures = await withTaskGroup(of: String?.self) { group in
            var next = videos.makeIterator()
            func start() -> Bool {
                guard let name = next.next() else { return false }
                group.addTask { await preview(input + "/" + name, into: output + "/" + name, engine: engine) }
                return true
            }
            // As many at once as the engine's pool has threads: the rest queue there anyway.
            for _ in 0..<2 { _ = start() }
            var failures: [String] = []
            for await failure in group {
                if let failure { failures.append(failure) }
                _ = start()
            }
            return failures
        }
        for failure in failures { print("error: \(failure)") }
        print("\(videos.count - failures.count) of \(videos.count) previewed")
        exit(failures.isEmpty ? 0 : 1)
    }

    /// A clip and a sheet of one file; nil when both were made, else why not.
    static func preview(_ path: String, into base: String, engine: PreviewEngine) async -> String? {
        do throws(MediaMuxError) {
            let clip = try await engine.previewClip(of: path, output: base + ".preview.mp4", overwrite: true)
            let sheet = try await engine.contactSheet(of: path, output: base + ".sheet.png", overwrite: true)
            print("\(path): clip \(clip.output) (\(clip.duration.seconds) s), sheet \(sheet.path) (\(sheet.width)x\(sheet.height))")
            return nil
        } catch {
            // The error is a MediaMuxError, already one line naming the file.
            return error.description
        }
    }

    static func files(in folder: String) -> [String] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if !name.hasPrefix(".") { names.append(name) }
        }
        return names.sorted()
    }
}
