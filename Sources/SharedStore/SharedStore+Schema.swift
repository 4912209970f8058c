import Crypto
import EventStore
import Foundation
import PostgresNIO

/// One numbered step of the shared store's schema, from `Migrations/postgres/NNNN_name.sql`.
public struct SharedStoreMigration: Hashable, Sendable {
    public var version: Int
    public var name: String
    public var sql: String
}

extension SharedStore {
    /// Every migration of the shared store, in order (embedded at build time).
    public static let migrations: [SharedStoreMigration] = EmbeddedMigrations.files.map { file in
        SharedStoreMigration(version: Int(file.name.prefix { $0.isNumber }) ?? 0, name: String(file.name.dropFirst(5).dropLast(4)),
                             sql: file.sql)
    }

    /// The newest schema version this build understands.
    public static var currentVersion: Int { migrations.last?.version ?? 0 }

    /// Creates or upgrades the schema, each step in its own transaction, and returns the
    /// versions before and after. Concurrent callers are serialised by an advisory lock.
    @discardableResult
    public func migrate() async throws -> (from: Int, to: Int) {
        try await withConnection { connection in
            // One key for gamelog's migrations, so two first starts do not race; the
            // lock is released at the end (or ends with the connection, closed on an error).
            try await run(connection, "SELECT pg_advisory_lock(1196183367)")
            // A database holding other tables is refused before anything is created in it.
            let from = try await version(connection, requireMigrated: false)
            try await run(connection, """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version    bigint PRIMARY KEY,
                    name       text   NOT NULL,
                    sha256     text   NOT NULL,
                    applied_at bigint NOT NULL)
                """)
            for migration in Self.migrations where migration.version > from {
                try await inTransaction(connection) {
                    for statement in Self.statements(migration.sql) { try await run(connection, statement) }
                    var binds = PostgresBindings()
                    binds.append(Int64(migration.version))
                    binds.append(migration.name)
                    binds.append(Hex.string(Array(SHA256.hash(data: Array(migration.sql.utf8)))))
                    binds.append(Timestamp(Date()).microsecondsSince1970)
                    try await run(connection, "INSERT INTO schema_migrations (version, name, sha256, applied_at) VALUES ($1, $2, $3, $4)", binds)
                }
            }
            // The connection goes back to the pool: its session lock must not go with it.
            try await run(connection, "SELECT pg_advisory_unlock(1196183367)")
            return (from, max(from, Self.currentVersion))
        }
    }

    /// The schema version; refuses a store that is not migrated or is newer than this build.
    func version(_ connection: PostgresConnection, requireMigrated: Bool = true) async throws -> Int {
        let ledger = try await run(connection, "SELECT to_regclass('schema_migrations') IS NOT NULL")
        let hasLedger = try ledger.first?.decode(Bool.self) ?? false
        var version = 0
        if hasLedger {
            version = Int(try await run(connection, "SELECT coalesce(max(version), 0) FROM schema_migrations").first?.decode(Int64.self) ?? 0)
        }
        if version == 0 {
            let tables = try await run(connection, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'schema_migrations'")
            if try tables.first?.decode(Int64.self) ?? 0 > 0 { throw SharedStoreError.notAGamelogStore(location: location.description) }
            if requireMigrated { throw SharedStoreError.notMigrated(location: location.description) }
        }
        if version > Self.currentVersion {
            throw SharedStoreError.newerSchema(location: location.description, found: version, supported: Self.currentVersion)
        }
        if requireMigrated && version < Self.currentVersion {
            throw SharedStoreError.olderSchema(location: location.description, found: version, current: Self.currentVersion)
        }
        return version
    }

    /// A migration's statements: its text split at semicolons ending a line, comments dropped.
    static func statements(_ sql: String) -> [String] {
        let lines = sql.split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in line.range(of: "--").map { String(line[..<$0.lowerBound]) } ?? String(line) }
        return lines.joined(separator: "\n").components(separatedBy: ";\n")
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines).trimmingCharacters(in: CharacterSet(charactersIn: ";")) }
            .filter { !$0.isEmpty }
    }

    /// The store's id and revision in one statement, if its schema is this version's
    /// (nil otherwise: ``version(_:requireMigrated:)`` then says what is wrong). `locking`:
    /// the revision row is locked for the transaction (writers queue on it, each for as
    /// long as the writes before it take).
    func currentState(_ connection: PostgresConnection, locking: Bool = false) async throws -> (id: UUID, revision: Int64)? {
        let rows = try await run(connection, """
            SELECT (SELECT coalesce(max(version), 0) FROM schema_migrations), store_id, revision FROM store_state
            """ + (locking ? " FOR UPDATE" : ""), deadline: locking ? .seconds(900) : Self.statementDeadline)
        guard let row = rows.first else { return nil }
        let (version, id, revision) = try row.decode((Int64, UUID, Int64).self)
        return version == Self.currentVersion ? (id, revision) : nil
    }

    /// The store's id (names its local copies) and its revision.
    func state(_ connection: PostgresConnection) async throws -> (id: UUID, revision: Int64) {
        let rows = try await run(connection, "SELECT store_id, revision FROM store_state")
        guard let row = rows.first else { throw SharedStoreError.notAGamelogStore(location: location.description) }
        let (id, revision) = try row.decode((UUID, Int64).self)
        return (id, revision)
    }
}

extension SharedStore {
    /// The store's revision: how many writes changed it (a write that stored nothing,
    /// such as a repeated upload, leaves it as it was). Local copies record the revision
    /// they hold.
    public func revision() async throws -> Int64 {
        try await withConnection { connection in
            _ = try await version(connection)
            return try await state(connection).revision
        }
    }
}

extension SharedStore {
    /// Gathers the planner's statistics of the store's tables (PostgreSQL's `ANALYZE`),
    /// when a write that stored `stored` events grew it by a tenth or more: autovacuum
    /// would, but only at its next round, and until then PostgreSQL plans for the store as
    /// it was (a first whole-store `verify` after a bulk import took 4x as long). Returns
    /// whether it ran.
    @discardableResult
    public func analyzeIfGrown(stored: Int) async throws -> Bool {
        guard stored > 0 else { return false }
        return try await withConnection { connection in
            _ = try await version(connection)
            let events = try await run(connection, "SELECT coalesce(max(position), 0) FROM events").first?.decode(Int64.self) ?? 0
            guard Int64(stored) * 10 >= events else { return false }
            try await run(connection, "ANALYZE")
            return true
        }
    }
}
