import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
@testable import MediaMuxBase

/// A real HTTP/1.1 server on SwiftNIO for download tests, bound only to
/// 127.0.0.1 on an ephemeral port, with per-path fault injection.
///
/// Resources are served with correct validators and Range semantics (206,
/// 416, If-Range, If-None-Match, If-Modified-Since, HEAD, keep-alive).
/// Faults are queued per path and consumed one per request to that path.
final class TestHTTPServer: Sendable {
    enum Fault: Sendable {
        /// Headers with the full Content-Length, then `bytes` of body, then the connection is closed.
        case cutAfter(bytes: Int)
        /// `bytes` of body, then nothing for `seconds`, then the connection is closed.
        case stallAfter(bytes: Int, seconds: Double)
        /// This status (text/plain body, optional Retry-After); the resource is not served.
        case status(Int, retryAfter: String? = nil, body: String = "")
        /// 200 with the full body even if Range was requested.
        case ignoreRange
        /// From this request on, the resource's ETag is this (its Last-Modified also moves a day later).
        case changeETag(String)
        /// From this request on, the resource has this body and ETag (its Last-Modified also moves a day later).
        case replaceBody([UInt8], etag: String)
        /// Content-Length declared as real + extra; the real body is sent, then the connection is closed.
        case wrongContentLength(extra: Int)
        /// No Content-Length: an HTTP/1.0 answer whose body ends when the server
        /// closes the connection.
        case noContentLength
        /// A chunked body cut after `bytes`, without its last chunk: a truncated body.
        case chunkedCut(bytes: Int)
        /// A small HTML page with Content-Type text/html.
        case html(status: Int = 200)
        /// `{"error":"not found"}` with 200 and application/json.
        case json
        /// A redirect with this Location (a path or an absolute URL, sent as given).
        case redirect(to: String, status: Int = 302)
        /// Waits, then responds normally.
        case delay(seconds: Double)
        /// The body in pieces of `bytes`, each after a pause of `seconds`: a slow server.
        case paced(bytes: Int, seconds: Double)
    }

    struct RecordedRequest: Sendable {
        var method: String
        /// The request target without its query string.
        var path: String
        /// The full request target as sent.
        var uri: String
        var headers: [(String, String)]
        /// 0 until the response head has been written.
        var status: Int
        /// Body bytes handed to the socket (HEAD and 304 send none).
        var bodyBytesSent: Int
        /// True once the response is complete or the connection was closed on purpose.
        var finished: Bool

        /// The first value of the header `name`, compared case-insensitively.
        func header(_ name: String) -> String? {
            headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
        }
    }

    let port: Int
    private let state: TestHTTPServerState
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let scheme: String

    private init(port: Int, state: TestHTTPServerState, group: MultiThreadedEventLoopGroup, channel: any Channel, scheme: String) {
        self.port = port
        self.state = state
        self.group = group
        self.channel = channel
        self.scheme = scheme
    }

