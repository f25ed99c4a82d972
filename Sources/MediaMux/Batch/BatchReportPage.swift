import MediaMuxBase
import MediaMuxDownload
import MediaMuxPreview

/// The page a batch leaves for people to look at: `index.html` in a folder
/// of its own, with every job's contact sheet and preview clip (with its
/// first picture as the player's poster) under `media/` beside it. Every path in it is relative and nothing comes from
/// elsewhere (no scripts, fonts or styles from the network), so the folder
/// opens from disk and can be published whole, as a CI run's artifact.
public enum BatchReportPage {
    /// `manifest` with a contact sheet and a preview clip, at their default
    /// sizes, for every job that does not ask for them: made straight into
    /// `folder/media/`. Makes the folders.
    ///
    /// - Throws: `outputDirectoryMissing` or `outputNotWritable` when the folders cannot be made.
    public static func addingPreviews(to manifest: BatchManifest, folder: String) throws(MediaMuxError) -> BatchManifest {
        try makeFolders(mediaFolder(folder))
        var manifest = manifest
        for index in manifest.jobs.indices {
            let job = manifest.jobs[index]
            let base = mediaFolder(folder) + "/job-\(job.index)"
            if job.sheet == nil { manifest.jobs[index].sheet = BatchJob.Sheet(path: base + ".sheet.png", options: ContactSheetOptions()) }
            if job.clip == nil { manifest.jobs[index].clip = BatchJob.Clip(path: base + ".preview.mp4", options: PreviewClipOptions()) }
        }
        return manifest
    }

    /// Writes `folder/index.html` for `report`, first linking (or copying)
    /// into `folder/media/` the previews that were made elsewhere; returns
    /// the page's path.
    ///
    /// - Throws: `outputDirectoryMissing` or `outputNotWritable` when the folder or a file in it cannot be written.
    @discardableResult
    public static func write(_ report: BatchReport, to folder: String) async throws(MediaMuxError) -> String {
        try makeFolders(mediaFolder(folder))
        var cards: [String] = []
        for job in report.jobs {
            let sheet = try job.sheet.map { facts throws(MediaMuxError) in try place(facts.path, as: "job-\(job.index).sheet.png", in: folder) }
            let clip = try job.clip.map { facts throws(MediaMuxError) in try place(facts.path, as: "job-\(job.index).preview.mp4", in: folder) }
            var poster: String?
            if let clip { poster = try await writePoster(of: folder + "/" + clip, as: "job-\(job.index).poster.jpg", in: folder) }
            cards.append(card(job, sheet: sheet, clip: clip, poster: poster))
        }
        let page = folder + "/index.html"
        do {
            _ = try TemporaryOutput.write(Array(html(report, cards: cards).utf8), to: page, overwrite: true)
        } catch {
            throw MediaMuxError(error, subject: page)
        }
        return page
    }

    static func mediaFolder(_ folder: String) -> String { folder + "/media" }

    /// The clip's first picture as a JPEG in `media/`, the poster its player
    /// shows until played (a browser shows a black box before the first
    /// frame is fetched); nil when the clip has no picture to give.
    private static func writePoster(of clip: String, as name: String, in folder: String) async throws(MediaMuxError) -> String? {
        let previews = PreviewEngine()
        let path = mediaFolder(folder) + "/" + name
        do {
            for try await frame in previews.frames(of: clip, options: FrameOptions(selection: .times([.zero()]), size: nil)) {
                _ = try previews.writeImage(frame, to: path, format: .jpeg, overwrite: true)
                return "media/" + name
            }
        } catch {
            throw MediaMuxError(error, subject: path)
        }
        return nil
    }

    /// The page's relative path to a preview: where it is when it is in
    /// `media/` already, else a link (or copy) put there.
    private static func place(_ path: String, as name: String, in folder: String) throws(MediaMuxError) -> String {
        let media = mediaFolder(folder)
        if folderPart(of: path) == media { return "media/" + namePart(of: path) }
        do {
            try shareFile(path, to: media + "/" + name, overwrite: true)
        } catch {
            throw MediaMuxError(error, subject: media + "/" + name)
        }
        return "media/" + name
    }

    // MARK: The page

