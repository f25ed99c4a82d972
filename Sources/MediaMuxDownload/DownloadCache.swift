import MediaMuxBase
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SystemPackage

/// What the cache keeps about one downloaded URL, beside its bytes.
package struct CacheRecord: Codable, Equatable {
    package var url: String
    package var finalURL: String
    /// The data file's name inside the cache folder.
    package var file: String
    package var bytes: Int64
    package var validators: ResourceValidators
    package var sha256: String?
    package var storedAt: Int64
    package var lastUsedAt: Int64
    /// The data file's modification time (ns) when stored: a file shared with
    /// a `-o` copy may be edited under that name, which voids the entry.
    package var modifiedAt: Int64?
}

/// Downloads kept by URL, in one folder: `KEY-NAME` (the bytes), `KEY.json`
/// (the record), `KEY.partial` and `KEY.partial.json` (an interrupted
/// transfer and what it was fetching), `KEY.lock`. KEY is the SHA-256 of the
/// URL. Files appear under their final names only by rename, and every
/// change to a key happens under an exclusive flock of its lock file, so
/// tasks and processes downloading the same URL take turns.
package struct DownloadCache {
    package let directory: String

    /// `explicit`, else `$XDG_CACHE_HOME/mediamux`, else `~/.cache/mediamux`.
    /// Front ends pass their own folder (muxctl: `~/.cache/muxctl`).
    package static func resolveDirectory(_ explicit: String?, environment: (String) -> String? = environmentValue) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let xdg = environment("XDG_CACHE_HOME") { return xdg + "/mediamux" }
        return (environment("HOME") ?? ".") + "/.cache/mediamux"
    }

    package init(directory: String) throws(MediaMuxError) {
        self.directory = directory
        try makeFolders(directory)
    }

    package func key(for url: String) -> String {
        String(FileDigest.sha256(of: Array(url.utf8)).prefix(32))
    }

    package func path(_ name: String) -> String { directory + "/" + name }
    package func recordPath(_ key: String) -> String { path(key + ".json") }
    package func partialPath(_ key: String) -> String { path(key + ".partial") }
    package func partialValidatorsPath(_ key: String) -> String { path(key + ".partial.json") }

    /// The data file name for a URL: the key, then the URL's own file name, tidied.
    package func dataFileName(key: String, url: String) -> String {
        let withoutQuery = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        let last = withoutQuery.split(separator: "/").last.map(String.init) ?? ""
        let tidy = String(last.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_" ? $0 : "_" }.prefix(80))
        return key + "-" + (tidy.isEmpty || tidy.contains("://") ? "download" : tidy)
    }

    /// The complete copy of a URL, if the cache holds one untouched.
    package func record(_ key: String) -> CacheRecord? {
        guard let record: CacheRecord = readJSONFile(recordPath(key)), fileSize(path(record.file)) == record.bytes,
              record.modifiedAt == nil || record.modifiedAt == modificationTime(path(record.file)) else { return nil }
        return record
    }

    package func partialValidators(_ key: String) -> ResourceValidators? {
        guard fileSize(partialPath(key)) > 0 else { return nil }
        return readJSONFile(partialValidatorsPath(key))
    }

    package func savePartialValidators(_ key: String, _ validators: ResourceValidators) throws {
        try writeJSONFile(validators, to: partialValidatorsPath(key))
    }

    package func discardPartial(_ key: String) {
        removeFile(partialPath(key))
        removeFile(partialValidatorsPath(key))
    }

    /// Moves the finished partial file into place and records it.
    package func commit(_ key: String, record: CacheRecord) throws {
        if let old: CacheRecord = readJSONFile(recordPath(key)), old.file != record.file { removeFile(path(old.file)) }
        guard renameFile(partialPath(key), to: path(record.file)) else {
            throw MediaMuxError.cache(path: path(record.file), reason: systemErrorText())
        }
        var stored = record
        stored.modifiedAt = modificationTime(path(record.file))
        try writeJSONFile(stored, to: recordPath(key))
        removeFile(partialValidatorsPath(key))
    }

    package func touch(_ key: String, record: CacheRecord) {
        var used = record
        used.lastUsedAt = secondsSince1970()
        try? writeJSONFile(used, to: recordPath(key))
    }

    /// Every complete entry, most recently used first.
    package func entries() -> [(key: String, record: CacheRecord)] {
        var found: [(String, CacheRecord)] = []
        for name in folderNames(directory) {
            guard name.hasSuffix(".json"), !name.hasSuffix(".partial.json") else { continue }
            let key = String(name.dropLast(5))
            if let record = record(key) { found.append((key, record)) }
        }
        return found.sorted { $0.1.lastUsedAt > $1.1.lastUsedAt }
    }

    /// Removes least recently used entries until the cache fits `limit`,
    /// never `keeping` and never one that another task or process holds.
    package func trim(to limit: Int64, keeping: String) {
        let all = entries()
        var total = all.reduce(Int64(0)) { $0 + $1.record.bytes }
        for (key, record) in all.reversed() where total > limit && key != keeping {
            guard let lock = tryLock(key) else { continue }
            remove(key, record: record)
            releaseLock(lock)
            total -= record.bytes
        }
    }

    /// Removes every entry and partial transfer nobody is using; returns how many files went.
    package func clear() -> Int {
        let names = folderNames(directory)
        var removed = 0
        // Every file of a key starts with the key: 32 hex digits.
        let keys = Set(names.filter { $0.hasSuffix(".lock") }.map { String($0.prefix(32)) })
        for key in keys {
            guard let lock = tryLock(key) else { continue }
            for name in names where name.hasPrefix(key) && !name.hasSuffix(".lock") && removeFile(path(name)) { removed += 1 }
            releaseLock(lock)
        }
        return removed
    }

    package func remove(_ key: String, record: CacheRecord) {
        removeFile(recordPath(key))
        removeFile(path(record.file))
        discardPartial(key)
    }

    /// The key's lock if it is free now, else nil.
    private func tryLock(_ key: String) -> Int32? {
        tryLockFile(path(key + ".lock"))
    }

    private func releaseLock(_ descriptor: Int32) {
        unlockFile(descriptor)
    }

    /// Holds the key's lock (an exclusive flock, shared with other processes) while `body` runs.
    package func withLock<T>(_ key: String, _ body: () async throws -> T) async throws -> T {
        try await withFileLock(path(key + ".lock"), removingAfter: false, failure: { MediaMuxError.cache(path: directory, reason: $0) }, body)
    }
}

