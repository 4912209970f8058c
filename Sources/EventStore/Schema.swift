import Crypto
import EventLog
import Foundation
import GRDB

/// One numbered step of the schema, from `Migrations/NNNN_name.sql`.
public struct Migration: Hashable, Sendable {
    public var version: Int
    public var name: String
    public var sql: String

    /// SHA-256 of the SQL text, recorded when applied so that a database made by a
    /// build with different SQL is noticed.
    public var checksum: String {
        Hex.string(Array(SHA256.hash(data: Data(sql.utf8))))
    }
}

/// The schema this build of gamelog carries, embedded from `Migrations/` at build time.
public enum Schema {
    /// The `application_id` that marks a gamelog database ('GLOG').
    public static let applicationID: Int32 = 0x474C_4F47

    /// Every migration, in order. Versions are the file names' numbers.
    public static let migrations: [Migration] = EmbeddedMigrations.files.map { file in
        let number = Int(file.name.prefix { $0.isNumber }) ?? 0
        let name = String(file.name.dropFirst(5).dropLast(4))
        return Migration(version: number, name: name, sql: file.sql)
    }

    /// The newest schema version this build understands.
    public static var currentVersion: Int { migrations.last?.version ?? 0 }

    /// The oldest schema that opens for reading without a migration. The steps after it
    /// only add what readers can do without (the catalog: they scan instead), so a log
    /// written by an earlier build reads as it is, from read-only media too.
    public static let oldestReadableVersion = 5

