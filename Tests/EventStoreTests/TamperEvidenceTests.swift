import EventStore
import EventLog
import Foundation
import GRDB
import TestSupport
import Testing

/// Each forgery on every store gamelog reads: a SQLite file's blocks (what gamelog
/// writes), its rows (logs written before blocks, copies of a shared store) and
/// PostgreSQL's rows. The verdicts are one implementation's, so each test expects the
/// same findings, at the same positions, whichever store holds the log.
@Suite struct TamperEvidenceTests {
    /// Two signed games (a PostgreSQL store takes only events that decode, as `import` checks them).
    func makeLog(_ folder: TemporaryFolder, _ store: StoreUnderTest) async throws -> LogUnderTest {
        try await store.makeLog(folder) { try playMixedGames(2, into: $0, seed: 5, keys: TestKeys()) }
    }

    @Test(arguments: StoreUnderTest.allCases) func cleanLogVerifies(_ store: StoreUnderTest) async throws {
        let folder = try TemporaryFolder()
        let log = try await makeLog(folder, store)
        let report = try log.reader().verifyIntegrity(progress: nil)
        let file = try EventStore(path: log.path, access: .readOnly)
        #expect(report.isSound)
        let last = try file.lastPosition()
        #expect(report.eventCount > 100 && report.eventCount == last)
        #expect(report.headHash == (try file.headHash()))
        #expect(try log.reader().events() == file.events())
    }

    @Test(arguments: StoreUnderTest.allCases) func flippedPayloadByteIsFoundAtItsPosition(_ store: StoreUnderTest) async throws {
        let folder = try TemporaryFolder()
        let log = try await makeLog(folder, store)
        try log.flipPayloadByte(at: 17)
        let reader = try log.reader()
        do {
            _ = try reader.events()
            Issue.record("reading a tampered log succeeded")
        } catch let error as EventStoreError {
            #expect(error.position == 17)
        }
        let report = try reader.verifyIntegrity(progress: nil)
        #expect(report.problems.first?.position == 17)
        // Events before the damage still read.
        #expect(try reader.events(EventQuery(positions: 1...16)).count == 16)
    }

    @Test(arguments: StoreUnderTest.allCases) func flippedByteInRawPayloadIsAHashMismatch(_ store: StoreUnderTest) async throws {
        let folder = try TemporaryFolder()
        let log = try await makeLog(folder, store)
        try log.zeroPayload(at: 9)
        let problems = try log.reader().verifyIntegrity(progress: nil).problems
        #expect(problems == [.hashMismatch(position: 9)], "\(problems)")
    }

    @Test(arguments: StoreUnderTest.allCases) func deletedRowIsFoundAtItsPosition(_ store: StoreUnderTest) async throws {
        let folder = try TemporaryFolder()
        let log = try await makeLog(folder, store)
        let stream = try #require(try log.reader().event(at: 23)).stream
        try log.delete(at: 23)
        let reader = try log.reader()
        #expect(throws: EventStoreError.missingEvent(position: 23)) { _ = try reader.events() }
        // A read of the event's recording sees the hole too.
        #expect(throws: EventStoreError.missingEvent(position: 23)) { _ = try reader.events(EventQuery(stream: stream)) }
        #expect(try reader.verifyIntegrity(progress: nil).problems.first == .missingEvent(position: 23))
    }

    @Test(arguments: StoreUnderTest.allCases) func deletedTailIsFound(_ store: StoreUnderTest) async throws {
        let folder = try TemporaryFolder()
        let log = try await makeLog(folder, store)
        let last = try log.reader().lastPosition()
        try log.delete(at: last)
        let report = try log.reader().verifyIntegrity(progress: nil)
        #expect(!report.isSound)
        #expect(report.problems.first?.position == last)
    }

