/// Reads one job of a manifest field by field. Every problem names the
/// manifest, the job and the field: `jobs.json: jobs[3].audioOffset: must be
/// a number of seconds`.
struct JobFields {
    let manifest: String
    let index: Int
    /// Relative paths are taken from here.
    let folder: String
    /// What a field's name is prefixed with in messages: "jobs[3]", or
    /// nothing for a file that is one job (a composition's timeline).
    let label: String
    private var object: [String: JSONValue] = [:]
    private var read: Set<String> = []

    init(manifest: String, index: Int, folder: String) {
        self.manifest = manifest
        self.index = index
        self.folder = folder
        label = "jobs[\(index)]"
    }

    /// The fields of a file that is one job.
    init(file: String, folder: String) {
        manifest = file
        index = 0
        self.folder = folder
        label = ""
    }

    static let mergeFields = [
        "video", "audio", "output", "orientation", "rotate", "fit", "size", "videoQuality", "videoPreset", "end", "loopAudio", "audioOffset", "audioCodec", "audioBitrate",
        "sampleRate", "channels", "volume", "fadeIn", "fadeOut", "loudness", "keepOriginalAudio", "mixOriginal",
        "videoStream", "audioStream", "faststart", "layout", "metadata",
    ]
    /// A composition's: its clips, soundtrack and cuts, and a merge's options but its two inputs.
    static let compositionFields = ["clips", "soundtrack", "cut"] + mergeFields.filter { $0 != "video" && $0 != "audio" }
    static let fields = mergeFields + ["input", "preview", "clips", "soundtrack", "cut"]

    func problem(_ field: String?, _ text: String) -> MediaMuxError {
        let option = [label.isEmpty ? nil : label, field].compactMap { $0 }.joined(separator: ".")
        return .invalidOption(option: option.isEmpty ? "timeline" : option, message: "\(manifest): \(option.isEmpty ? "" : option + ": ")\(text)")
    }

    mutating func job(from value: JSONValue) throws(MediaMuxError) -> BatchJob {
        guard case .object(let fields) = value else { throw problem(nil, "a job is an object, not \(value.kind)") }
        object = fields
        let work: BatchJob.Work
        if object["clips"] != nil {
            if let merging = ["video", "audio", "input"].first(where: { object[$0] != nil }) {
                throw problem(merging, "a job with \"clips\" is a composition; its inputs are the clips and the \"soundtrack\"")
            }
            let composition = try compositionFields()
            work = .compose(composition, output: try path("output", required: true)!)
        } else if object["input"] != nil {
            if let merging = Self.mergeFields.first(where: { object[$0] != nil }) {
                throw problem(merging, "a job with \"input\" makes previews only; a merge has \"video\", \"audio\" and \"output\"")
            }
            work = .preview(input: try path("input", required: true)!)
        } else {
            let video = try path("video", required: true)!
            let audio = try source("audio")
            let output = try path("output", required: true)!
            work = .merge(video: video, audio: audio, output: output, options: try mergeOptions())
        }
        var job = BatchJob(index: index, work: work)
        try readPreview(into: &job)
        job.settings.work = JSONValue.object(object.filter { $0.key != "preview" }).canonicalText
        try refuseUnknown(Self.fields)
        return job
    }

    /// A composition's timeline: one object with a composition job's fields and no previews.
    mutating func timeline(from value: JSONValue) throws(MediaMuxError) -> (Composition, output: String) {
        guard case .object(let fields) = value else { throw problem(nil, "a timeline is an object with \"clips\" and \"output\", not \(value.kind)") }
        object = fields
        let composition = try compositionFields()
        let output = try path("output", required: true)!
        try refuseUnknown(Self.compositionFields + ["output"])
        return (composition, output)
    }

    /// A field nothing read is a mistake, named with the nearest known one.
    private func refuseUnknown(_ known: [String]) throws(MediaMuxError) {
        if let unknown = object.keys.sorted().first(where: { !read.contains($0) }) {
            let near = known.first { Self.distance($0.lowercased(), unknown.lowercased()) <= 2 }
            throw problem(nil, "unknown field \"\(unknown)\"" + (near.map { "; did you mean \"\($0)\"?" } ?? ""))
        }
    }

