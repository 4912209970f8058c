import Collector
import EventStore
import Foundation
import Interchange
@testable import SharedStore
import TestSupport
import Testing

/// A write that follows another still under way (`SharedStore.writeNatively(following:_:)`):
/// planned and sent before the other commits, kept only if the other committed the tail it
/// started from and no write came between, and then the store holds exactly what writing
/// the two in turn makes. On a real PostgreSQL, two transactions open at once.
///
/// Five minutes a test at most: a write that never ends fails its test, by name, rather
/// than holding the whole run until CI's limit.
@Suite(.serialized, .timeLimit(.minutes(5))) struct FollowingWriteTests {
    struct Failure: Error { var text: String; init(_ text: String) { self.text = text } }

    /// Four devices' uploads (two pairs of phones that played each other), each a plan of
    /// its own device's recordings: no two share a device or a recording.
    static func plans(in folder: TemporaryFolder, store: SharedStore) async throws -> [ImportPlan] {
        let keys = TestKeys()
        var plans: [ImportPlan] = []
        for pair in 0..<2 {
            let names = ("F\(pair)a", "F\(pair)b")
            let phones = try recordPhones(2, in: folder.path("pair\(pair)"), seed: UInt64(120 + pair), keys: keys, devices: names)
            for path in [phones.a, phones.b] {
                let log = try EventStore(path: path, access: .readOnly)
                let key = try #require(try log.deviceTrees().first?.owner.publicKey)
                guard case .send(let upload) = try Interchange.upload(from: log, tree: key, accepted: 0) else { throw Failure("nothing to upload") }
                plans.append(try Interchange.check(files: [ExportFile(name: "upload", contents: Data(upload.body.utf8))]))
            }
        }
        #expect(Set(plans.map(\.recordings)).count == 4 && plans.allSatisfy { !$0.recordings.isEmpty })
        return plans
    }

    /// Everything a write leaves in the store's tables, row by row (the payloads by digest),
    /// with the store's revision: what two stores written alike hold alike.
    static func contents(_ url: String) throws -> String {
        let server = try PostgresServer.shared()
        return try [
            "SELECT revision FROM store_state",
            "SELECT string_agg(concat_ws(':', position, encode(event_id, 'hex'), stream_id, stream_version, type_id, type_version, recorded_at, codec, dictionary_id, raw_size, md5(payload), encode(hash, 'hex'), leaf, rev), ',' ORDER BY position) FROM events",
            "SELECT string_agg(concat_ws(':', id, encode(uuid, 'hex'), version, encode(head, 'hex'), tree_id, rev), ',' ORDER BY id) FROM streams",
            "SELECT string_agg(concat_ws(':', id, encode(public_key, 'hex'), device, size, encode(frontier, 'hex'), rev), ',' ORDER BY id) FROM trees",
            "SELECT string_agg(concat_ws(':', tree_id, size, encode(root, 'hex'), rev), ',' ORDER BY tree_id, size) FROM tree_heads",
            "SELECT string_agg(concat_ws(':', tree_id, lo, hi, encode(hash, 'hex'), rev), ',' ORDER BY tree_id, lo, hi) FROM tree_nodes",
            "SELECT string_agg(concat_ws(':', kind, encode(key, 'hex'), stream_id, position, rev), ',' ORDER BY kind, key, stream_id) FROM catalog",
            "SELECT string_agg(concat_ws(':', through, rev), ',') FROM catalog_coverage",
            "SELECT string_agg(concat_ws(':', id, name, rev), ',' ORDER BY id) FROM event_types",
        ].map { try server.psql(url, $0) }.joined(separator: "\n")
    }

    /// Transactions a write left open on the store's database.
    static func openTransactions(_ url: String) throws -> String {
        try PostgresServer.shared().psql(url, "SELECT count(*) FROM pg_stat_activity WHERE state LIKE 'idle in transaction%' AND datname = current_database()")
    }

    /// The write of `plan` the usual way (the store's lock held throughout), with the tail it committed.
    static func write(_ plan: ImportPlan, into store: SharedStore) async throws -> SharedStore.WriteTail {
        let tail = try await store.writeNativelyReportingTail { writer in _ = try Interchange.import(plan, into: writer) }.tail
        return try #require(tail)
    }

    @Test func aWriteFollowingOneStillOpenIsKeptAndTheStoreIsWhatWritingThemInTurnMakes() async throws {
        let folder = try TemporaryFolder()
        let (store, url) = try await SharedStoreTests.makeStore(folder)
        let plans = try await Self.plans(in: folder, store: store)

        // The two writes in turn, in a store of their own.
        let (inTurn, inTurnURL) = try await SharedStoreTests.makeStore(try TemporaryFolder())
        _ = try await Self.write(plans[0], into: inTurn)
        _ = try await Self.write(plans[1], into: inTurn)

        // The first write announces its tail once its import is sent; the second starts
        // from it then, and sends all its rows while the first still holds its transaction
        // (the first waits for that before it commits).
        let firstEnded = Eventual<SharedStore.WriteTail?>()
        let followerSent = DispatchSemaphore(value: 0)
        let follower = NSLockedValue<Task<(result: Int, tail: SharedStore.WriteTail?)?, Error>?>(nil)
        let announced = NSLockedValue<SharedStore.WriteTail?>(nil)
        let first = try await store.writeNativelyReportingTail { writer -> Int in
            writer.whenPlanned = { tail in
                announced.withLock { $0 = tail }
                follower.withLock {
                    $0 = Task {
                        try await store.writeNatively(following: SharedStore.Followed(tail: tail, outcome: { await firstEnded.value })) { writer in
                            // In batches of 16: the catalog's coverage moves once a batch, each
                            // held for the commit, and the statements of one batch see the last's.
                            let summary = try Interchange.import(plans[1], into: writer, batchSize: 16)
                            try writer.flush()
                            followerSent.signal()
                            return summary.stored
                        }
                    }
                }
            }
            writer.announcesPlannedTail = true
            let stored = try #require(try writer.assumingNewEvents { try Interchange.import(plans[0], into: writer) }).stored
            // Nothing of the follower is visible yet: both transactions are open. (Bounded:
            // a follower that threw never signals, and this write would wait for good.)
            if followerSent.wait(timeout: .now() + 120) == .timedOut { Issue.record("the follower sent nothing within 120 s") }
            return stored
        }
        firstEnded.set(first.tail)
        #expect(first.result == plans[0].count)
        #expect(announced.withLock { $0 } == first.tail)
        let task = try #require(follower.withLock { $0 })
        let kept = try #require(try await task.value, "the follower was not kept")
        #expect(kept.result == plans[1].count && kept.result > 48)
        #expect(kept.tail?.revision == (first.tail?.revision ?? 0) + 1)

        #expect(try Self.contents(url) == Self.contents(inTurnURL))
        #expect(try Self.openTransactions(url) == "0")
        let copy = try await store.localCopy(fresh: true)
        defer { copy.release() }
        let problems = try EventStore(path: copy.path, access: .readOnly).verifyProofs().problems
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func aFollowingWriteIsKeptOnlyIfTheOneBeforeCommittedItsTailAndNoneCameBetween() async throws {
        let folder = try TemporaryFolder()
        let (store, url) = try await SharedStoreTests.makeStore(folder)
        let plans = try await Self.plans(in: folder, store: store)
        let tail = try await Self.write(plans[0], into: store)
        let before = try Self.contents(url)

        func follow(_ tail: SharedStore.WriteTail, committed: SharedStore.WriteTail?, _ plan: ImportPlan,
                    failing: Bool = false) async throws -> (result: Int, tail: SharedStore.WriteTail?)? {
            try await store.writeNatively(following: SharedStore.Followed(tail: tail, outcome: { committed })) { writer in
                // As a collector imports a device's new events: taken as new, not looked up.
                guard let summary = try writer.assumingNewEvents({ try Interchange.import(plan, into: writer) }) else { throw Failure("not new") }
                if failing { throw Failure("the body gave up") }
                return summary.stored
            }
        }
        // The write before failed: nothing kept.
        #expect(try await follow(tail, committed: nil, plans[1]) == nil)
        #expect(try Self.contents(url) == before)
        // It committed another tail than it announced.
        var other = tail
        other.lastHash = [UInt8](repeating: 7, count: 32)
        #expect(try await follow(tail, committed: other, plans[1]) == nil)
        #expect(try Self.contents(url) == before)
        // The body threw.
        #expect(try await follow(tail, committed: tail, plans[1], failing: true) == nil)
        #expect(try Self.contents(url) == before)
        // Its events are stored already: its rows are refused, and it is no verdict.
        #expect(try await follow(tail, committed: tail, plans[0]) == nil)
        #expect(try Self.contents(url) == before)
        #expect(try Self.openTransactions(url) == "0")

        // Another write came between: the revision moved past the tail's.
        let between = try await Self.write(plans[2], into: store)
        let afterBetween = try Self.contents(url)
        #expect(afterBetween != before)
        #expect(try await follow(tail, committed: tail, plans[1]) == nil)
        #expect(try Self.contents(url) == afterBetween)

        // From the store's own tail, it is kept, and a write may follow it in turn.
        let kept = try #require(try await follow(between, committed: between, plans[1]))
        let next = try #require(kept.tail)
        let last = try #require(try await follow(next, committed: next, plans[3]))
        #expect(kept.result == plans[1].count && last.result == plans[3].count)
        #expect(try Self.openTransactions(url) == "0")

        // The same four writes in turn, in a store of their own: the same rows.
        let (inTurn, inTurnURL) = try await SharedStoreTests.makeStore(try TemporaryFolder())
        for index in [0, 2, 1, 3] { _ = try await Self.write(plans[index], into: inTurn) }
        #expect(try Self.contents(url) == Self.contents(inTurnURL))
    }

    /// A write whose announced import is undone (one of its event ids is stored already,
    /// which only the events' unique index finds, after the import was sent) ends with
    /// nothing kept, rather than importing again under rows a follower may hold.
    @Test func aWriteWhoseAnnouncedImportIsUndoneKeepsNothing() async throws {
        let folder = try TemporaryFolder()
        let (store, url) = try await SharedStoreTests.makeStore(folder)
        let keys = TestKeys()
        let phones = try recordPhones(2, in: folder.path("phones"), seed: 130, keys: keys, devices: ("U", "V"))
        func plan(_ path: String, _ device: String) throws -> ImportPlan {
            guard case .send(let upload) = try Interchange.upload(from: try EventStore(path: path, access: .readOnly),
                                                                  tree: keys.key(device).publicKey, accepted: 0) else { throw Failure("nothing to upload") }
            return try Interchange.check(files: [ExportFile(name: "upload", contents: Data(upload.body.utf8))])
        }
        _ = try await Self.write(try plan(phones.a, "U"), into: store)
        let before = try Self.contents(url)
        // V's log, signed by V, but one event carries the id of one of U's.
        let borrowed = try #require(try EventStore(path: phones.a, access: .readOnly).events().dropFirst(5).first).id
        let original = try EventStore(path: phones.b, access: .readOnly).events()
        let forgedPath = folder.path("forged-V.sqlite")
        let key = keys.key("V")
        try EventStore(path: forgedPath).append(original.enumerated().map { index, event in
            NewEvent(id: index == 7 ? borrowed : event.id, stream: event.stream, type: event.type, typeVersion: event.typeVersion,
                     recordedAt: event.recordedAt, payload: event.payload)
        }, signing: { _ in key })
        let forged = try plan(forgedPath, "V")

        let announced = NSLockedValue(0)
        await #expect(throws: PostgresLogWriter.AnnouncedTailUndone.self) {
            try await store.writeNatively { writer in
                writer.whenPlanned = { _ in announced.withLock { $0 += 1 } }
                writer.announcesPlannedTail = true
                _ = try writer.assumingNewEvents { try Interchange.import(forged, into: writer) }
                Issue.record("the write went on after its announced import was undone")
            }
        }
        #expect(announced.withLock { $0 } == 1)
        #expect(try Self.contents(url) == before)
        #expect(try Self.openTransactions(url) == "0")

        // Not announced, the same import falls back (nil) and the write goes on; the
        // careful import then names the id.
        await #expect(throws: InterchangeError.self) {
            try await store.writeNatively { writer in
                #expect(try writer.assumingNewEvents { try Interchange.import(forged, into: writer) } == nil)
                _ = try Interchange.import(forged, into: writer)
            }
        }
        #expect(try Self.contents(url) == before)
    }
}
