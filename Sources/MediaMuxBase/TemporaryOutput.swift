#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import SystemPackage

/// A file beside the output that becomes the output only when complete. Its
/// hidden name never matches the output's, so a crash or `kill -9` cannot
/// leave a partial file under the output's name.
package final class TemporaryOutput {
    package let finalPath: String
    package let path: String
    private var committed = false

    package init(finalPath: String) {
        self.finalPath = finalPath
        let token = String(UInt64.random(in: 0...UInt64.max), radix: 36)
        path = folderPart(of: finalPath) + "/." + namePart(of: finalPath) + ".mediamux-" + token + ".partial"
    }

    /// Adopts a file already written elsewhere beside the output (a resumable download).
    package init(finalPath: String, existing: String) {
        self.finalPath = finalPath
        path = existing
    }

    /// Moves the file into place and returns its size. Without `overwrite`
    /// an output that appeared meanwhile is not replaced (link fails
    /// atomically). With it, an existing output is swapped out in one step
    /// and then removed (see `exchangeNames`).
    package func commit(overwrite: Bool) throws -> Int {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw MediaMuxError.outputNotWritable(path: finalPath, reason: systemErrorText())
        }
        if overwrite {
            if isRegularFile(finalPath), exchangeNames(path, finalPath) {
                // The old output now has the temporary name.
                unlink(path)
            } else {
                guard rename(path, finalPath) == 0 else {
                    throw MediaMuxError.outputNotWritable(path: finalPath, reason: systemErrorText())
                }
                // Renaming onto a hard link of the same file succeeds without removing the old name.
                unlink(path)
            }
        } else if link(path, finalPath) == 0 {
            unlink(path)
        } else if errno == EEXIST {
            throw MediaMuxError.outputExists(path: finalPath)
        } else if [EPERM, ENOTSUP, EXDEV, EMLINK].contains(errno), access(finalPath, F_OK) != 0 {
            // No hard links on this file system: the existence check and rename are not atomic, but close.
            guard rename(path, finalPath) == 0 else {
                throw MediaMuxError.outputNotWritable(path: finalPath, reason: systemErrorText())
            }
        } else {
            throw MediaMuxError.outputNotWritable(path: finalPath, reason: systemErrorText())
        }
        committed = true
        return Int(info.st_size)
    }

    package func discard() {
        if !committed { unlink(path) }
    }
}

extension TemporaryOutput {
    /// Writes a whole file of `bytes` beside `target` and moves it into
    /// place (see `commit`); returns its size. Nothing is left on failure.
    package static func write(_ bytes: [UInt8], to target: String, overwrite: Bool) throws -> Int {
        let temporary = TemporaryOutput(finalPath: target)
        do {
            try temporary.store(bytes)
            return try temporary.commit(overwrite: overwrite)
        } catch {
            temporary.discard()
            throw error
        }
    }

    /// Writes `bytes` as the whole temporary file.
    package func store(_ bytes: [UInt8]) throws {
        do {
            let file = try FileDescriptor.open(FilePath(path), .writeOnly, options: [.create, .truncate, .closeOnExec], permissions: .createdFile)
            try file.closeAfter { _ = try file.writeAll(toAbsoluteOffset: 0, bytes) }
        } catch {
            unlink(path)
            throw MediaMuxError.outputNotWritable(path: finalPath, reason: systemErrorText(error))
        }
    }
}

extension TemporaryOutput {
    /// Removes what a killed process left beside these outputs: their hidden
    /// temporary files (`.NAME.mediamux-TOKEN.partial`, and what hangs off
    /// them). Each folder is read once. Only for outputs the caller owns, with
    /// no other process writing them: a batch job's files, before it runs.
    package static func removeLeftovers(of finalPaths: [String]) {
        var byFolder: [String: Set<String>] = [:]
        for path in finalPaths {
            byFolder[folderPart(of: path), default: []].insert("." + namePart(of: path) + ".mediamux-")
        }
        for (folder, prefixes) in byFolder {
            for name in folderNames(folder) {
                guard name.contains(".partial"), let dash = name.ranges(of: ".mediamux-").last else { continue }
                if prefixes.contains(String(name[..<dash.upperBound])) { unlink(folder + "/" + name) }
            }
        }
    }
}
