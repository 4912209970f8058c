import Foundation
import Hummingbird
import Logging

/// What gamelog's two HTTP servers, the viewer (`serve`) and the collector (`collect`),
/// do alike: how they start, how they read a client's token, and which names reach them.
public enum HTTPServing {
    /// An application serving `router` on `host`:`port`, logging warnings only (a
    /// request log would repeat what the client already sees).
    /// - Parameter onServerRunning: called with the port bound (the one asked for, or the
    ///   one the system chose for port 0).
    public static func application<Routes: HTTPResponderBuilder>(
        router: Routes, host: String, port: Int, serverName: String, label: String,
        onServerRunning: @escaping @Sendable (Int) async -> Void
    ) -> some ApplicationProtocol where Routes.Responder.Context: InitializableFromSource<ApplicationRequestContextSource> {
        var logger = Logger(label: label)
        logger.logLevel = .warning
        return Application(router: router, configuration: .init(address: .hostname(host, port: port), serverName: serverName),
                           onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? port) }, logger: logger)
    }

    /// The token of an `Authorization` header: `Bearer TOKEN` (scripts), or `Basic` with
    /// the token as the password (what a browser asks a person for). Nil for any other
    /// header, and for one too long to hold a token.
    public static func token(_ header: String?) -> String? {
        guard let header, header.utf8.count < 1_000 else { return nil }
        if header.hasPrefix("Bearer ") { return String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces) }
        guard header.hasPrefix("Basic "), let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
              let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":") else { return nil }
        return String(text[text.index(after: colon)...])
    }

    /// Whether a server listening on `host` can be reached only from this machine.
    public static func isLoopback(_ host: String) -> Bool {
        ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host.lowercased())
    }

    /// The names a server listening on `host` is reached by (lower case, IPv6 in brackets).
    public static func names(listeningOn host: String) -> Set<String> {
        let host = host.lowercased()
        // Listening everywhere: the machine's own names are not known here; the loopback ones are.
        if isLoopback(host) || ["0.0.0.0", "::", "[::]"].contains(host) { return ["127.0.0.1", "localhost", "[::1]"] }
        return [host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host]
    }
}