    private static func html(_ report: BatchReport, cards: [String]) -> String {
        let shard = report.shard == .whole ? "" : ", shard \(report.shard.index) of \(report.shard.count)"
        let counts = "\(report.jobs.count) jobs: \(report.count(.done)) done, \(report.count(.skipped)) complete already, \(report.count(.failed)) failed"
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>MediaMux batch: \(escape(namePart(of: report.manifest)))</title>
            <style>
            body { font: 15px/1.4 system-ui, sans-serif; margin: 2em; color: #222; background: #fafafa; }
            h1 { font-size: 1.4em; margin: 0 0 .2em; }
            .summary { color: #555; margin-bottom: 1.5em; }
            .job { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 1em; margin-bottom: 1.2em; }
            .job.failed { border-color: #c33; }
            .job h2 { font-size: 1.05em; margin: 0 0 .6em; word-break: break-all; }
            .status { display: inline-block; padding: 0 .5em; border-radius: 3px; font-size: .85em; margin-right: .5em; color: #fff; }
            .status.done { background: #2a7; } .status.skipped { background: #68a; } .status.failed { background: #c33; }
            .media { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; margin-bottom: .8em; }
            .media img, .media video { max-width: 480px; max-height: 360px; background: #000; }
            table { border-collapse: collapse; }
            th { text-align: left; padding: .15em 1em .15em 0; color: #555; font-weight: normal; vertical-align: top; }
            td { padding: .15em 0; }
            .warning { color: #a60; } .error { color: #c33; font-weight: bold; }
            </style></head><body>
            <h1>\(escape(report.manifest))</h1>
            <p class="summary">\(counts)\(shard), in \(fixedPoint(report.elapsed.seconds, decimals: 1)) s; MediaMux \(escape(MuxEngine.version)).</p>
            \(cards.joined(separator: "\n"))
            </body></html>

            """
    }

    private static func card(_ job: BatchJobReport, sheet: String?, clip: String?, poster: String?) -> String {
        var rows: [(String, String)] = []
        switch job.job.work {
        case .merge(let video, let audio, let output, _):
            rows += [("output", output), ("video", video), ("audio", audio)]
        case .preview(let input):
            rows.append(("input", input))
        case .compose(let composition, let output):
            rows.append(("output", output))
            rows += composition.clips.enumerated().map { ("clip \($0.offset + 1)", $0.element.path) }
            if let soundtrack = composition.soundtrack { rows.append(("soundtrack", soundtrack)) }
        }
        if let merge = job.merge {
            rows.append(("duration", "\(fixedPoint(merge.duration, decimals: 3)) s (\(merge.trim))"))
            rows.append(("video track", "\(merge.video.codec), \(fixedPoint(merge.video.duration, decimals: 3)) s, \(merge.video.how)"))
            if let audio = merge.audio {
                rows.append(("audio track", "\(audio.codec), \(fixedPoint(audio.duration, decimals: 3)) s, \(audio.how)"))
            } else {
                rows.append(("audio track", "none: no clip has sound, and no soundtrack was given"))
            }
            if let original = merge.originalAudio {
                rows.append(("original audio", "\(original.codec), \(fixedPoint(original.duration, decimals: 3)) s, \(original.how)"))
            }
            rows.append(("orientation", "rotation \(merge.rotation)° (\(merge.rotationReason))"))
        }
        if let clipFacts = job.clip {
            rows.append(("preview clip", "\(clipFacts.width)×\(clipFacts.height), \(fixedPoint(clipFacts.duration, decimals: 2)) s\(clipFacts.hasAudio ? "" : ", no audio")"))
        }
        if let sheetFacts = job.sheet {
            rows.append(("contact sheet", "\(sheetFacts.width)×\(sheetFacts.height)"))
        }
        rows.append(("steps", job.steps.map { step in
            "\(step.step.rawValue) \(step.outcome == .notRun ? "not run" : step.outcome.rawValue)" + (step.outcome == .done ? step.reason.map { " (\($0))" } ?? "" : "")
        }.joined(separator: "; ")))
        let table = rows.map { "<tr><th>\(escape($0.0))</th><td>\(escape($0.1))</td></tr>" }.joined()
        var media = ""
        if let sheet { media += "<img src=\"\(escape(sheet))\" alt=\"contact sheet of jobs[\(job.index)]\">" }
        if let clip {
            let still = poster.map { " poster=\"\(escape($0))\"" } ?? ""
            media += "<video src=\"\(escape(clip))\"\(still) controls muted preload=\"metadata\"></video>"
        }
        let notes = job.warnings.map { "<p class=\"warning\">warning: \(escape($0))</p>" }.joined()
            + (job.error.map { "<p class=\"error\">error: \(escape($0.description))</p>" } ?? "")
        return """
            <section class="job \(job.status.rawValue)" id="job-\(job.index)">
            <h2><span class="status \(job.status.rawValue)">\(job.status.rawValue)</span>jobs[\(job.index)] \(escape(job.name))</h2>
            \(media.isEmpty ? "" : "<div class=\"media\">\(media)</div>")
            <table>\(table)</table>\(notes)
            </section>
            """
    }

    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}

extension BatchJobReport {
    /// What the job is about: its output, or its input for a preview-only job.
    public var name: String {
        job.previewSource
    }
}

/// Makes a folder and the folders above it that are missing (mkdir -p).
func makeFolders(_ path: String) throws(MediaMuxError) {
    if isFolder(path) { return }
    let parent = folderPart(of: path)
    if parent != path && parent != "." && parent != "/" { try makeFolders(parent) }
    do {
        try prepareFolder(path)
    } catch {
        throw MediaMuxError(error, subject: path)
    }
}