    /// A composition job's fields (or a timeline's), "output" and "preview" left to the caller.
    mutating func compositionFields() throws(MediaMuxError) -> Composition {
        guard case .array(let list)? = take("clips"), !list.isEmpty else {
            throw problem("clips", "must be a list of clips, each \"FILE\", \"FILE@IN-OUT\" or {\"file\": ..., \"from\": ..., \"to\": ...}")
        }
        var clips: [Composition.Clip] = []
        for (position, value) in list.enumerated() {
            clips.append(try clip(value, field: "clips[\(position)]"))
        }
        let soundtrack = try object["soundtrack"] == nil ? nil : source("soundtrack")
        let cut = try choice("cut", Self.named(Composition.Cut.allCases)) ?? .exact
        return Composition(clips: clips, soundtrack: soundtrack, cut: cut, options: try mergeOptions())
    }

    /// One clip: "FILE", "FILE@IN-OUT", or an object with "file" and "from", "to" (seconds, or "h:mm:ss.fff").
    private func clip(_ value: JSONValue, field: String) throws(MediaMuxError) -> Composition.Clip {
        switch value {
        case .string(let text):
            guard var clip = Composition.Clip(parsing: text) else {
                throw problem(field, "must be \"FILE\" or \"FILE@IN-OUT\" with IN and OUT in seconds or h:mm:ss.fff, not \"\(text)\"")
            }
            clip.path = resolve(clip.path)
            return clip
        case .object(let fields):
            if let unknown = fields.keys.sorted().first(where: { !["file", "from", "to"].contains($0) }) {
                throw problem(field, "unknown field \"\(unknown)\" (a clip has \"file\", \"from\" and \"to\")")
            }
            guard case .string(let file)? = fields["file"], !file.isEmpty else { throw problem(field + ".file", "must be a file path") }
            func time(_ key: String) throws(MediaMuxError) -> MediaTime? {
                switch fields[key] {
                case nil, .null?: return nil
                case .number(let seconds)? where seconds.isFinite && seconds >= 0 && seconds < 1e9: return MediaTime(seconds: seconds)
                case .string(let text)?: if let time = MediaTime(timecode: text) { return time }
                default: break
                }
                throw problem(field + "." + key, "must be a time: seconds, or \"h:mm:ss.fff\"")
            }
            return Composition.Clip(resolve(file), from: try time("from"), to: try time("to"))
        default:
            throw problem(field, "must be \"FILE\", \"FILE@IN-OUT\" or an object with \"file\", not \(value.kind)")
        }
    }

    // MARK: Merge options

    mutating func mergeOptions() throws(MediaMuxError) -> MergeOptions {
        var options = MergeOptions()
        options.orientation = try choice("orientation", Self.named(Orientation.allCases)) ?? options.orientation
        options.video.fit = try choice("fit", Self.named(Fit.allCases)) ?? options.video.fit
        options.video.frameSize = try frameSize("size")
        options.video.quality = try integer("videoQuality", atLeast: 0)
        options.video.preset = try text("videoPreset")
        if let rotate = try integer("rotate") {
            if let wrong = MergeOptions.rotationProblem(rotate) { throw problem("rotate", wrong) }
            options.rotation = rotate
        }
        options.end = try choice("end", ["shortest": .shortest, "video": .video, "audio": .audio]) ?? .shortest
        options.videoStream = try integer("videoStream", atLeast: 0)
        options.audioStream = try integer("audioStream", atLeast: 0)
        options.faststart = try bool("faststart") ?? true
        options.layout = try choice("layout", Self.named(OutputLayout.allCases)) ?? .movie
        options.keepsMetadata = try bool("metadata") ?? true
        var audio = AudioOptions()
        audio.codec = try choice("audioCodec", ["copy": .copy, "aac": .aac]) ?? .automatic
        audio.bitRate = try bitRate("audioBitrate")
        audio.sampleRate = try integer("sampleRate", atLeast: 1)
        audio.channels = try integer("channels", atLeast: 1)
        audio.loops = try bool("loopAudio") ?? false
        audio.offset = try seconds("audioOffset", allowingNegative: true) ?? .zero()
        audio.volume = try number("volume") ?? 0
        audio.fadeIn = try seconds("fadeIn") ?? .zero()
        audio.fadeOut = try seconds("fadeOut") ?? .zero()
        audio.loudness = try number("loudness")
        options.audio = audio
        let keeps = try bool("keepOriginalAudio") ?? false
        guard let original = OriginalAudio(keeping: keeps, mixingAt: try number("mixOriginal")) else {
            throw problem("mixOriginal", "goes with \"keepOriginalAudio\": false; choose one way to use the video's own audio")
        }
        options.originalAudio = original
        return options
    }

