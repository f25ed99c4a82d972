import MediaMuxBase
/// How a download behaves. The defaults suit a soundtrack on a web server.
public struct DownloadOptions: Sendable, Equatable {
    /// Where cached downloads live; nil means `$XDG_CACHE_HOME/mediamux`,
    /// else `~/.cache/mediamux`.
    public var cacheDirectory: String?
    /// Keep downloads in the cache and revalidate them instead of fetching again.
    public var useCache: Bool
    /// Lowercase hex SHA-256 the body must have.
    public var expectedSHA256: String?
    /// Refuse bodies larger than this.
    public var maximumBytes: Int64
    /// The cache is trimmed, least recently used first, to this size.
    public var maximumCacheBytes: Int64
    /// How long a connection may take to open before the attempt counts as failed.
    public var connectTimeout: Duration
    /// How long the server may send nothing before the attempt counts as failed.
    public var idleTimeout: Duration
    /// Redirects followed before the download fails with `.network`.
    public var maximumRedirects: Int
    /// Attempts in all, for transient failures (connection errors, 5xx, 408, 429, cut bodies).
    public var maximumAttempts: Int
    /// The first retry waits this long, each next one twice as long (or what Retry-After says).
    public var retryDelay: Duration
    /// Probe the body and refuse anything that is not audio (an HTML error page served with 200, say).
    public var requireAudio: Bool
    /// Keep an interrupted transfer's bytes so the next download of the URL resumes.
    public var keepsPartialForResume: Bool

    /// Download options; every one has a default.
    ///
    /// - Parameters:
    ///   - cacheDirectory: Where cached downloads live; nil for the default.
    ///   - useCache: Keep downloads in the cache and revalidate them.
    ///   - expectedSHA256: The body's SHA-256 in hex (either case); nil checks none.
    ///   - maximumBytes: The largest body taken: 2 GiB unless told otherwise.
    ///   - maximumCacheBytes: The size the cache is trimmed to: 10 GiB unless told otherwise.
    ///   - connectTimeout: How long a connection may take to open.
    ///   - idleTimeout: How long the server may send nothing.
    ///   - maximumRedirects: Redirects followed.
    ///   - maximumAttempts: Requests in all, retries included.
    ///   - retryDelay: The wait before the first retry, doubled for each next one.
    ///   - requireAudio: Refuse a body that is not audio.
    ///   - keepsPartialForResume: Keep an interrupted transfer's bytes for the next download.
    public init(
        cacheDirectory: String? = nil, useCache: Bool = true, expectedSHA256: String? = nil,
        maximumBytes: Int64 = 2 << 30, maximumCacheBytes: Int64 = 10 << 30,
        connectTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(30),
        maximumRedirects: Int = 5, maximumAttempts: Int = 5, retryDelay: Duration = .milliseconds(500),
        requireAudio: Bool = true, keepsPartialForResume: Bool = true
    ) {
        self.cacheDirectory = cacheDirectory
        self.useCache = useCache
        self.expectedSHA256 = expectedSHA256?.lowercased()
        self.maximumBytes = maximumBytes
        self.maximumCacheBytes = maximumCacheBytes
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
        self.maximumRedirects = maximumRedirects
        self.maximumAttempts = maximumAttempts
        self.retryDelay = retryDelay
        self.requireAudio = requireAudio
        self.keepsPartialForResume = keepsPartialForResume
    }
}

/// How far a download has come; handed out at most ten times a second.
public struct DownloadProgress: Sendable, Equatable {
    /// Bytes of the body on disk so far, those of an earlier transfer resumed included.
    public var bytesReceived: Int64
    /// Nil when the server does not say (no Content-Length).
    public var totalBytes: Int64?
    /// Over the last half second, or since the request went out while less
    /// than half a second has passed; 0 until bytes arrive.
    public var bytesPerSecond: Double
    /// How long the rest takes at `bytesPerSecond`: nil while the total or
    /// the rate is unknown, zero once the body is complete.
    public var remaining: Duration?

    /// A progress report; for tests.
    ///
    /// - Parameters:
    ///   - bytesReceived: Bytes of the body so far.
    ///   - totalBytes: The body's length, when the server says.
    ///   - bytesPerSecond: The recent rate.
    ///   - remaining: How long the rest takes, when known.
    public init(bytesReceived: Int64, totalBytes: Int64? = nil, bytesPerSecond: Double = 0, remaining: Duration? = nil) {
        self.bytesReceived = bytesReceived
        self.totalBytes = totalBytes
        self.bytesPerSecond = bytesPerSecond
        self.remaining = remaining
    }

    /// `bytesReceived` over `totalBytes`, at most 1; nil while the total is unknown.
    public var fraction: Double? {
        guard let totalBytes, totalBytes > 0 else { return nil }
        return min(Double(bytesReceived) / Double(totalBytes), 1)
    }
}

extension DownloadProgress: WorkProgress {
    /// `fraction`: nil while the server has not given the length.
    public var completed: Double? { fraction }

