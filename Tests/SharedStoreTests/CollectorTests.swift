import Audit
import Collector
import EventStore
import Foundation
import Games
import GRDB
import Interchange
import SharedStore
import TestSupport
import Testing

/// The collector against attacks on what it witnesses, on a real PostgreSQL: every
/// refused upload leaves the store exactly as it was.
///
/// Five minutes a test at most: a write that never ends fails its test, by name, rather
/// than holding the whole run until CI's limit.
@Suite(.serialized, .timeLimit(.minutes(5))) struct CollectorTests {
    struct Setup {
        let folder: TemporaryFolder
        let url: String
        let store: SharedStore
        let collector: Collector
        let keys = TestKeys()

        init() async throws {
            folder = try TemporaryFolder()
            url = try PostgresServer.shared().makeDatabase()
            store = try SharedStore(url: url, cacheFolder: folder.url.appending(path: "cache"))
            _ = try await store.migrate()
            collector = Collector(store: store, witness: "collector.test/gamelog", witnessKey: try DeviceKey.random(device: "witness"))
        }

        func enroll(_ device: String) async throws {
            let key = keys.key(device).publicKey
            let outcome = try await store.enroll(device: device, publicKey: key)
            #expect(outcome == .enrolled)
        }

        /// The store's revision and event count: what a refused upload must leave alone.
        func state() throws -> String {
            try PostgresServer.shared().psql(url, "SELECT revision || '/' || (SELECT count(*) FROM events) || '/' || (SELECT count(*) FROM cosignatures) FROM store_state")
        }

        /// What the collector accepted of the tree of `device`.
        func accepted(_ device: String) async throws -> Int64 {
            let key = keys.key(device).publicKey
            return try await store.latestHeads(publicKey: key).first?.head.size ?? 0
        }

        func upload(_ path: String, _ device: String, accepted: Int64? = nil) async throws -> DeviceUpload {
            let log = try EventStore(path: path, access: .readOnly)
            let known: Int64
            if let accepted { known = accepted } else { known = try await self.accepted(device) }
            guard case .send(let upload) = try Interchange.upload(from: log, tree: keys.key(device).publicKey, accepted: known) else {
                throw Failure("nothing to upload")
            }
            return upload
        }

        func accept(_ body: String) async throws -> Collector.Accepted {
            try await collector.accept(Data(body.utf8))
        }

        /// Asserts the upload is refused with `status` and a reason containing `reason`, storing nothing.
        func refuses(_ body: String, status: Int, _ reason: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let before = try state()
            do {
                _ = try await accept(body)
                Issue.record("accepted an upload that should be refused (\(reason))", sourceLocation: sourceLocation)
            } catch let refusal as Collector.Refusal {
                #expect(refusal.status == status, "\(refusal)", sourceLocation: sourceLocation)
                #expect(refusal.description.contains(reason), "\(refusal)", sourceLocation: sourceLocation)
            }
            #expect(try state() == before, sourceLocation: sourceLocation)
        }
    }

    struct Failure: Error { var text: String; init(_ text: String) { self.text = text } }

    /// Export lines with every event line's stream hash recomputed from its content, as a
    /// forger who read docs/FORMAT.md would (streams starting at version 1).
    static func rechained(_ lines: [String]) throws -> [String] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var chains: [UUID: [UInt8]] = [:], scratch: [UInt8] = []
        return try lines.map { line in
            guard line.hasPrefix("{\"id\"") else { return line }
            var event = try JSONDecoder().decode(ExportedEvent.self, from: Data(line.utf8))
            ChainHash.envelope(position: 0, id: event.id, stream: event.stream, streamVersion: event.streamVersion, type: event.type,
                               typeVersion: event.typeVersion, recordedAt: Timestamp(microsecondsSince1970: event.recordedAt),
                               payload: Array(event.payload.utf8), into: &scratch)
            let hash = ChainHash.streamHash(previous: chains[event.stream] ?? ChainHash.genesis, envelope: scratch)
            chains[event.stream] = hash
            event.streamHash = Hex.string(hash)
            return String(decoding: try encoder.encode(event), as: UTF8.self)
        }
    }

    @Test func phonesPushTheirLogsAndGetCosignedHeads() async throws {
        let setup = try await Setup()
        let phones = try recordPhones(4, in: setup.folder.path("phones"), seed: 3, keys: setup.keys)
        try await setup.enroll("A")
        try await setup.enroll("B")
        var sent = 0
        for (path, device) in [(phones.a, "A"), (phones.b, "B")] {
            let upload = try await setup.upload(path, device)
            #expect(upload.from == 0 && upload.events > 50)
            let accepted = try await setup.accept(upload.body)
            #expect(accepted.stored == upload.events)
            #expect(accepted.size == upload.to)
            sent += upload.events
            // The cosignature verifies for the device's head, under the witness's key.
            let head = try EventStore(path: path, access: .readOnly).deviceTrees().first { $0.owner.device == device }!.heads.last!
            let cosignature = Cosignature(line: accepted.cosignature, witnessKey: setup.collector.witnessKey.publicKey)
            #expect(cosignature?.isValid(for: head) == true)
            #expect(accepted.note.hasPrefix(head.note))
            // Sending it again adds nothing and writes nothing.
            let before = try setup.state()
            await #expect(try setup.accept(upload.body).stored == 0)
            #expect(try setup.state() == before)
        }
        #expect(try PostgresServer.shared().psql(setup.url, "SELECT count(*) FROM events") == "\(sent)")

        // More games later: only the new events travel, proven to extend the accepted tree.
        try recordPhones(7, in: setup.folder.path("phones"), seed: 3, keys: setup.keys)
        let next = try await setup.upload(phones.a, "A")
        await #expect(next.from == (try setup.accepted("A")) && next.events > 0)
        #expect(next.body.contains("\"nodes\":[{"))
        await #expect(try setup.accept(next.body).stored == next.events)

        // The store's copy verifies, with the devices' keys trusted.
        let copy = try await setup.store.localCopy(fresh: true)
        defer { copy.release() }
        let log = try EventStore(path: copy.path, access: .readOnly)
        let report = try log.verifyProofs(trusting: setup.keys.trusted)
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(try log.cosignedHeads().count == 3)
        #expect(try log.invalidCosignatures().isEmpty)

        // A cosignature row changed in a copy of the log: verify names it, and it is no
        // longer shown as the witness's.
        let tampered = setup.folder.path("tampered.sqlite")
        try FileManager.default.copyItem(atPath: copy.path, toPath: tampered)
        let database = try DatabaseQueue(path: tampered)
        try await database.write { db in
            try db.execute(sql: """
                UPDATE cosignatures SET cosigned_at = cosigned_at + 1
                WHERE (tree_id, size) = (SELECT tree_id, size FROM cosignatures ORDER BY tree_id, size LIMIT 1)
                """)
        }
        try database.close()
        let edited = try EventStore(path: tampered, access: .readOnly)
        let problems = try edited.invalidCosignatures()
        #expect(problems.count == 1)
        #expect(problems.first?.contains("collector.test/gamelog") == true && problems.first?.contains("does not verify") == true)
        #expect(try edited.cosignedHeads().count == 2)
        let findings = try Auditor(games: .standard).logFindings(edited, trusting: setup.keys.trusted, known: [], progress: nil).findings
        #expect(findings.filter { $0.rule == "cosignature" }.count == 1)
    }

    // Issue 36, item 8: cosignatures are checked, and a k-of-n witness policy holds.
    @Test func cosignaturesAreCheckedAgainstTheWitnessKeysAndTheirCount() async throws {
        let setup = try await Setup()
        let phones = try recordPhones(3, in: setup.folder.path("phones"), seed: 5, keys: setup.keys)
        for (path, device) in [(phones.a, "A"), (phones.b, "B")] {
            try await setup.enroll(device)
            _ = try await setup.accept(try setup.upload(path, device).body)
        }
        let copy = try await setup.store.localCopy(fresh: true)
        defer { copy.release() }
        let collectorKey = WitnessKey(name: setup.collector.witness, publicKey: setup.collector.witnessKey.publicKey)
        #expect(try WitnessKey(verifierKey: collectorKey.verifierKey) == collectorKey)
        let other = WitnessKey(name: "other.test/witness", publicKey: try DeviceKey.random(device: "w").publicKey)
        func errors(_ path: String, _ policy: WitnessPolicy?, elsewhere: [CosignedHead] = []) throws -> [Finding] {
            var auditor = Auditor(games: .standard)
            auditor.rerunsExtensions = false
            auditor.witnessPolicy = policy
            auditor.cosignedElsewhere = elsewhere
            return try auditor.report(try EventStore(path: path, access: .readOnly), trusting: setup.keys.trusted).findings.filter { $0.severity == .error }
        }
        #expect(try errors(copy.path, WitnessPolicy(keys: [collectorKey], required: 1)).isEmpty)
        // Two of two required: the one witness is not enough, for each device.
        let short = try errors(copy.path, WitnessPolicy(keys: [collectorKey, other], required: 2))
        #expect(short.filter { $0.rule == "witnesses" }.count == 2, "\(short.map(\.found))")
        // The witness's name with another key: its cosignatures are not the witness's.
        let impostor = WitnessKey(name: setup.collector.witness, publicKey: other.publicKey)
        #expect(try errors(copy.path, WitnessPolicy(keys: [impostor], required: 0)).filter { $0.rule == "cosignature" }.count == 2)
        // A cosignature from a heads file whose signature was changed.
        let cosigned = try #require(try EventStore(path: copy.path, access: .readOnly).cosignedHeads().first)
        var bad = cosigned
        bad.cosignatures[0].signature[0] ^= 1
        #expect(try errors(copy.path, nil, elsewhere: [bad]).filter { $0.rule == "cosignature" }.count == 1)
        // A changed cosignature row: the whole-log report says so (not only the shared workers' path).
        let tampered = setup.folder.path("cosigned-tampered.sqlite")
        try FileManager.default.copyItem(atPath: copy.path, toPath: tampered)
        try await DatabaseQueue(path: tampered).write { try $0.execute(sql: "UPDATE cosignatures SET cosigned_at = cosigned_at + 1") }
        #expect(try errors(tampered, nil).filter { $0.rule == "cosignature" }.count == 2)
    }

    @Test func forgedConflictingAndUnenrolledUploadsAreRefusedWithNothingStored() async throws {
        let setup = try await Setup()
        let phones = try recordPhones(3, in: setup.folder.path("phones"), seed: 8, keys: setup.keys)
        let upload = try await setup.upload(phones.a, "A")

        // Not enrolled: 403.
        try await setup.refuses(upload.body, status: 403, "not enrolled")
        try await setup.enroll("A")
        // A device signs with one key: its name cannot be enrolled with another.
        let otherKey = setup.keys.key("B").publicKey
        let taken = try await setup.store.enroll(device: "A", publicKey: otherKey)
        #expect(taken == .nameTaken)

        // A changed event: one move's cell, the line's stream hash left as it was.
        var lines = upload.body.split(separator: "\n").map(String.init)
        let touched = try #require(lines.firstIndex { $0.contains("\\\"cell\\\"") })
        let original = lines[touched]
        lines[touched] = original.replacingOccurrences(of: "\\\"cell\\\":{\\\"_0\\\":", with: "\\\"cell\\\":{\\\"_0\\\":1")
        #expect(lines[touched] != original)
        try await setup.refuses(lines.joined(separator: "\n") + "\n", status: 409, "stream hash")

        // The same change with the stream hashes recomputed (a forger who read FORMAT.md):
        // the device's signed root no longer comes out.
        let forged = try Self.rechained(lines)
        try await setup.refuses(forged.joined(separator: "\n") + "\n", status: 409, "do not give the tree it signed")

        // A conflicting line: the same stream version twice, with different payloads.
        lines[touched] = original
        var conflicting = lines
        conflicting.insert(lines[touched].replacingOccurrences(of: "\\\"cell\\\":{\\\"_0\\\":", with: "\\\"cell\\\":{\\\"_0\\\":1"), at: touched + 1)
        try await setup.refuses(conflicting.joined(separator: "\n") + "\n", status: 409, "too")

        // Signed as another device with an enrolled key: 403.
        let other = try await setup.upload(phones.b, "B")
        try await setup.refuses(other.body, status: 403, "not enrolled")

        // The honest upload still goes through.
        await #expect(try setup.accept(upload.body).stored == upload.events)
    }

    /// The collector writes an upload's events without looking their ids up first (the
    /// device's tree grows by exactly them); an id another device's event already holds
    /// must still be refused by name, with nothing of the upload kept.
    @Test func anUploadReusingAStoredEventIDIsRefusedByNameWithNothingStored() async throws {
        let setup = try await Setup()
        let phones = try recordPhones(2, in: setup.folder.path("phones"), seed: 12, keys: setup.keys)
        try await setup.enroll("A")
        try await setup.enroll("B")
        let fromA = try await setup.upload(phones.a, "A")
        await #expect(try setup.accept(fromA.body).stored == fromA.events)
        let storedOfA = try EventStore(path: phones.a, access: .readOnly).events()
        let borrowed = try #require(storedOfA.dropFirst(5).first).id

        // B's log as its phone holds it, but one event carries the id of one of A's, and
        // B signs it all: every line, chain and head of the upload checks on its own.
        let original = try EventStore(path: phones.b, access: .readOnly).events()
        #expect(original.count > 10)
        let forgedPath = setup.folder.path("forged-B.sqlite")
        let forged = try EventStore(path: forgedPath)
        let key = setup.keys.key("B")
        try forged.append(original.enumerated().map { index, event in
            NewEvent(id: index == 7 ? borrowed : event.id, stream: event.stream, type: event.type, typeVersion: event.typeVersion,
                     recordedAt: event.recordedAt, payload: event.payload)
        }, signing: { _ in key })
        let upload = try await setup.upload(forgedPath, "B", accepted: 0)
        #expect(upload.events == original.count)
        try await setup.refuses(upload.body, status: 409, borrowed.uuidString.lowercased())
        // Nor would a write that stores several devices' uploads together take the two as
        // one import: only each alone judges an id two of them give.
        func plan(_ body: String) throws -> ImportPlan { try Interchange.check(files: [ExportFile(name: "upload", contents: Data(body.utf8))]) }
        let honestB = try await setup.upload(phones.b, "B", accepted: 0)
        #expect(ImportPlan.merging([try plan(fromA.body), try plan(upload.body)]) == nil)
        #expect(ImportPlan.merging([try plan(fromA.body), try plan(honestB.body)])?.count == fromA.events + honestB.events)
        // Nor would its group be written following A's while A's is open: the two imports
        // would each wait for the other's row of that id.
        #expect(!ImportPlan.eventIDsAreDisjoint([try plan(fromA.body)], [try plan(upload.body)]))
        #expect(ImportPlan.eventIDsAreDisjoint([try plan(fromA.body)], [try plan(honestB.body)]))

        // B's honest log goes through afterwards: the refusal left nothing of B behind.
        await #expect(try setup.accept(honestB.body).stored == honestB.events)
    }

    @Test func aRolledBackOrForkedPhoneIsRefused() async throws {
        let setup = try await Setup()
        try await setup.enroll("A")
        let folder = setup.folder.path("phones")
        let phones = try recordPhones(3, in: folder, seed: 12, keys: setup.keys)
        // The phone as it was after three games, kept aside.
        try FileManager.default.copyItem(atPath: phones.a, toPath: setup.folder.path("A-before.sqlite"))
        try recordPhones(6, in: folder, seed: 12, keys: setup.keys)
        _ = try await setup.accept(try setup.upload(phones.a, "A").body)
        let accepted = try await setup.accepted("A")

        // Rolled back: the old log's heads are behind what the collector accepted.
        let old = setup.folder.path("A-before.sqlite")
        guard case .behind(let logSize, let held) = try Interchange.upload(from: try EventStore(path: old, access: .readOnly),
                                                                          tree: setup.keys.key("A").publicKey, accepted: accepted) else {
            Issue.record("the old log is not behind")
            return
        }
        #expect(logSize < held)
        try await setup.refuses(try setup.upload(old, "A", accepted: 0).body, status: 409, "rolled back")

        // Forked: the rolled-back phone plays on (other games, same key) past what was
        // accepted; its new events do not extend the accepted tree.
        let forkFolder = setup.folder.path("fork")
        try FileManager.default.createDirectory(atPath: forkFolder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: old, toPath: forkFolder + "/A.sqlite")
        try recordPhones(9, in: forkFolder, seed: 99, keys: setup.keys)
        let forkLog = try EventStore(path: forkFolder + "/A.sqlite", access: .readOnly)
        #expect(try forkLog.deviceTrees().first { $0.owner.device == "A" }!.heads.last!.size > accepted)
        try await setup.refuses(try setup.upload(forkFolder + "/A.sqlite", "A").body, status: 409, "do not extend")
    }

    // Issue 36, item 5: the collector stores only signed history.
    @Test func eventsPastEveryHeadAreRefusedAndTheNextHonestPushWorks() async throws {
        let setup = try await Setup()
        try await setup.enroll("A")
        let folder = setup.folder.path("phones")
        let phones = try recordPhones(3, in: folder, seed: 21, keys: setup.keys)
        _ = try await setup.accept(try setup.upload(phones.a, "A").body)
        let accepted = try await setup.accepted("A")
        let acceptedHead = try #require(try EventStore(path: phones.a, access: .readOnly).deviceTrees()
            .first { $0.owner.device == "A" }?.heads.first { $0.size == accepted })
        try recordPhones(6, in: folder, seed: 21, keys: setup.keys)
        // The next upload with its heads swapped for the accepted one: its events are
        // leaves past every head the upload carries, which no signature covers.
        let honest = try await setup.upload(phones.a, "A")
        #expect(honest.to > accepted)
        var lines = honest.body.split(separator: "\n").map(String.init).filter { !$0.hasPrefix(#"{"head":"#) }
        lines.append(String(decoding: try JSONEncoder().encode(["head": ExportedHead(acceptedHead)]), as: UTF8.self))
        try await setup.refuses(lines.joined(separator: "\n") + "\n", status: 400, "past its newest signed head")
        // Nothing of it was kept: the honest push is taken whole.
        let taken = try await setup.accept(honest.body)
        #expect(taken.size == honest.to && taken.stored == honest.events)
    }

    @Test func concurrentUploadsFromManyDevicesThroughTwoCollectorsAreAllStoredGapless() async throws {
        let setup = try await Setup()
        let second = Collector(store: try SharedStore(url: setup.url, cacheFolder: setup.folder.url.appending(path: "cache2")),
                               witness: setup.collector.witness, witnessKey: setup.collector.witnessKey)
        // Eight phones: four pairs, each device with a key of its own.
        var bodies: [(String, Int)] = []
        for pair in 0..<4 {
            let keys = TestKeys()
            let names = ("P\(pair)a", "P\(pair)b")
            let phones = try recordPhones(2, in: setup.folder.path("pair\(pair)"), seed: UInt64(40 + pair), keys: keys, devices: names)
            for (path, device) in [(phones.a, names.0), (phones.b, names.1)] {
                let key = keys.key(device).publicKey
                _ = try await setup.store.enroll(device: device, publicKey: key)
                guard case .send(let upload) = try Interchange.upload(from: try EventStore(path: path, access: .readOnly), tree: key, accepted: 0) else {
                    Issue.record("nothing to send")
                    return
                }
                bodies.append((upload.body, upload.events))
            }
        }
        let collectors = [setup.collector, second]
        let stored = try await withThrowingTaskGroup(of: Int.self) { [bodies] group in
            for (index, (body, _)) in bodies.enumerated() {
                group.addTask { try await collectors[index % 2].accept(Data(body.utf8)).stored }
            }
            return try await group.reduce(0, +)
        }
        let expected = bodies.map(\.1).reduce(0, +)
        #expect(stored == expected)
        let psql = try PostgresServer.shared()
        #expect(try psql.psql(setup.url, "SELECT count(*) || ' ' || max(position) || ' ' || count(DISTINCT event_id) FROM events")
                == "\(expected) \(expected) \(expected)")
        let copy = try await setup.store.localCopy(fresh: true)
        defer { copy.release() }
        let log = try EventStore(path: copy.path, access: .readOnly)
        var count = 0
        try log.scan { _ in count += 1 }
        #expect(count == expected)
        let problems = try log.verifyProofs().problems
        #expect(problems.isEmpty, "\(problems)")
        #expect(try log.deviceTrees().count == 8)
    }

    /// Group commit: uploads that arrive while a write runs are stored together in the
    /// next one (fewer writes of the store than uploads), each is answered on its own,
    /// and a refused upload in a group costs the others nothing.
    @Test func uploadsArrivingTogetherShareAWriteAndARefusalStaysTheirOwn() async throws {
        let setup = try await Setup()
        var bodies: [String] = []
        var events = 0
        for pair in 0..<4 {
            let names = ("G\(pair)a", "G\(pair)b")
            let phones = try recordPhones(2, in: setup.folder.path("pair\(pair)"), seed: UInt64(70 + pair), keys: setup.keys, devices: names)
            for (path, device) in [(phones.a, names.0), (phones.b, names.1)] {
                try await setup.enroll(device)
                let upload = try await setup.upload(path, device, accepted: 0)
                bodies.append(upload.body)
                events += upload.events
            }
        }
        // One that checks on its own and is refused only in the write: a device's upload
        // that starts after events this collector never got.
        let late = try recordPhones(2, in: setup.folder.path("late"), seed: 90, keys: setup.keys, devices: ("Late", "Other"))
        try await setup.enroll("Late")
        let sent = await bodies + [try setup.upload(late.a, "Late", accepted: 5).body]
        let server = try PostgresServer.shared()
        let revisionBefore = Int(try server.psql(setup.url, "SELECT revision FROM store_state")) ?? -1
        // The store's lock held meanwhile, the first write waits for it while every other
        // upload is checked and queued: however fast each write is, the next one holds
        // them all (without it, on a busy machine, each upload was a write of its own).
        let holder = try server.psqlInBackground(setup.url, "BEGIN; SELECT 1 FROM store_state FOR UPDATE; SELECT pg_sleep(60); COMMIT;")
        defer { holder.send(SIGTERM); _ = holder.wait(atMost: 10) }
        var held = false
        for _ in 0..<200 where !held {
            held = try server.psql(setup.url, "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'BEGIN; SELECT 1 FROM store_state FOR UPDATE%' AND state = 'active'") == "1"
            if !held { try await Task.sleep(for: .milliseconds(25)) }
        }
        try #require(held)

        let outcomes = try await withThrowingTaskGroup(of: (Int, Result<Int, Collector.Refusal>).self) { [collector = setup.collector] group in
            for (index, body) in sent.enumerated() {
                group.addTask {
                    do {
                        return (index, .success(try await collector.accept(Data(body.utf8)).stored))
                    } catch let refusal as Collector.Refusal {
                        return (index, .failure(refusal))
                    }
                }
            }
            // Every upload checked and handed to the writer while the lock is held: those the
            // first write took (one, or more if they were queued before its task began) wait
            // for the lock in it, the rest behind it. (Counting only those queued, as before,
            // failed once the checks got faster: all nine were queued before the first write began.)
            var handed = 0
            for _ in 0..<2_000 where handed < sent.count {
                handed = setup.collector.uploadsCheckedAndUnanswered
                if handed < sent.count { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(handed == sent.count)
            _ = try server.psql(setup.url, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query LIKE 'BEGIN; SELECT 1 FROM store_state FOR UPDATE%'")
            var outcomes: [Int: Result<Int, Collector.Refusal>] = [:]
            for try await (index, outcome) in group { outcomes[index] = outcome }
            return outcomes
        }
        #expect(outcomes.count == sent.count)
        let stored = (0..<bodies.count).compactMap { try? outcomes[$0]?.get() }
        #expect(stored.count == bodies.count && stored.reduce(0, +) == events)
        guard case .failure(let refusal)? = outcomes[sent.count - 1] else {
            Issue.record("the forged upload was not refused: \(String(describing: outcomes[sent.count - 1]))")
            return
        }
        #expect(refusal.status == 409 && refusal.description.contains("missing"), "\(refusal)")
        // Every honest event once, gapless; fewer writes than uploads.
        #expect(try server.psql(setup.url, "SELECT count(*) || ' ' || max(position) || ' ' || count(DISTINCT event_id) FROM events")
                == "\(events) \(events) \(events)")
        // The write that waited, then one for all the others (none if the one that waited
        // was the refused upload, which wrote nothing).
        let writes = (Int(try server.psql(setup.url, "SELECT revision FROM store_state")) ?? 0) - revisionBefore
        #expect((1...2).contains(writes), "\(writes) writes for \(bodies.count) uploads")
        // The second write held every honest upload but the first's, stored as one import
        // (the refused upload is refused before, so it never joins one).
        #expect(setup.collector.metrics.uploadsStoredTogether >= bodies.count - 1)
        #expect(setup.collector.metrics.text.contains("gamelog_uploads_stored_together_total \(setup.collector.metrics.uploadsStoredTogether)"))
        // Groups written while the write before was stored, as counted (how many is a
        // matter of timing; GroupCommitTests and FollowingWriteTests pin the behaviour).
        let followed = setup.collector.metrics.followedWrites
        #expect(setup.collector.metrics.text.contains("gamelog_group_writes_followed_total{outcome=\"kept\"} \(followed.kept)"))
        #expect(setup.collector.metrics.text.contains("gamelog_group_writes_followed_total{outcome=\"written_again\"} \(followed.writtenAgain)"))
        let copy = try await setup.store.localCopy(fresh: true)
        defer { copy.release() }
        // The refused device left nothing: only the honest devices' trees, each proven.
        let log = try EventStore(path: copy.path, access: .readOnly)
        let honest = setup.keys.trusted.filter { $0.key.hasPrefix("G") }
        let trees = Set(try log.deviceTrees().map(\.owner.device))
        #expect(honest.count == bodies.count && trees == Set(honest.keys))
        let problems = try log.verifyProofs(trusting: honest).problems
        #expect(problems.isEmpty, "\(problems)")
    }
}
