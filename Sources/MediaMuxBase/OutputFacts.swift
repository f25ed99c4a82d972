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
    let status = fileStatus(output)
    let folderExists = fileStatus(folderPart(of: output))?.isFolder == true
    var sameAsInput = false
    var inputBytes = 0
    for input in inputs {
        guard let inputStatus = fileStatus(input) else { continue }
        inputBytes += Int(inputStatus.size)
        if inputStatus.identity == status?.identity { sameAsInput = true }
    }
    let exists = status != nil
    let isFolder = status?.isFolder == true
    return OutputFacts(exists: exists, isFolder: isFolder, folderExists: folderExists, isSameFileAsAnInput: sameAsInput, inputBytes: inputBytes)
}
