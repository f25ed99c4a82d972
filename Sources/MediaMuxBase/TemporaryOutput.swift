internal import SystemPackage

/// A file beside the output that becomes the output only when complete. Its
/// hidden name never matches the output's, so a crash or `kill -9` cannot
/// leave a partial file under the output's name.
///
/// An output made `anonymous` is, where Linux allows (O_TMPFILE, on ext4,
/// xfs, btrfs, tmpfs and most others), a file with no name at all in the
/// output's folder, named only when complete: a process killed meanwhile,
/// with SIGKILL too, leaves nothing behind. Its `path` is then its
/// `/proc/self/fd` entry, which FFmpeg and the rewriters open as a file.
/// Elsewhere it has the hidden name, and what a killed process left under
/// such names is cleared by the next output of the same name
/// (`removeStaleLeftovers`).
package final class TemporaryOutput {
    package let finalPath: String
    package let path: String
    /// The anonymous file, open until it is named or dropped.
    private var anonymous: Int32?
    private var committed = false

    package init(finalPath: String) {
        self.finalPath = finalPath
        path = Self.hiddenName(for: finalPath)
    }

    /// An output written as an anonymous file where the system allows.
    package init(anonymous finalPath: String) {
        self.finalPath = finalPath
        var opened = openAnonymousFile(in: folderPart(of: finalPath))
        // Writers open it through /proc (FFmpeg takes a path), which a chroot may lack.
        if let descriptor = opened, !pathExists("/proc/self/fd/\(descriptor)") {
            closeDescriptor(descriptor)
            opened = nil
        }
        if let descriptor = opened {
            anonymous = descriptor
            path = "/proc/self/fd/\(descriptor)"
        } else {
            Self.removeStaleLeftovers(of: finalPath)
            path = Self.hiddenName(for: finalPath)
        }
    }

    deinit {
        if let anonymous { closeDescriptor(anonymous) }
    }

    /// Whether the file has no name until it is complete.
    package var isAnonymous: Bool { anonymous != nil }

    private static func hiddenName(for finalPath: String) -> String {
        let token = String(UInt64.random(in: 0...UInt64.max), radix: 36)
        return folderPart(of: finalPath) + "/." + namePart(of: finalPath) + ".mediamux-" + token + ".partial"
    }

    /// A sink writing the file from its start (a new file at the hidden
    /// name, or the anonymous one); errors name `finalPath`.
    package func sink() throws -> DescriptorSink {
        guard let anonymous else { return try DescriptorSink(creating: path, name: finalPath) }
        return try DescriptorSink(duplicating: anonymous, name: finalPath)
    }

    /// Names the anonymous file, then moves it into place as a named one is.
    private func commitAnonymous(_ descriptor: Int32, overwrite: Bool) throws -> Int {
        guard let size = openFileSize(descriptor) else {
            throw MediaMuxError.outputNotWritable(path: finalPath, reason: systemErrorText())
        }
        if !overwrite {
            // Fails atomically when the output appeared meanwhile.
            guard linkAnonymousFile(descriptor, to: finalPath) else {
                if lastSystemError == .fileExists { throw MediaMuxError.outputExists(path: finalPath) }
                throw MediaMuxError.outputNotWritable(path: finalPath, reason: systemErrorText())
            }
        } else {
            let named = TemporaryOutput(finalPath: finalPath)
            guard linkAnonymousFile(descriptor, to: named.path) else {
                throw MediaMuxError.outputNotWritable(path: finalPath, reason: systemErrorText())
            }
            do {
                _ = try named.commit(overwrite: true)
            } catch {
                named.discard()
                throw error
            }
        }
        closeDescriptor(descriptor)
        anonymous = nil
        committed = true
        return Int(size)
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
        if let anonymous { return try commitAnonymous(anonymous, overwrite: overwrite) }
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
        if let anonymous {
            // Its last descriptor gone, the file is gone.
            closeDescriptor(anonymous)
            self.anonymous = nil
        } else if !committed {
            removeFile(path)
        }
    }
}

extension TemporaryOutput {
    /// Writes a whole file of `bytes` beside `target` and moves it into
    /// place (see `commit`); returns its size. Nothing is left on failure.
    package static func write(_ bytes: [UInt8], to target: String, overwrite: Bool) throws -> Int {
        let temporary = TemporaryOutput(anonymous: target)
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
    /// How long a hidden temporary file goes unwritten before it is taken
    /// for one a killed process left: every writer writes it continually.
    static let staleAfter: Int64 = 15 * 60 * 1_000_000_000

    /// Removes the hidden temporary files of `finalPath`'s name that nothing
    /// has written for `staleAfter`: what killed processes left where no
    /// anonymous file could be made. Newer ones may be another process's
    /// work in progress, and stay.
    static func removeStaleLeftovers(of finalPath: String) {
        let folder = folderPart(of: finalPath)
        let prefix = "." + namePart(of: finalPath) + ".mediamux-"
        let now = secondsSince1970() * 1_000_000_000
        for name in folderNames(folder) where name.hasPrefix(prefix) && name.hasSuffix(".partial") {
            let path = folder + "/" + name
            if let status = fileStatus(path), status.isRegularFile, now - status.modified > staleAfter { removeFile(path) }
        }
    }

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
