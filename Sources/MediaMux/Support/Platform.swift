#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MediaMux uses the C library and Dispatch only, not Foundation, so that
// linking it costs what FFmpeg costs and no more.

/// The folder part of a path, as dirname(1) says it ("." for a bare file name).
func folderPart(of path: String) -> String {
    let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
    guard let slash = trimmed.lastIndex(of: "/") else { return "." }
    return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
}

/// The last component of a path.
func namePart(of path: String) -> String {
    path.split(separator: "/").last.map(String.init) ?? path
}

func systemErrorText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}

extension MediaTime {
    /// Seconds with a fixed number of decimals, for messages: "2.772".
    public func secondsText(decimals: Int = 3) -> String {
        fixedPoint(seconds, decimals: decimals)
    }
}

extension MediaMux {
    /// A number with a fixed number of decimals, as MediaMux's messages print
    /// them; for front ends that, like MediaMux, do without Foundation.
    public static func decimal(_ value: Double, places: Int) -> String {
        fixedPoint(value, decimals: places)
    }
}

func fixedPoint(_ value: Double, decimals: Int) -> String {
    guard value.isFinite else { return "\(value)" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int64(scaled / scale)
    let fraction = Int64(scaled - Double(whole) * scale)
    let sign = value < 0 && scaled > 0 ? "-" : ""
    guard decimals > 0 else { return sign + String(whole) }
    let digits = String(fraction)
    return sign + String(whole) + "." + String(repeating: "0", count: decimals - digits.count) + digits
}
