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
        if let items = components.queryItems, !items.isEmpty {
            throw SharedStoreError.badURL(text: Self.redacting(text), reason: "gamelog takes no URL options (\(items.map(\.name).joined(separator: ", ")))")
        }
        self.host = host
        self.port = port
        self.user = user.removingPercentEncoding ?? user
        self.password = components.password?.removingPercentEncoding ?? environment["PGPASSWORD"]
        self.database = database.removingPercentEncoding ?? database
    }

    /// The URL without its password, for messages and logs.
    public var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }

    /// `text` with any password in it replaced by `***`, for messages.
    public static func redacting(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.password != nil else { return text }
        components.password = "***"
        return components.string ?? text
    }
}