    @Test(arguments: StoreUnderTest.allCases) func rehashedRowBreaksItsSuccessor(_ store: StoreUnderTest) async throws {
        let folder = try TemporaryFolder()
        let log = try await makeLog(folder, store)
        // Rewrite event 12 with a new payload and a correct hash for it, leaving 13 alone.
        let reader = try log.reader()
        let old = try #require(try reader.event(at: 12))
        let previous = try #require(try reader.event(at: 11)).hash
        let forged = Array(#"{"forged":true}"#.utf8)
        let envelope = ChainHash.envelope(position: 12, id: old.id, stream: old.stream, streamVersion: old.streamVersion,
                                          type: old.type, typeVersion: old.typeVersion, recordedAt: old.recordedAt, payload: forged)
        try log.rewrite(at: 12, payload: forged, hash: ChainHash.hash(previous: previous, envelope: envelope))
        let problems = try log.reader().verifyIntegrity(progress: nil).problems
        #expect(problems == [.hashMismatch(position: 13)], "\(problems)")
    }

    @Test(arguments: StoreUnderTest.allCases) func swappedRowsAreFound(_ store: StoreUnderTest) async throws {
        let folder = try TemporaryFolder()
        let log = try await makeLog(folder, store)
        try log.swap(5, 6)
        #expect(try log.reader().verifyIntegrity(progress: nil).problems.first?.position == 5)
    }

    @Test(arguments: [StoreUnderTest.sqliteRows, .postgres]) func unknownCodecIsNamed(_ store: StoreUnderTest) async throws {
        let folder = try TemporaryFolder()
        let log = try await makeLog(folder, store)
        try log.sql("UPDATE events SET codec = 9 WHERE position = 3")
        let reader = try log.reader()
        #expect(throws: EventStoreError.unknownCodec(position: 3, codec: 9)) { _ = try reader.events() }
        #expect(try reader.verifyIntegrity(progress: nil).problems.first == .unknownCodec(position: 3, codec: 9))
    }

    @Test func aBlocksCodecAndDictionaryAreNamedAtItsFirstPosition() throws {
        // A block's codec covers its events: the error names the block's first position.
        let folder = try TemporaryFolder()
        let blocks = folder.path("log.sqlite")
        let store = try EventStore(path: blocks)
        for n in 0..<4 { try store.append(sampleEvents(10, stream: n.isMultiple(of: 2) ? UUID() : UUID())) }
        try tamper(blocks, "UPDATE event_blocks SET codec = 9")
        #expect(throws: EventStoreError.unknownCodec(position: 1, codec: 9)) { _ = try EventStore(path: blocks, access: .readOnly).events() }
        try tamper(blocks, "PRAGMA foreign_keys = OFF; UPDATE event_blocks SET codec = 1, dictionary_id = 77")
        #expect(throws: EventStoreError.unknownDictionary(position: 1, dictionaryID: 77)) { _ = try EventStore(path: blocks, access: .readOnly).events() }
    }
}

/// Moving a log's rows into blocks (`gamelog migrate`): the same events, and nothing
/// moved from a log that does not verify.
@Suite struct PackingTests {
    @Test func rowsMoveIntoBlocksAndReadTheSame() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        let rows = try EventStore(path: path, layout: .rows)
        let a = UUID(), b = UUID()
        for n in 0..<15 { try rows.append(sampleEvents(10, stream: n.isMultiple(of: 3) ? a : b, startingAt: Int64(n) * 100)) }
        let before = try rows.events()
        let head = try rows.headHash()
        let packer = try EventStore(path: path)
        packer.blockCapacity = 16
        #expect(try packer.storedAsRows() == 150)
        #expect(try packer.packRowsIntoBlocks() == 150)
        #expect(try packer.storedAsRows() == 0)
        let reader = try EventStore(path: path, access: .readOnly)
        #expect(try reader.events() == before)
        #expect(try reader.headHash() == head)
        #expect(try reader.verifyIntegrity().isSound)
        #expect(try reader.events(EventQuery(stream: a)) == before.filter { $0.stream == a })
        let blocks = try DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM event_blocks") }
        #expect(blocks == 10) // 150 events, 16 a block
        // New events follow in blocks, after the moved ones.
        try packer.append(sampleEvents(5, stream: a, startingAt: 9_000))
        #expect(try EventStore(path: path, access: .readOnly).verifyIntegrity().eventCount == 155)
    }

