import EventStore
import Foundation
import GRDB
import Interchange
import SharedStore
import TestSupport
import Testing

/// Every writing rule on both stores: the same signed history imported into a SQLite
/// file and into PostgreSQL written as itself (`writeNatively`, nothing copied). Both
/// append through one planner, so the rows (positions, both chains, leaves, trees,
/// proof nodes, heads, the catalog) must be the same values in both.
///
/// Five minutes a test at most: a write that never ends fails its test, by name, rather
/// than holding the whole run until CI's limit.
@Suite(.serialized, .timeLimit(.minutes(5))) struct LogWriterTests {

    /// A signed log and its export, made once.
    final class Source: @unchecked Sendable {
        let folder: TemporaryFolder
        let lines: [String]
        /// The export of the log's first half (before its last games were played).
        let firstLines: [String]
        let original: String
        let keys = TestKeys()

        private static let made = Result { try Source() }
        static func get() throws -> Source { try made.get() }

        private init() throws {
            folder = try TemporaryFolder()
            original = folder.path("source.sqlite")
            let store = try EventStore(path: original)
            try playMixedGames(3, into: store, seed: 77, keys: keys)
            firstLines = try SharedStoreTests.exportLines(store)
            try playMixedGames(3, into: store, seed: 79, keys: keys)
            lines = try SharedStoreTests.exportLines(store)
        }
    }

    /// A new empty store, and a way to import into it in one transaction.
    struct Target {
        let folder: TemporaryFolder
        let store: StoreUnderTest
        let sqlitePath: String
        let shared: SharedStore?

        init(_ store: StoreUnderTest) async throws {
            folder = try TemporaryFolder()
            self.store = store
            sqlitePath = folder.path("target.sqlite")
            shared = store == .postgres ? try await SharedStoreTests.makeStore(folder).0 : nil
            if store == .sqliteRows { _ = try EventStore(path: sqlitePath, layout: .rows) }
        }

        static func plan(_ lines: [String]) throws -> ImportPlan {
            try Interchange.check(files: [ExportFile(name: "lines", contents: Data((lines.joined(separator: "\n") + "\n").utf8))])
        }

        func importing(_ lines: [String], batchSize: Int = 1_000) async throws -> ImportSummary {
            let plan = try Self.plan(lines)
            if let shared {
                return try await shared.writeNatively { try Interchange.import(plan, into: $0, batchSize: batchSize) }
            }
            return try Interchange.import(plan, into: try EventStore(path: sqlitePath, layout: store == .sqliteRows ? .rows : .blocks),
                                          batchSize: batchSize)
        }

        /// The store's rows, as a SQLite file (PostgreSQL's through a fresh copy).
        func rowsFile() async throws -> (path: String, release: () -> Void) {
            guard let shared else { return (sqlitePath, {}) }
            let copy = try await shared.localCopy(fresh: true)
            return (copy.path, { copy.release() })
        }

        var revision: Int64? {
            get async throws {
                guard let shared else { return nil }
                return try await shared.revision()
            }
        }
    }

    /// What a log's rows say, named by keys and uuids rather than row ids (which a store
    /// may number differently): every value a proof, a verdict or an export reads.
    static func rows(_ path: String) throws -> [String: [[String]]] {
        func hex(_ data: Data?) -> String { data.map { $0.map { String(format: "%02x", $0) }.joined() } ?? "NULL" }
        // Events as the log reads them, whichever layout stores them (a SQLite file's blocks, rows).
        let events = try EventStore(path: path, access: .readOnly).events().map { e in
            [String(e.position), e.id.uuidString, e.stream.uuidString, String(e.streamVersion), e.type, String(e.typeVersion),
             String(e.recordedAt.microsecondsSince1970), hex(Data(e.payload)), hex(Data(e.hash)), e.leaf.map(String.init) ?? "NULL"]
        }
        let queue = try DatabaseQueue(path: path)
        return try queue.read { db in
            var out: [String: [[String]]] = ["events": events]
            out["streams"] = try Row.fetchAll(db, sql: """
                SELECT s.uuid, s.version, s.head, t.public_key FROM streams s LEFT JOIN trees t ON t.id = s.tree_id ORDER BY s.uuid
                """).map { [hex($0[0]), String($0[1] as Int64), hex($0[2]), hex($0[3])] }
            out["trees"] = try Row.fetchAll(db, sql: "SELECT public_key, device, size, frontier FROM trees ORDER BY public_key")
                .map { [hex($0[0]), $0[1], String($0[2] as Int64), hex($0[3])] }
            out["tree_nodes"] = try Row.fetchAll(db, sql: """
                SELECT t.public_key, n.lo, n.hi, n.hash FROM tree_nodes n JOIN trees t ON t.id = n.tree_id ORDER BY t.public_key, n.lo, n.hi
                """).map { [hex($0[0]), String($0[1] as Int64), String($0[2] as Int64), hex($0[3])] }
            out["tree_heads"] = try Row.fetchAll(db, sql: """
                SELECT t.public_key, h.size, h.root, h.signed_at, h.signature FROM tree_heads h JOIN trees t ON t.id = h.tree_id
                ORDER BY t.public_key, h.size
                """).map { [hex($0[0]), String($0[1] as Int64), hex($0[2]), String($0[3] as Int64), hex($0[4])] }
            out["catalog"] = try Row.fetchAll(db, sql: """
                SELECT c.kind, c.key, s.uuid, c.position FROM catalog c JOIN streams s ON s.id = c.stream_id ORDER BY c.kind, c.key, s.uuid
                """).map { [String($0[0] as Int64), hex($0[1]), hex($0[2]), String($0[3] as Int64)] }
            out["catalog_coverage"] = try Row.fetchAll(db, sql: "SELECT through FROM catalog_coverage").map { [String($0[0] as Int64)] }
            return out
        }
    }

    @Test(arguments: StoreUnderTest.allCases) func anImportStoresTheRowsTheOtherStoreStores(_ store: StoreUnderTest) async throws {
        let source = try Source.get()
        let target = try await Target(store)
        // Small batches, so that recordings, trees and the catalog continue across them.
        let summary = try await target.importing(source.lines, batchSize: 7)
        #expect(summary.stored > 500)
        let (path, release) = try await target.rowsFile()
        defer { release() }
        let written = try Self.rows(path), original = try Self.rows(source.original)
        #expect(written["events"]?.count == summary.stored)
        if store != .postgres {
            // Each file in its own layout: a file of rows was not given blocks, nor the other way.
            let asRows = try EventStore(path: path, access: .readOnly).storedAsRows()
            #expect(asRows == (store == .sqliteRows ? summary.stored : 0))
        }
        #expect(try #require(written["tree_heads"]).count > 0)
        #expect(try #require(written["catalog"]).count > 0)
        for table in original.keys.sorted() {
            #expect(written[table] == original[table], "table \(table) differs in \(store)")
        }
        // The catalog covers the whole log, as in the file that recorded it.
        #expect(written["catalog_coverage"] == [[String(summary.stored)]])
    }

    @Test(arguments: StoreUnderTest.allCases) func historyImportedInTwoPartsContinuesItsChainsAndTrees(_ store: StoreUnderTest) async throws {
        let source = try Source.get()
        let whole = try await Target(store)
        _ = try await whole.importing(source.lines)
        // The same history in two imports: the devices' export when half of it was
        // played, then their export of everything.
        let parts = try await Target(store)
        let first = try await parts.importing(source.firstLines, batchSize: 7)
        let second = try await parts.importing(source.lines, batchSize: 7)
        let events = source.lines.filter { $0.hasPrefix("{\"id\"") }.count
        #expect(first.stored > 100)
        #expect(first.stored + second.stored == events)
        // The chains, trees and catalog continued across the two imports exactly as one
        // import of everything writes them.
        try await Self.expectSameRows(whole, parts, events: events)
    }

    /// Every table of `parts` as in `whole`, which holds `events` events and some heads.
    static func expectSameRows(_ whole: Target, _ parts: Target, events: Int,
                               sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let (wholePath, releaseWhole) = try await whole.rowsFile()
        defer { releaseWhole() }
        let (partsPath, releaseParts) = try await parts.rowsFile()
        defer { releaseParts() }
        let a = try rows(wholePath), b = try rows(partsPath)
        #expect(a["events"]?.count == events, sourceLocation: sourceLocation)
        #expect((a["tree_heads"]?.count ?? 0) > 0, sourceLocation: sourceLocation)
        for table in a.keys.sorted() {
            #expect(a[table] == b[table], "table \(table) differs in \(parts.store)", sourceLocation: sourceLocation)
        }
    }

    /// Both parts in one write of the shared store: the second import plans from what the
    /// write knows of the first (its recordings, trees and heads, kept rather than read
    /// again behind a `COPY` under way) and must store what one import of everything does.
    @Test func twoImportsInOneWriteContinueFromWhatTheWriteKnows() async throws {
        let source = try Source.get()
        let whole = try await Target(.postgres), parts = try await Target(.postgres)
        _ = try await whole.importing(source.lines)
        let plans = try [source.firstLines, source.lines].map(Target.plan)
        let stored = try await #require(parts.shared).writeNatively { writer in
            try plans.map { try Interchange.import($0, into: writer, batchSize: 7).stored }
        }
        let events = source.lines.filter { $0.hasPrefix("{\"id\"") }.count
        #expect(stored[0] > 100 && stored[0] + stored[1] == events)
        try await Self.expectSameRows(whole, parts, events: events)
    }

    @Test(arguments: StoreUnderTest.allCases) func aRepeatIsANoOpAndARefusedImportLeavesNothing(_ store: StoreUnderTest) async throws {
        let source = try Source.get()
        let target = try await Target(store)
        let first = try await target.importing(source.lines)
        let revision = try await target.revision
        let (beforePath, releaseBefore) = try await target.rowsFile()
        let before = try Self.rows(beforePath)
        releaseBefore()
        await #expect(try target.importing(source.lines).stored == 0)
        // A repeat writes nothing, so the store's revision (what copies fetch after) stays.
        #expect(try await target.revision == revision)
        // Another history signed by the same devices' keys: its events are new, and its
        // leaves are ones the stored trees hold already. Refused, after some of its batches
        // were appended: nothing of it may stay.
        let other = try TemporaryFolder()
        let more = try EventStore(path: other.path("more.sqlite"))
        try playMixedGames(2, into: more, seed: 78, keys: source.keys)
        await #expect(throws: EventStoreError.self) { try await target.importing(try SharedStoreTests.exportLines(more), batchSize: 7) }
        let (afterPath, releaseAfter) = try await target.rowsFile()
        defer { releaseAfter() }
        #expect(try Self.rows(afterPath) == before)
        #expect(before["events"]?.count == first.stored)
        #expect(try await target.revision == revision)
    }

    /// The rows a write sends with `COPY ... FROM STDIN`, exactly as PostgreSQL's text
    /// format reads them: no value can end a column or a row early.
    /// A group's cosignatures are stored in one statement: each verifies under its head,
    /// one for a head the store does not hold is refused by name (and the write with it),
    /// and storing them again adds nothing.
    @Test func cosignaturesAreStoredTogetherAndOneForAnUnknownHeadIsRefused() async throws {
        let source = try Source.get()
        let target = try await Target(.postgres)
        _ = try await target.importing(source.lines)
        let shared = try #require(target.shared)
        let heads = try EventStore(path: source.original, access: .readOnly).deviceTrees().flatMap(\.heads)
        #expect(heads.count > 2)
        let witness = try DeviceKey.random(device: "witness")
        let cosigned = try heads.map { ($0, try Cosignature.signing($0, witness: "witness", key: witness)) }
        try await shared.writeNatively { try $0.store(cosignatures: cosigned) }
        try await shared.writeNatively { try $0.store(cosignatures: cosigned) }
        let stored = try shared.reader().cosignedHeads()
        #expect(stored.count == heads.count)
        #expect(stored.allSatisfy { $0.cosignatures.count == 1 && $0.cosignatures[0].witnessKey == witness.publicKey })

        var unknown = heads[1]
        unknown.size += 1_000
        let forged = (unknown, try Cosignature.signing(unknown, witness: "witness", key: witness))
        let other = try DeviceKey.random(device: "other")
        let fresh = (heads[0], try Cosignature.signing(heads[0], witness: "other", key: other))
        await #expect(throws: EventStoreError.invalidCosignature(device: unknown.device, size: unknown.size, witness: "witness")) {
            try await shared.writeNatively { try $0.store(cosignatures: [fresh, forged]) }
        }
        // Nothing of the refused write was kept.
        #expect(try shared.reader().cosignedHeads().allSatisfy { $0.cosignatures.count == 1 })
    }

    @Test func copyRowsAreCOPYsTextFormat() {
        var rows = CopyRows()
        rows.append(0)
        rows.append(-5)
        rows.append(Int64.max)
        rows.append(Int64.min)
        rows.append(nil as Int64?)
        rows.append(bytes: [0x00, 0xFF, 0x5C, 0x0A, 0x09])
        rows.endRow()
        rows.append(42)
        rows.append(bytes: [])
        rows.endRow()
        rows.append(bytes: [0xAB])
        rows.append(Int64.min)
        rows.endRow()
        let text = String(decoding: rows.bytes, as: UTF8.self)
        #expect(text == "0\t-5\t9223372036854775807\t-9223372036854775808\t\\N\t\\\\x00ff5c0a09\n42\t\\\\x\n\\\\xab\t-9223372036854775808\n")
        #expect(rows.count == 3)
    }

    /// Imports `lines`, ending the server process of its `COPY` as soon as that waits for
    /// a lock; records an issue unless the import fails as the store unreachable. Returns
    /// how long the import took.
    static func importCuttingItsWaitingCopy(_ lines: [String], into shared: SharedStore, url: String,
                                            server: PostgresServer) async throws -> Duration {
        let cut = Thread {
            for _ in 0..<400 {
                if let ended = try? server.psql(url, """
                    SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                    WHERE query LIKE 'COPY "events"%' AND wait_event_type = 'Lock'
                    """), ended != "0" { return }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        cut.start()
        let started = ContinuousClock.now
        do {
            _ = try await SharedStoreTests.importing(lines, into: shared)
            Issue.record("the import went through a cut connection")
        } catch let error as SharedStoreError {
            if case .unreachable = error {} else { Issue.record("\(error)") }
        }
        return ContinuousClock.now - started
    }

    /// A write whose `COPY` is under way (its rows sent, the server waiting on a row
    /// another transaction holds) with statements sent behind it, when its connection is
    /// cut: it ends within the COPY's deadline, the store unreachable and nothing kept,
    /// and the statements behind are not waited for (PostgresNIO never answered them:
    /// a collector's writer waited for one until it was restarted).
    @Test func statementsBehindACutCopyAreNotWaitedFor() async throws {
        let source = try Source.get()
        let folder = try TemporaryFolder()
        let (shared, url) = try await SharedStoreTests.makeStore(folder)
        _ = try await SharedStoreTests.importing(source.firstLines, into: shared)
        let server = try PostgresServer.shared()
        let stored = try server.psql(url, "SELECT count(*) FROM events")
        // The position the import's first row takes, held by a transaction left open.
        let next = (Int(try server.psql(url, "SELECT max(position) FROM events")) ?? 0) + 1
        let holder = try server.psqlInBackground(url, """
            BEGIN; INSERT INTO events (position, event_id, stream_id, stream_version, type_id, type_version, recorded_at, codec,
            raw_size, payload, hash, rev) VALUES (\(next), decode(repeat('ab', 16), 'hex'), 999999, 1, 1, 1, 0, 0, 0, '',
            decode(repeat('cd', 32), 'hex'), 1); SELECT pg_sleep(60); COMMIT;
            """)
        defer { holder.send(SIGTERM); _ = holder.wait(atMost: 10) }
        var held = false
        for _ in 0..<200 where !held {
            held = try server.psql(url, "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'BEGIN; INSERT INTO events%' AND state = 'active'") == "1"
            if !held { try await Task.sleep(for: .milliseconds(25)) }
        }
        try #require(held)
        // Once the writer's COPY waits for the held row, its server process is ended.
        let took = try await Self.importCuttingItsWaitingCopy(source.lines, into: shared, url: url, server: server)
        #expect(took < .seconds(60), "the write ended \(took) after it began")
        holder.send(SIGTERM)
        _ = holder.wait(atMost: 10)
        _ = try? server.psql(url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'BEGIN; INSERT INTO events%'")
        #expect(try server.psql(url, "SELECT count(*) FROM events") == stored)
    }

    /// A write whose connection goes away while its `COPY` waits ends within the COPY's
    /// deadline, with the store unreachable and nothing kept: PostgresNIO left such a
    /// `COPY` waiting for good, and with it a collector's writer and every upload behind it
    /// (tools/collect-load.sh's crash of PostgreSQL found it).
    @Test func aCopyWhoseConnectionIsCutEndsWithinItsDeadline() async throws {
        let source = try Source.get()
        let folder = try TemporaryFolder()
        let (shared, url) = try await SharedStoreTests.makeStore(folder)
        _ = try await SharedStoreTests.importing(source.firstLines, into: shared)
        let server = try PostgresServer.shared()
        // A lock a COPY into events waits for, and the reads before it do not.
        let holder = try server.psqlInBackground(url, "BEGIN; LOCK TABLE events IN SHARE MODE; SELECT pg_sleep(60); COMMIT;")
        defer { holder.send(SIGTERM); _ = holder.wait(atMost: 10) }
        var held = false
        for _ in 0..<100 where !held {
            held = try server.psql(url, "SELECT count(*) FROM pg_locks WHERE relation = 'events'::regclass AND mode = 'ShareLock' AND granted") == "1"
            if !held { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(held)
        // Once the writer's COPY waits for the lock, its server process is ended.
        let took = try await Self.importCuttingItsWaitingCopy(source.lines, into: shared, url: url, server: server)
        // Its deadline is 10 s and a tenth of a millisecond a row.
        #expect(took < .seconds(40), "the write ended \(took) after it began")
        // Nothing of it was kept.
        #expect(try server.psql(url, "SELECT count(*) FROM events") == "\(source.firstLines.filter { $0.hasPrefix("{\"id\"") }.count)")
    }
}
