#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The jobs of a batch as a manifest lists them:
///
/// ```json
/// {"jobs": [
///   {"video": "clips/a.mp4", "audio": "https://example.com/song.m4a", "output": "out/a.mp4",
///    "end": "video", "loopAudio": true, "loudness": -16, "preview": {"sheet": true, "clip": true}},
///   {"input": "clips/b.mp4", "preview": {"sheet": {"path": "out/b.png", "frames": 6}}}
/// ]}
/// ```
///
/// A merge job has `video`, `audio` (a path or an http(s) URL) and `output`,
/// and any of the merge options under the names `muxctl merge` gives them
/// (`orientation`, `rotate`, `end`, `loopAudio`, `audioOffset`, `audioCodec`,
/// `audioBitrate`, `sampleRate`, `channels`, `volume`, `fadeIn`, `fadeOut`,
/// `loudness`, `keepOriginalAudio`, `mixOriginal`, `videoStream`,
/// `audioStream`, `faststart`, `layout`, `metadata`). A composition job has
/// `clips` (each `"FILE"`, `"FILE@IN-OUT"` or `{"file": ..., "from": ...,
/// "to": ...}`, times in seconds or `"h:mm:ss.fff"`) and `output`, and any
/// of `soundtrack` (a path or an http(s) URL), `cut` (`"exact"` or
/// `"keyframe"`) and the merge options but `video` and `audio`: what
/// `muxctl compose` reads from a timeline file. A preview-only job has `input`
/// instead. `preview` makes a contact sheet and a preview clip of the output
/// (or input): `true` for the defaults, named after it (`out/a.sheet.png`,
/// `out/a.preview.mp4`), or an object with `path` and the options.
/// Relative paths are taken from the manifest's folder, so that a manifest
/// on shared storage means the same on every machine.
public struct BatchManifest: Sendable, Equatable {
    /// The manifest file, as given.
    public var path: String
    /// Its jobs, in its order; `BatchJob.index` is each one's position.
    public var jobs: [BatchJob]

    /// Reads and checks the whole manifest before any work is done.
    ///
    /// - Parameter path: The manifest, a JSON file.
    /// - Returns: Every job, checked, with its paths resolved from the manifest's folder.
    /// - Throws: `fileNotFound`, `notAFile` or `unreadable` when the file cannot
    ///   be read; `invalidOption` for anything wrong in it, naming the manifest,
    ///   the job and the field (`jobs.json: jobs[3].audioOffset: must be a number of seconds`).
    public static func load(_ path: String) throws(MediaMuxError) -> BatchManifest {
        try parse(readFile(path), path: path)
    }

    /// A JSON file's bytes: a manifest's or a timeline's.
    static func readFile(_ path: String) throws(MediaMuxError) -> Data {
        let data: Data
        do {
            do {
                try checkReadableFile(path)
            } catch let error as MediaMuxError where error.code == .notMedia {
                // Empty: read as it is, and found not to be JSON.
            }
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch let error as MediaMuxError {
            throw error
        } catch {
            throw MediaMuxError.unreadable(path: path, reason: "\(error)")
        }
        return data
    }

    /// The JSON in `data`, or an error naming the file as `option` (a manifest, a timeline).
    static func json(_ data: Data, path: String, option: String) throws(MediaMuxError) -> JSONValue {
        do {
            return try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw MediaMuxError.invalidOption(option: option, message: "\(path): is not JSON (\(Self.describe(error)))")
        }
    }

    static func parse(_ data: Data, path: String) throws(MediaMuxError) -> BatchManifest {
        let root = try json(data, path: path, option: "manifest")
        guard case .object(let top) = root, case .array(let list)? = top["jobs"] else {
            throw MediaMuxError.invalidOption(option: "manifest", message: "\(path): a manifest is an object with a \"jobs\" list")
        }
        if let extra = top.keys.first(where: { $0 != "jobs" }) {
            throw MediaMuxError.invalidOption(option: "manifest", message: "\(path): unknown field \"\(extra)\" (a manifest has only \"jobs\")")
        }
        let folder = Self.folder(of: path)
        var jobs: [BatchJob] = []
        var outputs: [String: Int] = [:]
        for (index, value) in list.enumerated() {
            var fields = JobFields(manifest: path, index: index, folder: folder)
            let job = try fields.job(from: value)
            for written in job.writes {
                if let earlier = outputs[written] {
                    throw MediaMuxError.invalidOption(option: "jobs[\(index)].output", message: "\(path): jobs[\(index)] writes \(written), as jobs[\(earlier)] does")
                }
                outputs[written] = index
            }
            jobs.append(job)
        }
        return BatchManifest(path: path, jobs: jobs)
    }

    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func describe(_ error: any Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error {
            return (context.underlyingError.map { "\($0)" } ?? context.debugDescription)
        }
        return "\(error)"
    }
}

/// One job of a batch.
public struct BatchJob: Sendable, Equatable {
    /// Its position in the manifest, from 0: what shards split by.
    public var index: Int
    /// The merge, or the file a preview-only job looks at.
    public var work: Work
    /// A contact sheet of the output (or input), where asked for.
    public var sheet: Sheet?
    /// A preview clip of the output (or input), where asked for.
    public var clip: Clip?
    /// The job's entry as the manifest words it, for telling whether an
    /// earlier run did the same work (see `BatchRecord`).
    var settings = Settings()

    struct Settings: Sendable, Equatable {
        /// The entry without its previews.
        var work = ""
        var sheet = ""
        var clip = ""
    }

    /// What the job makes besides its previews.
    public enum Work: Sendable, Equatable {
        /// A merge; `audio` may be an http(s) URL.
        case merge(video: String, audio: String, output: String, options: MergeOptions)
        /// Previews of a file alone.
        case preview(input: String)
        /// A composition; its soundtrack may be an http(s) URL.
        case compose(Composition, output: String)
    }

    /// A contact sheet to draw: where, and how.
    public struct Sheet: Sendable, Equatable {
        /// The PNG to write.
        public var path: String
        /// How it is made.
        public var options: ContactSheetOptions

        /// A contact sheet written to `path`.
        ///
        /// - Parameters:
        ///   - path: The PNG to write.
        ///   - options: How it is made (default: the defaults of ``ContactSheetOptions``).
        public init(path: String, options: ContactSheetOptions = ContactSheetOptions()) {
            self.path = path
            self.options = options
        }
    }

    /// A preview clip to encode: where, and how.
    public struct Clip: Sendable, Equatable {
        /// The MP4 to write.
        public var path: String
        /// How it is made.
        public var options: PreviewClipOptions

        /// A preview clip written to `path`.
        ///
        /// - Parameters:
        ///   - path: The MP4 to write.
        ///   - options: How it is made (default: the defaults of ``PreviewClipOptions``).
        public init(path: String, options: PreviewClipOptions = PreviewClipOptions()) {
            self.path = path
            self.options = options
        }
    }

    /// The file the previews are made of: the merge's output, or the input.
    public var previewSource: String {
        switch work {
        case .merge(_, _, let output, _), .compose(_, let output): return output
        case .preview(let input): return input
        }
    }

    /// Every file the job writes.
    public var writes: [String] {
        var files: [String] = []
        switch work {
        case .merge(_, _, let output, _), .compose(_, let output): files.append(output)
        case .preview: break
        }
        if let sheet { files.append(sheet.path) }
        if let clip { files.append(clip.path) }
        return files
    }
}