    @Test func aLogThatDoesNotVerifyIsLeftAsItIs() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        try EventStore(path: path, layout: .rows).append(sampleEvents(30))
        try flipStoredRowByte(path, position: 12)
        let packer = try EventStore(path: path)
        #expect(throws: EventStoreError.self) { try packer.packRowsIntoBlocks() }
        #expect(try packer.storedAsRows() == 30)
        #expect(try DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM event_blocks") } == 0)
    }

    @Test func aStoreThatWritesRowsLeavesThemAsRows() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        let rows = try EventStore(path: path, layout: .rows)
        try rows.append(sampleEvents(20))
        #expect(try rows.packRowsIntoBlocks() == 0)
        #expect(try rows.storedAsRows() == 20)
    }
}

/// What a forger who knows docs/FORMAT.md can change in a block's row or in the rows
/// derived from blocks, each found by `verify` and named.
@Suite struct BlockForgeryTests {
    func makeLog(_ folder: TemporaryFolder) throws -> (path: String, a: UUID, b: UUID) {
        let path = folder.path("log.sqlite")
        let store = try EventStore(path: path)
        store.blockCapacity = 16
        let a = UUID(), b = UUID()
        for n in 0..<6 { try store.append(sampleEvents(10, stream: n.isMultiple(of: 2) ? a : b, startingAt: Int64(n) * 100)) }
        return (path, a, b)
    }

    func problems(_ path: String) throws -> [EventStoreError] {
        try EventStore(path: path, access: .readOnly).verifyIntegrity().problems
    }

    @Test func aRecordingHiddenFromItsIndexIsFound() throws {
        let folder = try TemporaryFolder()
        let (path, a, _) = try makeLog(folder)
        let before = try EventStore(path: path, access: .readOnly).events(EventQuery(stream: a)).count
        // The recording's rows in one block dropped: a reader of that recording alone skips them.
        try tamper(path, "DELETE FROM block_streams WHERE block = 17 AND stream_id = (SELECT min(stream_id) FROM block_streams WHERE block = 17)")
        #expect(try EventStore(path: path, access: .readOnly).events(EventQuery(stream: a)).count < before)
        let found = try problems(path)
        #expect(found.contains { if case .blockIndexMismatch = $0 { return true } else { return false } }, "\(found)")
    }

    /// A read without a limit checks its events' hashes ``ChainCheck/batchSize`` at a time; one
    /// with a limit, one at a time. With changed events in every batch and a block that no
    /// longer reads, both hand over the same events and damage, in the same
    /// order, or stop at the same error: contiguous reads and a recording's scattered events.
    @Test func aCheckInBatchesHandsOverWhatOneAtATimeDoes() throws {
        let folder = try TemporaryFolder()
        let (path, a, b) = try makeLog(folder)
        #expect(ChainCheck.batchSize == 32)
        for position in [5, 16, 20, 31, 32, 50, 55] { try flipByte(path, position: Int64(position)) }
        // Its events are damage; the next (49, in the same batch) is checked against its stored last hash.
        try tamper(path, "UPDATE event_blocks SET body = substr(body, 1, length(body) - 3) WHERE first_position = 33")
        let reader = try EventStore(path: path, access: .readOnly)
        func trace(_ query: EventQuery, skipping: Bool) -> [String] {
            var out: [String] = []
            do {
                try reader.scan(query, skippingDamaged: skipping ? { out.append("damage: \($0)") } : nil) { out.append("event \($0.position)") }
            } catch {
                out.append("thrown: \(error)")
            }
            return out
        }
        var compared = 0
        for query in [EventQuery.all, EventQuery(positions: 20...60), EventQuery(positions: 50...50), EventQuery(stream: a),
                      EventQuery(streams: [a, b])] {
            for skipping in [true, false] {
                var oneAtATime = query
                oneAtATime.limit = 1_000
                let batched = trace(query, skipping: skipping)
                #expect(batched == trace(oneAtATime, skipping: skipping), "\(query), skipping: \(skipping)")
                #expect(batched.contains { $0.hasPrefix(skipping ? "damage" : "thrown") }, "\(query): \(batched)")
                compared += 1
            }
        }
        #expect(compared == 10)
        // The first read hands over the events before the first change, then stops there.
        #expect(trace(.all, skipping: false) == (1...4).map { "event \($0)" } + ["thrown: \(EventStoreError.hashMismatch(position: 5))"])
    }

