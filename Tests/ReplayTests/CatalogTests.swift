import Audit
import EventStore
import Foundation
import GRDB
import Games
import MessagesHost
import MessagesModel
import Projections
import Recorder
import Replay
import Simulation
import Testing
import TestSupport

/// The catalog appends keep (issue 14): lookups of one game read the catalog instead of
/// scanning, and must answer exactly as the scan does, on every kind of log.
@Suite struct CatalogTests {
    /// A log of noisy games of every kind, recorded through the recorder.
    /// `games` mixed plays: three in five are games with a board (the sticker extension
    /// and the API tour have none).
    static func recordedLog(_ path: String, games: Int = 50, seed: UInt64 = 14) throws -> EventStore {
        let store = try EventStore(path: path)
        try playMixedGames(games, into: store, seed: seed, noise: 0.3)
        return store
    }

    /// Makes a copy's catalog uncovering, so that its index scans as a log without one would.
    static func scanningCopy(of path: String, to copy: String) throws -> EventStore {
        // The events may still sit in the write-ahead log beside the file: move them in first.
        try DatabaseQueue(path: path).writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try DatabaseQueue(path: copy).write { try $0.execute(sql: "UPDATE catalog_coverage SET through = 0") }
        return try EventStore(path: copy, access: .readOnly)
    }

