import EventStore
import Foundation
import GRDB
import Testing
import TestSupport

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

@Suite struct FullAndReadOnlyTests {
    @Test func aFullStoreRefusesTheBatchAndKeepsWhatItHad() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("small.sqlite")
        let store = try EventStore(path: path, maximumSize: 256 * 1024)
        var stored = 0
        var full: EventStoreError?
        for _ in 0..<200 {
            do {
                try store.append(sampleEvents(50))
                stored += 50
            } catch let error as EventStoreError {
                full = error
                break
            }
        }
        guard case .storageFull(let errorPath, _)? = full else {
            Issue.record("expected storageFull, got \(String(describing: full))")
            return
        }
        #expect(errorPath == path)
        #expect(full?.description.contains("Free some disk space") == true)
        #expect(try store.count().events == Int64(stored))
        #expect(try EventStore(path: path, access: .readOnly).verifyIntegrity().isSound)
    }

    @Test func anUnwritableFileGivesAPlainErrorAndStaysUnchanged() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("locked.sqlite")
        try EventStore(path: path).append(sampleEvents(5))
        try tamper(path, "PRAGMA wal_checkpoint(TRUNCATE)")
        let before = try fileBytes(path)
        // Root ignores permission bits, so make the file immutable when we can.
        guard lockFile(path) else {
            print("note: this machine cannot make \(path) unwritable; nothing to check")
            return
        }
        defer { unlockFile(path) }
        #expect(throws: EventStoreError.self) {
            let store = try EventStore(path: path)
            try store.append(sampleEvents(1))
        }
        #expect(try fileBytes(path) == before)
        // Reading still works.
        #expect(try EventStore(path: path, access: .readOnly).count().events == 5)
    }
}

/// Makes a file unwritable: immutable (chattr +i) as root, read-only bits otherwise.
/// Returns false if neither stops a write.
func lockFile(_ path: String) -> Bool {
    let chattr = try? ChildProcess.run("chattr", ["+i", path], atMost: 30)
    if chattr?.status != 0 { chmod(path, 0o444) }
    return FileHandle(forWritingAtPath: path) == nil
}

func unlockFile(_ path: String) {
    _ = try? ChildProcess.run("chattr", ["-i", path], atMost: 30)
    chmod(path, 0o644)
}
