import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import TestSupport
import Testing

/// Checks the test server itself, with AsyncHTTPClient and with raw TCP.
@Suite(.tags(.network), .skippedByTag)
struct TestHTTPServerTests {
    /// A deterministic, non-repeating-looking body.
    static func body(_ count: Int) -> [UInt8] {
        var state: UInt32 = 0x1234_5678
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }

    struct Response {
        var status: Int
        var headers: HTTPHeaders
        var body: [UInt8]
        func header(_ name: String) -> String? { headers.first(name: name) }
    }

    static func fetch(
        _ client: HTTPClient, _ url: String, method: HTTPMethod = .GET, headers: [(String, String)] = []
    ) async throws -> Response {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await client.execute(request, timeout: .seconds(5))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        return Response(status: Int(response.status.code), headers: response.headers, body: Array(bytes.readableBytesView))
    }

    /// Sends `request` on one TCP connection and reads until the server closes it.
    static func raw(_ server: TestHTTPServer, _ request: String) async throws -> [UInt8] {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: server.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: request))
            var received: [UInt8] = []
            for try await buffer in inbound { received += buffer.readableBytesView }
            return received
        }
    }

    static func occurrences(of needle: String, in bytes: [UInt8]) -> Int {
        String(decoding: bytes, as: UTF8.self).components(separatedBy: needle).count - 1
    }

    @Test func fullGETAndHEAD() async throws {
        try await TestHTTPServer.withClient { server, client in
            let bytes = Self.body(3 * 1024 * 1024 + 17)
            server.serve("/song.m4a", body: bytes)
            let response = try await Self.fetch(client, server.url("/song.m4a"))
            #expect(response.status == 200)
            #expect(response.body == bytes)
            #expect(response.header("Content-Length") == String(bytes.count))
            #expect(response.header("Content-Type") == "audio/mp4")
            #expect(response.header("ETag") == "\"v1\"")
            #expect(response.header("Last-Modified") == "Wed, 21 Oct 2026 07:28:00 GMT")
            #expect(response.header("Accept-Ranges") == "bytes")

            let head = try await Self.fetch(client, server.url("/song.m4a"), method: .HEAD)
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.header("Content-Length") == String(bytes.count))

            let missing = try await Self.fetch(client, server.url("/nope"))
            #expect(missing.status == 404)

            let records = server.requests("/song.m4a")
            #expect(records.map(\.method) == ["GET", "HEAD"])
            #expect(records.map(\.status) == [200, 200])
            #expect(records.map(\.bodyBytesSent) == [bytes.count, 0])
            #expect(server.allRequests.count == 3)
        }
    }

    @Test func ranges() async throws {
        try await TestHTTPServer.withClient { server, client in
            let bytes = Self.body(1000)
            server.serve("/a", body: bytes, acceptRanges: true)
            let open = try await Self.fetch(client, server.url("/a"), headers: [("Range", "bytes=100-")])
            #expect(open.status == 206)
            #expect(open.header("Content-Range") == "bytes 100-999/1000")
            #expect(open.body == Array(bytes[100...]))

            let closed = try await Self.fetch(client, server.url("/a"), headers: [("Range", "bytes=10-19")])
            #expect(closed.status == 206)
            #expect(closed.header("Content-Range") == "bytes 10-19/1000")
            #expect(closed.header("Content-Length") == "10")
            #expect(closed.body == Array(bytes[10...19]))

            let suffix = try await Self.fetch(client, server.url("/a"), headers: [("Range", "bytes=-5")])
            #expect(suffix.header("Content-Range") == "bytes 995-999/1000")

            let beyond = try await Self.fetch(client, server.url("/a"), headers: [("Range", "bytes=1000-")])
            #expect(beyond.status == 416)
            #expect(beyond.header("Content-Range") == "bytes */1000")
            #expect(beyond.body.isEmpty)

            let recorded = server.requests("/a")
            #expect(recorded.map(\.status) == [206, 206, 206, 416])
            #expect(recorded.map(\.bodyBytesSent) == [900, 10, 5, 0])
            #expect(recorded[1].header("range") == "bytes=10-19")

            server.serve("/noranges", body: bytes, acceptRanges: false)
            let ignored = try await Self.fetch(client, server.url("/noranges"), headers: [("Range", "bytes=10-19")])
            #expect(ignored.status == 200)
            #expect(ignored.header("Accept-Ranges") == nil)
            #expect(ignored.body == bytes)
        }
    }

    @Test func conditionals() async throws {
        try await TestHTTPServer.withClient { server, client in
            let bytes = Self.body(500)
            server.serve("/c", body: bytes)
            let mismatch = try await Self.fetch(
                client, server.url("/c"), headers: [("Range", "bytes=10-"), ("If-Range", "\"v0\"")])
            #expect(mismatch.status == 200)
            #expect(mismatch.body == bytes)

            let match = try await Self.fetch(
                client, server.url("/c"), headers: [("Range", "bytes=10-"), ("If-Range", "\"v1\"")])
            #expect(match.status == 206)
            #expect(match.body == Array(bytes[10...]))

            let byDate = try await Self.fetch(
                client, server.url("/c"),
                headers: [("Range", "bytes=10-"), ("If-Range", "Wed, 21 Oct 2026 07:28:00 GMT")])
            #expect(byDate.status == 206)

            let notModified = try await Self.fetch(client, server.url("/c"), headers: [("If-None-Match", "\"v1\"")])
            #expect(notModified.status == 304)
            #expect(notModified.body.isEmpty)
            #expect(notModified.header("ETag") == "\"v1\"")

            let since = try await Self.fetch(
                client, server.url("/c"), headers: [("If-Modified-Since", "Thu, 22 Oct 2026 00:00:00 GMT")])
            #expect(since.status == 304)
            let older = try await Self.fetch(
                client, server.url("/c"), headers: [("If-Modified-Since", "Tue, 20 Oct 2026 00:00:00 GMT")])
            #expect(older.status == 200)
        }
    }

    @Test func resourceChanges() async throws {
        try await TestHTTPServer.withClient { server, client in
            let bytes = Self.body(300)
            let other = Self.body(200).reversed() as [UInt8]
            server.serve("/r", body: bytes)
            server.inject("/r", [.changeETag("\"v2\""), .ignoreRange, .replaceBody(other, etag: "\"v3\"")])
            let changed = try await Self.fetch(
                client, server.url("/r"), headers: [("Range", "bytes=10-"), ("If-Range", "\"v1\"")])
            #expect(changed.status == 200)
            #expect(changed.header("ETag") == "\"v2\"")
            #expect(changed.header("Last-Modified") == "Thu, 22 Oct 2026 07:28:00 GMT")
            let ignored = try await Self.fetch(client, server.url("/r"), headers: [("Range", "bytes=10-")])
            #expect(ignored.status == 200)
            #expect(ignored.body == bytes)
            let replaced = try await Self.fetch(client, server.url("/r"))
            #expect(replaced.body == other)
            #expect(replaced.header("ETag") == "\"v3\"")
            let after = try await Self.fetch(client, server.url("/r"), headers: [("Range", "bytes=0-9")])
            #expect(after.status == 206)
            #expect(after.body == Array(other[0..<10]))
        }
    }

    @Test func cutAfterEndsTheConnectionMidBody() async throws {
        try await TestHTTPServer.withClient { server, client in
            let bytes = Self.body(200_000)
            server.serve("/cut", body: bytes)
            server.inject("/cut", [.cutAfter(bytes: 70_000), .cutAfter(bytes: 10)])
            do {
                let response = try await Self.fetch(client, server.url("/cut"))
                #expect(response.body.count < bytes.count)
            } catch {
                // An error is what a client should see for a short body.
            }
            let record = try #require(server.requests("/cut").first)
            #expect(record.status == 200)
            #expect(record.bodyBytesSent == 70_000)

            // Raw: the full Content-Length is declared, 10 bytes follow, then EOF.
            let received = try await Self.raw(server, "GET /cut HTTP/1.1\r\nHost: x\r\n\r\n")
            let text = String(decoding: received, as: UTF8.self)
            #expect(text.contains("content-length: 200000") || text.contains("Content-Length: 200000"))
            let separator = Array("\r\n\r\n".utf8)
            let end = try #require((0...(received.count - 4)).first { Array(received[$0..<$0 + 4]) == separator })
            #expect(Array(received[(end + 4)...]) == Array(bytes[0..<10]))

            // Then normal again.
            let normal = try await Self.fetch(client, server.url("/cut"))
            #expect(normal.body == bytes)
        }
    }

    @Test func stallTriggersReadTimeout() async throws {
        // A read timeout of a second, well inside the request's 5 s deadline:
        // 200 ms was shorter than a loaded machine (the whole suite under
        // ThreadSanitizer on two cores) takes to answer at all, and the
        // client gave up before the first 1000 bytes were written.
        try await TestHTTPServer.withClient(read: .seconds(1)) { server, client in
            server.serve("/stall", body: Self.body(100_000))
            // The stall outlasts the request's 5 s deadline, so only the read
            // timeout can end it with this particular error.
            server.inject("/stall", [.stallAfter(bytes: 1000, seconds: 60)])
            await #expect(throws: HTTPClientError.readTimeout) {
                _ = try await Self.fetch(client, server.url("/stall"))
            }
            #expect(server.requests("/stall").first?.bodyBytesSent == 1000)
        }
    }

    @Test func statusFaultThenNormal() async throws {
        try await TestHTTPServer.withClient { server, client in
            let bytes = Self.body(100)
            server.serve("/s", body: bytes)
            server.inject("/s", [.status(503, retryAfter: "1", body: "busy"), .status(500), .html(status: 200), .json])
            let first = try await Self.fetch(client, server.url("/s"))
            #expect(first.status == 503)
            #expect(first.header("Retry-After") == "1")
            #expect(first.body == Array("busy".utf8))
            #expect(try await Self.fetch(client, server.url("/s")).status == 500)
            let html = try await Self.fetch(client, server.url("/s"))
            #expect(html.header("Content-Type")?.hasPrefix("text/html") == true)
            let json = try await Self.fetch(client, server.url("/s"))
            #expect(json.header("Content-Type") == "application/json")
            #expect(json.body == Array(#"{"error":"not found"}"#.utf8))
            let normal = try await Self.fetch(client, server.url("/s"))
            #expect(normal.status == 200)
            #expect(normal.body == bytes)
            #expect(server.requests("/s").map(\.status) == [503, 500, 200, 200, 200])
        }
    }

    @Test func redirects() async throws {
        try await TestHTTPServer.withClient { server, client in
            let bytes = Self.body(64)
            server.serve("/final", body: bytes)
            server.redirect("/r1", to: "/r2", status: 301)
            server.redirect("/r2", to: server.url("/final"))
            let followed = try await Self.fetch(client, server.url("/r1"))
            #expect(followed.status == 200)
            #expect(followed.body == bytes)
            #expect(server.allRequests.map(\.path) == ["/r1", "/r2", "/final"])
            #expect(server.allRequests.map(\.status) == [301, 302, 200])

            server.inject("/final", [.redirect(to: "/r1", status: 307)])
            await #expect(throws: (any Error).self) {
                _ = try await Self.fetch(client, server.url("/final"))
            }
        }
        try await TestHTTPServer.withClient(redirects: .disallow) { server, client in
            server.redirect("/loop", to: "/loop")
            let response = try await Self.fetch(client, server.url("/loop"))
            #expect(response.status == 302)
            #expect(response.header("Location") == "/loop")
        }
    }

    @Test func keepAliveWrongLengthAndDelay() async throws {
        try await TestHTTPServer.withClient { server, client in
            let bytes = Self.body(1000)
            server.serve("/k", body: bytes)
            // Two pipelined requests on one connection; the second asks to close.
            let received = try await Self.raw(
                server,
                "GET /k HTTP/1.1\r\nHost: x\r\n\r\nGET /k HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\nConnection: close\r\n\r\n")
            #expect(Self.occurrences(of: "HTTP/1.1 200", in: received) == 1)
            #expect(Self.occurrences(of: "HTTP/1.1 206", in: received) == 1)
            #expect(server.requests("/k").map(\.bodyBytesSent) == [1000, 10])

            server.inject("/k", [.wrongContentLength(extra: 50)])
            let wrong = try await Self.raw(server, "GET /k HTTP/1.1\r\nHost: x\r\n\r\n")
            let text = String(decoding: wrong, as: UTF8.self).lowercased()
            #expect(text.contains("content-length: 1050"))
            #expect(Array(wrong.suffix(1000)) == bytes)

            server.inject("/k", [.delay(seconds: 0.2)])
            let start = ContinuousClock.now
            let delayed = try await Self.fetch(client, server.url("/k"))
            #expect(delayed.body == bytes)
            #expect(ContinuousClock.now - start >= .milliseconds(200))
        }
    }
}