    /// A store that fails in the middle of a read (a damaged file) hands over, before the
    /// failure, every event it read before it: none is held back in a batch.
    @Test func aReadThatFailsMidwayHandsOverTheEventsBeforeTheFailure() throws {
        struct Broken: Error {}
        let folder = try TemporaryFolder()
        let (path, _, _) = try makeLog(folder)
        let events = try EventStore(path: path, access: .readOnly).events()
        #expect(events.count == 60)
        var checked = 0
        for failAt in [1, 5, 31, 32, 33, 60] {
            var check = try ChainCheck(query: .all, verify: true, hashAt: { _ in nil }, lastPosition: { 60 })
            var handed: [Int64] = []
            #expect(throws: Broken.self) {
                try check.read(skippingDamaged: nil, { handed.append($0.position) }) { take in
                    for event in events.prefix(failAt) { guard try take(.event(event, predecessorHash: nil, block: nil)) else { return } }
                    throw Broken()
                }
            }
            #expect(handed == Array(1...Int64(failAt)), "failing after \(failAt)")
            checked += 1
        }
        #expect(checked == 6)
    }

    /// `verify` checks the chain's digests in batches; each mismatch is still named in the
    /// log's order among the other problems (here a block that no longer reads, in between).
    @Test func verifyNamesMismatchesInTheLogsOrderAmongOtherDamage() throws {
        let folder = try TemporaryFolder()
        let (path, _, _) = try makeLog(folder)
        for position in [5, 40, 58] { try flipByte(path, position: Int64(position)) }
        try tamper(path, "UPDATE event_blocks SET body = substr(body, 1, length(body) - 3) WHERE first_position = 17")
        let found = try problems(path)
        // The recordings' versions skip the unreadable block's events at 33 and 41; the
        // block index's counts come at the end.
        let inTheLog = found.filter { ($0.position ?? 0) > 0 }
        #expect(inTheLog.map { $0.position! } == [5] + Array(17...32) + [33, 40, 41, 58], "\(found)")
        #expect(inTheLog.filter { if case .hashMismatch = $0 { return true } else { return false } }
            == [.hashMismatch(position: 5), .hashMismatch(position: 40), .hashMismatch(position: 58)])
        #expect(inTheLog.count == 21 && found.count > inTheLog.count)
    }

    @Test func anIDIndexPointingElsewhereIsFound() throws {
        let folder = try TemporaryFolder()
        let (path, _, _) = try makeLog(folder)
        try tamper(path, "UPDATE block_ids SET position = position + 1 WHERE position = 30")
        #expect(try problems(path).contains(.blockIndexMismatch(position: 30, detail: "block_ids puts its id at 31")))
        let extra = try TemporaryFolder()
        let (other, _, _) = try makeLog(extra)
        try tamper(other, "INSERT INTO block_ids (event_id, position) VALUES (randomblob(16), 5)")
        #expect(try problems(other).contains { if case .blockIndexMismatch(0, let detail) = $0 { return detail.contains("block_ids") } else { return false } })
    }

    @Test func aLeafRangeMovedIsFound() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        let store = try EventStore(path: path)
        let key = try DeviceKey.random(device: "A")
        try store.append(sampleEvents(40), signing: { _ in key })
        #expect(try problems(path).isEmpty)
        try tamper(path, "UPDATE block_leaves SET first_leaf = first_leaf + 1")
        #expect(try problems(path).contains { if case .blockIndexMismatch = $0 { return true } else { return false } })
    }

    @Test func aBlocksRowThatDisagreesWithItsBodyDamagesItsEvents() throws {
        for change in ["UPDATE event_blocks SET last_hash = zeroblob(32) WHERE first_position = 17",
                       "UPDATE event_blocks SET count = count - 1 WHERE first_position = 17",
                       "UPDATE event_blocks SET raw_size = raw_size + 1 WHERE first_position = 17",
                       "UPDATE event_blocks SET body = substr(body, 1, length(body) - 3) WHERE first_position = 17"] {
            let folder = try TemporaryFolder()
            let (path, _, _) = try makeLog(folder)
            try tamper(path, change)
            let store = try EventStore(path: path, access: .readOnly)
            #expect(throws: EventStoreError.self, "\(change)") { _ = try store.events() }
            let found = try problems(path)
            #expect(found.contains { ($0.position ?? 0) >= 17 && ($0.position ?? 0) <= 32 }, "\(change): \(found)")
            // The events outside the block still read, and a salvage goes on past it.
            #expect(try store.events(EventQuery(positions: 1...16)).count == 16)
            var salvaged = 0
            try store.scan(skippingDamaged: { _ in }) { _ in salvaged += 1 }
            // A salvage chains the next event to the damaged block's stored last hash: a
            // forged one breaks that event too.
            #expect(salvaged == 60 - 16 - (change.contains("last_hash") ? 1 : 0), "\(change)")
        }
    }

    @Test func aBodyWithBytesAfterItsPayloadsIsRefused() throws {
        let folder = try TemporaryFolder()
        let (path, _, _) = try makeLog(folder)
        try DatabaseQueue(path: path).write { db in
            let block = try BlockSurgery.open(db, holding: 20)
            var body = EventBlock(events: block.events).body()
            body.append(0)
            try db.execute(sql: "UPDATE event_blocks SET codec = 0, dictionary_id = NULL, raw_size = ?, body = ? WHERE first_position = ?",
                           arguments: [body.count, Data(body), block.first])
        }
        #expect(try problems(path).contains { if case .corruptPayload(17, let detail) = $0 { return detail.contains("after the last payload") } else { return false } })
    }
}