    /// "4.2 MiB of 9.3 MiB, 2.1 MiB/s, 3 s left", or "4.2 MiB so far" without a length.
    public var description: String {
        let received = formatBytes(Int(clamping: bytesReceived))
        var text = totalBytes.map { "\(received) of \(formatBytes(Int(clamping: $0)))" } ?? "\(received) so far"
        if bytesPerSecond > 0 {
            text += ", \(formatBytes(Int(bytesPerSecond)))/s"
            if let remaining { text += ", \(Int(remaining.seconds.rounded(.up))) s left" }
        }
        return text
    }
}

/// Where a downloaded file came from.
public enum DownloadSource: String, Sendable, Equatable, Encodable {
    /// Fetched (or finished fetching) over the network.
    case network
    /// The cached copy, confirmed current by the server (304, no body transferred).
    case revalidatedCache
    /// The cached copy, used because the server could not be reached.
    case offlineCache
}

/// Encodable for reports, with the property names as keys, except that
/// `elapsed` is written as `elapsedSeconds`, a number of seconds.
public struct DownloadResult: Sendable, Equatable {
    /// The file on disk.
    public var path: String
    /// The URL asked for.
    public var url: String
    /// The URL after redirects.
    public var finalURL: String
    /// The file's size in bytes.
    public var bytes: Int64
    /// The Content-Type the server gave, if any.
    public var contentType: String?
    /// Fetched, or taken from the cache, and why.
    public var source: DownloadSource
    /// Bytes that an earlier, interrupted transfer had already fetched.
    public var resumedFrom: Int64
    /// Requests made, retries included.
    public var attempts: Int
    /// The body's SHA-256 in lowercase hex, when it was checked against
    /// `DownloadOptions.expectedSHA256` (now, or when the cached copy was
    /// stored); nil otherwise.
    public var sha256: String?
    /// How long the call took, waits for other downloads of the URL included.
    public var elapsed: Duration
    /// Things the user should know, such as an offline fallback.
    public var warnings: [String]

    /// A result as a download reports it; for tests.
    ///
    /// - Parameters:
    ///   - path: The file on disk.
    ///   - url: The URL asked for.
    ///   - finalURL: The URL after redirects.
    ///   - bytes: The file's size.
    ///   - contentType: The server's Content-Type.
    ///   - source: Fetched, or from the cache.
    ///   - resumedFrom: Bytes an earlier transfer had fetched.
    ///   - attempts: Requests made.
    ///   - sha256: The body's SHA-256.
    ///   - elapsed: How long the call took.
    ///   - warnings: Things the user should know.
    public init(
        path: String, url: String, finalURL: String, bytes: Int64, contentType: String? = nil, source: DownloadSource = .network,
        resumedFrom: Int64 = 0, attempts: Int = 1, sha256: String? = nil, elapsed: Duration = .zero, warnings: [String] = []
    ) {
        self.path = path
        self.url = url
        self.finalURL = finalURL
        self.bytes = bytes
        self.contentType = contentType
        self.source = source
        self.resumedFrom = resumedFrom
        self.attempts = attempts
        self.sha256 = sha256
        self.elapsed = elapsed
        self.warnings = warnings
    }
}

extension DownloadResult: Encodable {
    private enum CodingKeys: String, CodingKey {
        case path, url, finalURL, bytes, contentType, source, resumedFrom, attempts, sha256, elapsedSeconds, warnings
    }

    /// Writes the result with its property names as keys, `elapsed` as
    /// `elapsedSeconds` (a number), and `contentType` and `sha256` only when set.
    ///
    /// - Parameter encoder: The encoder to write into.
    /// - Throws: What the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(path, forKey: .path)
        try container.encode(url, forKey: .url)
        try container.encode(finalURL, forKey: .finalURL)
        try container.encode(bytes, forKey: .bytes)
        try container.encodeIfPresent(contentType, forKey: .contentType)
        try container.encode(source, forKey: .source)
        try container.encode(resumedFrom, forKey: .resumedFrom)
        try container.encode(attempts, forKey: .attempts)
        try container.encodeIfPresent(sha256, forKey: .sha256)
        try container.encode(elapsed.seconds, forKey: .elapsedSeconds)
        try container.encode(warnings, forKey: .warnings)
    }
}

/// One file in the download cache.
public struct CachedDownload: Sendable, Equatable, Encodable {
    /// The URL it was downloaded from.
    public var url: String
    /// The file in the cache.
    public var path: String
    /// Its size in bytes.
    public var bytes: Int64
    /// The Content-Type the server gave, if any.
    public var contentType: String?
    /// When it was stored, in seconds since 1970.
    public var storedAt: Int64
    /// When a download last used it, in seconds since 1970.
    public var lastUsedAt: Int64

    /// An entry as `cachedDownloads(in:)` lists it; for tests.
    ///
    /// - Parameters:
    ///   - url: The URL it was downloaded from.
    ///   - path: The file in the cache.
    ///   - bytes: Its size.
    ///   - contentType: The server's Content-Type.
    ///   - storedAt: When it was stored, in seconds since 1970.
    ///   - lastUsedAt: When it was last used, in seconds since 1970.
    public init(url: String, path: String, bytes: Int64, contentType: String?, storedAt: Int64, lastUsedAt: Int64) {
        self.url = url
        self.path = path
        self.bytes = bytes
        self.contentType = contentType
        self.storedAt = storedAt
        self.lastUsedAt = lastUsedAt
    }
}
