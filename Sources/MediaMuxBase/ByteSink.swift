internal import SystemPackage

/// Where an output streamed as it is made goes: bytes in order, never
/// sought back to. Errors name the output (`name`) and say what stopped it.
package protocol ByteSink: AnyObject, Sendable {
    /// The output as errors name it: a path, or "standard output".
    var name: String { get }
    /// Takes `bytes` (only for the call) or throws `MediaMuxError` when
    /// the output can take no more: a full disk, a reader that stopped.
    func write(_ bytes: UnsafeRawBufferPointer) throws
    /// All bytes are written: what is buffered goes out.
    func finish() throws
}

/// A file descriptor written in order: standard output (a pipe, a
/// terminal, a file), or a file this sink creates.
package final class DescriptorSink: ByteSink {
    package let name: String
    private let descriptor: FileDescriptor
    private let owned: Bool

    /// Standard output; the process must ignore SIGPIPE (see
    /// `ignoreBrokenPipeSignal`) for a reader that stops to be an error
    /// rather than the process's end.
    package static func standardOutput() -> DescriptorSink {
        DescriptorSink(name: "standard output", descriptor: .standardOutput, owned: false)
    }

    /// A new file at `path`, which must not exist yet; errors name `name`.
    package convenience init(creating path: String, name: String) throws {
        do {
            let file = try FileDescriptor.open(
                FilePath(path), .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec], permissions: .createdFile)
            self.init(name: name, descriptor: file, owned: true)
        } catch {
            throw MediaMuxError.outputNotWritable(path: name, reason: systemErrorText(error))
        }
    }

    /// A file already open as `descriptor`, written from its start through
    /// a descriptor of its own; errors name `name`.
    package convenience init(duplicating descriptor: Int32, name: String) throws {
        do {
            let file = try FileDescriptor(rawValue: descriptor).duplicate()
            self.init(name: name, descriptor: file, owned: true)
        } catch {
            throw MediaMuxError.outputNotWritable(path: name, reason: systemErrorText(error))
        }
    }

    private init(name: String, descriptor: FileDescriptor, owned: Bool) {
        self.name = name
        self.descriptor = descriptor
        self.owned = owned
    }

    deinit {
        if owned { try? descriptor.close() }
    }

    package func write(_ bytes: UnsafeRawBufferPointer) throws {
        do {
            _ = try descriptor.writeAll(bytes)
        } catch Errno.brokenPipe {
            throw MediaMuxError.outputNotWritable(path: name, reason: "its reader stopped reading: broken pipe")
        } catch {
            throw MediaMuxError.outputNotWritable(path: name, reason: systemErrorText(error))
        }
    }

    package func finish() throws {}
}
