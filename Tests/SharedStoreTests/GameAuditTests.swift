import Audit
import EventStore
import Foundation
import Games
import MessagesModel
import Replay
import SharedStore
import TestSupport
import Testing

/// One game's audit on both stores: the same checks (``SignedLogReader``'s integrity,
/// proofs, cosignatures and index pass) read a SQLite file and a shared store as it is in
/// PostgreSQL. The verdicts agree game for game, and a row changed in PostgreSQL is named
/// there as the same change is in a file.
@Suite(.serialized) struct GameAuditTests {
    /// A signed log with a collector's cosignatures, in a file and in PostgreSQL.
    final class Log: @unchecked Sendable {
        let folder: TemporaryFolder
        let path: String
        let keys = TestKeys()
        let lines: [String]
        let games: [String]

        private static let made = Result { try Log() }
        static func get() throws -> Log { try made.get() }

        private init() throws {
            folder = try TemporaryFolder()
            path = folder.path("log.sqlite")
            let store = try EventStore(path: path)
            try playMixedGames(6, into: store, seed: 23, keys: keys)
            lines = try SharedStoreTests.exportLines(store)
            games = try GameIndex(store: store).conversations().map { $0.uuid.uuidString.lowercased() }.sorted()
        }

        /// A new store holding the log.
        func sharedStore() async throws -> (SharedStore, String) {
            let (shared, url) = try await SharedStoreTests.makeStore(folder)
            _ = try await SharedStoreTests.importing(lines, into: shared)
            return (shared, url)
        }
    }

    static func report(_ store: any SignedLogReader, game: String, keys: TestKeys) throws -> Auditor.Report {
        try Auditor(games: .standard).report(store, game: game, trusting: keys.trusted)
    }

    @Test func everyGamesAuditIsTheSameInBothStores() async throws {
        let log = try Log.get()
        let (shared, _) = try await log.sharedStore()
        let file = try EventStore(path: log.path, access: .readOnly)
        var compared = 0
        for game in log.games {
            let inFile = try Self.report(file, game: game, keys: log.keys)
            let native = try Self.report(shared.reader(), game: game, keys: log.keys)
            #expect(native.findings == inFile.findings, "\(game)")
            #expect(native.proofs?.keys.map(\.publicKey) == inFile.proofs?.keys.map(\.publicKey) && (native.proofs?.heads ?? 0) > 0, "\(game)")
            #expect(native.proofs?.problems.map(\.detail) == inFile.proofs?.problems.map(\.detail))
            #expect(!inFile.findings.contains { $0.severity == .error }, "\(game): \(inFile.findings)")
            compared += 1
        }
        #expect(compared == log.games.count && compared >= 6)
    }

    /// Each change is made to the store's rows with SQL, as someone with the database's
    /// password could, and each is named by the game's audit read natively.
    @Test func aRowChangedInPostgreSQLIsNamedByTheGamesAudit() async throws {
        let log = try Log.get()
        let server = try PostgresServer.shared()
        let game = try #require(log.games.first)
        func errors(after sql: (_ stream: String) -> String) async throws -> [Finding] {
            let (shared, url) = try await log.sharedStore()
            let reader = shared.reader()
            let streams = try GameIndex(store: reader).streams(of: try GameIndex(store: reader).resolve(game).conversation)
            let stream = try #require(streams.sorted { $0.uuidString < $1.uuidString }.first)
            let hex = stream.uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            _ = try server.psql(url, sql("(SELECT id FROM streams WHERE uuid = '\\x\(hex)'::bytea)"))
            return try Self.report(shared.reader(), game: game, keys: log.keys).findings.filter { $0.severity == .error }
        }
        // An event's time moved by a microsecond: its hash no longer matches.
        let moved = try await errors { "UPDATE events SET recorded_at = recorded_at + 1 WHERE position = (SELECT max(position) FROM events WHERE stream_id = \($0) AND stream_version = 3)" }
        #expect(moved.contains { $0.check == .integrity }, "\(moved)")
        // The recording's last event removed, with its row told it holds one fewer: the
        // chain holds, the device's signed tree does not.
        let cut = try await errors { stream in
            "DELETE FROM events WHERE stream_id = \(stream) AND stream_version = (SELECT version FROM streams WHERE id = \(stream)); UPDATE streams SET version = version - 1, head = NULL WHERE id = \(stream)"
        }
        #expect(cut.contains { $0.check == .signature }, "\(cut)")
        // The device's newest head re-signed by nobody: its signature no longer verifies.
        let resigned = try await errors { stream in
            "UPDATE tree_heads SET signature = decode(repeat('00', 64), 'hex') WHERE tree_id = (SELECT tree_id FROM streams WHERE id = \(stream))"
        }
        #expect(resigned.contains { $0.rule == ProofProblem.Kind.badSignature.rawValue }, "\(resigned)")
        // The catalog rows of the game's last recording removed: the game's own reads no
        // longer see it, and the pass by position after the game's first event names it.
        let unlisted = try await errors { _ in
            """
            DELETE FROM catalog WHERE stream_id = (SELECT stream_id FROM catalog WHERE key = '\\x\(game.replacingOccurrences(of: "-", with: ""))'::bytea
                                                   ORDER BY position DESC LIMIT 1)
            """
        }
        #expect(unlisted.contains { $0.rule == "catalog-lists-every-recording" }, "\(unlisted)")
    }

