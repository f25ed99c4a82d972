import MediaMuxBase
import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Names a failed attempt in the policy's terms, by the types that
/// AsyncHTTPClient, NIO and NIOSSL throw.
package func classify(_ error: any Error) -> TransferFailure {
    switch error {
    case let client as HTTPClientError:
        return classify(client)
    case let connection as NIOConnectionError:
        // A host name: its address look-ups, then a connection to each address found.
        let attempts = connection.connectionErrors.map { classify($0.error) }
        if let connecting = attempts.first(where: { if case .connection = $0 { true } else { false } }) { return connecting }
        if let first = attempts.first { return first }
        if connection.dnsAError != nil || connection.dnsAAAAError != nil { return .connection("the host name could not be resolved") }
        return .connection("could not connect")
    case is SocketAddressError.UnknownHost:
        return .connection("the host name could not be resolved")
    case let io as IOError:
        return classify(errno: io.errnoCode)
    case let channel as ChannelError:
        switch channel {
        case .connectTimeout: return .connection("could not connect in time")
        case .writeHostUnreachable: return .connection("could not connect (the host is unreachable)")
        case .eof, .inputClosed, .outputClosed, .ioOnClosedChannel, .alreadyClosed: return .truncated(received: 0, expected: nil)
        default: return .other("the connection failed (\(channel))")
        }
    case let parser as HTTPParserError:
        switch parser {
        case .invalidEOFState, .closedConnection: return .truncated(received: 0, expected: nil)
        default: return .other("the server's answer is not valid HTTP (\(parser))")
        }
    case let tls as NIOSSLError:
        switch tls {
        case .handshakeFailed(let failure): return .tls(handshakeReason(failure))
        case .uncleanShutdown: return .truncated(received: 0, expected: nil)
        case .noCertificateToValidate, .unableToValidateCertificate: return .tls("the server's certificate is not trusted")
        default: return .tls("\(tls)")
        }
    case let tls as NIOSSLExtraError where tls == .failedToValidateHostname || tls == .serverHostnameImpossibleToMatch:
        return .tls("the certificate is for another host name")
    case let tls as NIOSSLExtraError:
        return .tls("\(tls)")
    case let failure as BoringSSLError:
        return .tls(handshakeReason(failure))
    default:
        return .other(String(describing: error))
    }
}

private func classify(_ client: HTTPClientError) -> TransferFailure {
    switch client {
    case .readTimeout: return .idle
    case .connectTimeout, .getConnectionFromPoolTimeout: return .connection("could not connect in time")
    case .remoteConnectionClosed: return .truncated(received: 0, expected: nil)
    case .redirectLimitReached: return .redirects("too many redirects")
    case .redirectCycleDetected: return .redirects("the redirects go round in a loop")
    case .tlsHandshakeTimeout: return .tls("handshake timed out")
    case .deadlineExceeded: return .other("the transfer took longer than its deadline")
    case .cancelled, .alreadyShutdown: return .other("the HTTP client stopped the request")
    default: return .other("the request failed (\(client.shortDescription))")
    }
}

/// A socket's errno, from connecting or reading.
private func classify(errno code: Int32) -> TransferFailure {
    switch code {
    case ECONNREFUSED: return .connection("connection refused")
    case ECONNRESET, ECONNABORTED, EPIPE: return .truncated(received: 0, expected: nil)
    default: return .connection("could not connect (\(systemErrorText(code)))")
    }
}

/// A failed TLS handshake in words, not BoringSSL's error dump. BoringSSL's
/// packed error codes are private to NIOSSL (`BoringSSLInternalError` shows
/// only its description), so which handshake error it was is read from the
/// reason names BoringSSL puts in that text; this is the one place where an
/// error is recognised by its text.
private func handshakeReason(_ failure: BoringSSLError) -> String {
    let stack: NIOBoringSSLErrorStack
    switch failure {
    case .sslError(let errors), .unknownError(let errors): stack = errors
    default: return "the handshake failed"
    }
    if stack.contains(.eofDuringHandshake) { return "the server closed the connection during the handshake" }
    let text = stack.map(\.description).joined(separator: " ")
    if text.contains("WRONG_VERSION_NUMBER") { return "the server does not speak TLS on this port (try http://)" }
    if text.contains("CERTIFICATE_VERIFY_FAILED") { return "the server's certificate is not trusted" }
    return "the handshake failed"
}
