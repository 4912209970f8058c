import Foundation
import HTTPServing
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
                let token = HTTPServing.token(request.headers[.authorization])
                guard let token, try await reader(token) else {
                    throw ViewerFailure(.unauthorized, "reading this viewer needs the shared store's reader token (as the password, any user name)",
                                        html: false, headers: [.wwwAuthenticate: "Basic realm=\"gamelog\", charset=\"UTF-8\""])
                }
            }
            response = try await next(request, context)
        } catch let failure as ViewerFailure {
            // Answered here, not by the router, so that error answers carry the headers too.
            response = failure.response
        } catch let error as HTTPResponseError {
            // The router's own answers (a route or an asset that is not there) too.
            response = try error.response(from: request, context: context)
        }
        response.headers.append(contentsOf: Self.securityHeaders)
        return response
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
}
