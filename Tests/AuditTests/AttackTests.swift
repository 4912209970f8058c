import Audit
import EventStore
import Foundation
import GRDB
import Projections
import ZlibCodec
import Interchange
import MessagesModel
import Recorder
import Replay
import Simulation
import Games
import GameKit
import TestSupport
import Testing

/// docs/SECURITY.md, row by row: an attacker who knows docs/FORMAT.md and the code,
/// holds the log files and, where a row says so, one device's key, tries each forgery;
/// `verify --trust` (or `--heads` for a rollback) must say so with an error.
@Suite(.serialized) struct AttackTests {
    let folder: TemporaryFolder
    let clean: String
    let devices = TestKeys()

    init() throws {
        folder = try TemporaryFolder()
        clean = folder.path("clean.sqlite")
        try playMixedGames(6, into: try EventStore(path: clean), seed: 7, keys: devices)
    }

    func copy(_ name: String) throws -> String {
        let path = folder.path(name)
        try FileManager.default.copyItem(atPath: clean, toPath: path)
        return path
    }

    func audit(_ path: String, trusted: Bool = true, known: [TreeHead] = [], game: String? = nil) throws -> [Finding] {
        var auditor = Auditor(games: .standard)
        auditor.rerunsExtensions = false
        return try auditor.report(try EventStore(path: path, access: .readOnly), game: game, trusting: trusted ? devices.trusted : nil,
                                  known: known).findings
    }

    func errors(_ path: String, trusted: Bool = true, known: [TreeHead] = [], game: String? = nil) throws -> [Finding] {
        try audit(path, trusted: trusted, known: known, game: game).filter { $0.severity == .error }
    }