    /// - Parameter tls: the certificate and key to speak HTTPS with (PEM); plain HTTP without.
    static func start(tls: (certificate: String, key: String)? = nil) async throws -> TestHTTPServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let state = TestHTTPServerState()
        do {
            let context = try tls.map { tls in
                try NIOSSLContext(configuration: .makeServerConfiguration(
                    certificateChain: [.certificate(NIOSSLCertificate(bytes: Array(tls.certificate.utf8), format: .pem))],
                    privateKey: .privateKey(NIOSSLPrivateKey(bytes: Array(tls.key.utf8), format: .pem))))
            }
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let context { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context)) }
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(TestHTTPHandler(state: state))
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
            guard let port = channel.localAddress?.port else {
                try? await channel.close()
                throw ChannelError.unknownLocalAddress
            }
            return TestHTTPServer(port: port, state: state, group: group, channel: channel, scheme: tls == nil ? "http" : "https")
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    var baseURL: String { "\(scheme)://127.0.0.1:\(port)" }

    func url(_ path: String) -> String {
        path.hasPrefix("/") ? baseURL + path : baseURL + "/" + path
    }

    /// Serves a resource at `path` (replacing any resource or permanent redirect there).
    func serve(
        _ path: String,
        body: [UInt8],
        contentType: String = "audio/mp4",
        etag: String? = "\"v1\"",
        lastModified: String? = "Wed, 21 Oct 2026 07:28:00 GMT",
        acceptRanges: Bool = true
    ) {
        let resource = TestHTTPServerState.Resource(
            body: body, contentType: contentType, etag: etag, lastModified: lastModified, acceptRanges: acceptRanges)
        state.storage.withLock {
            $0.redirects[path] = nil
            $0.resources[path] = resource
        }
    }

    /// Appends faults to `path`'s queue; one is consumed per request, and with
    /// an empty queue requests are served normally.
    func inject(_ path: String, _ faults: [Fault]) {
        state.storage.withLock { $0.faults[path, default: []].append(contentsOf: faults) }
    }

    /// Every request to `path` answers `status` with Location `to` (sent as given).
    func redirect(_ path: String, to: String, status: Int = 302) {
        state.storage.withLock {
            $0.resources[path] = nil
            $0.redirects[path] = (to, status)
        }
    }

    /// Requests whose path (or full target) is `path`, in arrival order.
    func requests(_ path: String) -> [RecordedRequest] {
        state.storage.withLock { $0.records.filter { $0.path == path || $0.uri == path } }
    }

    var allRequests: [RecordedRequest] {
        state.storage.withLock { $0.records }
    }

    /// Closes the listener and every open connection. Safe to call twice.
    func stop() async throws {
        let first = state.storage.withLock { storage in
            defer { storage.stopped = true }
            return !storage.stopped
        }
        guard first else { return }
        try? await channel.close()
        try await group.shutdownGracefully()
    }
}

// MARK: - Shared state

final class TestHTTPServerState: Sendable {
    struct Resource: Sendable {
        var body: [UInt8]
        var contentType: String
        var etag: String?
        var lastModified: String?
        var acceptRanges: Bool
    }

    struct Storage: Sendable {
        var resources: [String: Resource] = [:]
        var redirects: [String: (String, Int)] = [:]
        var faults: [String: [TestHTTPServer.Fault]] = [:]
        var records: [TestHTTPServer.RecordedRequest] = []
        var stopped = false
    }

    enum Ending: Sendable, Equatable {
        /// Send the whole body and `.end`; keep the connection if the client wants it.
        case complete
        /// Send at most `n` body bytes, then close.
        case cut(Int)
        /// Send at most `n` body bytes, wait, then close.
        case stall(Int, Double)
        /// Send the body (without `.end`), then close.
        case closeAfterBody
    }

    struct Plan: Sendable {
        var status: Int
        var headers: [(String, String)]
        var body: ArraySlice<UInt8>
        var ending: Ending = .complete
        var delay: Double = 0
        /// Answer as HTTP/1.0, so a body without Content-Length goes unframed (not chunked).
        var http10 = false
        /// Body pieces of this many bytes with this pause before each, instead of 64 KiB as fast as the client reads.
        var pace: (bytes: Int, seconds: Double)?
    }

    let storage = Locked(Storage())