@Suite struct BlockAppendTests {
    @Test func smallAppendsFillTheLastBlockInsteadOfAddingSmallOnes() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        let store = try EventStore(path: path)
        let stream = UUID()
        for n in 0..<20 { try store.append(sampleEvents(7, stream: stream, startingAt: Int64(n) * 10)) }
        let counts = try DatabaseQueue(path: path).read { try Int.fetchAll($0, sql: "SELECT count FROM event_blocks ORDER BY first_position") }
        #expect(counts == [64, 64, 12]) // 140 events
        #expect(try store.verifyIntegrity().isSound)
        #expect(try store.events(EventQuery(stream: stream)).map(\.streamVersion) == Array(1...140))
    }

    @Test func aDamagedLastBlockIsLeftAsItIsAndNewEventsFollowIt() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        let stream = UUID()
        try EventStore(path: path).append(sampleEvents(10, stream: stream))
        try tamper(path, "UPDATE event_blocks SET body = substr(body, 1, length(body) - 2)")
        let damaged = try DatabaseQueue(path: path).read { try Data.fetchOne($0, sql: "SELECT body FROM event_blocks") }
        let store = try EventStore(path: path)
        try store.append(sampleEvents(5, stream: stream, startingAt: 500), expecting: [stream: .exactly(10)])
        let rows = try DatabaseQueue(path: path).read { db in
            try Row.fetchAll(db, sql: "SELECT first_position, count, body FROM event_blocks ORDER BY first_position").map { ($0[0] as Int64, $0[1] as Int, $0[2] as Data) }
        }
        #expect(rows.count == 2 && rows[0].2 == damaged && rows[1].0 == 11 && rows[1].1 == 5)
        // The damage is named; the new events read and chain to the damaged block's stored last hash.
        let report = try store.verifyIntegrity()
        #expect(report.problems.map(\.position) == Array(1...10) + [11, 0, 0], "\(report.problems)")
        #expect(report.problems.dropFirst().prefix(9).allSatisfy { "\($0)".contains("in the block of positions 1-10, which cannot be read") })
        // Past the damage: the recording's versions jump (its first ten are unreadable),
        // and block_ids and block_streams hold rows for events no readable block shows.
        #expect(report.problems[10] == .streamVersionGap(position: 11, stream: stream, expected: 1, found: 11))
        #expect(try store.events(EventQuery(positions: 11...15)).count == 5)
    }
}

