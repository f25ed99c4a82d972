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
        guard let status = fileStatus(path) else {
            throw MediaMuxError.outputNotWritable(path: finalPath, reason: systemErrorText())
        }
        if overwrite {
            if isRegularFile(finalPath), exchangeNames(path, finalPath) {
                // The old output now has the temporary name.
                removeFile(path)
            } else {
                guard renameFile(path, to: finalPath) else {
                    throw MediaMuxError.outputNotWritable(path: finalPath, reason: systemErrorText())
                }
                // Renaming onto a hard link of the same file succeeds without removing the old name.
                removeFile(path)
            }
        } else if linkFile(path, to: finalPath) {
            removeFile(path)
        } else if lastSystemError == .fileExists {
            throw MediaMuxError.outputExists(path: finalPath)
        } else if [.notPermitted, .notSupported, .improperLink, .tooManyLinks].contains(lastSystemError), !pathExists(finalPath) {
            // No hard links on this file system: the existence check and rename are not atomic, but close.
            guard renameFile(path, to: finalPath) else {
                throw MediaMuxError.outputNotWritable(path: finalPath, reason: systemErrorText())
            }
        } else {
            throw MediaMuxError.outputNotWritable(path: finalPath, reason: systemErrorText())
        }
        committed = true
        return Int(status.size)
    }

    package func discard() {
        if !committed { removeFile(path) }
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
            removeFile(path)
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
                if prefixes.contains(String(name[..<dash.upperBound])) { removeFile(folder + "/" + name) }
            }
        }
    }
}
