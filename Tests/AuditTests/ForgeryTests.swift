import MessagesModel
import Audit

import EventStore
import Foundation
import GameKit
import Games
import GRDB
import Interchange
import Projections
import Recorder
import Replay
import Simulation
import TestSupport
import Testing

@Suite(.serialized) struct ForgeryTests {
    let folder: TemporaryFolder
    let clean: String
    let keys: [String: [UInt8]]

    init() throws {
        folder = try TemporaryFolder()
        clean = folder.path("clean.sqlite")
        let store = try EventStore(path: clean)
        let devices = TestKeys()
        try playMixedGames(8, into: store, seed: 808, keys: devices)
        keys = devices.trusted
    }

    func copy(_ name: String) throws -> String {
        let path = folder.path(name)
        try FileManager.default.copyItem(atPath: clean, toPath: path)
        return path
    }

    func errors(_ path: String, trusting: [String: [UInt8]]? = nil) throws -> [Finding] {
        try Auditor(games: .standard).audit(try EventStore(path: path, access: .readOnly), trusting: trusting)
            .filter { $0.severity == .error }
    }

    /// The middle event of a game message's insert, found by its payload.
    func insertPosition(_ path: String) throws -> Int64 {
        let store = try EventStore(path: path, access: .readOnly)
        let inserts = try store.events(EventQuery(types: ["action.insert"]))
        #expect(inserts.count > 4)
        return inserts[inserts.count / 2].position
    }

    @Test func theCleanLogVerifiesAgainstTheDevicesKeys() throws {
        #expect(try errors(clean, trusting: keys).isEmpty)
        let report = try EventStore(path: clean, access: .readOnly).verifyProofs(trusting: keys)
        #expect(report.heads >= 16) // a head per device per game at least
        #expect(report.problems.isEmpty, "\(report.problems.prefix(3))")
    }

    /// The clean log's games, in `store`.
    func cleanLog(in store: StoreUnderTest) async throws -> LogUnderTest {
        try await store.makeLog(folder) { try playMixedGames(8, into: $0, seed: 808, keys: TestKeys()) }
    }

    func errors(_ reader: any SignedLogReader) throws -> [Finding] {
        try Auditor(games: .standard).audit(reader).filter { $0.severity == .error }
    }

    @Test(arguments: StoreUnderTest.allCases) func anEditWithEveryChainRecomputedIsCaughtBySignatures(_ store: StoreUnderTest) async throws {
        let log = try await cleanLog(in: store)
        let inserts = try log.reader().events(EventQuery(types: ["action.insert"]))
        #expect(inserts.count > 4)
        let position = inserts[inserts.count / 2].position
        try log.rewriteRechaining(at: position) { $0.replacingOccurrences(of: "\"isPending\":false", with: "\"isPending\":true") }
        // The chains are consistent: only the signatures say no.
        #expect(try log.reader().verifyIntegrity(progress: nil).isSound)
        let found = try errors(log.reader())
        let changed = try #require(found.first { $0.check == .signature && $0.rule == "changedEvent" }, "\(found)")
        // It names the game's conversation, as `games` and `state` take it.
        let stream = try #require(try log.reader().event(at: position, verify: false)?.stream)
        let conversation = try GameIndex(store: log.reader()).allStreams().first { $0.value.contains(stream) }?.key
        #expect(changed.game == conversation?.uuid.uuidString.lowercased() && changed.game != nil)
        // Nothing the forger can show points past the log's end.
        let last = try log.reader().lastPosition()
        #expect(found.allSatisfy { ($0.position ?? 0) <= last })
    }

    @Test(arguments: StoreUnderTest.allCases) func aCutTailWithTheStreamVersionLoweredIsCaught(_ store: StoreUnderTest) async throws {
        let log = try await cleanLog(in: store)
        // The log's last three events of one recording removed (a block split around
        // them), their recording told it is shorter, the chain made whole again.
        let cut = try log.cutLastEvents(3)
        #expect(cut.count == 3)
        #expect(try log.reader().verifyIntegrity(progress: nil).isSound)
        let found = try errors(log.reader())
        #expect(found.contains { $0.rule == "missingEvent" }, "\(found.map(\.rule))")
    }

    @Test func reSigningWithAnotherKeyIsCaughtByTheTrustedKeys() throws {
        let path = try copy("resigned.sqlite")
        let position = try insertPosition(path)
        try LogForger(path: path).rewrite(position: position) { $0.replacingOccurrences(of: "\"isPending\":false", with: "\"isPending\":true") }
        // The forger re-signs both devices' trees with keys of their own, over leaves
        // recomputed from the forged events.
        for device in ["A", "B"] {
            try TreeForger(path: path).rebuild(device: device, signingWith: try DeviceKey.random(device: device))
        }
        // Against the keys in the log, the forgery holds together...
        #expect(try errors(path).filter { $0.check == .signature }.isEmpty)
        // ...against the devices' own keys it does not.
        let found = try errors(path, trusting: keys)
        #expect(found.filter { $0.rule == "untrustedKey" }.count == 2, "\(found.map(\.found))")
    }

