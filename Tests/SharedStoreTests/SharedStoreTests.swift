import EventStore
import Foundation
import Interchange
import SharedStore
import TestSupport
import Testing

/// The log in a real PostgreSQL (started by the test support in a temporary folder):
/// the same rows, so the same export lines and the same verdicts as in SQLite.
@Suite(.serialized) struct SharedStoreTests {
    /// A migrated store in a new database, with a cache folder of its own.
    static func makeStore(_ folder: TemporaryFolder) async throws -> (SharedStore, String) {
        let url = try PostgresServer.shared().makeDatabase()
        let store = try SharedStore(url: url, cacheFolder: folder.url.appending(path: "cache"))
        _ = try await store.migrate()
        return (store, url)
    }

    static func exportLines(_ store: EventStore) throws -> [String] {
        var lines: [String] = []
        _ = try Interchange.export(from: store) { lines.append($0) }
        return lines
    }

    static func importing(_ lines: [String], into store: SharedStore) async throws -> ImportSummary {
        let body = Data((lines.joined(separator: "\n") + "\n").utf8)
        return try await store.writeNatively { writer in try Interchange.import(files: [ExportFile(name: "lines", contents: body)], into: writer) }
    }

    static func copyLines(_ store: SharedStore, fresh: Bool = false) async throws -> [String] {
        let copy = try await store.localCopy(fresh: fresh)
        defer { copy.release() }
        return try exportLines(try EventStore(path: copy.path, access: .readOnly))
    }

    @Test func exportFromTheSharedStoreIsTheSQLiteLogsExport() async throws {
        let folder = try TemporaryFolder()
        let keys = TestKeys()
        let sqlite = try EventStore(path: folder.path("log.sqlite"))
        try playMixedGames(6, into: sqlite, seed: 31, keys: keys)
        let original = try Self.exportLines(sqlite)
        #expect(original.count > 300)

        let (shared, url) = try await Self.makeStore(folder)
        let first = try await Self.importing(original, into: shared)
        #expect(first.stored > 300)
        await #expect(try Self.copyLines(shared) == original)
        await #expect(try Self.copyLines(shared, fresh: true) == original)
        // Importing again adds nothing and writes no new revision.
        let revision = try PostgresServer.shared().psql(url, "SELECT revision FROM store_state")
        await #expect(try Self.importing(original, into: shared).stored == 0)
        #expect(try PostgresServer.shared().psql(url, "SELECT revision FROM store_state") == revision)

        // More games: the cached copy fetches only what is new and still equals the SQLite log.
        try playMixedGames(9, into: sqlite, seed: 31, keys: keys)
        let grown = try Self.exportLines(sqlite)
        #expect(grown.count > original.count)
        await #expect(try Self.importing(grown, into: shared).stored == grown.filter { $0.hasPrefix("{\"id\"") }.count - first.stored)
        await #expect(try Self.copyLines(shared) == grown)

        // The same proofs check in both: the copy verifies against the trusted keys.
        let copy = try await shared.localCopy()
        defer { copy.release() }
        let report = try EventStore(path: copy.path, access: .readOnly).verifyProofs(trusting: keys.trusted)
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(report.heads > 0)
        // And the rows themselves are the SQLite log's: events, hashes, leaves.
        let pgHashes = try PostgresServer.shared().psql(url, "SELECT encode(hash, 'hex') FROM events ORDER BY position")
            .split(separator: "\n").map(String.init)
        var sqliteHashes: [String] = []
        try sqlite.scan { sqliteHashes.append(Hex.string($0.hash)) }
        #expect(pgHashes == sqliteHashes)
    }

    @Test func aRowChangedInTheStoreIsFoundByAFreshCopy() async throws {
        let folder = try TemporaryFolder()
        let sqlite = try EventStore(path: folder.path("log.sqlite"))
        try playMixedGames(2, into: sqlite, seed: 5, keys: TestKeys())
        let (shared, url) = try await Self.makeStore(folder)
        _ = try await Self.importing(try Self.exportLines(sqlite), into: shared)
        _ = try await Self.copyLines(shared)
        // Someone with the database's password edits an event's payload in place.
        _ = try PostgresServer.shared().psql(url, "UPDATE events SET payload = payload || '\\x00'::bytea, raw_size = raw_size WHERE position = 7")
        let copy = try await shared.localCopy(fresh: true)
        defer { copy.release() }
        let store = try EventStore(path: copy.path, access: .readOnly)
        var damaged: [EventStoreError] = []
        try store.scan(skippingDamaged: { damaged.append($0) }) { _ in }
        #expect(damaged.count == 1)
        #expect(damaged.first.map { "\($0)" }?.contains("7") == true)
    }

