import Audit
import Collector
import EventStore
import Foundation
import Games
import Interchange
import MessagesModel
import Replay
import SharedStore
import TestSupport
import Testing

/// A shared store's game summaries (`game_summaries`): a page reads them instead of
/// folding, only when they are this code's and current; a pass writes only what is not
/// current; `verify` names one that differs from the events.
///
/// Five minutes a test at most: a write that never ends fails its test, by name, rather
/// than holding the whole run until CI's limit.
@Suite(.serialized, .timeLimit(.minutes(5))) struct GameSummaryTests {
    /// A log of several games, its export, and the page a fold of it lists.
    final class Log: @unchecked Sendable {
        let folder: TemporaryFolder
        let lines: [String]
        let conversations: Int

        private static let made = Result { try Log() }
        static func get() throws -> Log { try made.get() }

        private init() throws {
            folder = try TemporaryFolder()
            let store = try EventStore(path: folder.path("log.sqlite"))
            try playMixedGames(8, into: store, seed: 61, keys: TestKeys())
            lines = try SharedStoreTests.exportLines(store)
            conversations = try GameIndex(store: store).conversations().count
        }
    }

    static func page(_ shared: SharedStore, stored: Bool = true) throws -> GamePage {
        try GameCatalog.page(store: shared.reader(), games: .standard, offset: 0, limit: 100, storedSummaries: stored)
    }

    /// The store's row of `conversation`, its body's first game given another winner (as a
    /// forger who read docs/FORMAT.md would write it, keeping its recordings column).
    static func forgeWinner(_ shared: SharedStore, conversation: UUID) async throws -> String {
        let format = GameCatalog.summaryFormat(games: .standard)
        var row = try #require(try shared.reader().storedSummaries(conversations: [conversation], format: format)[conversation])
        var body = try #require(try JSONSerialization.jsonObject(with: Data(row.body)) as? [String: Any])
        var games = try #require(body["games"] as? [[String: Any]])
        try #require(!games.isEmpty)
        games[0]["winner"] = "Mallory"
        games[0]["result"] = "Mallory won"
        body["games"] = games
        row.body = Array(try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]))
        try await shared.storeSummaries([row])
        return try #require(games[0]["id"] as? String)
    }

    @Test func aPageReadsCurrentSummariesAndListsWhatItsFoldLists() async throws {
        let log = try Log.get()
        let (shared, url) = try await SharedStoreTests.makeStore(log.folder)
        _ = try await SharedStoreTests.importing(log.lines, into: shared)
        let folded = try Self.page(shared, stored: false)
        #expect(folded.games.count >= 5)
        #expect(try Self.page(shared).games == folded.games, "no rows yet: every conversation folded")

        let writer = GameSummaryWriter(store: shared, games: .standard)
        let first = try await writer.refreshAll(lanes: 2)
        #expect(first.conversations == log.conversations && first.written == log.conversations && first.current == 0)
        let format = GameCatalog.summaryFormat(games: .standard).replacingOccurrences(of: "'", with: "''")
        #expect(try PostgresServer.shared().psql(url, "SELECT count(*) FILTER (WHERE format = '\(format)') || '/' || count(*) FROM game_summaries")
                == "\(log.conversations)/\(log.conversations)")
        let fromRows = try Self.page(shared)
        #expect(fromRows.games == folded.games && fromRows.total == folded.total)
        // A second pass finds every row current and writes none.
        let second = try await writer.refreshAll(lanes: 1)
        #expect(second.current == log.conversations && second.written == 0)

        // The page did read the rows: a forged one shows there (which is what `verify`
        // exists to catch, below), and not in a page that folds.
        let conversation = try #require(UUID(uuidString: folded.games[2].conversation))
        let forged = try await Self.forgeWinner(shared, conversation: conversation)
        #expect(try Self.page(shared).games.first { $0.id == forged }?.winner == "Mallory")
        #expect(try Self.page(shared, stored: false).games == folded.games)

        // A row that lists another conversation's game (its conversation field rewritten
        // to the row's own) does not list that game twice.
        let elsewhere = try #require(folded.games.first { $0.conversation != folded.games[2].conversation })
        var row = try #require(try shared.reader().storedSummaries(conversations: [conversation], format: GameCatalog.summaryFormat(games: .standard))[conversation])
        var body = try #require(try JSONSerialization.jsonObject(with: Data(row.body)) as? [String: Any])
        var moved = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(elsewhere)) as? [String: Any])
        moved["conversation"] = conversation.uuidString.lowercased()
        moved["winner"] = "Mallory"
        body["games"] = (body["games"] as? [[String: Any]] ?? []) + [moved]
        row.body = Array(try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]))
        try await shared.storeSummaries([row])
        let listed = try Self.page(shared).games
        #expect(listed.filter { $0.id == elsewhere.id }.count == 1 && listed.first { $0.id == elsewhere.id }?.winner == elsewhere.winner)

        // verify folds every conversation again and names the forged row, only it.
        let report = try Auditor(games: .standard).report(shared.snapshotReader())
        let named = report.findings.filter { $0.rule == "summary-matches-events" }
        #expect(named.count == 1 && named.first?.severity == .error)
        #expect(named.first?.game?.lowercased() == conversation.uuidString.lowercased())
        // One game's audit names it too (the workers' path).
        let one = try Auditor(games: .standard).conversationFindings(shared.reader(), conversation: ConversationID(conversation),
                                                                     streams: try GameIndex(store: shared.reader()).streams(of: ConversationID(conversation)))
        #expect(one.contains { $0.rule == "summary-matches-events" })
    }

    @Test func aSummaryOfAnotherFormatOrBehindItsRecordingsIsNotUsed() async throws {
        let folder = try TemporaryFolder(), keys = TestKeys()
        let (shared, url) = try await SharedStoreTests.makeStore(folder)
        let phones = try recordPhones(3, in: folder.path("phones"), seed: 7, keys: keys)
        func importPhone(_ path: String) async throws {
            _ = try await SharedStoreTests.importing(try SharedStoreTests.exportLines(try EventStore(path: path, access: .readOnly)), into: shared)
        }
        func conversations() throws -> Int { try GameIndex(store: shared.reader()).conversations().count }
        // One phone's log first: its conversations are summarised as that phone recorded them.
        try await importPhone(phones.a)
        let writer = GameSummaryWriter(store: shared, games: .standard)
        let early = try await writer.refreshAll(lanes: 2)
        #expect(early.written > 0 && early.written == early.conversations)
        // The other phone's recordings join the same conversations: the rows no longer name
        // all of their recordings, and are not read.
        try await importPhone(phones.b)
        var folded = try Self.page(shared, stored: false)
        #expect(folded.games.count >= 2)
        #expect(try Self.page(shared).games == folded.games, "rows missing a recording are folded again")
        let joined = try await writer.refreshAll(lanes: 2)
        let all = try conversations()
        // Those the other phone joined are folded again; those it was not in stay current.
        #expect(joined.conversations == all && joined.written + joined.current == all, "\(early) \(joined) \(all)")
        #expect(joined.written > 0 && joined.current < early.written, "\(early) \(joined)")
        // More games in the same conversations: each recording moves past its row's version.
        try recordPhones(6, in: folder.path("phones"), seed: 7, keys: keys)
        try await importPhone(phones.a)
        try await importPhone(phones.b)
        let before = folded.games.count
        folded = try Self.page(shared, stored: false)
        #expect(folded.games.count > before)
        #expect(try Self.page(shared).games == folded.games, "rows behind their recordings are folded again")
        let later = try await writer.refreshAll(lanes: 2)
        #expect(later.conversations == (try conversations()) && later.written > 0 && later.skipped == 0)
        #expect(try Self.page(shared).games == folded.games)

        // A row whose recordings column names an older version, or which is in another
        // format, is not read: its forged winner, shown while the row was current, goes.
        func hex(_ id: UUID) -> String { id.uuidString.replacingOccurrences(of: "-", with: "").lowercased() }
        let behind = try #require(UUID(uuidString: folded.games[0].conversation))
        let forgedBehind = try await Self.forgeWinner(shared, conversation: behind)
        #expect(try Self.page(shared).games.first { $0.id == forgedBehind }?.winner == "Mallory")
        // The first recording's version (bytes 17-24 of the column) one lower.
        _ = try PostgresServer.shared().psql(url, """
            UPDATE game_summaries SET recordings = overlay(recordings placing
                int8send(('x' || encode(substring(recordings from 17 for 8), 'hex'))::bit(64)::bigint - 1) from 17 for 8)
            WHERE conversation = '\\x\(hex(behind))'
            """)
        #expect(try Self.page(shared).games == folded.games)
        let other = try #require(folded.games.compactMap { UUID(uuidString: $0.conversation) }.first { $0 != behind })
        let forgedOther = try await Self.forgeWinner(shared, conversation: other)
        #expect(try Self.page(shared).games.first { $0.id == forgedOther }?.winner == "Mallory")
        _ = try PostgresServer.shared().psql(url, "UPDATE game_summaries SET format = 'gamelog-summaries 0' WHERE conversation = '\\x\(hex(other))'")
        #expect(try Self.page(shared).games == folded.games)
        // verify does not compare rows that are never used.
        let report = try Auditor(games: .standard).report(shared.snapshotReader())
        #expect(!report.findings.contains { $0.rule == "summary-matches-events" })
        #expect(!report.findings.contains { $0.severity == .error })
    }

    @Test func aCollectorKeepsTheSummariesOfWhatItStoredCurrent() async throws {
        let folder = try TemporaryFolder(), keys = TestKeys()
        let (shared, _) = try await SharedStoreTests.makeStore(folder)
        let collector = Collector(store: shared, witness: "collector.test/gamelog", witnessKey: try DeviceKey.random(device: "witness"),
                                  games: .standard)
        let phones = try recordPhones(3, in: folder.path("phones"), seed: 5, keys: keys)
        func push(_ path: String, _ device: String) async throws {
            let accepted = try await shared.latestHeads(publicKey: keys.key(device).publicKey).first?.head.size ?? 0
            guard case .send(let upload) = try Interchange.upload(from: try EventStore(path: path, access: .readOnly),
                                                                   tree: keys.key(device).publicKey, accepted: accepted) else {
                Issue.record("nothing to upload from \(device)")
                return
            }
            #expect(try await collector.accept(Data(upload.body.utf8)).stored == upload.events)
        }
        for device in ["A", "B"] { #expect(try await shared.enroll(device: device, publicKey: keys.key(device).publicKey) == .enrolled) }
        let writer = GameSummaryWriter(store: shared, games: .standard)
        for round in [3, 6] {
            if round > 3 { try recordPhones(round, in: folder.path("phones"), seed: 5, keys: keys) }
            try await push(phones.a, "A")
            try await push(phones.b, "B")
            await collector.summariesSettled()
            let conversations = try GameIndex(store: shared.reader()).conversations().count
            #expect(conversations >= round)
            // Every conversation's row is current: a pass finds nothing to write.
            let pass = try await writer.refreshAll()
            #expect(pass.conversations == conversations && pass.current == conversations && pass.written == 0, "round \(round)")
            #expect(try Self.page(shared).games == Self.page(shared, stored: false).games)
        }
        #expect(collector.metrics.text.contains("gamelog_game_summaries_stored_total "))
        #expect(!collector.metrics.text.contains("gamelog_game_summaries_stored_total 0\n"))
    }

    /// Summaries are a cache: a collector's pass waits while uploads are in flight, and
    /// still gets through under uploads that never pause, in bounded time.
    @Test func aSummaryPassGivesWayToUploadsAndStillFinishes() async throws {
        let log = try Log.get()
        let (shared, url) = try await SharedStoreTests.makeStore(log.folder)
        _ = try await SharedStoreTests.importing(log.lines, into: shared)
        let streams = try GameIndex(store: shared.reader()).allStreams().values.reduce(into: Set<UUID>()) { $0.formUnion($1) }
        #expect(!streams.isEmpty)
        let uploading = LockedFlag(true)
        let metrics = CollectorMetrics()
        let refresher = SummaryRefresher(writer: GameSummaryWriter(store: shared, games: .standard), metrics: metrics,
                                         interval: .milliseconds(10), patience: 100, busy: { uploading.withLock { $0 } })
        func stored() throws -> Int { Int(try PostgresServer.shared().psql(url, "SELECT count(*) FROM game_summaries")) ?? -1 }

        // Uploads in flight: the pass waits (up to 100 times its last batch) and stores nothing.
        refresher.note(streams)
        try await Task.sleep(for: .seconds(1))
        #expect(try stored() == 0)
        // They pause: the pass goes on at once.
        uploading.withLock { $0 = false }
        let resumed = ContinuousClock.now
        await refresher.settled()
        #expect(ContinuousClock.now - resumed < .seconds(30))
        #expect(try stored() == log.conversations)
        #expect(metrics.text.contains("gamelog_game_summaries_stored_total \(log.conversations)\n"))

        // Uploads that never pause: the pass waits at most its patience before each batch, and finishes.
        _ = try PostgresServer.shared().psql(url, "DELETE FROM game_summaries")
        uploading.withLock { $0 = true }
        let patient = SummaryRefresher(writer: GameSummaryWriter(store: shared, games: .standard), metrics: metrics,
                                       interval: .milliseconds(10), patience: 2, busy: { uploading.withLock { $0 } })
        patient.note(streams)
        await patient.settled()
        #expect(try stored() == log.conversations)
        let waited = try #require(metrics.text.split(separator: "\n").first { $0.hasPrefix("gamelog_game_summary_wait_seconds_total ") })
        #expect((Double(waited.split(separator: " ")[1]) ?? 0) > 0, "\(waited)")
    }

    @Test func aRecordingsColumnReadsBackAndRefusesWhatIsNotOne() throws {
        let a = UUID(), b = UUID()
        let recordings: [UUID: StoredSummaries.Recording] = [
            a: .init(version: 3, head: Array(repeating: 7, count: 32)), b: .init(version: 1 << 40, head: Array(repeating: 9, count: 32)),
        ]
        let row = StoredSummaries(conversation: UUID(), format: "f", recordings: recordings, body: [])
        #expect(row.recordingBytes.count == 112)
        #expect(StoredSummaries.recordings(from: row.recordingBytes) == recordings)
        #expect(StoredSummaries.recordings(from: []) == nil)
        #expect(StoredSummaries.recordings(from: Array(row.recordingBytes.dropLast())) == nil)
        // The same recording twice, or a version 0.
        #expect(StoredSummaries.recordings(from: Array(row.recordingBytes.prefix(56)) + Array(row.recordingBytes.prefix(56))) == nil)
        var zero = row.recordingBytes
        for index in 16..<24 { zero[index] = 0 }
        for index in 72..<80 { zero[index] = 0 }
        #expect(StoredSummaries.recordings(from: zero) == nil)
        #expect(row.isCurrent([a: RecordingRow(version: 3, head: recordings[a]!.head, tree: nil),
                               b: RecordingRow(version: 1 << 40, head: recordings[b]!.head, tree: 4)]))
        #expect(!row.isCurrent([a: RecordingRow(version: 3, head: recordings[a]!.head, tree: nil)]))
        #expect(!row.isCurrent([a: RecordingRow(version: 4, head: recordings[a]!.head, tree: nil),
                                b: RecordingRow(version: 1 << 40, head: recordings[b]!.head, tree: nil)]))
        #expect(!row.isCurrent([a: RecordingRow(version: 3, head: nil, tree: nil),
                                b: RecordingRow(version: 1 << 40, head: recordings[b]!.head, tree: nil)]))
    }
}

/// A flag a test flips while another task reads it.
private final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Bool
    init(_ value: Bool) { self.value = value }
    func withLock<T>(_ body: (inout Bool) -> T) -> T { lock.withLock { body(&value) } }
}
