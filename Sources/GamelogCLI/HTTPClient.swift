import AsyncHTTPClient
import Collector
import Foundation
import NIOCore
import NIOHTTP1
import Presentation
import SharedStore

/// The few HTTP requests the command line makes to a collector, waited for.
enum HTTPClient {
    struct Reply: Sendable {
        var status: Int
        var body: Data

        /// The collector's `{"error": ...}` text, else the body as text.
        var message: String {
            if let error = (try? JSONDecoder().decode(CommandDocuments.CollectorReply.self, from: body))?.error {
                return error
            }
            return String(decoding: body.prefix(500), as: UTF8.self)
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A collector's base URL, checked: http or https, a host, no query.
    static func baseURL(_ text: String, option: String) throws -> URL {
        guard let url = URL(string: text.hasSuffix("/") ? String(text.dropLast()) : text), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https", url.host != nil, url.query == nil else {
            throw Failure(description: "\(option) \(shown(text)) is not a collector's URL (http://host:port)")
        }
        return url
    }

    /// `text` as it may be printed: a URL's user name and password (a token, in
    /// `http://reader:TOKEN@host`) left out, so no output or log line carries a secret.
    static func shown(_ text: String) -> String {
        if var components = URLComponents(string: text) {
            guard components.user != nil || components.password != nil else { return text }
            components.user = nil
            components.password = nil
            if let string = components.string { return string }
        }
        // Not a URL Foundation reads: whatever stands between the scheme and an @ goes.
        return text.replacingOccurrences(of: #"(?<=://)[^/]*@"#, with: "", options: .regularExpression)
    }

    /// The token a URL carries in its user information (the password, else the user name).
    static func token(in url: URL) -> String? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        return components.password ?? components.user
    }

    /// Sends one request and waits for the whole answer (at most 64 MiB).
    static func request(_ method: String, _ url: URL, body: Data? = nil, token: String? = nil,
                        contentType: String = "application/json", headers: [(String, String)] = [],
                        timeout: TimeInterval = 120) async throws -> Reply {
        if refusesConnections(url) {
            throw Failure(description: "the collector at \(origin(of: url)) did not answer (connection refused): is `gamelog collect` running there?")
        }
        // Credentials in the URL travel as the token, never in the request line.
        var request = HTTPClientRequest(url: shown(url.absoluteString))
        request.method = HTTPMethod(rawValue: method)
        let token = token ?? Self.token(in: url)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.body = .bytes(ByteBuffer(bytes: body))
            request.headers.add(name: "Content-Type", value: contentType)
        }
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        let origin = origin(of: url)
        do {
            let response = try await AsyncHTTPClient.HTTPClient.shared.execute(request, timeout: .milliseconds(Int64(timeout * 1000)))
            let bytes = try await response.body.collect(upTo: 64 << 20)
            return Reply(status: Int(response.status.code), body: Data(bytes.readableBytesView))
        } catch {
            throw Failure(description: "the collector at \(origin) did not answer (\(describe(error))): is `gamelog collect` running there?")
        }
    }

    /// What went wrong, in a few words (the client's errors name their case).
    private static func describe(_ error: Error) -> String {
        let text = String(describing: error)
        if text.contains("connectionRefused") || text.contains("Connection refused") { return "connection refused" }
        if text.contains("deadlineExceeded") || text.contains("readTimeout") { return "no answer in time" }
        if text.contains("remoteConnectionClosed") { return "the connection closed before the answer" }
        return text
    }

    /// Whether nothing listens at `url`'s host and port: a refused connection is known at
    /// once, where the HTTP client would try again until its deadline (a minute and more,
    /// with nothing said). Asked once per address; anything but a refusal (a slow network,
    /// a name that does not resolve) is left to the client, which says what it met.
    static func refusesConnections(_ url: URL) -> Bool {
        let key = origin(of: url)
        if let known = probed.withLock({ $0[key] }) { return known }
        guard let host = url.host?.trimmingCharacters(in: CharacterSet(charactersIn: "[]")) else { return false }
        let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        var hints = addrinfo()
        #if os(Linux)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let first = found else { return false }
        defer { freeaddrinfo(found) }
        var refused = true
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            entry = address.pointee.ai_next
            let socket = Foundation.socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
            guard socket >= 0 else { refused = false; continue }
            defer { close(socket) }
            _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
            if connect(socket, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 { refused = false; break }
            guard errno == EINPROGRESS else { if errno != ECONNREFUSED { refused = false }; continue }
            var poller = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
            guard poll(&poller, 1, 3_000) == 1 else { refused = false; continue }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length)
            if error == 0 { refused = false; break }
            if error != ECONNREFUSED { refused = false }
        }
        probed.withLock { $0[key] = refused }
        return refused
    }

    private static let probed = NSLockedValue<[String: Bool]>([:])

    /// scheme://host:port of `url`: where it was sent, without the path.
    static func origin(of url: URL) -> String {
        "\(url.scheme ?? "http")://\(url.host ?? "")" + (url.port.map { ":\($0)" } ?? "")
    }

}