    @Test func aForgedSnapshotIsReportedAndNeverShown() throws {
        let path = try copy("snapshot.sqlite")
        let store = try EventStore(path: path)
        let catalog = try GameCatalog(store: store, games: .standard)
        var stored = 0
        for (conversation, streams) in catalog.streams {
            let replayer = try Replayer(store: store, conversation: conversation, streams: streams, snapshotInterval: 8, games: .standard)
            let snapshots = try replayer.snapshotsToStore()
            stored += snapshots.count
            try store.replaceSnapshots(conversation: conversation.uuid, with: snapshots.map { snapshot in
                var forged = snapshot
                // Bob renamed Mallory, event hash and position kept.
                let text = String(decoding: snapshot.state, as: UTF8.self).replacingOccurrences(of: "\"Bob\"", with: "\"Mallory\"")
                forged.state = Array(text.utf8)
                return forged
            })
        }
        #expect(stored > 8)
        let found = try errors(path)
        #expect(found.filter { $0.check == .snapshot }.count >= stored / 2, "\(found.count)")
        // What the commands show comes from the events.
        let (conversation, streams) = try #require(catalog.streams.max { $0.value.count < $1.value.count })
        let replayer = try Replayer(store: try EventStore(path: path, access: .readOnly), conversation: conversation,
                                    streams: streams, snapshotInterval: 8, games: .standard)
        let state = try replayer.state(at: replayer.stepCount)
        #expect(state.devices.values.allSatisfy { !$0.names.values.contains("Mallory") })
        #expect(replayer.storedSnapshotsUsed == 0)
    }

    @Test func aBrokenIndexIsReported() throws {
        let path = try copy("index.sqlite")
        // The index is rebuilt over another column, then its definition put back: its
        // schema is gamelog's, its content is not the table's.
        let original = try DatabaseQueue(path: path).read { try String.fetchOne($0, sql: "SELECT sql FROM sqlite_master WHERE name = 'block_leaves_by_leaf'")! }
        try DatabaseQueue(path: path).writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA writable_schema = ON")
            try db.execute(sql: "UPDATE sqlite_master SET sql = 'CREATE INDEX block_leaves_by_leaf ON block_leaves(tree_id, first_leaf)' WHERE name = 'block_leaves_by_leaf'")
        }
        try DatabaseQueue(path: path).writeWithoutTransaction { db in
            try db.execute(sql: "REINDEX block_leaves_by_leaf")
            try db.execute(sql: "PRAGMA writable_schema = ON")
            try db.execute(sql: "UPDATE sqlite_master SET sql = ? WHERE name = 'block_leaves_by_leaf'", arguments: [original])
        }
        let found = try errors(path)
        #expect(found.contains { $0.rule == "sqlite-integrity-check" && $0.found.contains("block_leaves_by_leaf") })
    }

    @Test func anEditedExportLineIsRefusedWithItsLineAndStoresNothing() throws {
        var text = ""
        _ = try Interchange.export(from: try EventStore(path: clean, access: .readOnly)) { text += $0 + "\n" }
        var lines = text.split(separator: "\n").map(String.init)
        let index = try #require(lines.firstIndex { $0.contains("Ship_Location=") && $0.contains("action.insert") })
        let original = lines[index]
        lines[index] = original.replacingOccurrences(of: "Ship_Location=", with: "Ship_Location=1")
        #expect(throws: InterchangeError.self) { _ = try Interchange.read(lines.joined(separator: "\n"), file: "edited.jsonl") }
        do {
            _ = try Interchange.read(lines.joined(separator: "\n"), file: "edited.jsonl")
        } catch let error as InterchangeError {
            #expect(error.description.hasPrefix("edited.jsonl:\(index + 1) "), "\(error)")
        }
        // The same edit with the stream hashes of that line and every later one of its
        // stream recomputed: the device's signed checkpoint refuses it.
        var events = try Interchange.read(text, file: "clean.jsonl")
        #expect(events.count > 100)
        let target = events[index]
        events[index].payload = target.payload.replacingOccurrences(of: "Ship_Location=", with: "Ship_Location=1")
        var chains = StreamChains()
        for i in events.indices {
            let hash = chains.advance(id: events[i].id, stream: events[i].stream, streamVersion: events[i].streamVersion,
                                      type: events[i].type, typeVersion: events[i].typeVersion,
                                      recordedAt: Timestamp(microsecondsSince1970: events[i].recordedAt),
                                      payload: Array(events[i].payload.utf8))
            events[i].streamHash = hash.map { String(format: "%02x", $0) }.joined()
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let proofs = text.split(separator: "\n").filter { $0.hasPrefix(#"{"head":"#) || $0.hasPrefix(#"{"tree":"#) }
        #expect(proofs.count > 2)
        let forged = try events.map { String(decoding: try encoder.encode($0), as: UTF8.self) } + proofs.map(String.init)
        do {
            _ = try Interchange.read(forged.joined(separator: "\n"), file: "forged.jsonl")
            Issue.record("a re-chained edit was accepted")
        } catch let error as InterchangeError {
            #expect(error.description.contains("forged.jsonl:") && error.description.contains("signed"), "\(error.description)")
        }
    }

    @Test func anIdStoredWithOtherContentIsAConflictNotASkip() throws {
        var text = ""
        _ = try Interchange.export(from: try EventStore(path: clean, access: .readOnly)) { text += $0 + "\n" }
        let target = try EventStore(path: folder.path("target.sqlite"))
        let plan = try Interchange.check(files: [ExportFile(name: "clean.jsonl", contents: Data(text.utf8))])
        #expect(try Interchange.import(plan, into: target).stored > 100)
        // Change what one stored event says, in the target, as a second forged log would.
        let position = try insertPosition(target.path)
        try LogForger(path: target.path).rewrite(position: position) { $0.replacingOccurrences(of: "\"isPending\":false", with: "\"isPending\":true") }
        let before = try Data(contentsOf: URL(fileURLWithPath: target.path))
        #expect(throws: InterchangeError.self) { _ = try Interchange.import(plan, into: try EventStore(path: target.path)) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: target.path)) == before)
    }
}