    static let ledgerSQL = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version    INTEGER PRIMARY KEY,
            name       TEXT    NOT NULL,
            sha256     TEXT    NOT NULL,
            applied_at INTEGER NOT NULL
        ) STRICT
        """

    /// Refuses files that are not gamelog databases or are newer than this build,
    /// reading only. Returns the schema version found (0 for an empty database).
    static func check(_ db: Database, path: String) throws -> Int {
        let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
        let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        let objectCount = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") ?? 0
        if applicationID == 0 && objectCount == 0 && version == 0 { return 0 }
        guard applicationID == Schema.applicationID else {
            throw EventStoreError.notAGamelogDatabase(path: path, applicationID: applicationID)
        }
        guard version <= currentVersion else {
            throw EventStoreError.newerSchema(path: path, found: version, supported: currentVersion)
        }
        if try db.tableExists("schema_migrations") {
            let rows = try Row.fetchAll(db, sql: "SELECT version, name, sha256 FROM schema_migrations")
            for row in rows {
                let number: Int = row["version"]
                guard let known = migrations.first(where: { $0.version == number }) else {
                    throw EventStoreError.newerSchema(path: path, found: number, supported: currentVersion)
                }
                guard known.checksum == row["sha256"] as String else {
                    throw EventStoreError.migrationMismatch(path: path, version: number, name: row["name"])
                }
            }
        }
        try checkObjects(db, version: version, path: path)
        // Every position read from a block row is first + index, with index below 64: a row
        // written past the schema's CHECK (first position 1 to 2^62) would overflow that
        // arithmetic. The primary key's two ends cost two index reads.
        if try db.tableExists("event_blocks"),
           let row = try Row.fetchOne(db, sql: "SELECT min(first_position), max(first_position) FROM event_blocks"),
           let low = Int64.fromDatabaseValue(row[0]), let high = Int64.fromDatabaseValue(row[1]),
           low < 1 || high > MerkleTree.maximumSize {
            throw EventStoreError.damagedDatabase(path: path, detail:
                "a block of events starts at position \(low < 1 ? low : high), outside the 1 to 2^62 the schema allows: the row was written past the schema's checks")
        }
        return version
    }

    /// Refuses a file that stores a position in both forms: rows of `events` come before
    /// the first block, always (gamelog writes rows only before blocks). Two index reads.
    static func checkForms(_ db: Database, path: String) throws {
        guard try db.tableExists("event_blocks"),
              let lastRow = try Int64.fetchOne(db, sql: "SELECT max(position) FROM events"),
              let firstBlock = try Int64.fetchOne(db, sql: "SELECT min(first_position) FROM event_blocks"),
              lastRow >= firstBlock else { return }
        throw EventStoreError.damagedDatabase(path: path, detail:
            "positions from \(firstBlock) to \(lastRow) are stored both as rows and in blocks (two writers made the file at once, with a gamelog before this check): which of the two copies a position is cannot be known")
    }

    /// Refuses a file whose schema objects (tables, indexes, triggers, views) are not
    /// exactly those the migrations up to `version` make: a trigger planted in the file
    /// would otherwise run with every append, a view or a changed column type would
    /// change what is read. The reference is the migrations applied to an empty database
    /// in memory, so the two are compared statement by statement.
    static func checkObjects(_ db: Database, version: Int, path: String) throws {
        let found = try objects(db)
        let expected = try reference(version: version)
        guard found != expected else { return }
        let extra = found.subtracting(expected).sorted(), absent = expected.subtracting(found).sorted()
        func describe(_ object: SchemaObject) -> String { "\(object.type) \(SafeText.line(object.name))" }
        var parts: [String] = []
        if !extra.isEmpty { parts.append("not made by gamelog: " + extra.prefix(3).map(describe).joined(separator: ", ")) }
        if !absent.isEmpty { parts.append("missing or changed: " + absent.prefix(3).map(describe).joined(separator: ", ")) }
        throw EventStoreError.foreignSchema(path: path, detail: parts.joined(separator: "; "))
    }

    /// One schema object as it behaves: a table by its columns (name, type, not null,
    /// primary key) and strictness, an index by its table, columns and uniqueness, a
    /// trigger or view by its SQL. Comparing behaviour rather than SQL text lets a file
    /// whose tables SQLite rewrote (columns added, then dropped) compare equal.
    struct SchemaObject: Hashable, Comparable {
        var type: String, name: String, shape: String
        static func < (a: Self, b: Self) -> Bool { (a.type, a.name) < (b.type, b.name) }
    }

    static func objects(_ db: Database) throws -> Set<SchemaObject> {
        // Three statements, not one per object: every command opens a log and checks it.
        func text(_ row: Row, _ index: Int) -> String { String.fromDatabaseValue(row[index]) ?? "?" }
        func describe(_ row: Row, _ columns: Range<Int>) -> String {
            columns.map { (row[$0] as DatabaseValue).description }.joined(separator: " ")
        }
        // Each table's and index's columns, by its name.
        var columns: [String: [String]] = [:]
        for row in try Row.fetchAll(db, sql: """
            SELECT m.name, p.name, p.type, p."notnull", p.pk FROM sqlite_master AS m, pragma_table_xinfo(m.name) AS p
            WHERE m.type = 'table' ORDER BY m.name, p.cid
            """) {
            columns[text(row, 0), default: []].append(describe(row, 1..<5))
        }
        for row in try Row.fetchAll(db, sql: """
            SELECT m.name, p.name, p."desc", p."key" FROM sqlite_master AS m, pragma_index_xinfo(m.name) AS p
            WHERE m.type = 'index' ORDER BY m.name, p.seqno
            """) {
            columns[text(row, 0), default: []].append(describe(row, 1..<4))
        }
        var out: Set<SchemaObject> = []
        for row in try Row.fetchAll(db, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master") {
            let type = text(row, 0), name = text(row, 1), table = text(row, 2), sql = String.fromDatabaseValue(row[3]) ?? ""
            // SQLite's own objects (the indexes behind UNIQUE and PRIMARY KEY) follow from the tables.
            if name.hasPrefix("sqlite_autoindex_") { continue }
            var shape: String
            switch type {
            case "table":
                let strict = sql.uppercased().filter { $0 != " " }.hasSuffix("STRICT") || sql.uppercased().contains(") STRICT")
                shape = (columns[name] ?? []).joined(separator: ", ") + (strict ? " STRICT" : "")
            case "index":
                shape = "on \(table) (\((columns[name] ?? []).joined(separator: ", ")))"
                    + (sql.uppercased().hasPrefix("CREATE UNIQUE") ? " unique" : "")
                    + (sql.uppercased().contains(" WHERE ") ? " partial: \(sql)" : "")
            default:
                shape = sql
            }
            out.insert(SchemaObject(type: type, name: name, shape: shape))
        }
        return out
    }

    private final class References: @unchecked Sendable {
        let lock = NSLock()
        var made: [Int: Set<SchemaObject>] = [:]
    }
    private static let references = References()

    /// The objects of a database made by the migrations up to `version`.
    static func reference(version: Int) throws -> Set<SchemaObject> {
        if let known = references.lock.withLock({ references.made[version] }) { return known }
        let memory = try DatabaseQueue()
        try memory.writeWithoutTransaction { db in
            for migration in migrations where migration.version <= version {
                try db.execute(sql: ledgerSQL)
                try db.execute(sql: migration.sql)
            }
        }
        let made = try memory.read { try objects($0) }
        references.lock.withLock { references.made[version] = made }
        return made
    }

    /// Applies the migrations after `version`, each in its own transaction.
    static func migrate(_ writer: DatabaseQueue, from version: Int, now: Timestamp) throws {
        for migration in migrations where migration.version > version {
            try writer.inTransaction(.immediate) { db in
                // Another process may have migrated while we waited for the lock.
                let applied = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                guard applied < migration.version else { return .commit }
                try db.execute(sql: ledgerSQL)
                try db.execute(sql: migration.sql)
                try db.execute(
                    sql: "INSERT INTO schema_migrations (version, name, sha256, applied_at) VALUES (?, ?, ?, ?)",
                    arguments: [migration.version, migration.name, migration.checksum, now.microsecondsSince1970])
                try db.execute(sql: "PRAGMA user_version = \(migration.version)")
                return .commit
            }
        }
    }
}