    /// Conversations read together (a page of games, an audit lane's, a worker's claim)
    /// are each in the order that conversation read alone is in. Ordered together, one
    /// device's events in two conversations held each other back: two simulations'
    /// games in one file (their clocks overlap) were audited with moves out of order.
    /// The whole-log pass's outline of each conversation (what `/api/games/ID` answers
    /// beside the games) is the one a replayer of that conversation gives.
    @Test func thePassOutlinesEachConversationAsItsReplayerDoes() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("outlines.sqlite"))
        try playMixedGames(12, into: store, seed: 5, noise: 0.3)
        var outlines: [ConversationID: GameSummaryMemo.Outline] = [:]
        let catalog = try GameCatalog(store: store, games: .standard, outlined: { outlines[$0] = $1 })
        #expect(outlines.count == catalog.streams.count && outlines.count > 3)
        let index = try GameIndex(store: store)
        for (conversation, outline) in outlines {
            let replayer = try Replayer(store: store, conversation: conversation, streams: try index.streams(of: conversation), games: .standard)
            #expect(outline.steps == replayer.stepCount && outline.devices == replayer.devices, "\(conversation)")
        }
        var deviceOutlines = 0
        _ = try GameCatalog(store: store, games: .standard, as: .device(DeviceID("A")), outlined: { _, _ in deviceOutlines += 1 })
        #expect(deviceOutlines == 0)
    }

    @Test func conversationsReadTogetherAreEachInTheirOwnOrder() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("log.sqlite"))
        // As `gamelog simulate` plays them (a phone's network, group conversations), twice
        // into one file: the second run's clock starts where the first one's did.
        for seed: UInt64 in [5, 6] {
            let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: seed, keys: TestKeys().key),
                                      games: .standard, seed: seed)
            simulator.network = .phone
            for n in 0..<12 { try simulator.play(simulator.mixedKind(n)) }
        }
        let index = try GameIndex(store: store)
        let streamsOf = try index.allStreams()
        let together = try Replayer.load(from: store, conversations: streamsOf)
        var jointly: [ConversationID: [ReplayEvent]] = [:]
        for event in Replayer.inReplayOrder(together.values.flatMap { $0 }) {
            if let conversation = streamsOf.first(where: { $0.value.contains(event.stream) })?.key { jointly[conversation, default: []].append(event) }
        }
        var compared = 0, orderedOtherwiseJointly = 0
        for (conversation, streams) in streamsOf {
            let alone = try Replayer.load(from: store, streams: streams)
            #expect(together[conversation]?.map(\.position) == alone.map(\.position), "\(conversation)")
            if jointly[conversation]?.map(\.position) != alone.map(\.position) { orderedOtherwiseJointly += 1 }
            compared += 1
        }
        // The log holds what the joint order got wrong, so the check above could fail.
        #expect(compared >= 20 && orderedOtherwiseJointly > 0, "\(compared) conversations, \(orderedOtherwiseJointly) ordered otherwise jointly")
    }

    @Test func theCatalogKeptByAppendAnswersExactlyAsTheScanDoes() throws {
        let folder = try TemporaryFolder()
        let store = try Self.recordedLog(folder.path("log.sqlite"))
        #expect(try store.catalogIsComplete())
        let catalog = try GameIndex(store: store)
        let scan = try GameIndex(store: try Self.scanningCopy(of: folder.path("log.sqlite"), to: folder.path("copy.sqlite")))
        #expect(catalog.usesCatalog && !scan.usesCatalog)

        #expect(try catalog.conversations() == scan.conversations())
        #expect(try catalog.allStreams() == scan.allStreams())
        let games = try catalog.games()
        #expect(games.map { "\($0.game)/\($0.conversation)" } == (try scan.games()).map { "\($0.game)/\($0.conversation)" })
        var resolved = 0
        for id in games.map(\.game.uuid) + (try catalog.conversations()).map(\.uuid) {
            for prefix in [id.uuidString, String(id.uuidString.prefix(8)).lowercased(), String(id.uuidString.prefix(13))] {
                let fromCatalog = Result { try catalog.resolve(prefix) }.map { "\($0.conversation) \(String(describing: $0.game))" }
                let fromScan = Result { try scan.resolve(prefix) }.map { "\($0.conversation) \(String(describing: $0.game))" }
                #expect("\(fromCatalog)" == "\(fromScan)", "\(prefix)")
                resolved += 1
            }
            #expect(try catalog.streams(of: try catalog.resolve(id.uuidString).conversation).isEmpty == false)
        }
        #expect(games.count >= 30 && resolved > 100, "\(games.count) games, \(resolved) prefixes")
        // A prefix that is not an id, and one that names nothing, are refused alike.
        for prefix in ["zz", "0000000", "12345678-"] {
            #expect(throws: ReplayError.self) { try catalog.resolve(prefix) }
            #expect(throws: ReplayError.self) { try scan.resolve(prefix) }
        }
    }

    @Test func anAppendWithoutTagsStopsTheCoverageAndFillingRestoresTheSameCatalog() throws {
        let folder = try TemporaryFolder()
        let store = try Self.recordedLog(folder.path("log.sqlite"), games: 12)
        let before = try store.allCatalogEntries()
        #expect(!before.isEmpty)
        // An appender that keeps no catalog: from now on readers must not trust it.
        try store.append([NewEvent(id: UUID(), stream: UUID(), type: "note.added", recordedAt: Timestamp(microsecondsSince1970: 1),
                                   payload: Array("{}".utf8))])
        #expect(try !store.catalogIsComplete())
        #expect(try !GameIndex(store: store).usesCatalog)
        // Filling reads only what the catalog does not cover, and ends complete with the same rows.
        try DatabaseQueue(path: folder.path("log.sqlite")).write { try $0.execute(sql: "DELETE FROM catalog; UPDATE catalog_coverage SET through = 0") }
        let read = try GameIndex.fillCatalog(store)
        #expect(read > 0)
        #expect(try store.catalogIsComplete())
        #expect(Set(try store.allCatalogEntries()) == Set(before))
        #expect(try GameIndex.fillCatalog(store) == 0)
    }

    @Test func aLogFromBeforeTheCatalogReadsWithoutAMigrationAndUnchanged() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("schema5.sqlite")
        // Its events as rows, rolled back to schema 5, as the previous version of gamelog wrote it.
        let store = try EventStore(path: path, layout: .rows)
        try playMixedGames(8, into: store, seed: 14, noise: 0.3)
        let games = try GameIndex(store: store).games()
        try OlderSchema.rollBack(path, to: 5)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let old = try EventStore(path: path, access: .readOnly)
        #expect(try old.schemaVersion() == 5 && !old.catalogIsComplete())
        let index = try GameIndex(store: old)
        #expect(!index.usesCatalog)
        #expect(Set(try index.games().map(\.game)) == Set(games.map(\.game)))
        let (conversation, game) = try index.resolve(String(games[0].game.uuid.uuidString.prefix(8)))
        #expect(game == games[0].game && conversation == games[0].conversation)
        let page = try GameCatalog.page(store: old, games: .standard, offset: 0, limit: 3)
        #expect(page.games.count == 3 && page.total == games.count, "\(page.total)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        // A writer migrates; the catalog then needs filling, and filling completes it.
        let migrated = try EventStore(path: path)
        #expect(try migrated.schemaVersion() == Schema.currentVersion && !migrated.catalogIsComplete())
        try GameIndex.fillCatalog(migrated)
        #expect(try migrated.catalogIsComplete() && GameIndex(store: migrated).usesCatalog)
    }

    @Test func pagesThroughTheCatalogListTheGamesTheWholeFoldLists() throws {
        let folder = try TemporaryFolder()
        let store = try Self.recordedLog(folder.path("log.sqlite"), games: 38, seed: 7)
        for perspective in [Perspective.auditor, .device(DeviceID("B"))] {
            let whole = try GameCatalog(store: store, games: .standard, as: perspective).games
            var paged: [GameSummary] = []
            var offset = 0, total = 0
            repeat {
                let page = try GameCatalog.page(store: store, games: .standard, offset: offset, limit: 7, as: perspective)
                paged += page.games
                total = page.total
                offset += 7
            } while offset < total
            #expect(whole.count >= 20 && total >= whole.count, "\(whole.count) of \(total)")
            #expect(paged.sorted { $0.id < $1.id } == whole.sorted { $0.id < $1.id }, "\(perspective)")
        }
    }

    /// A page folded on several readers at once lists what one reader lists, in the same order.
    @Test func aPageFoldedInLanesIsThePageFoldedInOne() throws {
        let folder = try TemporaryFolder()
        let store = try Self.recordedLog(folder.path("log.sqlite"), games: 40, seed: 9)
        let conversations = Set(try GameIndex(store: store).games().map(\.conversation))
        // Enough conversations that two and three lanes of at least 8 each really run.
        #expect(conversations.count >= 24, "\(conversations.count)")
        var compared = 0
        for perspective in [Perspective.auditor, .device(DeviceID("B"))] {
            let one = try GameCatalog.page(store: store, games: .standard, offset: 0, limit: 100, as: perspective)
            #expect(one.games.count >= 20)
            for lanes in [2, 3] {
                let split = try GameCatalog.page(store: store, games: .standard, offset: 0, limit: 100, as: perspective, lanes: lanes)
                #expect(split.games == one.games && split.total == one.total, "\(lanes) lanes as \(perspective)")
                compared += 1
            }
        }
        #expect(compared == 4)
    }

    /// A page takes the games of conversations it finds in the memo instead of folding
    /// them, keeps the ones it folds, and a forgotten conversation is folded again.
    @Test func aPageFoldsOnlyWhatItsMemoDoesNotHold() throws {
        let folder = try TemporaryFolder()
        let store = try Self.recordedLog(folder.path("log.sqlite"), games: 12, seed: 3)
        let plain = try GameCatalog.page(store: store, games: .standard, offset: 0, limit: 8)
        let memo = GameSummaryMemo()
        let first = try GameCatalog.page(store: store, games: .standard, offset: 0, limit: 8, memo: memo)
        #expect(first.games == plain.games && first.total == plain.total)
        let conversations = Set(plain.games.map(\.conversation))
        #expect(plain.games.count == 8 && memo.count == conversations.count, "\(memo.count) of \(conversations.count)")
        // What the memo holds is what the page shows: a conversation in it is not read.
        let game = try #require(plain.games.first)
        let conversation = ConversationID(try #require(UUID(uuidString: game.conversation)))
        let held = try #require(memo.summaries(of: conversation))
        var altered = held
        for index in altered.indices { altered[index].result = "from the memo" }
        memo.keep(altered, of: conversation, asOf: memo.generation)
        let again = try GameCatalog.page(store: store, games: .standard, offset: 0, limit: 8, memo: memo)
        #expect(again.games.first { $0.id == game.id }?.result == "from the memo")
        // Forgotten (its events changed): folded again; a fold read before the change is not kept.
        let before = memo.generation
        memo.forget([conversation])
        #expect(memo.summaries(of: conversation) == nil && memo.generation == before + 1)
        memo.keep(altered, of: conversation, asOf: before)
        #expect(memo.summaries(of: conversation) == nil)
        let refolded = try GameCatalog.page(store: store, games: .standard, offset: 0, limit: 8, memo: memo)
        #expect(refolded.games == plain.games)
        #expect(memo.summaries(of: conversation) == held)
    }

    /// The catalog's pages of games and their count, kept by a memo until it forgets (the
    /// log changed): each is a read of every game's catalog rows.
    @Test func aMemoKeepsTheCatalogsPagesOfGamesUntilTheLogChanges() throws {
        let folder = try TemporaryFolder()
        let store = try Self.recordedLog(folder.path("log.sqlite"), games: 12, seed: 3)
        let index = try GameIndex(store: store)
        #expect(index.usesCatalog)
        let memo = GameSummaryMemo()
        let plain = try index.games(offset: 2, limit: 5)
        let first = try index.games(offset: 2, limit: 5, memo: memo)
        #expect(first.total == plain.total && plain.total > 7)
        #expect(first.games.map(\.game) == plain.games.map(\.game) && first.games.map(\.conversation) == plain.games.map(\.conversation))
        // Every other page from what the memo kept of the first (the whole list's order, the
        // recordings' conversations): as the catalog gives it, to the last page and past it.
        var compared = 0
        for offset in stride(from: 0, through: plain.total + 2, by: 3) {
            for limit in [1, 4] {
                let read = try index.games(offset: offset, limit: limit)
                let kept = try index.games(offset: offset, limit: limit, memo: memo)
                #expect(kept.total == read.total && kept.games.map(\.game) == read.games.map(\.game)
                        && kept.games.map(\.conversation) == read.games.map(\.conversation), "offset \(offset), limit \(limit)")
                compared += kept.games.count
            }
        }
        #expect(compared >= plain.total)
        // More games appended: without being told, the memo answers as before (nothing read)...
        try playMixedGames(4, into: store, seed: 4, noise: 0.3)
        let grown = try index.games(offset: 2, limit: 5)
        #expect(grown.total > plain.total)
        #expect(try index.games(offset: 2, limit: 5, memo: memo).total == plain.total)
        // ... another page is read, with the count it kept...
        #expect(try index.games(offset: 0, limit: 3, memo: memo).total == plain.total)
        // ... and once it forgets, what the log holds now.
        memo.forget([])
        let after = try index.games(offset: 2, limit: 5, memo: memo)
        #expect(after.total == grown.total && after.games.map(\.game) == grown.games.map(\.game))
    }

    /// A game a fold found is confirmed by the catalog's rows alone, only in its own
    /// conversation, and not once a row naming it is moved to another's recording.
    @Test func aFoldedGameIsConfirmedByItsCatalogRowsAlone() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        // Mixed plays: about three in five are games (the others hold none).
        let store = try Self.recordedLog(path, games: 10)
        let index = try GameIndex(store: store)
        let games = try index.games()
        var confirmed = 0
        for (game, conversation) in games {
            #expect(try index.confirm(game: game, foldedIn: conversation))
            let other = try #require(games.first { $0.conversation != conversation }).conversation
            #expect(try !index.confirm(game: game, foldedIn: other))
            confirmed += 1
        }
        #expect(confirmed == games.count && confirmed >= 4, "\(confirmed) games")
        // A log without a complete catalog answers from its scan, the same way.
        let scan = try GameIndex(store: try Self.scanningCopy(of: path, to: folder.path("copy.sqlite")))
        #expect(!scan.usesCatalog)
        for (game, conversation) in games {
            #expect(try scan.confirm(game: game, foldedIn: conversation))
            #expect(try !scan.confirm(game: game, foldedIn: ConversationID(UUID())))
        }
        let (victim, other) = (games[0], try #require(games.first { $0.conversation != games[0].conversation }))
        let otherStream = try #require(try index.streams(of: other.conversation).first)
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: """
                UPDATE catalog SET stream_id = (SELECT id FROM streams WHERE uuid = ?)
                WHERE kind = 2 AND key = ? AND stream_id = (SELECT min(stream_id) FROM catalog WHERE kind = 2 AND key = ?)
                """, arguments: [Data(otherStream.bytes), Data(victim.game.uuid.bytes), Data(victim.game.uuid.bytes)])
        }
        let reader = try GameIndex(store: try EventStore(path: path, access: .readOnly))
        #expect(try !reader.confirm(game: victim.game, foldedIn: victim.conversation))
        #expect(try !reader.confirm(game: victim.game, foldedIn: other.conversation))
        #expect(try reader.confirm(game: games[1].game, foldedIn: games[1].conversation))
    }

    /// The memo finds a game's conversation only where a fold of events found it, and in
    /// one conversation alone.
    @Test func aMemoFindsAGamesConversationOnlyWhereOneFoldFoundIt() throws {
        let folder = try TemporaryFolder()
        let store = try Self.recordedLog(folder.path("log.sqlite"), games: 6, seed: 5)
        let page = try GameCatalog.page(store: store, games: .standard, offset: 0, limit: 6)
        let game = try #require(page.games.first)
        let (conversation, elsewhere) = (ConversationID(try #require(UUID(uuidString: game.conversation))), ConversationID(UUID()))
        let memo = GameSummaryMemo()
        memo.keep([game], of: conversation, asOf: memo.generation, folded: false)
        #expect(memo.conversation(foldedWithGame: game.id) == nil)
        memo.keep([game], of: conversation, asOf: memo.generation)
        #expect(memo.conversation(foldedWithGame: game.id) == conversation)
        memo.keep([game], of: elsewhere, asOf: memo.generation)
        #expect(memo.conversation(foldedWithGame: game.id) == nil)
        // Forgetting a conversation forgets the games found in it; a fold finds them again.
        memo.forget([elsewhere])
        #expect(memo.conversation(foldedWithGame: game.id) == nil)
        memo.keep([game], of: conversation, asOf: memo.generation)
        #expect(memo.conversation(foldedWithGame: game.id) == conversation)
        memo.forget([conversation])
        #expect(memo.conversation(foldedWithGame: game.id) == nil)
    }

    @Test func verifyCatchesACatalogRowMovedToAnotherGamesRecording() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        let store = try Self.recordedLog(path, games: 6)
        #expect(try Auditor(games: .standard).audit(store).filter { $0.check == .catalog }.isEmpty)
        let games = try GameIndex(store: store).games()
        let (victim, other) = (games[0], try #require(games.first { $0.conversation != games[0].conversation }))
        let otherStream = try #require(try GameIndex(store: store).streams(of: other.conversation).first)
        // Point the first game at a recording of another conversation, as a forger would to show other events.
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: """
                UPDATE catalog SET stream_id = (SELECT id FROM streams WHERE uuid = ?)
                WHERE kind = 2 AND key = ? AND stream_id = (SELECT min(stream_id) FROM catalog WHERE kind = 2 AND key = ?)
                """, arguments: [Data(otherStream.bytes), Data(victim.game.uuid.bytes), Data(victim.game.uuid.bytes)])
        }
        let findings = try Auditor(games: .standard).audit(try EventStore(path: path, access: .readOnly)).filter { $0.check == .catalog }
        #expect(findings.count == 2, "\(findings)") // a row no event gives, and an event's row missing
        #expect(findings.allSatisfy { $0.severity == .error && $0.game == victim.game.uuid.uuidString.lowercased() })
        // One game's commands (state, replay, verify GAME, the viewer) refuse the moved row
        // instead of showing the other conversation's events as this game.
        let reader = try EventStore(path: path, access: .readOnly)
        #expect {
            _ = try GameIndex(store: reader).resolve(victim.game.uuid.uuidString)
        } throws: { error in
            guard case ReplayError.catalogContradictsEvents = error else { return false }
            return true
        }
        #expect(throws: ReplayError.self) { _ = try Auditor(games: .standard).audit(reader, game: victim.game.uuid.uuidString) }
        // A conversation row moved likewise.
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE catalog SET stream_id = (SELECT id FROM streams WHERE uuid = ?) WHERE kind = 1 AND key = ? AND stream_id = (SELECT min(stream_id) FROM catalog WHERE kind = 1 AND key = ?)",
                           arguments: [Data(otherStream.bytes), Data(victim.conversation.uuid.bytes), Data(victim.conversation.uuid.bytes)])
        }
        let moved = try EventStore(path: path, access: .readOnly)
        #expect(throws: ReplayError.self) { _ = try GameIndex(store: moved).streams(of: victim.conversation) }
        // Checked against the events of the recordings the rows name, read whole (how a
        // viewer opens a game): the moved row's event is not among them.
        func agree(_ conversation: ConversationID) throws -> Bool {
            let rows = try #require(try GameIndex(store: moved).uncheckedRows(of: conversation))
            #expect(!rows.isEmpty)
            return GameIndex.rows(rows, agreeWith: try Replayer.load(from: moved, streams: Set(rows.map(\.stream)), verify: true))
        }
        #expect(try !agree(victim.conversation))
        var agreeing = 0
        for conversation in Set(games.map(\.conversation)) where conversation != victim.conversation && conversation != other.conversation {
            #expect(try agree(conversation))
            agreeing += 1
        }
        #expect(agreeing >= 2)
    }
}

extension UUID {
    var bytes: [UInt8] { withUnsafeBytes(of: uuid) { Array($0) } }
}
