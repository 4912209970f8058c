import Foundation
import Hummingbird

/// What every response carries and every request must show.
///
/// - A request whose `Host` is not the address the viewer listens on is refused (421):
///   a web page elsewhere that points a name it controls at 127.0.0.1 (DNS rebinding)
///   gets nothing from the log.
/// - Every response forbids inline script and any other origin
///   (Content-Security-Policy), sniffing, framing and referrers.
struct ViewerGuard<Context: RequestContext>: RouterMiddleware {
    /// Host names accepted (lower case, without port); nil accepts any (tests of routes alone).
    let hosts: Set<String>?
    /// The port accepted; nil for any (a server started on port 0).
    let port: Int?
    /// Whether a token may read; nil when no token is asked for (a viewer on loopback).
    var reader: (@Sendable (String) async throws -> Bool)? = nil

    static var securityHeaders: HTTPFields {
        [
            .contentSecurityPolicy: "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
            .xContentTypeOptions: "nosniff",
            .init("Referrer-Policy")!: "no-referrer",
            .init("X-Frame-Options")!: "DENY",
        ]
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            if let hosts, !Self.accepts(request.head.authority, hosts: hosts, port: port) {
                throw ViewerFailure(HTTPResponse.Status(code: 421, reasonPhrase: "Misdirected Request"),
                                    "this viewer answers only requests addressed to it by its own address", html: false)
            }
            if let reader {
                let token = Self.token(request.headers[.authorization])
                guard let token, try await reader(token) else {
                    throw ViewerFailure(.unauthorized, "reading this viewer needs the shared store's reader token (as the password, any user name)",
                                        html: false, headers: [.wwwAuthenticate: "Basic realm=\"gamelog\", charset=\"UTF-8\""])
                }
            }
            response = try await next(request, context)
        } catch let failure as ViewerFailure {
            // Answered here, not by the router, so that error answers carry the headers too.
            response = failure.response
        }
        response.headers.append(contentsOf: Self.securityHeaders)
        return response
    }

    /// The token of an `Authorization` header: `Bearer TOKEN` (scripts), or `Basic` with
    /// the token as the password (what a browser asks a person for).
    static func token(_ header: String?) -> String? {
        guard let header, header.utf8.count < 1_000 else { return nil }
        if header.hasPrefix("Bearer ") { return String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces) }
        guard header.hasPrefix("Basic "), let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
              let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":") else { return nil }
        return String(text[text.index(after: colon)...])
    }

    /// Whether `authority` (the Host header: name, or name:port, or [v6]:port) is ours.
    static func accepts(_ authority: String?, hosts: Set<String>, port: Int?) -> Bool {
        guard let authority, !authority.isEmpty, authority.utf8.count < 300 else { return false }
        var name = authority.lowercased(), given: Int?
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return false }
            let rest = name[name.index(after: close)...]
            if rest.hasPrefix(":") { given = Int(rest.dropFirst()) ; if given == nil { return false } } else if !rest.isEmpty { return false }
            name = String(name[...close])
        } else if let colon = name.lastIndex(of: ":") {
            guard let number = Int(name[name.index(after: colon)...]) else { return false }
            given = number
            name = String(name[..<colon])
        }
        guard hosts.contains(name) else { return false }
        if let port, let given, given != port { return false }
        return true
    }

    /// The names a server listening on `host` is reached by.
    static func names(listeningOn host: String) -> Set<String> {
        let host = host.lowercased()
        switch host {
        case "127.0.0.1", "localhost", "::1", "[::1]":
            return ["127.0.0.1", "localhost", "[::1]"]
        case "0.0.0.0", "::", "[::]":
            // Listening everywhere: the machine's own names are not known here; the loopback ones are.
            return ["127.0.0.1", "localhost", "[::1]"]
        default:
            return [host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host]
        }
    }
}
