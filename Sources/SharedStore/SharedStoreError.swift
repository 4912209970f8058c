import Foundation

/// What went wrong with a shared store, in the store's words; the CLI adds the commands
/// and flags that get out of it.
public enum SharedStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The `--db` value looks like a shared store's URL but is not a usable one.
    case badURL(text: String, reason: String)
    /// No server answered, or it refused the connection or the login.
    case unreachable(location: String, detail: String)
    /// The database has no gamelog schema yet.
    case notMigrated(location: String)
    /// The database has tables, but not gamelog's.
    case notAGamelogStore(location: String)
    /// An older gamelog migrated it: `migrate` brings it to this version's schema.
    case olderSchema(location: String, found: Int, current: Int)
    /// A newer gamelog migrated it.
    case newerSchema(location: String, found: Int, supported: Int)
    /// The server refused a statement.
    case server(location: String, detail: String)
    /// A copy of the store is not what the store holds (changed underneath, or damaged).
    case copyDiverged(location: String, detail: String)

    public var description: String {
        switch self {
        case .badURL(let text, let reason):
            return "\(text) is not a shared store's URL: \(reason)"
        case .unreachable(let location, let detail):
            return "cannot reach the shared store \(location): \(detail)"
        case .notMigrated(let location):
            return "the shared store \(location) has no gamelog schema yet"
        case .notAGamelogStore(let location):
            return "\(location) holds tables, but not a gamelog shared store's"
        case .olderSchema(let location, let found, let current):
            return "the shared store \(location) has schema version \(found), older than this gamelog's \(current)"
        case .newerSchema(let location, let found, let supported):
            return "the shared store \(location) has schema version \(found); this gamelog reads up to \(supported)"
        case .server(let location, let detail):
            return "the shared store \(location) refused a statement: \(detail)"
        case .copyDiverged(let location, let detail):
            return "the local copy of \(location) is not what the store holds: \(detail)"
        }
    }
}