    /// Flips `isPending` in the middle action.insert of the log, rechaining what is unsigned.
    func edit(_ path: String, streamOf device: String? = nil, last: Bool = false) throws -> Int64 {
        let store = try EventStore(path: path, access: .readOnly)
        var inserts = try store.events(EventQuery(types: ["action.insert"]))
        if let device {
            let own = try Set(store.events(EventQuery(types: ["recording.started"]))
                .filter { String(decoding: $0.payload, as: UTF8.self).contains(#""device":"\#(device)""#) }.map(\.stream))
            inserts = inserts.filter { own.contains($0.stream) }
        }
        #expect(inserts.count > 2)
        let position = last ? inserts.last!.position : inserts[inserts.count / 2].position
        try LogForger(path: path).rewrite(position: position) {
            $0.replacingOccurrences(of: "\"isPending\":false", with: "\"isPending\":true")
        }
        return position
    }

    func recordings(of device: String, in path: String) throws -> [UUID] {
        try EventStore(path: path, access: .readOnly).events(EventQuery(types: ["recording.started"]))
            .filter { String(decoding: $0.payload, as: UTF8.self).contains(#""device":"\#(device)""#) }.map(\.stream)
    }

    @Test func theCleanLogHoldsUnderTheDevicesKeys() throws {
        #expect(try errors(clean).isEmpty)
        let trees = try EventStore(path: clean, access: .readOnly).deviceTrees()
        #expect(trees.count == 2 && trees.allSatisfy { $0.heads.count >= 6 })
    }

    // Row 1: keys anyone can compute.
    @Test func keysComputedByAPublishedFormulaSignNothingTheAuditorTrusts() throws {
        let path = try copy("computed.sqlite")
        _ = try edit(path)
        for device in ["A", "B"] {
            // The formula FORMAT.md gave before, and today's test keys: both public.
            try TreeForger(path: path).rebuild(device: device, signingWith: try DeviceKey.insecureTestKey(device: device))
        }
        let found = try errors(path)
        #expect(found.filter { $0.rule == "untrustedKey" }.count == 2, "\(found.map(\.rule))")
        #expect(found.contains { $0.rule == "unsignedTail" })
    }

    @Test func aLogSignedWithTestKeysFailsUnderTrustEvenWithThoseKeys() throws {
        let path = folder.path("testkeys.sqlite")
        let recorder = Recorder(store: try EventStore(path: path), clock: FixedClock(), seed: 3,
                                keys: { try? DeviceKey.insecureTestKey(device: $0.name) })
        try Simulator(recorder: recorder, games: .standard, seed: 3).play("tictactoe")
        let keys = ["A": try DeviceKey.insecureTestKey(device: "A").publicKey, "B": try DeviceKey.insecureTestKey(device: "B").publicKey]
        var auditor = Auditor(games: .standard)
        auditor.rerunsExtensions = false
        let found = try auditor.audit(try EventStore(path: path, access: .readOnly), trusting: keys)
        #expect(found.filter { $0.rule == "testKey" && $0.severity == .error }.count == 2, "\(found.map(\.rule))")
        // Without --trust it is a warning: nothing was promised.
        let loose = try auditor.audit(try EventStore(path: path, access: .readOnly))
        #expect(loose.contains { $0.rule == "testKey" && $0.severity == .warning })
    }

    // Row 2: signatures are not optional.
    @Test func deletingEveryHeadLeavesEveryEventUnsigned() throws {
        let path = try copy("noheads.sqlite")
        _ = try edit(path)
        try DatabaseQueue(path: path).writeWithoutTransaction { try $0.execute(sql: "DELETE FROM tree_heads") }
        let found = try errors(path)
        #expect(found.filter { $0.rule == "unsignedTail" }.count == 2, "\(found.map(\.rule))")
        // Without trusted keys the same findings, as warnings.
        let loose = try audit(path, trusted: false).filter { $0.rule == "unsignedTail" }
        #expect(loose.count == 2 && loose.allSatisfy { $0.severity == .warning })
    }

    @Test func deletingEachDevicesLastHeadsAndEditingTheTailIsCaught() throws {
        let path = try copy("lasthead.sqlite")
        for device in ["A", "B"] {
            let sizes = try TreeForger(path: path).headSizes(of: device)
            try TreeForger(path: path).dropHeads(of: device, above: sizes[sizes.count - 3])
        }
        _ = try edit(path, streamOf: "A", last: true)
        let found = try errors(path)
        #expect(found.contains { $0.rule == "unsignedTail" && $0.device == "A" }, "\(found.map(\.rule))")
    }

    @Test func aPlantedTriggerIsRefusedBeforeAnythingRunsOrIsWritten() throws {
        let path = try copy("trigger.sqlite")
        try DatabaseQueue(path: path).writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TRIGGER strip AFTER INSERT ON tree_heads BEGIN DELETE FROM tree_heads; END")
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        for access in [EventStore.Access.readWrite, .readOnly] {
            #expect {
                _ = try EventStore(path: path, access: access)
            } throws: { error in
                guard case EventStoreError.foreignSchema(_, let detail) = error else { return false }
                return detail.contains("trigger strip")
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func aChangedColumnTypeIsRefusedAndNeverCrashes() throws {
        let path = try copy("loose.sqlite")
        // The table rebuilt without STRICT, with text where a time belongs.
        try DatabaseQueue(path: path).writeWithoutTransaction { db in
            try db.execute(sql: """
                CREATE TABLE heads_loose AS SELECT * FROM tree_heads; DROP TABLE tree_heads;
                CREATE TABLE tree_heads (tree_id INTEGER, size INTEGER, root BLOB, signed_at INTEGER, flags INTEGER, signature BLOB,
                                         PRIMARY KEY (tree_id, size));
                INSERT INTO tree_heads SELECT * FROM heads_loose; DROP TABLE heads_loose;
                UPDATE tree_heads SET signed_at = 'yesterday';
                """)
        }
        #expect(throws: EventStoreError.self) { _ = try EventStore(path: path, access: .readOnly) }
    }

    // Row 3: deletions are visible.
    @Test func droppingAWholeSignedGameIsCaught() throws {
        let path = try copy("dropped.sqlite")
        let index = try GameIndex(store: try EventStore(path: path, access: .readOnly))
        let conversation = try #require(try index.conversations().first)
        let removed = try index.streams(of: conversation)
        #expect(removed.count >= 2)
        try LogForger(path: path).delete(streams: removed)
        // The chain and the catalog hold together; only the devices' trees say no.
        #expect(try EventStore(path: path, access: .readOnly).verifyIntegrity().isSound)
        let found = try errors(path)
        #expect(found.filter { $0.rule == "missingEvent" }.count == 2, "\(found.map(\.rule))")
    }

    /// The genuine subtree hashes that stand for `removed`'s leaves in each device's tree of
    /// the clean log: hashes of public data, which anyone holding the file can compute.
    func standIns(for removed: Set<UUID>) throws -> [(tree: Int64, lo: Int64, hi: Int64, hash: [UInt8])] {
        let store = try EventStore(path: clean, access: .readOnly)
        let layout = try store.treeLayout()
        var out: [(tree: Int64, lo: Int64, hi: Int64, hash: [UInt8])] = []
        for (id, tree) in layout.trees {
            let mine = layout.streams(of: id)
            let hashes = try store.leafHashes(streams: mine)
            let gone = Set(try store.leaves(streams: removed.intersection(mine)).map(\.leaf))
            let kept = hashes.keys.filter { !gone.contains($0) }.sorted()
            let size = try #require(tree.heads.last).size
            out += MerkleTree.multiproof(size: size, held: { MerkleTree.anyLeaf(kept, in: $0, $1) }, subtreeRoot: { lo, hi in
                MerkleTree.root((lo..<hi).map { hashes[$0]! })
            }).map { (id, $0.lo, $0.hi, $0.hash) }
        }
        return out
    }

    // Issue 36, item 1: absence under subtree hashes.
    @Test func aGameDroppedWithItsSubtreeHashesInItsPlaceIsNamedAbsent() throws {
        let path = try copy("standins.sqlite")
        let index = try GameIndex(store: try EventStore(path: path, access: .readOnly))
        let conversation = try #require(try index.conversations().first)
        let removed = try index.streams(of: conversation)
        let nodes = try standIns(for: removed)
        #expect(nodes.count >= 2)
        try LogForger(path: path).delete(streams: removed)
        try DatabaseQueue(path: path).write { db in
            for node in nodes {
                try db.execute(sql: "INSERT OR REPLACE INTO tree_nodes (tree_id, lo, hi, hash) VALUES (?, ?, ?, ?)",
                               arguments: [node.tree, node.lo, node.hi, Data(node.hash)])
            }
        }
        // Every head still verifies against the stand-ins; the absence is named all the same.
        let found = try errors(path)
        let absent = found.filter { $0.rule == "absentLeaves" }
        #expect(absent.count == 2, "\(found.map(\.rule))")
        #expect(!found.contains { $0.rule == "changedEvent" || $0.rule == "missingEvent" }, "\(found.map(\.found))")
        #expect(absent.allSatisfy { $0.found.contains("not in this log (leaves ") })
        // An auditor who accepts a partial log is told what it does not cover, as warnings.
        var auditor = Auditor(games: .standard)
        auditor.rerunsExtensions = false
        auditor.acceptsPartialLog = true
        let partial = try auditor.report(try EventStore(path: path, access: .readOnly), trusting: devices.trusted).findings
        #expect(partial.filter { $0.rule == "absentLeaves" && $0.severity == .warning }.count == 2)
        #expect(!partial.contains { $0.severity == .error }, "\(partial.filter { $0.severity == .error }.map(\.found))")

        // A reader written from docs/FORMAT.md alone names the same leaves absent.
        let tools = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "tools/decode_log.py").path
        let python = try ChildProcess.run("python3", [tools, path])
        #expect(python.status == 1, "\(python.stdout) \(python.stderr)")
        let summary = try #require(python.stdout.split(separator: "\n").last)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(summary.utf8)) as? [String: Any])
        let ranges = try #require(object["absent"] as? [String: String])
        #expect(ranges.count == 2)
        for finding in absent {
            let device = try #require(finding.device)
            #expect(finding.found.contains("(leaves \(try #require(ranges[device])))"), "\(finding.found) vs \(ranges)")
        }
        let accepting = try ChildProcess.run("python3", [tools, path, "--partial"])
        #expect(accepting.status == 0, "\(accepting.stdout)")
    }

    // Issue 36, item 10: a stored subtree hash over leaves the file holds is checked whatever its shape.
    @Test func aStoredSubtreeHashThatIsNoTileIsChecked() throws {
        let path = try copy("strayrow.sqlite")
        let tree = try TreeForger(path: path).tree(of: "A")
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "INSERT INTO tree_nodes (tree_id, lo, hi, hash) VALUES (?, 0, 2, zeroblob(32))", arguments: [tree])
        }
        let found = try errors(path)
        #expect(found.contains { $0.rule == "wrongStreamHead" && $0.found.contains("over leaves 0 to 1") }, "\(found.map(\.found))")
        // A row past every head of the device, over leaves the log does not hold.
        let far = try copy("farrow.sqlite")
        try DatabaseQueue(path: far).write { db in
            try db.execute(sql: "INSERT INTO tree_nodes (tree_id, lo, hi, hash) VALUES (?, 1048576, 2097152, zeroblob(32))", arguments: [tree])
        }
        #expect(try errors(far).contains { $0.rule == "wrongStreamHead" && $0.found.contains("no head of the device reaches") })
    }

    @Test func anExportMissingOneRecordingsLinesIsRefused() throws {
        var lines: [String] = []
        _ = try Interchange.export(from: try EventStore(path: clean, access: .readOnly)) { lines.append($0) }
        let victim = try #require(try recordings(of: "A", in: clean).dropFirst().first)
        let cut = lines.filter { !$0.contains(#""stream":"\#(victim.uuidString)""#) }
        #expect(cut.count < lines.count - 10)
        #expect {
            _ = try Interchange.check(files: [ExportFile(name: "cut.jsonl", contents: Data(cut.joined(separator: "\n").utf8))])
        } throws: { error in
            String(describing: error).contains("the files lack its event")
        }
    }

    @Test func anExportStrippedOfItsSignaturesIsUnsignedOrRefused() throws {
        var lines: [String] = []
        _ = try Interchange.export(from: try EventStore(path: clean, access: .readOnly)) { lines.append($0) }
        // Heads removed: the events import, counted as unsigned, and fail under trust.
        let unsigned = lines.filter { !$0.hasPrefix(#"{"head":"#) }
        let target = try EventStore(path: folder.path("stripped.sqlite"))
        let summary = try Interchange.import(files: [ExportFile(name: "s.jsonl", contents: Data(unsigned.joined(separator: "\n").utf8))],
                                             into: target)
        #expect(summary.unsigned == summary.stored && summary.stored > 100)
        let found = try errors(target.path)
        #expect(found.filter { $0.rule == "unsignedTail" }.count == 2, "\(found.map(\.rule))")
        // Tree lines removed as well: the events still name their leaves, and are refused.
        let bare = unsigned.filter { !$0.hasPrefix(#"{"tree":"#) }
        #expect(throws: InterchangeError.self) {
            _ = try Interchange.check(files: [ExportFile(name: "bare.jsonl", contents: Data(bare.joined(separator: "\n").utf8))])
        }
    }

    // Row 4: one device's key signs only that device's recordings.
    @Test func theOpponentsKeyCannotSignAnotherDevicesGame() throws {
        let path = try copy("opponent.sqlite")
        let store = try EventStore(path: path, access: .readOnly)
        let index = try GameIndex(store: store)
        // Alice's last game: her recordings of the last conversation.
        let conversation = try #require(try index.conversations().max { a, b in
            try index.streams(of: a).count < index.streams(of: b).count || true
        })
        let alices = Set(try recordings(of: "A", in: path)).intersection(try index.streams(of: conversation))
        #expect(!alices.isEmpty)
        _ = try edit(path, streamOf: "A", last: true)
        // Holding B's key only: Alice's recordings move into B's tree, B signs, A's tree
        // shrinks back to a head it signed before.
        let forger = TreeForger(path: path)
        try forger.move(alices, to: "B")
        try forger.rebuild(device: "A", signingWith: nil)
        let remaining = try EventStore(path: path, access: .readOnly).deviceTrees().first { $0.owner.device == "A" }!
        let leavesLeft = try EventStore(path: path, access: .readOnly).leafHashes(streams: Set(try recordings(of: "A", in: path)).subtracting(alices)).count
        try forger.dropHeads(of: "A", above: Int64(leavesLeft))
        #expect(remaining.heads.count > 0)
        let bSizes = try forger.headSizes(of: "B")
        let bTotal = try EventStore(path: path, access: .readOnly).leafIndexes().leaves.count - leavesLeft
        try forger.rebuild(device: "B", signingWith: devices.key("B"), sizes: bSizes + [Int64(bTotal)])
        let found = try errors(path)
        #expect(found.contains { $0.rule == "signedByItsOwnDevice" }, "\(found.map(\.rule))")
    }

    @Test func twoKeysForOneDeviceAreAnErrorUnderTrust() throws {
        let path = try copy("twokeys.sqlite")
        let mallory = try DeviceKey.random(device: "A")
        // A second tree named A, under the forger's key, holding one of A's recordings.
        let stream = try #require(try recordings(of: "A", in: path).last)
        try DatabaseQueue(path: path).writeWithoutTransaction { db in
            try db.execute(sql: "INSERT INTO trees (public_key, device, size, frontier) VALUES (?, 'A', 0, x'')", arguments: [Data(mallory.publicKey)])
            let id = db.lastInsertedRowID
            try db.execute(sql: "UPDATE streams SET tree_id = ? WHERE uuid = ?", arguments: [id, withUnsafeBytes(of: stream.uuid) { Data($0) }])
            // The derived leaf index follows, as docs/FORMAT.md says how.
            try BlockSurgery.reindexAll(db)
        }
        let found = try errors(path)
        #expect(found.contains { $0.rule == "twoKeysForDevice" }, "\(found.map(\.rule))")
        #expect(found.contains { $0.rule == "untrustedKey" })
    }

    @Test func anAllZeroKeyAndSignatureAreRefused() throws {
        let path = try copy("zero.sqlite")
        try DatabaseQueue(path: path).writeWithoutTransaction { db in
            try db.execute(sql: "UPDATE trees SET public_key = zeroblob(32) WHERE device = 'A'")
            try db.execute(sql: "UPDATE tree_heads SET signature = zeroblob(64) WHERE tree_id = (SELECT id FROM trees WHERE device = 'A')")
        }
        // Even trusting the zero key, nothing it "signs" counts.
        var trusted = devices.trusted
        trusted["A"] = [UInt8](repeating: 0, count: 32)
        var auditor = Auditor(games: .standard)
        auditor.rerunsExtensions = false
        let found = try auditor.audit(try EventStore(path: path, access: .readOnly), trusting: trusted).filter { $0.severity == .error }
        #expect(found.filter { $0.rule == "badSignature" }.count >= 6, "\(found.map(\.rule))")
    }

    // Row 5: rollback needs a head known from outside the file.
    @Test func aRollbackPassesAloneAndIsCaughtByAKnownHead() throws {
        let path = folder.path("phone.sqlite")
        let phone = try EventStore(path: path)
        let keys = TestKeys()
        try playMixedGames(3, into: phone, seed: 11, keys: keys)
        let backup = folder.path("backup.sqlite")
        try DatabaseQueue(path: path).writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try FileManager.default.copyItem(atPath: path, toPath: backup)
        try playMixedGames(5, into: phone, seed: 11, keys: keys)  // the first three are already there: two more
        let known = try phone.deviceTrees().compactMap(\.heads.last)
        var auditor = Auditor(games: .standard)
        auditor.rerunsExtensions = false
        // The backup is a consistent earlier state: alone it verifies.
        let alone = try auditor.audit(try EventStore(path: backup, access: .readOnly), trusting: keys.trusted).filter { $0.severity == .error }
        #expect(alone.isEmpty, "\(alone.map(\.found))")
        // Against the heads the phone had signed since, it is behind.
        let behind = try auditor.report(try EventStore(path: backup, access: .readOnly), trusting: keys.trusted, known: known)
            .findings.filter { $0.severity == .error }
        #expect(behind.filter { $0.rule == "rolledBack" }.count == 2, "\(behind.map(\.found))")
        // And the phone's own log reaches them.
        #expect(try auditor.report(phone, trusting: keys.trusted, known: known).findings.filter { $0.severity == .error }.isEmpty)
    }

    @Test func aHistoryRewrittenWithTheDevicesOwnKeyContradictsAKnownHead() throws {
        let path = try copy("rewritten.sqlite")
        let known = try EventStore(path: clean, access: .readOnly).deviceTrees().compactMap(\.heads.last)
        _ = try edit(path, streamOf: "A")
        // The device's own key re-signs its edited history (a phone that was taken over).
        try TreeForger(path: path).rebuild(device: "A", signingWith: devices.key("A"))
        #expect(try errors(path).filter { $0.check == .signature }.isEmpty)
        let found = try errors(path, known: known)
        #expect(found.contains { $0.rule == "forkedHistory" && $0.device == "A" }, "\(found.map(\.rule))")
    }

    // Row 6: one game's verdict is proven too.
    @Test func verifyGameChecksTheGamesEventsAgainstTheirSignedHeads() throws {
        let path = try copy("game.sqlite")
        let position = try edit(path)
        let store = try EventStore(path: path, access: .readOnly)
        let stream = try #require(try store.event(at: position, verify: false)?.stream)
        let index = try GameIndex(store: store)
        let conversation = try #require(try index.conversations().first { try index.streams(of: $0).contains(stream) })
        let found = try errors(path, game: conversation.uuid.uuidString)
        #expect(found.contains { $0.rule == "changedEvent" }, "\(found.map(\.rule))")
        // The clean log's same game: no error.
        #expect(try errors(clean, game: conversation.uuid.uuidString).isEmpty)
    }
}

/// Hostile files: what a log's file can hold besides forged events.
@Suite(.serialized) struct HostileFileTests {
    @Test func snapshotsThatInflateToGigabytesAreSkippedAndReported() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("bomb.sqlite")
        try playMixedGames(2, into: try EventStore(path: path), seed: 5)
        let conversation = try #require(try GameIndex(store: try EventStore(path: path, access: .readOnly)).conversations().first)
        // 20 rows, each 64 MB of zeros deflated to some 64 KB.
        let bomb = try RawDeflater(level: 9).compress([UInt8](repeating: 0, count: 64 << 20))
        #expect(bomb.count < 100_000)
        try DatabaseQueue(path: path).writeWithoutTransaction { db in
            for step in 1...20 {
                try db.execute(sql: "INSERT INTO snapshots VALUES (?, ?, ?, 1, zeroblob(32), ?)",
                               arguments: [withUnsafeBytes(of: conversation.uuid.uuid) { Data($0) }, ConversationState.projectionVersion, step, Data(bomb)])
            }
        }
        let store = try EventStore(path: path, access: .readOnly)
        #expect(try store.snapshots(conversation: conversation.uuid, projectionVersion: ConversationState.projectionVersion).isEmpty)
        var auditor = Auditor(games: .standard)
        auditor.rerunsExtensions = false
        let found = try auditor.audit(store).filter { $0.check == .snapshot }
        #expect(found.count == 1 && found[0].found.hasPrefix("20 that do not"), "\(found)")
    }
}

extension HostileFileTests {
    /// An import that fails in its last batch (here: the disk is full) keeps nothing of
    /// the earlier batches: no event, no head, no checkpoint.
    @Test func anImportThatFailsLateStoresNothing() throws {
        let folder = try TemporaryFolder()
        let source = try EventStore(path: folder.path("source.sqlite"))
        try playMixedGames(16, into: source, seed: 9)
        var text = ""
        _ = try Interchange.export(from: source) { text += $0 + "\n" }
        let total = try source.count().events
        #expect(total > 1_000)
        // Room for the schema and some of the events, not all.
        let target = try EventStore(path: folder.path("small.sqlite"), maximumSize: 360_000)
        nonisolated(unsafe) var batches = 0
        #expect(throws: EventStoreError.self) {
            _ = try Interchange.import(files: [ExportFile(name: "all.jsonl", contents: Data(text.utf8))], into: target, batchSize: 100) { stage, _, _ in
                if case .storing = stage { batches += 1 }
            }
        }
        #expect(batches >= 3) // several batches went in before the disk was full
        #expect(try target.count().events == 0)
        #expect(try target.deviceTrees().isEmpty)
    }
}

extension AttackTests {
    /// One game exported alone carries a multiproof of its devices' other events: it
    /// imports and verifies under the trusted keys; a changed proof hash is refused.
    @Test func oneGameExportedAloneProvesItselfAndAForgedProofIsRefused() throws {
        let store = try EventStore(path: clean, access: .readOnly)
        let index = try GameIndex(store: store)
        let conversation = try #require(try index.conversations().dropFirst(2).first)
        var lines: [String] = []
        _ = try Interchange.export(from: store, streams: try index.streams(of: conversation)) { lines.append($0) }
        let trees = lines.filter { $0.hasPrefix(#"{"tree":"#) }
        #expect(trees.count == 2 && trees.allSatisfy { $0.contains(#""nodes":[{"#) })
        #expect(lines.filter { $0.hasPrefix(#"{"head":"#) }.count == 2)
        let target = try EventStore(path: folder.path("one-game.sqlite"))
        _ = try Interchange.import(files: [ExportFile(name: "game.jsonl", contents: Data(lines.joined(separator: "\n").utf8))], into: target)
        // Honestly partial: it verifies when the auditor accepts a partial log, naming the
        // leaves it does not cover; as a whole log it is not ok.
        var auditor = Auditor(games: .standard)
        auditor.rerunsExtensions = false
        auditor.acceptsPartialLog = true
        let partial = try auditor.report(try EventStore(path: target.path, access: .readOnly), trusting: devices.trusted).findings
        #expect(!partial.contains { $0.severity == .error }, "\(partial.map(\.found))")
        #expect(partial.filter { $0.rule == "absentLeaves" && $0.severity == .warning }.count == 2)
        #expect(try errors(target.path).filter { $0.rule == "absentLeaves" }.count == 2)
        // One proof hash changed: the head's root no longer comes out.
        var forged = lines
        let at = try #require(forged.firstIndex { $0.hasPrefix(#"{"tree":"#) })
        let hash = try #require(forged[at].range(of: #"(?<="hash":")[0-9a-f]"#, options: .regularExpression))
        forged[at].replaceSubrange(hash, with: forged[at][hash] == "0" ? "1" : "0")
        #expect(throws: InterchangeError.self) {
            _ = try Interchange.check(files: [ExportFile(name: "forged.jsonl", contents: Data(forged.joined(separator: "\n").utf8))])
        }
    }
}

extension AttackTests {
    /// The tiles a log keeps for one game's proof are derived: a changed one is reported
    /// by `verify`, and never lets a changed game event through `verify GAME`.
    @Test func aChangedTileIsReportedAndHidesNoEdit() throws {
        let path = try copy("tile.sqlite")
        let tiles = try DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM tree_nodes") ?? 0 }
        // One per aligned subtree of 256 leaves or more.
        let expected = try EventStore(path: path, access: .readOnly).deviceTrees().reduce(0) { sum, tree in
            sum + stride(from: 8, to: 62, by: 1).reduce(0) { $0 + Int(tree.size >> Int64($1)) }
        }
        #expect(tiles == expected && tiles >= 1)
        try DatabaseQueue(path: path).writeWithoutTransaction { db in
            try db.execute(sql: "UPDATE tree_nodes SET hash = zeroblob(32) WHERE (tree_id, lo) = (SELECT tree_id, lo FROM tree_nodes ORDER BY tree_id, lo LIMIT 1)")
        }
        #expect(try errors(path).contains { $0.rule == "wrongStreamHead" })
        // An edited game whose tiles are left alone: its own proof recomputes its leaves.
        let edited = try copy("tile-edit.sqlite")
        let position = try edit(edited)
        let store = try EventStore(path: edited, access: .readOnly)
        let stream = try #require(try store.event(at: position, verify: false)?.stream)
        let index = try GameIndex(store: store)
        let conversation = try #require(try index.conversations().first { try index.streams(of: $0).contains(stream) })
        #expect(try errors(edited, game: conversation.uuid.uuidString).contains { $0.rule == "changedEvent" })
    }
}

extension AttackTests {
    /// A device's whole history removed leaves a consistent log of the other device: a
    /// warning names the trusted device that signed nothing, a known head of it is an error.
    @Test func aWholeDeviceRemovedIsNamedAndAKnownHeadCatchesIt() throws {
        let path = try copy("nob.sqlite")
        let known = try EventStore(path: clean, access: .readOnly).deviceTrees().compactMap(\.heads.last)
        try LogForger(path: path).delete(streams: Set(try recordings(of: "B", in: path)))
        try DatabaseQueue(path: path).writeWithoutTransaction { db in
            let tree = try Int64.fetchOne(db, sql: "SELECT id FROM trees WHERE device = 'B'")!
            try db.execute(sql: "DELETE FROM tree_nodes WHERE tree_id = ?; DELETE FROM tree_heads WHERE tree_id = ?; DELETE FROM trees WHERE id = ?",
                           arguments: [tree, tree, tree])
        }
        let found = try audit(path)
        #expect(!found.contains { $0.severity == .error && $0.check == .signature }, "\(found.filter { $0.severity == .error }.map(\.rule))")
        #expect(found.contains { $0.device == "B" && $0.found.contains("holds nothing signed by trusted device B") && $0.severity == .warning })
        let behind = try errors(path, known: known)
        #expect(behind.contains { $0.rule == "rolledBack" && $0.device == "B" }, "\(behind.map(\.rule))")
    }
}

extension AttackTests {
    // Issue 36, item 3: `verify GAME` uses every head it is given.
    @Test func verifyGameUsesEveryKnownHeadOfALogReSignedWithTheForgersKeys() throws {
        let genuine = try EventStore(path: clean, access: .readOnly).deviceTrees().compactMap(\.heads.last)
        #expect(genuine.count == 2)
        let path = try copy("resigned-game.sqlite")
        _ = try edit(path)
        for device in ["A", "B"] { try TreeForger(path: path).rebuild(device: device, signingWith: try DeviceKey.random(device: device)) }
        // Without --trust, the log's own (forged) keys verify; the genuine heads do not.
        let whole = try errors(path, trusted: false, known: genuine)
        #expect(whole.count >= 2, "\(whole.map(\.rule))")
        let game = try #require(try GameIndex(store: try EventStore(path: path, access: .readOnly)).conversations().first)
        let one = try errors(path, trusted: false, known: genuine, game: game.uuid.uuidString)
        #expect(one.filter { $0.rule == "forkedHistory" }.count == 2, "\(one.map(\.found))")
    }

    // Issue 36, item 4: a test key signs nothing under trust, whatever its heads say.
    @Test func aTestKeyWhoseMarkWasRemovedStillSignsNothingUnderTrust() throws {
        let path = folder.path("unmarked.sqlite")
        let recorder = Recorder(store: try EventStore(path: path), clock: FixedClock(), seed: 3,
                                keys: { try? DeviceKey.insecureTestKey(device: $0.name) })
        try Simulator(recorder: recorder, games: .standard, seed: 3).play("tictactoe")
        var keys: [String: [UInt8]] = [:]
        for device in ["A", "B"] {
            let test = try DeviceKey.insecureTestKey(device: device)
            // The same private key, without the mark: heads signed with it say nothing of tests.
            let unmarked = try DeviceKey(device: device, privateKey: test.privateKey)
            #expect(!unmarked.isTestKey)
            try TreeForger(path: path).rebuild(device: device, signingWith: unmarked)
            keys[device] = test.publicKey
        }
        #expect(try EventStore(path: path, access: .readOnly).deviceTrees().allSatisfy { $0.heads.allSatisfy { !$0.isTestKey } })
        var auditor = Auditor(games: .standard)
        auditor.rerunsExtensions = false
        let found = try auditor.audit(try EventStore(path: path, access: .readOnly), trusting: keys)
        #expect(found.filter { $0.rule == "testKey" && $0.severity == .error }.count == 2, "\(found.map(\.rule))")
        #expect(found.filter { $0.rule == "unsignedTail" && $0.severity == .error }.count == 2, "\(found.map(\.rule))")
        #expect(DeviceKey.isPublishedTestKey(keys["A"]!, device: "A") && !DeviceKey.isPublishedTestKey(devices.trusted["A"]!, device: "A"))
    }
}

extension AttackTests {
    /// The game's conversation with the most recordings, and its recordings by first position.
    func conversationWithRecordings(in path: String) throws -> (conversation: String, streams: [UUID]) {
        let store = try EventStore(path: path, access: .readOnly)
        let index = try GameIndex(store: store)
        var best: (String, [UUID])?
        for conversation in try index.conversations() {
            let streams = try index.streams(of: conversation)
            let ordered = try streams.map { ($0, try store.firstEvent(ofStream: $0)?.position ?? 0) }.sorted { $0.1 < $1.1 }.map(\.0)
            if ordered.count > (best?.1.count ?? 0) { best = (conversation.uuid.uuidString, ordered) }
        }
        return try #require(best)
    }

    // Issue 36, item 2: a hidden block index.
    @Test func verifyGameSeesARecordingsTailWhoseIndexRowsWereRemoved() throws {
        // Recordings over more than one block, each with its conversation's recordings.
        let index = try GameIndex(store: try EventStore(path: clean, access: .readOnly))
        var candidates: [(conversation: String, streams: Set<UUID>, stream: UUID)] = []
        try DatabaseQueue(path: clean).read { db in
            for conversation in try index.conversations() {
                let streams = try index.streams(of: conversation)
                for stream in streams.sorted(by: { $0.uuidString < $1.uuidString }) {
                    let blocks = try Int.fetchOne(db, sql: "SELECT count(*) FROM block_streams b JOIN streams s ON s.id = b.stream_id WHERE s.uuid = ?",
                                                  arguments: [withUnsafeBytes(of: stream.uuid) { Data($0) }]) ?? 0
                    if blocks >= 2 { candidates.append((conversation.uuid.uuidString, streams, stream)) }
                }
            }
        }
        #expect(!candidates.isEmpty)
        var hidden = 0
        for (number, (conversation, streams, victim)) in candidates.enumerated() {
            let path = try copy("hidden-tail-\(number).sqlite")
            let before = try EventStore(path: path, access: .readOnly).events(EventQuery(streams: streams)).count
            // The recording's last block's index row goes, and the recording's row is made to
            // agree with what is left (its version and chain head, which no key signs).
            try DatabaseQueue(path: path).write { db in
                let id = try #require(try Int64.fetchOne(db, sql: "SELECT id FROM streams WHERE uuid = ?", arguments: [withUnsafeBytes(of: victim.uuid) { Data($0) }]))
                let blocks = try Int64.fetchAll(db, sql: "SELECT block FROM block_streams WHERE stream_id = ? ORDER BY block", arguments: [id])
                try db.execute(sql: "DELETE FROM block_streams WHERE stream_id = ? AND block = ?", arguments: [id, blocks.last!])
                let lastVersion = try #require(try Int64.fetchOne(db, sql: "SELECT max(last_version) FROM block_streams WHERE stream_id = ?", arguments: [id]))
                let head = try #require(try EventStore(path: path, access: .readOnly).streamHash(victim, at: lastVersion))
                try db.execute(sql: "UPDATE streams SET version = ?, head = ? WHERE id = ?", arguments: [lastVersion, Data(head), id])
            }
            let found = try errors(path, game: conversation)
            // The changed index row is named whatever it hides.
            #expect(found.contains { $0.found.contains("block_streams does not say") }, "\(found.map(\.found))")
            // Where the game's own reads lost events (the block is read for no other of its
            // recordings), each lost event is named.
            let after = try EventStore(path: path, access: .readOnly).events(EventQuery(streams: streams)).count
            if after < before {
                hidden += 1
                #expect(found.filter { $0.rule == "index-lists-every-event" }.count == before - after, "\(found.map(\.found))")
            }
        }
        #expect(hidden > 0)
    }

    @Test func verifyGameSeesALaterRecordingOfTheConversationTheCatalogNoLongerLists() throws {
        let path = try copy("hidden-recording.sqlite")
        let (conversation, streams) = try conversationWithRecordings(in: path)
        #expect(streams.count >= 2)
        let victim = try #require(streams.last)
        try DatabaseQueue(path: path).write { db in
            let id = try #require(try Int64.fetchOne(db, sql: "SELECT id FROM streams WHERE uuid = ?", arguments: [withUnsafeBytes(of: victim.uuid) { Data($0) }]))
            try db.execute(sql: "DELETE FROM catalog WHERE stream_id = ?", arguments: [id])
        }
        // Before: the game's reads did not see the recording, and nothing said so.
        let found = try errors(path, game: conversation)
        #expect(found.contains { $0.rule == "catalog-lists-every-recording" }, "\(found.map(\.rule))")
        // Its block index rows removed too: its first event is read on the way, not through the index.
        let deeper = try copy("hidden-recording-index.sqlite")
        try DatabaseQueue(path: deeper).write { db in
            let id = try #require(try Int64.fetchOne(db, sql: "SELECT id FROM streams WHERE uuid = ?", arguments: [withUnsafeBytes(of: victim.uuid) { Data($0) }]))
            try db.execute(sql: "DELETE FROM catalog WHERE stream_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM block_streams WHERE stream_id = ?", arguments: [id])
        }
        let deep = try errors(deeper, game: conversation)
        #expect(deep.contains { $0.rule == "catalog-lists-every-recording" }, "\(deep.map(\.found))")
    }
}

extension AttackTests {
    // Issue 36, item 10: a changed event is named by the batch it lies in, from its start.
    @Test func aChangedEventIsNamedByTheRangeOfPositionsItLiesIn() throws {
        let path = try copy("named.sqlite")
        let edited = try edit(path)
        let changed = try #require(try errors(path).first { $0.rule == "changedEvent" })
        let range = try #require(changed.found.firstMatch(of: /positions (\d+) to (\d+)/))
        let (first, last) = (Int64(range.1)!, Int64(range.2)!)
        #expect(first <= edited && edited <= last, "\(edited) not in \(first)...\(last): \(changed.found)")
        #expect(changed.position == first)
    }
}

extension AttackTests {
    // Issue 36, item 10: integrity findings name the game of the event at fault.
    @Test func integrityFindingsNameTheirGame() throws {
        let path = try copy("integrity-game.sqlite")
        let store = try EventStore(path: path, access: .readOnly)
        let index = try GameIndex(store: store)
        let conversation = try #require(try index.conversations().last)
        let victim = try #require(try store.events(EventQuery(streams: try index.streams(of: conversation))).dropFirst(3).first)
        try BlockSurgery.flipPayloadByte(path, position: victim.position)
        let found = try errors(path).filter { $0.check == .integrity }
        #expect(!found.isEmpty)
        #expect(found.contains { $0.position == victim.position && $0.game == conversation.uuid.uuidString.lowercased() }, "\(found.map(\.found))")
    }
}