@Suite struct BlockBoundsTests {
    @Test func aBlockPositionNearTheEndOfTheIntegersIsRefusedByTheSchema() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        try EventStore(path: path).append(sampleEvents(3))
        #expect(throws: (any Error).self) {
            try tamper(path, "UPDATE event_blocks SET first_position = 9223372036854775800")
        }
        // Nothing changed: the log reads and verifies as before.
        #expect(try EventStore(path: path, access: .readOnly).verifyIntegrity().isSound)
        // A read of positions from the far end of the integers finds nothing, without trapping.
        #expect(try EventStore(path: path, access: .readOnly).events(EventQuery(positions: Int64.min...Int64.min + 5)).isEmpty)
    }
}

/// Numbers at the end of their column's type, written where the schema lets them through
/// (a position, a recording version, a type version, a recording's row): named as damage
/// or refused, on every store, never an arithmetic trap (a version of 2^63-1 made `verify`
/// trap on its successor's `+ 1`, a type version past 2^32 the chain's envelope).
@Suite struct HostileNumberTests {
    func makeLog(_ folder: TemporaryFolder, _ store: StoreUnderTest) async throws -> LogUnderTest {
        try await TamperEvidenceTests().makeLog(folder, store)
    }

    @Test(arguments: StoreUnderTest.allCases) func aVersionAtTheEndOfTheIntegersIsDamageAtItsPosition(_ store: StoreUnderTest) async throws {
        let folder = try TemporaryFolder()
        let log = try await makeLog(folder, store)
        try log.setVersions(at: 30, streamVersion: Int64.max)
        try log.setVersions(at: 40, typeVersion: 1 << 40)
        if store == .sqliteBlocks {
            try BlockSurgery.alter(log.path, position: 50) { $0.leaf = Int64.max }
        } else {
            try log.sql("UPDATE events SET leaf = 9223372036854775807 WHERE position = 50")
        }
        let reader = try log.reader()
        #expect(throws: EventStoreError.self) { _ = try reader.events() }
        var damaged: [Int64] = [], read = 0
        try reader.scan(skippingDamaged: { damaged.append($0.position ?? 0) }) { _ in read += 1 }
        #expect(damaged.contains(30) && damaged.contains(40) && damaged.contains(50), "\(damaged)")
        #expect(read > 100)
        let report = try reader.verifyIntegrity(progress: nil)
        #expect([30, 40, 50].allSatisfy { position in report.problems.contains { $0.position == position } }, "\(report.problems)")
    }

    @Test(arguments: [StoreUnderTest.sqliteRows, .postgres]) func aPositionAtTheEndOfTheIntegersIsDamage(_ store: StoreUnderTest) async throws {
        let folder = try TemporaryFolder()
        let log = try await makeLog(folder, store)
        let last = try log.reader().lastPosition()
        try log.sql("UPDATE events SET position = 9223372036854775807 WHERE position = \(last)")
        let report = try log.reader().verifyIntegrity(progress: nil)
        #expect(report.problems.contains { $0.position == Int64.max }, "\(report.problems)")
        var damaged = 0
        try log.reader().scan(skippingDamaged: { _ in damaged += 1 }) { _ in }
        #expect(damaged >= 1)
    }

    @Test func aLeafPastAnyTreeIsRefusedBeforeAnythingIsStored() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("log.sqlite"))
        var event = sampleEvents(1)[0]
        event.leaf = Int64.max
        #expect { try store.append([event]) } throws: { "\($0)".contains("0...2^62-1") }
        #expect(try store.lastPosition() == 0)
    }

    @Test(arguments: StoreUnderTest.allCases) func aRecordingsRowAtTheEndOfTheIntegersIsRefusedByAnAppend(_ store: StoreUnderTest) async throws {
        let folder = try TemporaryFolder()
        let log = try await makeLog(folder, store)
        let recording = try #require(try log.reader().event(at: 1)).stream
        try log.sql("UPDATE streams SET version = 9223372036854775807 WHERE uuid = \(log.blob(recording.bytes))")
        #expect(!(try log.reader().verifyIntegrity(progress: nil).isSound))
        let next = NewEvent(id: UUID(), stream: recording, type: "note", recordedAt: Timestamp(microsecondsSince1970: 1), payload: Array("{}".utf8))
        await #expect { try await log.append([next]) } throws: { "\($0)".contains("outside 0...2^62-1") }
    }
}
