import EventStore
import Foundation
import GRDB
import Testing

@Suite struct OpeningTests {
    @Test func embeddedMigrationsEqualTheFiles() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appending(path: "Migrations")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".sql") }.sorted()
        #expect(!files.isEmpty)
        #expect(Schema.migrations.count == files.count)
        for (file, migration) in zip(files, Schema.migrations) {
            let sql = try String(contentsOf: folder.appending(path: file), encoding: .utf8)
            #expect(migration.sql == sql, "\(file) differs from the embedded copy")
            #expect(file.hasPrefix(String(format: "%04d_", migration.version)))
        }
        #expect(Schema.migrations.map(\.version) == Array(1...Schema.currentVersion))
    }

    @Test func newDatabaseRecordsItsSchema() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        _ = try EventStore(path: path)
        let (version, appID, ledger, mode) = try DatabaseQueue(path: path).read { db in
            (try Int.fetchOne(db, sql: "PRAGMA user_version")!, try Int32.fetchOne(db, sql: "PRAGMA application_id")!,
             try Int.fetchOne(db, sql: "SELECT count(*) FROM schema_migrations")!,
             try String.fetchOne(db, sql: "PRAGMA journal_mode")!)
        }
        #expect(version == Schema.currentVersion)
        #expect(appID == Schema.applicationID)
        #expect(ledger == Schema.migrations.count)
        #expect(mode == "wal")
        #expect(try DatabaseQueue(path: path).read { try String.fetchOne($0, sql: "PRAGMA integrity_check") } == "ok")
    }

    @Test func newerSchemaIsRefusedAndLeftUntouched() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        try EventStore(path: path).append(sampleEvents(3))
        try tamper(path, "PRAGMA user_version = \(Schema.currentVersion + 1)")
        let before = try fileBytes(path)
        #expect(throws: EventStoreError.newerSchema(path: path, found: Schema.currentVersion + 1, supported: Schema.currentVersion)) {
            _ = try EventStore(path: path)
        }
        #expect(throws: EventStoreError.self) { _ = try EventStore(path: path, access: .readOnly) }
        #expect(try fileBytes(path) == before)
    }

    @Test func nonDatabaseFileIsRefusedAndLeftUntouched() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("notes.sqlite")
        let text = Data(String(repeating: "these are not the events you are looking for\n", count: 50).utf8)
        try text.write(to: URL(fileURLWithPath: path))
        #expect(throws: EventStoreError.notADatabase(path: path, reason: "it does not start with the SQLite file header")) {
            _ = try EventStore(path: path)
        }
        #expect(try fileBytes(path) == text)
    }

    @Test func foreignSQLiteDatabaseIsRefusedAndLeftUntouched() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("other.sqlite")
        try tamper(path, "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers VALUES (1, 'Ada')")
        let before = try fileBytes(path)
        #expect(throws: EventStoreError.notAGamelogDatabase(path: path, applicationID: 0)) {
            _ = try EventStore(path: path)
        }
        #expect(try fileBytes(path) == before)
    }

    @Test func truncatedFileIsRefusedAndLeftUntouched() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        let store = try EventStore(path: path)
        for _ in 0..<20 { try store.append(sampleEvents(50)) }
        try tamper(path, "PRAGMA wal_checkpoint(TRUNCATE)")
        let full = try fileBytes(path)
        for cut in [50, full.count / 3] {
            let truncated = full.prefix(cut)
            let damaged = folder.path("cut-\(cut).sqlite")
            try truncated.write(to: URL(fileURLWithPath: damaged))
            #expect(throws: (any Error).self) {
                let reopened = try EventStore(path: damaged, access: .readOnly)
                _ = try reopened.verifyIntegrity()
            }
            #expect(try fileBytes(damaged) == truncated)
        }
    }

    @Test func readOnlyAccessNeverWrites() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        try EventStore(path: path).append(sampleEvents(30))
        try tamper(path, "PRAGMA wal_checkpoint(TRUNCATE)")
        let before = try fileBytes(path)
        let reader = try EventStore(path: path, access: .readOnly)
        _ = try reader.events()
        _ = try reader.verifyIntegrity()
        #expect(throws: EventStoreError.self) { try reader.append(sampleEvents(1)) }
        #expect(try fileBytes(path) == before)
    }

    @Test func missingFileIsNotCreatedByReaders() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("absent.sqlite")
        #expect(throws: EventStoreError.databaseNotFound(path: path)) { _ = try EventStore(path: path, access: .readOnly) }
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
