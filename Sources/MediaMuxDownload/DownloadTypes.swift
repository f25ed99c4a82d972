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
    public var connectTimeout: Duration
    /// How long the server may send nothing before the attempt counts as failed.
    public var idleTimeout: Duration
    public var maximumRedirects: Int
    /// Attempts in all, for transient failures (connection errors, 5xx, 408, 429, cut bodies).
    public var maximumAttempts: Int
    /// The first retry waits this long, each next one twice as long (or what Retry-After says).
    public var retryDelay: Duration
    /// Probe the body and refuse anything that is not audio (an HTML error page served with 200, say).
    public var requireAudio: Bool
    /// Keep an interrupted transfer's bytes so the next download of the URL resumes.
    public var keepsPartialForResume: Bool

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
    public var bytesReceived: Int64
    /// Nil when the server does not say (no Content-Length).
    public var totalBytes: Int64?
    /// Over the last half second, or since the request went out while less
    /// than half a second has passed; 0 until bytes arrive.
    public var bytesPerSecond: Double
    /// How long the rest takes at `bytesPerSecond`: nil while the total or
    /// the rate is unknown, zero once the body is complete.
    public var remaining: Duration?

    public init(bytesReceived: Int64, totalBytes: Int64? = nil, bytesPerSecond: Double = 0, remaining: Duration? = nil) {
        self.bytesReceived = bytesReceived
        self.totalBytes = totalBytes
        self.bytesPerSecond = bytesPerSecond
        self.remaining = remaining
    }

    public var fraction: Double? {
        guard let totalBytes, totalBytes > 0 else { return nil }
        return min(Double(bytesReceived) / Double(totalBytes), 1)
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
    public var url: String
    /// The URL after redirects.
    public var finalURL: String
    public var bytes: Int64
    public var contentType: String?
    public var source: DownloadSource
    /// Bytes that an earlier, interrupted transfer had already fetched.
    public var resumedFrom: Int64
    /// Requests made, retries included.
    public var attempts: Int
    public var sha256: String?
    /// How long the call took, waits for other downloads of the URL included.
    public var elapsed: Duration
    /// Things the user should know, such as an offline fallback.
    public var warnings: [String]

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
    public var url: String
    public var path: String
    public var bytes: Int64
    public var contentType: String?
    /// Seconds since 1970.
    public var storedAt: Int64
    public var lastUsedAt: Int64

    public init(url: String, path: String, bytes: Int64, contentType: String?, storedAt: Int64, lastUsedAt: Int64) {
        self.url = url
        self.path = path
        self.bytes = bytes
        self.contentType = contentType
        self.storedAt = storedAt
        self.lastUsedAt = lastUsedAt
    }
}
