import AsyncHTTPClient
import Foundation
import Presentation
import NIOCore
import NIOHTTP1
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
                        timeout: TimeInterval = 120) throws -> Reply {
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
            return try SharedStore.wait { [request] in
                let response = try await AsyncHTTPClient.HTTPClient.shared.execute(request, timeout: .milliseconds(Int64(timeout * 1000)))
                let bytes = try await response.body.collect(upTo: 64 << 20)
                return Reply(status: Int(response.status.code), body: Data(bytes.readableBytesView))
            }
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

    /// scheme://host:port of `url`: where it was sent, without the path.
    static func origin(of url: URL) -> String {
        "\(url.scheme ?? "http")://\(url.host ?? "")" + (url.port.map { ":\($0)" } ?? "")
    }

}
