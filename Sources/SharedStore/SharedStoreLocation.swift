import Foundation

/// Where a shared store is: a `postgres://user[:password]@host[:port]/database` URL.
///
/// The password is best left out of the URL (it would show in `ps` and shell history):
/// without one, `PGPASSWORD` is used, and without that the server must trust the user
/// (a local PostgreSQL's `trust` or `peer` setting).
public struct SharedStoreLocation: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String

    /// Whether `text` names a shared store rather than a SQLite file.
    public static func isURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Parses a URL; the error says which part is wrong and what a good one looks like.
    public init(url text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard Self.isURL(text), let components = URLComponents(string: text) else {
            throw SharedStoreError.badURL(text: Self.redacting(text), reason: "it is not a URL of the form postgres://user@host:port/database")
        }
        guard let host = components.host, !host.isEmpty else {
            throw SharedStoreError.badURL(text: Self.redacting(text), reason: "it names no host")
        }
        guard let user = components.user, !user.isEmpty else {
            throw SharedStoreError.badURL(text: Self.redacting(text), reason: "it names no user (postgres://USER@host/database)")
        }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw SharedStoreError.badURL(text: Self.redacting(text), reason: "it names no database (postgres://user@host/DATABASE)")
        }
        let port = components.port ?? 5432
        guard (1...65_535).contains(port) else {
            throw SharedStoreError.badURL(text: Self.redacting(text), reason: "port \(port) is not in 1...65535")
        }
        var mode = "disable", rootCertificate: String?
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode": mode = item.value ?? ""
            case "sslrootcert": rootCertificate = item.value
            default:
                throw SharedStoreError.badURL(text: Self.redacting(text), reason: "gamelog takes no URL option \(item.name) (only sslmode and sslrootcert)")
            }
        }
        switch mode {
        case "disable":
            guard rootCertificate == nil else {
                throw SharedStoreError.badURL(text: Self.redacting(text), reason: "sslrootcert goes with sslmode=verify-full")
            }
            tls = .disable
        case "require":
            tls = .require
        case "verify-full":
            tls = .verifyFull(rootCertificate: rootCertificate)
        default:
            throw SharedStoreError.badURL(text: Self.redacting(text), reason: "sslmode=\(mode) is not one of disable, require (encrypted, the server not checked), verify-full (encrypted, the server's certificate and name checked)")
        }
        self.host = host
        self.port = port
        self.user = user.removingPercentEncoding ?? user
        self.password = components.password?.removingPercentEncoding ?? environment["PGPASSWORD"]
        self.database = database.removingPercentEncoding ?? database
    }

    /// How the connection to PostgreSQL is protected, as libpq's `sslmode` says it.
    public enum TLSMode: Hashable, Sendable {
        /// No TLS (the default: a store on this machine or a private network).
        case disable
        /// Encrypted; the server's certificate is not checked.
        case require
        /// Encrypted; the certificate must chain to `rootCertificate` (a PEM file; nil: the
        /// system's roots) and name the host.
        case verifyFull(rootCertificate: String?)
    }

    public var tls: TLSMode = .disable

    /// The URL without its password, for messages and logs.
    public var description: String {
        let options: String
        switch tls {
        case .disable: options = ""
        case .require: options = "?sslmode=require"
        case .verifyFull(let root): options = "?sslmode=verify-full" + (root.map { "&sslrootcert=\($0)" } ?? "")
        }
        return "postgres://\(user)@\(host):\(port)/\(database)" + options
    }

    /// `text` with any password in it replaced by `***`, for messages.
    public static func redacting(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.password != nil else { return text }
        components.password = "***"
        return components.string ?? text
    }
}