    @Test func migrationsRefuseWhatIsNotAGamelogStore() async throws {
        let server = try PostgresServer.shared()
        let folder = try TemporaryFolder()
        let url = try server.makeDatabase()
        let store = try SharedStore(url: url, cacheFolder: folder.url)
        await #expect(throws: SharedStoreError.notMigrated(location: store.location.description)) {
            try await store.localCopy()
        }
        // A write reads the schema's version with its lock, and names a mismatch the same way.
        await #expect(throws: SharedStoreError.notMigrated(location: store.location.description)) {
            try await store.writeNatively { _ in }
        }
        let (from, to) = try await store.migrate()
        #expect(from == 0 && to == SharedStore.currentVersion)
        let again = try await store.migrate()
        #expect(again.from == SharedStore.currentVersion)
        _ = try server.psql(url, "INSERT INTO schema_migrations VALUES (99, 'future', 'x', 0)")
        await #expect(throws: SharedStoreError.newerSchema(location: store.location.description, found: 99, supported: SharedStore.currentVersion)) {
            try await store.localCopy()
        }
        let revision = try server.psql(url, "SELECT revision FROM store_state")
        await #expect(throws: SharedStoreError.newerSchema(location: store.location.description, found: 99, supported: SharedStore.currentVersion)) {
            try await store.writeNatively { writer in try writer.store(cosignatures: []) }
        }
        #expect(try server.psql(url, "SELECT revision FROM store_state") == revision)
        let other = try server.makeDatabase()
        _ = try server.psql(other, "CREATE TABLE customers (id int)")
        let foreign = try SharedStore(url: other, cacheFolder: folder.url)
        await #expect(throws: SharedStoreError.notAGamelogStore(location: foreign.location.description)) {
            try await foreign.migrate()
        }
        await #expect(throws: SharedStoreError.notAGamelogStore(location: foreign.location.description)) {
            try await foreign.writeNatively { _ in }
        }
        #expect(try server.psql(other, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == "1")
    }

    @Test func badURLsAreNamed() {
        for (text, part) in [("postgres://host/db", "user"), ("postgres://u@/db", "host"), ("postgres://u@h", "database"),
                             ("postgres://u@h:70000/db", "port"), ("postgres://u@h/db?connect_timeout=3", "option connect_timeout"),
                             ("postgres://u@h/db?sslmode=prefer", "sslmode=prefer"), ("postgres://u@h/db?sslrootcert=ca.pem", "verify-full")] {
            #expect(throws: SharedStoreError.self) { try SharedStoreLocation(url: text) }
            do { _ = try SharedStoreLocation(url: text) } catch { #expect("\(error)".contains(part), "\(text): \(error)") }
        }
        let location = try? SharedStoreLocation(url: "postgres://me:secret@db.example:5433/logs")
        #expect(location?.description == "postgres://me@db.example:5433/logs")
        #expect(location?.password == "secret")
    }
}

/// Issue 37, item 6: TLS to PostgreSQL as libpq's `sslmode` says it.
@Suite(.serialized) struct SharedStoreTLSTests {
    @Test func sslModesConnectAsTheirNamesSay() async throws {
        let server = try PostgresServer(tls: true)
        defer { server.stop(mode: "immediate") }
        let plain = try server.makeDatabase()
        let certificate = try #require(server.certificate)
        let folder = try TemporaryFolder()
        func migrates(_ url: String) async -> Result<Void, Error> {
            do {
                let store = try SharedStore(url: url, cacheFolder: folder.url.appending(path: "cache-\(UUID().uuidString.prefix(6))"))
                _ = try await store.migrate()
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        // The certificate checked against the CA file and the host: connected.
        let checked = await migrates(plain + "?sslmode=verify-full&sslrootcert=\(certificate)")
        #expect(throws: Never.self) { try checked.get() }
        // Encrypted without checking the server.
        let encrypted = await migrates(plain + "?sslmode=require")
        #expect(throws: Never.self) { try encrypted.get() }
        // The system's roots do not know a self-signed certificate: refused, the store named.
        let unknownRoot = await migrates(plain + "?sslmode=verify-full")
        #expect { try unknownRoot.get() } throws: { error in
            String(describing: error).contains("127.0.0.1:\(server.port)")
        }
        // An option gamelog does not take, and an sslmode it does not know, are named.
        #expect { _ = try SharedStoreLocation(url: plain + "?sslmode=prefer") } throws: { String(describing: $0).contains("sslmode=prefer") }
        #expect { _ = try SharedStoreLocation(url: plain + "?connect_timeout=3") } throws: { String(describing: $0).contains("connect_timeout") }
        // A server without TLS refuses sslmode=require.
        let noTLS = try PostgresServer.shared().makeDatabase()
        let refused = await migrates(noTLS + "?sslmode=require")
        #expect { try refused.get() } throws: { _ in true }
    }
}

