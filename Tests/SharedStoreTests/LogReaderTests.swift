import EventStore
import Foundation
import Games
import Interchange
import GRDB
import Projections
import Replay
import SharedStore
import StoredEvents
import TestSupport
import Testing

/// Every reading rule on both stores: the same log in a SQLite file and in PostgreSQL
/// (read natively, nothing copied), each test run once per store. What a reader answers
/// is checked against what the log holds, and the stores against each other.
@Suite(.serialized) struct LogReaderTests {
    /// One log made once for the suite, in every store: the file that recorded it (blocks),
    /// its export imported into a file of rows and into PostgreSQL.
    final class Log: @unchecked Sendable {
        let folder: TemporaryFolder
        let original: EventStore
        let shared: SharedStore
        let url: String
        /// Every event, as the SQLite log that wrote them reads them.
        let events: [StoredEvent]

        /// Made by the first test that asks, once; every later one waits for it.
        private static let made = Task { try await Log() }
        static func get() async throws -> Log { try await made.value }

        private init() async throws {
            folder = try TemporaryFolder()
            original = try EventStore(path: folder.path("log.sqlite"))
            try playMixedGames(8, into: original, seed: 41, keys: TestKeys())
            (shared, url) = try await SharedStoreTests.makeStore(folder)
            let lines = try SharedStoreTests.exportLines(original)
            _ = try await SharedStoreTests.importing(lines, into: shared)
            let rows = try EventStore(path: folder.path("rows.sqlite"), layout: .rows)
            _ = try Interchange.import(files: [ExportFile(name: "log", contents: Data((lines.joined(separator: "\n") + "\n").utf8))], into: rows)
            events = try original.events()
        }

        /// A new reader of the log in `store`; PostgreSQL's pages are cut small, so that every
        /// read crosses page boundaries.
        func reader(_ store: StoreUnderTest) throws -> any EventLogReader {
            switch store {
            case .sqliteBlocks:
                return try EventStore(path: folder.path("log.sqlite"), access: .readOnly)
            case .sqliteRows:
                return try EventStore(path: folder.path("rows.sqlite"), access: .readOnly)
            case .postgres:
                let reader = shared.reader()
                reader.pageSize = 7
                return reader
            }
        }
    }

    static func same(_ a: [StoredEvent], _ b: [StoredEvent]) -> Bool { a == b }

    @Test(arguments: StoreUnderTest.allCases) func everyEventReadsBackAsWritten(_ store: StoreUnderTest) async throws {
        let log = try await Log.get(), reader = try log.reader(store)
        let read = try reader.events()
        #expect(log.events.count > 500)
        #expect(read == log.events)
        #expect(read.map(\.position) == Array(1...Int64(log.events.count)))
        #expect(try reader.lastPosition() == Int64(log.events.count))
        #expect(try reader.headHash() == log.events.last?.hash)
        #expect(try reader.eventTypes() == Set(log.events.map(\.type)).sorted())
        #expect(try reader.event(at: 123) == log.events[122])
        #expect(try reader.event(at: Int64(log.events.count) + 1) == nil)
    }