    @Test func theWholeLogsAuditIsTheSameInBothStores() async throws {
        let log = try Log.get()
        let (shared, _) = try await log.sharedStore()
        let auditor = Auditor(games: .standard)
        let inFile = try auditor.report(EventStore(path: log.path, access: .readOnly), trusting: log.keys.trusted)
        let native = try auditor.report(shared.reader(), trusting: log.keys.trusted)
        #expect(!inFile.findings.isEmpty && native.findings == inFile.findings)
        #expect(!inFile.findings.contains { $0.severity == .error })
        #expect(native.proofs?.keys.map(\.publicKey) == inFile.proofs?.keys.map(\.publicKey) && (native.proofs?.heads ?? 0) > 0)
        let chain = try shared.reader().verifyIntegrity(progress: nil)
        let events = try EventStore(path: log.path, access: .readOnly).count().events
        #expect(chain.isSound && chain.eventCount == events && events > 0)
    }

    /// Changes only the whole log's checks see, made with SQL: each is named.
    @Test func aRowChangedInPostgreSQLIsNamedByTheWholeLogsAudit() async throws {
        let log = try Log.get()
        let server = try PostgresServer.shared()
        func errors(after sql: String) async throws -> [Finding] {
            let (shared, url) = try await log.sharedStore()
            _ = try server.psql(url, sql)
            return try Auditor(games: .standard).report(shared.reader(), trusting: log.keys.trusted).findings.filter { $0.severity == .error }
        }
        // An event removed from the middle of the log: a gap in the chain.
        let removed = try await errors(after: "DELETE FROM events WHERE position = 100")
        #expect(removed.contains { $0.check == .integrity && $0.position == 100 }, "\(removed)")
        // A catalog row removed: a game's reads would miss a recording.
        let uncatalogued = try await errors(after: "DELETE FROM catalog WHERE ctid = (SELECT ctid FROM catalog ORDER BY position DESC LIMIT 1)")
        #expect(uncatalogued.contains { $0.check == .catalog }, "\(uncatalogued)")
        // The newest head's root changed: its signature no longer verifies.
        let cosigned = try await errors(after: "UPDATE tree_heads SET root = decode(repeat('11', 32), 'hex') WHERE size = (SELECT max(size) FROM tree_heads)")
        #expect(cosigned.contains { $0.check == .signature }, "\(cosigned)")
        // Rows the events table's foreign keys refused until schema 6: an event whose
        // recording, type or dictionary is not in the store is damage, named at its position.
        for (column, value) in [("stream_id", "999999"), ("type_id", "999999"), ("dictionary_id", "999999")] {
            let dangling = try await errors(after: "UPDATE events SET \(column) = \(value) WHERE position = 50 AND codec <> 0")
            #expect(dangling.contains { $0.position == 50 }, "\(column): \(dangling)")
        }
    }

    /// An audit's reads see the store at one moment: what an upload stores meanwhile (events
    /// and the head that signs them) is in none of them, through every reader made from it.
    @Test func aSnapshotReaderSeesOneMomentWhateverIsWrittenMeanwhile() async throws {
        let source = try LogWriterTests.Source.get()
        let folder = try TemporaryFolder()
        let (shared, _) = try await SharedStoreTests.makeStore(folder)
        _ = try await SharedStoreTests.importing(source.firstLines, into: shared)
        let moment = shared.snapshotReader()
        let before = try moment.count(), headsBefore = try moment.deviceTrees().map { $0.heads.count }
        #expect(before.events > 0)
        let lane = try moment.anotherReader()
        _ = try await SharedStoreTests.importing(source.lines, into: shared)

        let now = try shared.reader().count()
        #expect(now.events > before.events)
        #expect(try moment.count() == before && lane.count() == before)
        #expect(try moment.deviceTrees().map { $0.heads.count } == headsBefore && lane.deviceTrees().map { $0.heads.count } == headsBefore)
        let report = try Auditor(games: .standard).report(moment, trusting: source.keys.trusted)
        #expect(!report.findings.contains { $0.severity == .error }, "\(report.findings.filter { $0.severity == .error })")
    }
}
