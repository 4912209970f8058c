import Audit
import EventStore
import Foundation
import GRDB
import Games
import Interchange
import MessagesModel
import Replay
import TestSupport
import Testing

/// Issue 36, item 6: every size, position and leaf index a file or a request gives is
/// held to what is there before any loop or arithmetic. Each of these crashed (exit 132)
/// or never finished before.
@Suite(.serialized) struct BoundedInputTests {
    let folder: TemporaryFolder
    let clean: String
    let devices = TestKeys()

    init() throws {
        folder = try TemporaryFolder()
        clean = folder.path("clean.sqlite")
        try playMixedGames(2, into: try EventStore(path: clean), seed: 11, keys: devices)
    }

    func copy(_ name: String) throws -> String {
        let path = folder.path(name)
        try FileManager.default.copyItem(atPath: clean, toPath: path)
        return path
    }

    /// An export of one tree line and one head line whose head claims 2^40 leaves.
    func hugeHeadExport() throws -> Data {
        let key = devices.key("A")
        let head = try TreeHead.signing(size: 1 << 40, root: Array(repeating: 7, count: 32), key: key,
                                        at: Timestamp(microsecondsSince1970: 1_700_000_000_000_000))
        let tree = #"{"tree":{"device":"A","nodes":[],"publicKey":"\#(Hex.string(key.publicKey))","streams":[]}}"#
        let line = try String(decoding: JSONEncoder().encode(["head": ExportedHead(head)]), as: UTF8.self)
        return Data((tree + "\n" + line + "\n").utf8)
    }

    @Test func aHeadClaimingTwoToTheFortyLeavesIsRefusedAtOnce() throws {
        let file = try hugeHeadExport()
        #expect(file.count < 1000)
        #expect {
            _ = try Interchange.check(files: [ExportFile(name: "huge.jsonl", contents: file)])
        } throws: { error in
            String(describing: error).contains("1099511627776 events")
        }
    }

    @Test func aStoredHeadClaimingTwoToTheFortyLeavesIsAFindingOfTheWholeLogAndOfAGame() throws {
        let path = try copy("hugehead.sqlite")
        let key = devices.key("A")
        let head = try TreeHead.signing(size: 1 << 40, root: Array(repeating: 7, count: 32), key: key,
                                        at: Timestamp(microsecondsSince1970: 1_700_000_000_000_000))
        let tree = try TreeForger(path: path).tree(of: "A")
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "INSERT INTO tree_heads (tree_id, size, root, signed_at, flags, signature) VALUES (?, ?, ?, ?, 0, ?)",
                           arguments: [tree, head.size, Data(head.root), head.signedAt.microsecondsSince1970, Data(head.signature)])
        }
        var auditor = Auditor(games: .standard)
        auditor.rerunsExtensions = false
        let whole = try auditor.report(try EventStore(path: path, access: .readOnly), trusting: devices.trusted).findings
        #expect(whole.contains { $0.severity == .error && $0.rule == "missingEvent" }, "\(whole.map(\.found))")
        let game = try #require(try GameIndex(store: try EventStore(path: path, access: .readOnly)).conversations().first)
        let one = try auditor.report(try EventStore(path: path, access: .readOnly), game: game.uuid.uuidString, trusting: devices.trusted).findings
        #expect(one.contains { $0.severity == .error }, "\(one.map(\.found))")
    }

    @Test func aBlockAtTheTopOfThePositionsIsDamageNotACrash() throws {
        let path = try copy("topblock.sqlite")
        try DatabaseQueue(path: path).writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA ignore_check_constraints = 1")
            try db.execute(sql: """
                INSERT INTO event_blocks SELECT 9223372036854775744, count, codec, dictionary_id, raw_size, body, last_hash
                FROM event_blocks ORDER BY first_position DESC LIMIT 1
                """)
        }
        #expect {
            _ = try EventStore(path: path, access: .readOnly)
        } throws: { error in
            String(describing: error).contains("outside the 1 to 2^62 the schema allows")
        }
        // A count past the schema's bound: the block is damage, named, on every read.
        let counted = try copy("bigcount.sqlite")
        try DatabaseQueue(path: counted).writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA ignore_check_constraints = 1")
            try db.execute(sql: "UPDATE event_blocks SET count = 4611686018427387904 WHERE first_position = (SELECT max(first_position) FROM event_blocks)")
        }
        let store = try EventStore(path: counted, access: .readOnly)
        #expect(throws: EventStoreError.self) { _ = try store.lastPosition() }
        #expect(!(try store.verifyIntegrity().isSound))
    }

    @Test func anEventOnLeafTwoToTheSixtyThreeMinusTwoIsOutsideItsTree() throws {
        let path = try copy("hugeleaf.sqlite")
        let store = try EventStore(path: path, access: .readOnly)
        let game = try #require(try GameIndex(store: store).conversations().first)
        let streams = try GameIndex(store: store).streams(of: game)
        let victim = try #require(try store.events(EventQuery(streams: streams)).last)
        try BlockSurgery.alter(path, position: victim.position) { $0.leaf = Int64.max - 1 }
        var auditor = Auditor(games: .standard)
        auditor.rerunsExtensions = false
        let one = try auditor.report(try EventStore(path: path, access: .readOnly), game: game.uuid.uuidString, trusting: devices.trusted).findings
        #expect(one.contains { $0.severity == .error }, "\(one.map(\.found))")
        let whole = try auditor.report(try EventStore(path: path, access: .readOnly), trusting: devices.trusted).findings
        #expect(whole.contains { $0.severity == .error }, "\(whole.map(\.found))")
    }
}