    /// Records the request, consumes one fault for its path and decides the response.
    func begin(_ head: HTTPRequestHead) -> (index: Int, plan: Plan) {
        let uri = head.uri
        let path = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? uri
        let isHead = head.method == .HEAD
        let record = TestHTTPServer.RecordedRequest(
            method: head.method.rawValue, path: path, uri: uri,
            headers: head.headers.map { ($0.name, $0.value) },
            status: 0, bodyBytesSent: 0, finished: false)

        return storage.withLock { storage in
            storage.records.append(record)
            let index = storage.records.count - 1

            guard head.method == .GET || isHead else {
                var plan = Self.simple(405, "method not allowed", "text/plain; charset=utf-8", isHead: false)
                plan.headers.append(("Allow", "GET, HEAD"))
                return (index, plan)
            }

            let key = [uri, path].first {
                storage.resources[$0] != nil || storage.redirects[$0] != nil || storage.faults[$0] != nil
            } ?? path

            var fault: TestHTTPServer.Fault?
            if var queue = storage.faults[key], !queue.isEmpty {
                fault = queue.removeFirst()
                storage.faults[key] = queue.isEmpty ? nil : queue
            }

            var plan: Plan
            switch fault {
            case nil:
                plan = Self.normal(&storage, key: key, head: head)
            case .cutAfter(let bytes):
                plan = Self.normal(&storage, key: key, head: head)
                plan.ending = .cut(max(0, bytes))
            case .stallAfter(let bytes, let seconds):
                plan = Self.normal(&storage, key: key, head: head)
                plan.ending = .stall(max(0, bytes), seconds)
            case .status(let code, let retryAfter, let body):
                plan = Self.simple(code, body, "text/plain; charset=utf-8", isHead: isHead)
                if let retryAfter { plan.headers.append(("Retry-After", retryAfter)) }
            case .ignoreRange:
                plan = Self.normal(&storage, key: key, head: head, ignoreRange: true)
            case .changeETag(let etag):
                if var resource = storage.resources[key] {
                    resource.etag = etag
                    resource.lastModified = resource.lastModified.map(Self.dayLater)
                    storage.resources[key] = resource
                }
                plan = Self.normal(&storage, key: key, head: head)
            case .replaceBody(let body, let etag):
                var resource = storage.resources[key]
                    ?? Resource(body: [], contentType: "audio/mp4", etag: nil, lastModified: nil, acceptRanges: true)
                resource.body = body
                resource.etag = etag
                resource.lastModified = resource.lastModified.map(Self.dayLater)
                storage.resources[key] = resource
                storage.redirects[key] = nil
                plan = Self.normal(&storage, key: key, head: head)
            case .wrongContentLength(let extra):
                plan = Self.normal(&storage, key: key, head: head)
                let declared = (Self.contentLength(plan) ?? plan.body.count) + extra
                plan.headers.removeAll { $0.0.lowercased() == "content-length" }
                plan.headers.append(("Content-Length", String(declared)))
                plan.ending = .closeAfterBody
            case .noContentLength:
                plan = Self.normal(&storage, key: key, head: head)
                plan.headers.removeAll { $0.0.lowercased() == "content-length" }
                plan.ending = .closeAfterBody
                plan.http10 = true
            case .chunkedCut(let bytes):
                plan = Self.normal(&storage, key: key, head: head)
                plan.headers.removeAll { $0.0.lowercased() == "content-length" }
                plan.ending = .cut(max(0, bytes))
            case .html(let status):
                let page = "<!DOCTYPE html>\n<html><head><title>Error</title></head>"
                    + "<body><h1>Something went wrong</h1><p>Please try again later.</p></body></html>\n"
                plan = Self.simple(status, page, "text/html; charset=utf-8", isHead: isHead)
            case .json:
                plan = Self.simple(200, #"{"error":"not found"}"#, "application/json", isHead: isHead)
            case .redirect(let to, let status):
                plan = Self.simple(status, "", "text/plain; charset=utf-8", isHead: isHead)
                plan.headers.append(("Location", to))
            case .delay(let seconds):
                plan = Self.normal(&storage, key: key, head: head)
                plan.delay = max(0, seconds)
            case .paced(let bytes, let seconds):
                plan = Self.normal(&storage, key: key, head: head)
                plan.pace = (max(1, bytes), max(0, seconds))
            }
            return (index, plan)
        }
    }

    func update(_ index: Int, _ body: (inout TestHTTPServer.RecordedRequest) -> Void) {
        storage.withLock { storage in
            if storage.records.indices.contains(index) { body(&storage.records[index]) }
        }
    }

    // MARK: Response planning

    private static func contentLength(_ plan: Plan) -> Int? {
        plan.headers.first { $0.0.lowercased() == "content-length" }.flatMap { Int($0.1) }
    }

    private static func simple(_ status: Int, _ text: String, _ contentType: String, isHead: Bool) -> Plan {
        let bytes = Array(text.utf8)
        return Plan(
            status: status,
            headers: [("Content-Type", contentType), ("Content-Length", String(bytes.count))],
            body: isHead ? [] : bytes[...])
    }

    private static func normal(_ storage: inout Storage, key: String, head: HTTPRequestHead, ignoreRange: Bool = false) -> Plan {
        let isHead = head.method == .HEAD
        if let (to, status) = storage.redirects[key] {
            var plan = simple(status, "", "text/plain; charset=utf-8", isHead: isHead)
            plan.headers.append(("Location", to))
            return plan
        }
        guard let resource = storage.resources[key] else {
            return simple(404, "not found", "text/plain; charset=utf-8", isHead: isHead)
        }
        return serve(resource, head: head, ignoreRange: ignoreRange)
    }

    private static func serve(_ resource: Resource, head: HTTPRequestHead, ignoreRange: Bool) -> Plan {
        let isHead = head.method == .HEAD
        let total = resource.body.count
        var validators: [(String, String)] = []
        if let etag = resource.etag { validators.append(("ETag", etag)) }
        if let lastModified = resource.lastModified { validators.append(("Last-Modified", lastModified)) }
        if resource.acceptRanges { validators.append(("Accept-Ranges", "bytes")) }

        // Conditional GET: If-None-Match wins over If-Modified-Since (RFC 9110 §13.2.2).
        let ifNoneMatch = head.headers["If-None-Match"]
        if !ifNoneMatch.isEmpty {
            if let etag = resource.etag, Self.weakMatch(etag, list: ifNoneMatch) {
                return Plan(status: 304, headers: validators, body: [])
            }
            if resource.etag == nil, ifNoneMatch.contains(where: { $0.trimmingCharacters(in: .whitespaces) == "*" }) {
                return Plan(status: 304, headers: validators, body: [])
            }
        } else if let since = head.headers.first(name: "If-Modified-Since"), let lastModified = resource.lastModified {
            if since == lastModified {
                return Plan(status: 304, headers: validators, body: [])
            }
            if let sinceDate = parseHTTPDate(since), let modified = parseHTTPDate(lastModified), sinceDate >= modified {
                return Plan(status: 304, headers: validators, body: [])
            }
        }

        var range: RangeRequest = .none
        if resource.acceptRanges, !ignoreRange, let value = head.headers.first(name: "Range") {
            var honour = true
            if let ifRange = head.headers.first(name: "If-Range") {
                honour = Self.ifRangeMatches(ifRange.trimmingCharacters(in: .whitespaces), resource)
            }
            if honour { range = parseRange(value, total: total) }
        }

        var headers = [("Content-Type", resource.contentType)] + validators
        switch range {
        case .none:
            headers.append(("Content-Length", String(total)))
            return Plan(status: 200, headers: headers, body: isHead ? [] : resource.body[...])
        case .unsatisfiable:
            headers.append(("Content-Range", "bytes */\(total)"))
            headers.append(("Content-Length", "0"))
            return Plan(status: 416, headers: headers, body: [])
        case .bytes(let first, let last):
            headers.append(("Content-Range", "bytes \(first)-\(last)/\(total)"))
            headers.append(("Content-Length", String(last - first + 1)))
            return Plan(status: 206, headers: headers, body: isHead ? [] : resource.body[first...last])
        }
    }

    private static func opaque(_ tag: String) -> String {
        let trimmed = tag.trimmingCharacters(in: .whitespaces)
        return trimmed.hasPrefix("W/") ? String(trimmed.dropFirst(2)) : trimmed
    }

    private static func weakMatch(_ etag: String, list: [String]) -> Bool {
        // HTTPHeaders keeps comma-separated values in one string: split them.
        let tags = list.flatMap { $0.split(separator: ",").map(String.init) }
        return tags.contains { tag in
            let trimmed = tag.trimmingCharacters(in: .whitespaces)
            return trimmed == "*" || opaque(trimmed) == opaque(etag)
        }
    }

    private static func ifRangeMatches(_ value: String, _ resource: Resource) -> Bool {
        if value.hasPrefix("\"") || value.hasPrefix("W/") {
            // Strong comparison: weak tags never match.
            guard let etag = resource.etag, !value.hasPrefix("W/"), !etag.hasPrefix("W/") else { return false }
            return value == etag
        }
        guard let lastModified = resource.lastModified else { return false }
        if value == lastModified { return true }
        if let a = parseHTTPDate(value), let b = parseHTTPDate(lastModified) { return a == b }
        return false
    }

    enum RangeRequest: Equatable {
        case none
        case unsatisfiable
        case bytes(Int, Int)
    }

    /// One byte range (`N-`, `N-M`, `-S`); anything else (several ranges, bad syntax) is ignored.
    static func parseRange(_ value: String, total: Int) -> RangeRequest {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes=") else { return .none }
        let spec = trimmed.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .none }
        let firstText = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let lastText = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        if firstText.isEmpty {
            guard let suffix = Int(lastText), suffix >= 0 else { return .none }
            guard suffix > 0, total > 0 else { return .unsatisfiable }
            return .bytes(max(0, total - suffix), total - 1)
        }
        guard let first = Int(firstText), first >= 0 else { return .none }
        var last = total - 1
        if !lastText.isEmpty {
            guard let value = Int(lastText), value >= first else { return .none }
            last = value
        }
        guard first < total else { return .unsatisfiable }
        return .bytes(first, min(last, total - 1))
    }