    // MARK: Previews

    private mutating func readPreview(into job: inout BatchJob) throws(MediaMuxError) {
        guard let value = take("preview") else { return }
        guard case .object(let preview) = value else { throw problem("preview", "must be an object such as {\"sheet\": true, \"clip\": true}") }
        if let unknown = preview.keys.sorted().first(where: { $0 != "sheet" && $0 != "clip" }) {
            throw problem("preview", "unknown field \"\(unknown)\" (previews are \"sheet\" and \"clip\")")
        }
        let base = Self.stem(of: job.previewSource)
        if let sheet = preview["sheet"] {
            var fields = try PreviewFields(sheet, field: "preview.sheet", defaultPath: base + ".sheet.png", job: self)
            if let path = fields.path {
                var options = ContactSheetOptions()
                options.frames = try fields.integer("frames", atLeast: 1) ?? options.frames
                options.columns = try fields.integer("columns", atLeast: 1)
                options.tileSize = try fields.integer("size", atLeast: 16) ?? options.tileSize
                try fields.finish()
                job.sheet = BatchJob.Sheet(path: path, options: options)
                job.settings.sheet = sheet.canonicalText
            }
        }
        if let clip = preview["clip"] {
            var fields = try PreviewFields(clip, field: "preview.clip", defaultPath: base + ".preview.mp4", job: self)
            if let path = fields.path {
                var options = PreviewClipOptions()
                options.start = try fields.seconds("start") ?? options.start
                options.duration = try fields.seconds("seconds") ?? options.duration
                options.height = try fields.integer("height", atLeast: 16) ?? options.height
                try fields.finish()
                job.clip = BatchJob.Clip(path: path, options: options)
                job.settings.clip = clip.canonicalText
            }
        }
    }

    /// "out/a.mp4" -> "out/a".
    static func stem(of path: String) -> String {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return path }
        return String(path.dropLast(name.distance(from: dot, to: name.endIndex)))
    }

    // MARK: Values

    private mutating func take(_ key: String) -> JSONValue? {
        read.insert(key)
        guard let value = object[key], value != .null else { return nil }
        return value
    }

    func resolve(_ path: String) -> String {
        path.hasPrefix("/") || folder == "." ? path : folder + "/" + path
    }

    mutating func path(_ key: String, required: Bool = false) throws(MediaMuxError) -> String? {
        guard let value = take(key) else {
            if required { throw problem(key, "is missing") }
            return nil
        }
        guard case .string(let text) = value, !text.isEmpty else { throw problem(key, "must be a file path, not \(value.kind)") }
        return resolve(text)
    }

    /// A path, or an http(s) URL as it is.
    private mutating func source(_ key: String) throws(MediaMuxError) -> String {
        guard let value = take(key) else { throw problem(key, "is missing") }
        guard case .string(let text) = value, !text.isEmpty else { throw problem(key, "must be a file path or an http(s) URL, not \(value.kind)") }
        let lowered = text.lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://") ? text : resolve(text)
    }

    private mutating func number(_ key: String) throws(MediaMuxError) -> Double? {
        guard let value = take(key) else { return nil }
        guard case .number(let number) = value, number.isFinite else { throw problem(key, "must be a number, not \(value.kind)") }
        return number
    }

    private mutating func integer(_ key: String, atLeast minimum: Int = .min) throws(MediaMuxError) -> Int? {
        guard let value = take(key) else { return nil }
        guard case .number(let number) = value, number.rounded() == number, abs(number) < 1e9, Int(number) >= minimum else {
            throw problem(key, minimum == .min ? "must be a whole number" : "must be a whole number of at least \(minimum)")
        }
        return Int(number)
    }

    private mutating func seconds(_ key: String, allowingNegative: Bool = false) throws(MediaMuxError) -> MediaTime? {
        guard let value = take(key) else { return nil }
        guard case .number(let number) = value, number.isFinite, abs(number) < 1e9, allowingNegative || number >= 0 else {
            throw problem(key, allowingNegative ? "must be a number of seconds" : "must be a number of seconds, 0 or more")
        }
        return MediaTime(seconds: number)
    }

    private mutating func bool(_ key: String) throws(MediaMuxError) -> Bool? {
        guard let value = take(key) else { return nil }
        guard case .bool(let flag) = value else { throw problem(key, "must be true or false, not \(value.kind)") }
        return flag
    }

    private mutating func choice<T>(_ key: String, _ values: [String: T]) throws(MediaMuxError) -> T? {
        guard let value = take(key) else { return nil }
        let names = values.keys.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
        guard case .string(let text) = value, let chosen = values[text] else { throw problem(key, "must be one of \(names)") }
        return chosen
    }

    private static func named<T: RawRepresentable<String>>(_ cases: [T]) -> [String: T] {
        Dictionary(uniqueKeysWithValues: cases.map { ($0.rawValue, $0) })
    }

    private mutating func text(_ key: String) throws(MediaMuxError) -> String? {
        guard let value = take(key) else { return nil }
        guard case .string(let text) = value, !text.isEmpty else { throw problem(key, "must be a name, not \(value.kind)") }
        return text
    }

    /// "1920x1080".
    private mutating func frameSize(_ key: String) throws(MediaMuxError) -> VideoSize? {
        guard let value = take(key) else { return nil }
        guard case .string(let text) = value else { throw problem(key, "must be a size such as \"1920x1080\", not \(value.kind)") }
        guard let size = VideoSize(parsing: text) else { throw problem(key, "must be a size such as \"1920x1080\", not \"\(text)\"") }
        return size
    }

    /// 192000, or "192k".
    private mutating func bitRate(_ key: String) throws(MediaMuxError) -> Int? {
        guard let value = take(key) else { return nil }
        switch value {
        case .number(let number) where number.isFinite && number >= 1 && number < 1e8:
            return Int(number.rounded())
        case .string(let text):
            let lowered = text.lowercased()
            let scale: Double = lowered.hasSuffix("k") ? 1_000 : lowered.hasSuffix("m") ? 1_000_000 : 1
            if let number = Double(scale == 1 ? lowered : String(lowered.dropLast())), number > 0, number * scale < 1e8 {
                return Int((number * scale).rounded())
            }
        default:
            break
        }
        throw problem(key, "must be a bit rate such as 192000 or \"192k\"")
    }

    /// Edits between two words, for suggesting a known field.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}

