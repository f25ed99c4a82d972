#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MediaMux uses the C library and Dispatch only, not Foundation, so that
// linking it costs what FFmpeg costs and no more.

/// The folder part of a path, as dirname(1) says it ("." for a bare file name).
package func folderPart(of path: String) -> String {
    let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
    guard let slash = trimmed.lastIndex(of: "/") else { return "." }
    return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
}

/// The last component of a path.
package func namePart(of path: String) -> String {
    path.split(separator: "/").last.map(String.init) ?? path
}

/// Swaps the names of two existing files in one step (Linux renameat2 with
/// RENAME_EXCHANGE); false where that is not possible (another system, a
/// file system without it, either name missing), and nothing changed.
///
/// Replacing a file this way instead of by rename(2) keeps the name always
/// holding a complete file, and spares ext4's `auto_da_alloc`: a rename over
/// an existing file makes ext4 allocate and start writing back the whole new
/// file before rename returns (0.3-0.8 s for 450 MB here).
package func exchangeNames(_ first: String, _ second: String) -> Bool {
    #if os(Linux)
    typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UInt32) -> Int32
    // glibc has it since 2.28, but Swift's Glibc module does not declare it.
    guard let symbol = dlsym(nil, "renameat2") else { return false }
    let renameat2 = unsafeBitCast(symbol, to: RenameAt2.self)
    let exchange: UInt32 = 1 << 1
    return renameat2(AT_FDCWD, first, AT_FDCWD, second, exchange) == 0
    #else
    return false
    #endif
}

package func isRegularFile(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
}

/// Whether `path` is a folder (following links).
package func isFolder(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
}

/// The names in a folder, hidden ones included and "." and ".." not, in
/// the order the file system gives them; empty when it cannot be read.
package func folderNames(_ path: String) -> [String] {
    guard let folder = opendir(path) else { return [] }
    defer { closedir(folder) }
    var names: [String] = []
    // The name is read in place, up to its NUL: a record is only as long as
    // its name, so copying the whole dirent would read past it.
    let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name) ?? 0
    while let entry = readdir(folder) {
        let name = String(cString: (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self))
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

package func systemErrorText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}

extension MediaTime {
    /// Seconds with a fixed number of decimals, for messages: "2.772".
    ///
    /// - Parameter decimals: Digits after the point, rounded; 0 for whole seconds.
    /// - Returns: The text, with a minus sign for a negative time.
    public func secondsText(decimals: Int = 3) -> String {
        fixedPoint(seconds, decimals: decimals)
    }
}

/// Items as a sentence says them: "a", "a and b", "a, b and c".
///
/// - Parameters:
///   - items: The items, in order.
///   - conjunction: The word before the last one ("and", "or").
package func spokenList(_ items: [String], _ conjunction: String = "and") -> String {
    guard let last = items.last else { return "" }
    return items.count == 1 ? last : items.dropLast().joined(separator: ", ") + " \(conjunction) " + last
}

/// A size for people: "812 bytes", "4.2 MiB".
package func formatBytes(_ bytes: Int) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(bytes)
    var unit = 0
    while value >= 1024 && unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    return unit == 0 ? "\(bytes) bytes" : "\(fixedPoint(value, decimals: 1)) \(units[unit])"
}

package func fixedPoint(_ value: Double, decimals: Int) -> String {
    guard value.isFinite else { return "\(value)" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    // Beyond Int64 (a time a file or a caller made huge): plain notation, not a trap.
    guard scaled < 0x1p63 else { return "\(value)" }
    let whole = Int64(scaled / scale)
    let fraction = Int64(scaled - Double(whole) * scale)
    let sign = value < 0 && scaled > 0 ? "-" : ""
    guard decimals > 0 else { return sign + String(whole) }
    let digits = String(fraction)
    return sign + String(whole) + "." + String(repeating: "0", count: decimals - digits.count) + digits
}

extension String {
    package func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}

extension Duration {
    package var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}

/// A variable of the process environment; nil when unset or empty.
package func environmentValue(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    let text = String(cString: value)
    return text.isEmpty ? nil : text
}