    // MARK: HTTP dates

    private static func formatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = format
        return formatter
    }

    static func parseHTTPDate(_ text: String) -> Date? {
        formatter("EEE, dd MMM yyyy HH:mm:ss zzz").date(from: text.trimmingCharacters(in: .whitespaces))
    }

    static func formatHTTPDate(_ date: Date) -> String {
        formatter("EEE, dd MMM yyyy HH:mm:ss 'GMT'").string(from: date)
    }

    private static func dayLater(_ text: String) -> String {
        guard let date = parseHTTPDate(text) else { return "Thu, 22 Oct 2026 07:28:00 GMT" }
        return formatHTTPDate(date.addingTimeInterval(86_400))
    }
}

// MARK: - Channel handler

private final class TestHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private static let chunkSize = 64 * 1024
    private let state: TestHTTPServerState
    private var requestHead: HTTPRequestHead?
    private var active = true
    /// The record of the response being written, if any.
    private var inFlight: Int?

    init(state: TestHTTPServerState) {
        self.state = state
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            requestHead = head
        case .body:
            break
        case .end:
            guard let head = requestHead else { return }
            requestHead = nil
            let (index, plan) = state.begin(head)
            if plan.delay > 0 {
                context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(plan.delay * 1e9))) {
                    self.respond(context: context, head: head, index: index, plan: plan)
                }
            } else {
                respond(context: context, head: head, index: index, plan: plan)
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        active = false
        if let index = inFlight {
            state.update(index) { $0.finished = true }
            inFlight = nil
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func close(_ context: ChannelHandlerContext, index: Int) {
        state.update(index) { $0.finished = true }
        context.close(promise: nil)
    }

    private func respond(context: ChannelHandlerContext, head request: HTTPRequestHead, index: Int, plan: TestHTTPServerState.Plan) {
        guard active else { return }
        let keepAlive = request.isKeepAlive
        var headers = HTTPHeaders(plan.headers)
        if !keepAlive {
            headers.replaceOrAdd(name: "Connection", value: "close")
        } else if request.version.major == 1, request.version.minor == 0 {
            headers.replaceOrAdd(name: "Connection", value: "keep-alive")
        }
        let version = plan.http10 || (request.version.major == 1 && request.version.minor == 0) ? HTTPVersion.http1_0 : .http1_1
        let head = HTTPResponseHead(version: version, status: HTTPResponseStatus(statusCode: plan.status), headers: headers)
        state.update(index) { $0.status = plan.status }
        inFlight = index

        var body = plan.body
        switch plan.ending {
        case .cut(let limit), .stall(let limit, _): body = body.prefix(limit)
        case .complete, .closeAfterBody: break
        }

        context.writeAndFlush(wrapOutboundOut(.head(head))).assumeIsolated().whenComplete { result in
            guard case .success = result else { return self.close(context, index: index) }
            self.writeBody(context: context, body: body, index: index, pace: plan.pace) {
                switch plan.ending {
                case .complete:
                    context.writeAndFlush(self.wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { result in
                        self.state.update(index) { $0.finished = true }
                        self.inFlight = nil
                        if case .failure = result { context.close(promise: nil) }
                        else if !keepAlive { context.close(promise: nil) }
                    }
                case .cut, .closeAfterBody:
                    self.close(context, index: index)
                case .stall(_, let seconds):
                    self.state.update(index) { $0.finished = true }
                    context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(seconds * 1e9))) {
                        context.close(promise: nil)
                    }
                }
            }
        }
    }

    /// Writes one chunk at a time, each after the previous one reached the
    /// socket, so large bodies follow the client's pace; with `pace`, smaller
    /// chunks each after a pause.
    private func writeBody(
        context: ChannelHandlerContext, body: ArraySlice<UInt8>, index: Int, pace: (bytes: Int, seconds: Double)?,
        then done: @escaping () -> Void
    ) {
        guard active else { return }
        guard !body.isEmpty else { return done() }
        if let pace {
            context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(pace.seconds * 1e9))) {
                self.writeChunk(context: context, body: body, index: index, pace: pace, then: done)
            }
        } else {
            writeChunk(context: context, body: body, index: index, pace: nil, then: done)
        }
    }

    private func writeChunk(
        context: ChannelHandlerContext, body: ArraySlice<UInt8>, index: Int, pace: (bytes: Int, seconds: Double)?,
        then done: @escaping () -> Void
    ) {
        guard active else { return }
        let count = min(pace?.bytes ?? Self.chunkSize, body.count)
        var buffer = context.channel.allocator.buffer(capacity: count)
        buffer.writeBytes(body.prefix(count))
        // Counted before the write, so whatever a client has received is already recorded.
        state.update(index) { $0.bodyBytesSent += count }
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer)))).assumeIsolated().whenComplete { result in
            switch result {
            case .success:
                // Hop through the loop so a long body doesn't recurse.
                context.eventLoop.assumeIsolated().execute {
                    self.writeBody(context: context, body: body.dropFirst(count), index: index, pace: pace, then: done)
                }
            case .failure:
                self.state.update(index) { $0.bodyBytesSent -= count }
                self.close(context, index: index)
            }
        }
    }
}

extension TestHTTPServer {
    /// A server and an HTTP client for it (redirects and read timeout as
    /// given), both shut down after `body`, whether it throws or not.
    static func withClient(
        redirects: HTTPClient.Configuration.RedirectConfiguration = .follow(max: 5, allowCycles: false),
        read: TimeAmount? = nil, connect: TimeAmount = .seconds(2),
        _ body: (TestHTTPServer, HTTPClient) async throws -> Void
    ) async throws {
        let server = try await TestHTTPServer.start()
        var configuration = HTTPClient.Configuration(redirectConfiguration: redirects)
        configuration.timeout = .init(connect: connect, read: read)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            try await body(server, client)
        } catch {
            try? await client.shutdown()
            try? await server.stop()
            throw error
        }
        try await client.shutdown()
        try await server.stop()
    }
}