/// One preview of a job: `true` (the default path and options), a path, or
/// an object with `path` and options.
struct PreviewFields {
    private let job: JobFields
    private let field: String
    private var object: [String: JSONValue] = [:]
    private var read: Set<String> = []
    /// Where the preview goes; nil when it is not wanted.
    private(set) var path: String?

    init(_ value: JSONValue, field: String, defaultPath: String, job: JobFields) throws(MediaMuxError) {
        self.job = job
        self.field = field
        switch value {
        case .bool(true): path = defaultPath
        case .bool(false), .null: path = nil
        case .string(let text) where !text.isEmpty: path = job.resolve(text)
        case .object(let object):
            self.object = object
            read.insert("path")
            if case .string(let text)? = object["path"], !text.isEmpty {
                path = job.resolve(text)
            } else if object["path"] == nil {
                path = defaultPath
            } else {
                throw job.problem(field + ".path", "must be a file path")
            }
        default:
            throw job.problem(field, "must be true, a file path, or an object with \"path\" and options")
        }
    }

    mutating func integer(_ key: String, atLeast minimum: Int) throws(MediaMuxError) -> Int? {
        read.insert(key)
        guard let value = object[key], value != .null else { return nil }
        guard case .number(let number) = value, number.rounded() == number, number < 1e6, Int(number) >= minimum else {
            throw job.problem(field + "." + key, "must be a whole number of at least \(minimum)")
        }
        return Int(number)
    }

    mutating func seconds(_ key: String) throws(MediaMuxError) -> MediaTime? {
        read.insert(key)
        guard let value = object[key], value != .null else { return nil }
        guard case .number(let number) = value, number.isFinite, number >= 0, number < 1e9 else {
            throw job.problem(field + "." + key, "must be a number of seconds, 0 or more")
        }
        return MediaTime(seconds: number)
    }

    func finish() throws(MediaMuxError) {
        if let unknown = object.keys.sorted().first(where: { !read.contains($0) }) {
            throw job.problem(field, "unknown field \"\(unknown)\"")
        }
    }
}