    @Test(arguments: StoreUnderTest.allCases) func queriesSelectWhatTheySay(_ store: StoreUnderTest) async throws {
        let log = try await Log.get(), reader = try log.reader(store)
        let streams = Array(Set(log.events.map(\.stream))).sorted { $0.uuidString < $1.uuidString }
        try #require(streams.count >= 4)
        let two: Set<UUID> = [streams[1], streams[3]]
        #expect(try reader.events(EventQuery(streams: two)) == log.events.filter { two.contains($0.stream) })
        #expect(try reader.events(EventQuery(stream: streams[2], fromStreamVersion: 5))
                == log.events.filter { $0.stream == streams[2] && $0.streamVersion >= 5 })
        let types: Set<String> = ["recording.started", "transcript.sent"]
        let typed = try reader.events(EventQuery(types: types))
        #expect(!typed.isEmpty && typed == log.events.filter { types.contains($0.type) })
        let middle = log.events[log.events.count / 2].recordedAt
        #expect(try reader.events(EventQuery(since: middle)) == log.events.filter { $0.recordedAt >= middle })
        #expect(try reader.events(EventQuery(until: middle)) == log.events.filter { $0.recordedAt <= middle })
        #expect(try reader.events(EventQuery(positions: 40...90)) == Array(log.events[39..<90]))
        #expect(try reader.events(EventQuery(streams: two, limit: 9)) == Array(log.events.filter { two.contains($0.stream) }.prefix(9)))
        #expect(try reader.events(EventQuery(streams: [])).isEmpty)
        #expect(try reader.firstEvent(ofStream: streams[2]) == log.events.first { $0.stream == streams[2] })
        #expect(try reader.firstEvent(ofStream: UUID()) == nil)
    }

    @Test(arguments: StoreUnderTest.allCases) func theCatalogAnswersForTheLog(_ store: StoreUnderTest) async throws {
        let log = try await Log.get(), reader = try log.reader(store)
        #expect(try reader.catalogIsComplete())
        let conversations = try log.original.catalogEntries(.conversation), games = try log.original.catalogEntries(.game)
        #expect(conversations.count >= 8 && games.count >= 8)
        #expect(try reader.catalogEntries(.conversation) == conversations)
        #expect(try reader.catalogEntries(.game) == games)
        #expect(try reader.catalogCount(.game) == Set(games.map(\.tag.id)).count)
        // Every page of first entries, for both kinds, past the end too: the order and the
        // cut are the file's (PostgreSQL cuts the page before joining its recordings).
        var pages = 0
        for kind in [EventTag.Kind.game, .conversation] {
            let ids = Set(try log.original.catalogEntries(kind).map(\.tag.id)).count
            for offset in stride(from: 0, through: ids + 3, by: 3) {
                let expected = try log.original.firstCatalogEntries(kind, offset: offset, limit: 3)
                #expect(try reader.firstCatalogEntries(kind, offset: offset, limit: 3) == expected)
                #expect(expected.count == min(3, max(0, ids - offset)))
                pages += 1
            }
        }
        #expect(pages >= 6)
        let game = games[3].tag.id
        #expect(try reader.catalogEntries(.game, id: game) == games.filter { $0.tag.id == game })
        let prefix = String(game.uuidString.lowercased().prefix(3))
        let byPrefix = try reader.catalogEntries(.game, idPrefix: prefix, limit: 1000)
        #expect(!byPrefix.isEmpty && Set(byPrefix) == Set(games.filter { $0.tag.id.uuidString.lowercased().hasPrefix(prefix) }))
        #expect(try reader.catalogEntries(.game, idPrefix: "zz", limit: 1000).isEmpty)
        #expect(try reader.catalogEntries(ofStream: games[0].stream) == log.original.catalogEntries(ofStream: games[0].stream))
        #expect(try reader.forkOrigins() == log.original.forkOrigins())
    }

    @Test(arguments: StoreUnderTest.allCases) func gamesReplayAsInTheFileThatRecordedThem(_ store: StoreUnderTest) async throws {
        let log = try await Log.get(), reader = try log.reader(store)
        let page = try GameCatalog.page(store: reader, games: .standard, offset: 0, limit: 100)
        let expected = try GameCatalog.page(store: log.original, games: .standard, offset: 0, limit: 100)
        #expect(page.games.count >= 5)
        #expect(page.games == expected.games && page.total == expected.total)
        var compared = 0
        for game in page.games {
            func replayed(_ store: any EventLogReader) throws -> (events: [ReplayEvent], final: ConversationState) {
                let index = try GameIndex(store: store)
                let conversation = try index.resolve(game.id).conversation
                let replayer = try Replayer(store: store, conversation: conversation, streams: try index.streams(of: conversation),
                                            games: .standard)
                return (replayer.events, try replayer.state(at: replayer.stepCount))
            }
            let (here, there) = (try replayed(reader), try replayed(log.original))
            #expect(here.events.count > 10 && here.events == there.events)
            #expect(here.final == there.final)
            compared += 1
        }
        #expect(compared == page.games.count)
    }

    /// A row changed or removed in either store is named the same way: the chain rule is
    /// one implementation, and PostgreSQL's rows are read by the rules SQLite's are.
    @Test func damageIsNamedAlikeInBothStores() async throws {
        let folder = try TemporaryFolder()
        let original = try EventStore(path: folder.path("log.sqlite"))
        try playMixedGames(3, into: original, seed: 7, keys: TestKeys())
        let (shared, url) = try await SharedStoreTests.makeStore(folder)
        _ = try await SharedStoreTests.importing(try SharedStoreTests.exportLines(original), into: shared)
        // The same rows in a SQLite file (the store's own copy), then the same changes in both.
        let copy = try await shared.localCopy(fresh: true)
        defer { copy.release() }
        let rows = folder.path("rows.sqlite")
        try FileManager.default.copyItem(atPath: copy.path, toPath: rows)
        let changes = ["UPDATE events SET hash = \(String(repeating: "0", count: 64).sqlBlob) WHERE position = 40",
                       "DELETE FROM events WHERE position = 60",
                       "UPDATE events SET codec = 9 WHERE position = 75"]
        try await DatabaseQueue(path: rows).write { db in for change in changes { try db.execute(sql: change) } }
        for change in changes { _ = try PostgresServer.shared().psql(url, change.replacingOccurrences(of: "X'", with: "'\\x")) }

        func damage(_ reader: any EventLogReader, _ query: EventQuery = .all) throws -> [String] {
            var named: [String] = []
            try reader.scan(query, skippingDamaged: { named.append($0.description) }) { _ in }
            return named
        }
        let file = try EventStore(path: rows, access: .readOnly), native = shared.reader()
        native.pageSize = 11
        let inFile = try damage(file)
        #expect(inFile.count >= 3 && inFile.contains { $0.contains("60") } && inFile.contains { $0.contains("75") })
        #expect(try damage(native) == inFile)
        let stream = try #require(original.event(at: 75)?.stream)
        #expect(try damage(native, EventQuery(stream: stream)) == damage(file, EventQuery(stream: stream)))
        // Without a place to put it, the first damage stops the read, in both.
        #expect(throws: EventStoreError.self) { try native.scan { _ in } }
        var thrown: [String] = []
        for reader in [file, native] as [any EventLogReader] {
            do { try reader.scan { _ in } } catch { thrown.append("\(error)") }
        }
        #expect(thrown.count == 2 && thrown[0] == thrown[1])
    }

    @Test func aStoreThatIsNotThereOrNotMigratedIsNamed() throws {
        let folder = try TemporaryFolder()
        let empty = try SharedStore(url: try PostgresServer.shared().makeDatabase(), cacheFolder: folder.url)
        #expect { try empty.reader().lastPosition() } throws: { "\($0)".contains("no gamelog schema yet") }
        let nowhere = try SharedStore(url: "postgres://gamelog@127.0.0.1:1/none", cacheFolder: folder.url)
        #expect { try nowhere.reader().lastPosition() } throws: { "\($0)".contains("cannot reach") }
        // Nothing was copied to this machine for any of it.
        #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path("."))) ?? [] == [])
    }
}

private extension String {
    /// Hex text as an SQL blob literal (PostgreSQL's form is made from it by the caller).
    var sqlBlob: String { "X'\(self)'" }
}
