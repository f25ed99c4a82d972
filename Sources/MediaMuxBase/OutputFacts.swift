#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the planner needs to know about the output path; gathered by the caller
/// so that planning itself touches no file.
package struct OutputFacts: Sendable, Equatable {
    package var exists: Bool
    package var isFolder: Bool
    package var folderExists: Bool
    package var isSameFileAsAnInput: Bool
    /// Sizes of the input files, for the moov room estimate.
    package var inputBytes: Int
    /// The output is a stream (standard output, a caller's writer), not a path.
    package var isStream = false

    /// A stream's facts: nothing exists, everything can be written.
    package static let stream = OutputFacts(exists: false, folderExists: true, inputBytes: 0, isStream: true)

    package init(
        exists: Bool, isFolder: Bool = false, folderExists: Bool, isSameFileAsAnInput: Bool = false, inputBytes: Int, isStream: Bool = false
    ) {
        self.isStream = isStream
        self.exists = exists
        self.isFolder = isFolder
        self.folderExists = folderExists
        self.isSameFileAsAnInput = isSameFileAsAnInput
        self.inputBytes = inputBytes
    }
}

/// Looks at the output path and the inputs, for the planner.
package func outputFacts(output: String, inputs: [String]) -> OutputFacts {
    var info = stat()
    let exists = stat(output, &info) == 0
    let folder = folderPart(of: output)
    var folderInfo = stat()
    let folderExists = stat(folder, &folderInfo) == 0 && (folderInfo.st_mode & S_IFMT) == S_IFDIR
    var sameAsInput = false
    var inputBytes = 0
    for input in inputs {
        var inputInfo = stat()
        guard stat(input, &inputInfo) == 0 else { continue }
        inputBytes += Int(inputInfo.st_size)
        if exists && inputInfo.st_dev == info.st_dev && inputInfo.st_ino == info.st_ino { sameAsInput = true }
    }
    let isFolder = exists && (info.st_mode & S_IFMT) == S_IFDIR
    return OutputFacts(exists: exists, isFolder: isFolder, folderExists: folderExists, isSameFileAsAnInput: sameAsInput, inputBytes: inputBytes)
}