private func makeFolders(_ path: String) throws(MediaMuxError) {
    var built = path.hasPrefix("/") ? "" : "."
    for part in path.split(separator: "/") {
        built += "/" + part
        if !makeFolder(built) {
            throw MediaMuxError.cache(path: path, reason: systemErrorText())
        }
    }
}

package func readJSONFile<T: Decodable>(_ path: String) -> T? {
    guard let bytes = readWholeFile(path, limit: 1 << 20) else { return nil }
    return try? JSONDecoder().decode(T.self, from: Data(bytes))
}

/// Writes beside the target and renames, so a reader never sees half a record.
package func writeJSONFile<T: Encodable>(_ value: T, to path: String) throws {
    let data = try JSONEncoder().encode(value)
    let temporary = path + ".tmp\(processID)"
    do {
        let file = try FileDescriptor.open(
            FilePath(temporary), .writeOnly, options: [.create, .truncate, .closeOnExec], permissions: .createdFile)
        try file.closeAfter { _ = try file.writeAll(toAbsoluteOffset: 0, data) }
    } catch {
        removeFile(temporary)
        throw MediaMuxError.cache(path: path, reason: systemErrorText(error))
    }
    guard renameFile(temporary, to: path) else {
        let reason = systemErrorText()
        removeFile(temporary)
        throw MediaMuxError.cache(path: path, reason: reason)
    }
}
