import EventStore
import GRDB
import Foundation
import TestSupport
import Testing

@Suite struct AppendAndReadTests {
    @Test func eventsRoundTrip() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("log.sqlite"))
        let stream = UUID()
        let drafts = sampleEvents(50, stream: stream)
        let appended = try store.append(drafts, expecting: [stream: .noStream])
        #expect(appended.map(\.position) == Array(1...50))
        #expect(appended.map(\.streamVersion) == Array(1...50))

        let read = try store.events()
        #expect(read.count == 50)
        for (draft, event) in zip(drafts, read) {
            #expect(event.id == draft.id)
            #expect(event.stream == stream)
            #expect(event.type == draft.type)
            #expect(event.typeVersion == draft.typeVersion)
            #expect(event.recordedAt == draft.recordedAt)
            #expect(event.payload == draft.payload)
            #expect(event.hash.count == 32)
        }
        // A second process (a new store object) sees the same log.
        let reopened = try EventStore(path: folder.path("log.sqlite"), access: .readOnly)
        #expect(try reopened.events() == read)
    }

    @Test func readsByStreamPositionTypeAndTime() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("log.sqlite"))
        let a = UUID(), b = UUID()
        try store.append(sampleEvents(10, stream: a))
        try store.append(sampleEvents(10, stream: b))
        #expect(try store.events(EventQuery(stream: b)).map(\.position) == Array(11...20))
        #expect(try store.events(EventQuery(stream: a, fromStreamVersion: 8)).map(\.streamVersion) == [8, 9, 10])
        #expect(try store.events(EventQuery(positions: 5...7)).map(\.position) == [5, 6, 7])
        #expect(try store.events(EventQuery(types: ["action.insert"])).count == 10)
        let t0 = Timestamp(microsecondsSince1970: 1_700_000_000_000_003)
        #expect(try store.events(EventQuery(stream: a, since: t0)).map(\.streamVersion) == Array(4...10))
        #expect(try store.events(EventQuery(limit: 3)).map(\.position) == [1, 2, 3])
    }

    @Test func aRecordingHeadOfTheWrongSizeIsRefusedAndNothingIsWritten() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        let stream = UUID()
        try EventStore(path: path).append(sampleEvents(3, stream: stream))
        // A file changed by hand, past the schema's own check: the recording's chain head
        // is not a SHA-256 hash.
        try DatabaseQueue(path: path).writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
            try db.execute(sql: "UPDATE streams SET head = x'0102030405' WHERE uuid = ?", arguments: [Data(withUnsafeBytes(of: stream.uuid) { Array($0) })])
        }
        let store = try EventStore(path: path)
        #expect {
            try store.append(sampleEvents(1, stream: stream, startingAt: 1_800_000_000_000_000))
        } throws: { error in
            guard case EventStoreError.damagedDatabase(_, let detail) = error else { return false }
            return detail.contains("5 bytes, not 32") && detail.contains(stream.uuidString.lowercased())
        }
        #expect(try store.count().events == 3)
        // Another recording still appends.
        #expect(try store.append(sampleEvents(1)).first?.position == 4)
    }

    @Test func appendingAStoredIDIsANoOpThatReturnsItsPosition() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("log.sqlite"))
        let drafts = sampleEvents(3)
        let first = try store.append(drafts)
        let retried = try store.append(drafts)
        #expect(retried.map(\.position) == first.map(\.position))
        #expect(retried.allSatisfy { !$0.isNew })
        #expect(try store.count().events == 3)
        // The same id twice inside one batch is stored once.
        let again = sampleEvents(1)
        let twice = try store.append(again + again)
        #expect(twice[0].position == 4 && twice[1].position == 4 && !twice[1].isNew)
        #expect(try store.count().events == 4)
    }

    @Test func expectedVersionMismatchIsATypedConflictAndWritesNothing() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("log.sqlite"))
        let stream = UUID()
        try store.append(sampleEvents(2, stream: stream), expecting: [stream: .noStream])
        #expect(throws: EventStoreError.versionConflict(stream: stream, expected: .exactly(1), actual: 2)) {
            try store.append(sampleEvents(1, stream: stream), expecting: [stream: .exactly(1)])
        }
        #expect(throws: EventStoreError.versionConflict(stream: stream, expected: .noStream, actual: 2)) {
            try store.append(sampleEvents(1, stream: stream), expecting: [stream: .noStream])
        }
        #expect(try store.count().events == 2)
        try store.append(sampleEvents(1, stream: stream), expecting: [stream: .exactly(2)])
        #expect(try store.streamVersion(stream) == 3)
    }

    /// An append skips catalog rows its store committed before, and only those: rows of a
    /// batch that failed are written by the next append that tags them. A row deleted by
    /// hand behind the store's back stays deleted for that store (`verify` names it), and
    /// another store's append writes it again.
    @Test func catalogRowsAreSkippedOnlyOnceCommitted() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        let store = try EventStore(path: path)
        let busy = UUID(), fresh = UUID(), game = UUID(), other = UUID()
        func tagged(_ events: [NewEvent], _ ids: [UUID]) -> [NewEvent] {
            events.map { var event = $0; event.tags = ids.map { EventTag(kind: EventTag.Kind(rawValue: 2), id: $0) }; return event }
        }
        func rows() throws -> Set<String> {
            Set(try store.catalogEntries(EventTag.Kind(rawValue: 2)).map { "\($0.tag.id) \($0.stream) \($0.position)" })
        }
        try store.append(tagged(sampleEvents(1, stream: busy), [game]))
        #expect(try rows().count == 1)
        // An import whose batch was written, rows and all, and then given up: rolled back.
        struct GivenUp: Error {}
        #expect(throws: GivenUp.self) {
            try store.importing { transaction in
                _ = try transaction.append(tagged(sampleEvents(2, stream: fresh), [game, other]), owners: [:])
                throw GivenUp()
            }
        }
        #expect(try rows().count == 1 && store.count().events == 1)
        try store.append(tagged(sampleEvents(2, stream: fresh), [game, other]))
        #expect(try rows() == ["\(game) \(busy) 1", "\(game) \(fresh) 2", "\(other) \(fresh) 2"])
        #expect(try store.catalogIsComplete())
        try tamper(path, "DELETE FROM catalog WHERE position = 2")
        try store.append(tagged(sampleEvents(1, stream: fresh), [game, other]))
        #expect(try rows().count == 1)
        let second = try EventStore(path: path)
        try second.append(tagged(sampleEvents(1, stream: fresh), [game, other]))
        #expect(try rows() == ["\(game) \(busy) 1", "\(game) \(fresh) 5", "\(other) \(fresh) 5"])
    }

    @Test func aFailingBatchLeavesNothing() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("log.sqlite"))
        let busy = UUID(), fresh = UUID()
        try store.append(sampleEvents(1, stream: busy))
        let before = try store.headHash()
        // The conflict is found only at the batch's sixth event, after five inserts.
        let batch = sampleEvents(5, stream: fresh) + sampleEvents(3, stream: busy)
        #expect(throws: EventStoreError.self) {
            try store.append(batch, expecting: [busy: .noStream])
        }
        #expect(try store.count().events == 1)
        #expect(try store.streamVersion(fresh) == 0)
        #expect(try store.headHash() == before)
        // The store is still usable and stays gapless.
        let next = try store.append(sampleEvents(2, stream: fresh))
        #expect(next.map(\.position) == [2, 3])
        #expect(try store.verifyIntegrity().isSound)
    }

    @Test func oversizedPayloadIsRefused() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("log.sqlite"))
        let huge = NewEvent(id: UUID(), stream: UUID(), type: "x", recordedAt: Timestamp(microsecondsSince1970: 0),
                            payload: [UInt8](repeating: 1, count: EventStore.maximumPayloadSize + 1))
        #expect(throws: EventStoreError.self) { try store.append([huge]) }
        #expect(try store.count().events == 0)
    }
}

@Suite struct TimeOrderedIDTests {
    struct Counter: RandomNumberGenerator {
        var state: UInt64 = 0x1234_5678_9ABC_DEF0
        mutating func next() -> UInt64 { state = state &* 6364136223846793005 &+ 1442695040888963407; return state }
    }

    @Test func idsAreVersion7AndSortByTime() throws {
        var generator = Counter()
        let start = Timestamp(microsecondsSince1970: 1_767_225_600_000_000)
        let ids = (0..<500).map { n in
            UUID.timeOrdered(at: Timestamp(microsecondsSince1970: start.microsecondsSince1970 + Int64(n) * 1_000), using: &generator)
        }
        for id in ids {
            #expect(id.uuid.6 >> 4 == 7, "\(id)")
            #expect(id.uuid.8 >> 6 == 0b10, "\(id)")
        }
        // Byte order is time order, so the id index grows at its end.
        let bytes = ids.map { withUnsafeBytes(of: $0.uuid) { Array($0) } }
        #expect(bytes == bytes.sorted { $0.lexicographicallyPrecedes($1) })
        #expect(Set(ids).count == ids.count)
        // The first 48 bits are the milliseconds.
        let first = bytes[0].prefix(6).reduce(0) { $0 << 8 | Int64($1) }
        #expect(first == start.microsecondsSince1970 / 1_000)
        // The same seed gives the same ids.
        var again = Counter()
        #expect(UUID.timeOrdered(at: start, using: &again) == ids[0])
    }
}

/// Large batches are compressed on several threads while the appender inserts them;
/// the stored log must be exactly what a one-event-at-a-time append would store.
@Suite struct LargeBatchTests {
    @Test func aBatchCompressedOnSeveralThreadsStoresEveryEventInOrder() throws {
        let folder = try TemporaryFolder()
        var generator = SystemRandomNumberGenerator()
        var drafts = sampleEvents(3_000, stream: UUID())
        // Payloads that deflate cannot shrink (stored raw) and empty ones, between
        // compressible ones and across chunk borders.
        for index in [0, 63, 64, 65, 1_000, 2_999] {
            drafts[index].payload = (0..<300).map { _ in UInt8.random(in: 0...255, using: &generator) }
        }
        for index in [1, 128, 2_998] { drafts[index].payload = [] }
        // A retried id inside the batch is stored once.
        drafts[1_500] = drafts[1_499]

        let store = try EventStore(path: folder.path("batched.sqlite"))
        try store.append(Array(drafts[0..<10]))
        let appended = try store.append(drafts)  // the first ten are already stored
        #expect(appended.prefix(10).allSatisfy { !$0.isNew })
        #expect(appended[1_500].position == appended[1_499].position)
        #expect(!appended[1_500].isNew)

        let single = try EventStore(path: folder.path("single.sqlite"))
        for draft in drafts { try single.append([draft]) }

        let batched = try store.events(), oneByOne = try single.events()
        #expect(batched.count == drafts.count - 1)
        #expect(batched == oneByOne)
        #expect(try store.verifyIntegrity().isSound)
        #expect(batched[0].payload.count == 300)
        #expect(batched[1].payload.isEmpty)
    }
}

/// A batch claims its ids in `block_ids` together, at the positions its events take;
/// when one of them was stored before, the claims are undone and each event claims its
/// own as it is planned. Either way `block_ids` holds each stored event's id at its
/// position, and nothing else.
@Suite struct BatchClaimTests {
    @Test func aBatchClaimsItsIdsAtOnceAndARetryLeavesNoClaimBehind() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("claims.sqlite")
        let store = try EventStore(path: path)
        // All new, 600 ids: claimed in groups of 256, 256, 64, 16 and 8.
        let first = sampleEvents(600, stream: UUID())
        let appended = try store.append(first)
        #expect(appended.map(\.position) == (1...600).map(Int64.init) && appended.allSatisfy(\.isNew))
        // A batch whose 401st event is stored already: its first two groups were claimed
        // (the second in part) before the retry showed.
        var mixed = sampleEvents(500, stream: UUID())
        mixed[400] = first[17]
        let again = try store.append(mixed)
        #expect(again[400].position == 18 && !again[400].isNew)
        #expect(again.filter(\.isNew).map(\.position) == (601...1_099).map(Int64.init))
        // A batch of retries alone, and one that names an id twice.
        #expect(try store.append(Array(first[100..<300])).allSatisfy { !$0.isNew })
        var twice = sampleEvents(40, stream: UUID())
        twice[39] = twice[3]
        let doubled = try store.append(twice)
        #expect(doubled[39].position == doubled[3].position && !doubled[39].isNew && doubled[3].position == 1_103)
        #expect(doubled.last(where: \.isNew)?.position == 1_138)

        let claims = try DatabaseQueue(path: path).read {
            try Row.fetchAll($0, sql: "SELECT event_id, position FROM block_ids ORDER BY position")
        }
        let events = try store.events()
        #expect(events.count == 1_138 && claims.count == events.count)
        var compared = 0
        for (row, event) in zip(claims, events) {
            #expect(row["position"] as Int64 == event.position)
            #expect(UUID(bytes: Array(row["event_id"] as Data)) == event.id)
            compared += 1
        }
        #expect(compared == 1_138)
        #expect(try store.verifyIntegrity().isSound)
    }
}

@Suite struct PoolThreadAppendTests {
    /// Appends that run on every thread of a busy dispatch pool complete, with every
    /// event stored and chained. (Dispatch has so far always found threads for the
    /// compression lanes here; the pipeline does not rely on it: the appender
    /// compresses whatever no lane has started on and waits only for lanes already
    /// compressing.)
    @Test func appendsFromEveryThreadOfABusyPoolFinish() throws {
        let folder = try TemporaryFolder()
        let paths = (0..<8).map { folder.path("pool-\($0).sqlite") }
        let failures = NSLock()
        nonisolated(unsafe) var errors: [String] = []
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            DispatchQueue.concurrentPerform(iterations: paths.count) { index in
                do {
                    try EventStore(path: paths[index]).append(sampleEvents(2_000))
                } catch {
                    failures.withLock { errors.append("\(error)") }
                }
            }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 120) == .success)
        #expect(failures.withLock { errors }.isEmpty)
        for path in paths {
            let store = try EventStore(path: path, access: .readOnly)
            #expect(try store.count().events == 2_000)
            #expect(try store.verifyIntegrity().isSound)
        }
    }
}

@Suite struct TimestampTextTests {
    /// The digit-by-digit text equals `String(format:)`'s over random times from 1000 to
    /// 9999 (and the fallback outside it), microseconds included.
    @Test func writesWhatStringFormatWrites() {
        var generator = SystemRandomNumberGenerator()
        var compared = 0
        let bounds: ClosedRange<Int64> = -30_610_224_000_000_000...253_402_300_799_999_999 // 1000-01-01 ... 9999-12-31
        let edges: [Int64] = [0, -1, 1, 999_999, -999_999, 1_000_000, -1_000_000, bounds.lowerBound, bounds.upperBound,
                              bounds.lowerBound - 86_400_000_000 * 400, bounds.upperBound + 1]
        for micros in edges + (0..<5_000).map({ _ in Int64.random(in: bounds, using: &generator) }) {
            let seconds = micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000
            var time = time_t(seconds)
            var parts = tm()
            gmtime_r(&time, &parts)
            let reference = String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                                   Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec),
                                   Int(micros - seconds * 1_000_000))
            #expect(Timestamp(microsecondsSince1970: micros).description == reference, "\(micros)")
            compared += 1
        }
        #expect(compared == 5_011)
        #expect(Timestamp(microsecondsSince1970: 1_764_151_445_123_456).description == "2025-11-26T10:04:05.123456Z")
    }
}

/// Where each stream begins and ends, as ``EventStore/scanStreamHeads(part:of:_:)`` reads it
/// from the index rows and each block once, whole or in stretches, against a plain scan of
/// every event: in rows, in blocks, and in a log whose older events were packed into blocks
/// and whose streams go on.
@Suite struct StreamHeadsTests {
    /// (stream, first position, last position) from reading every event.
    func byScanning(_ store: EventStore) throws -> [(UUID, Int64, Int64)] {
        var first: [UUID: Int64] = [:], last: [UUID: Int64] = [:]
        try store.scan(verify: true) { event in
            if first[event.stream] == nil { first[event.stream] = event.position }
            last[event.stream] = event.position
        }
        return first.map { ($0.key, $0.value, last[$0.key]!) }.sorted { $0.1 < $1.1 }
    }

    func heads(_ store: EventStore, part: Int, of parts: Int) throws -> [(UUID, Int64, Int64)] {
        var out: [(UUID, Int64, Int64)] = []
        try store.scanStreamHeads(part: part, of: parts) { head in
            #expect(head.first.streamVersion == 1)
            out.append((head.first.stream, head.first.position, head.lastPosition))
        }
        return out
    }

    /// The heads read whole and in two and three stretches put one after another, against
    /// a plain scan; each head's first event is the scan's, field for field (a block's is
    /// read from as much of its body as it needs).
    func expectHeadsMatchAScan(_ store: EventStore, streams: Int) throws {
        let expected = try byScanning(store)
        #expect(expected.count == streams)
        var firsts: [UUID: StoredEvent] = [:]
        try store.scan(verify: true) { event in if firsts[event.stream] == nil { firsts[event.stream] = event } }
        var compared = 0
        try store.scanStreamHeads { head in
            #expect(head.first == firsts[head.first.stream], "the first event of \(head.first.stream)")
            compared += 1
        }
        #expect(compared == streams)
        for parts in 1...3 {
            var found: [(UUID, Int64, Int64)] = []
            for part in 0..<parts { found += try heads(store, part: part, of: parts) }
            #expect(found.map(\.0) == expected.map(\.0), "\(parts) parts")
            #expect(found.map(\.1) == expected.map(\.1), "\(parts) parts")
            #expect(found.map(\.2) == expected.map(\.2), "\(parts) parts")
        }
    }

    func append(_ store: EventStore, streams: [UUID], rounds: Int) throws {
        for round in 0..<rounds {
            // Streams begin at different points, several in one block, and interleave.
            for (index, stream) in streams.enumerated() where index <= round * 2 {
                try store.append(sampleEvents(1 + (round + index) % 4, stream: stream, startingAt: Int64(round * 1_000 + index)))
            }
        }
    }

    @Test(arguments: [EventStore.Layout.rows, .blocks])
    func headsAreTheStreamsFirstAndLastEventsInOrder(layout: EventStore.Layout) throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("log.sqlite"), layout: layout)
        store.blockCapacity = 8
        try append(store, streams: (0..<9).map { _ in UUID() }, rounds: 6)
        try expectHeadsMatchAScan(store, streams: 9)
    }

    /// A read-only store that keeps stream names (a full replay's decoding threads) names
    /// the streams a writer adds after its first read, and its heads, as a store that
    /// keeps none does.
    @Test(arguments: [EventStore.Layout.rows, .blocks])
    func aStoreThatKeepsStreamNamesSeesStreamsAddedSince(layout: EventStore.Layout) throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        let writer = try EventStore(path: path, layout: layout)
        writer.blockCapacity = 4
        let early = (0..<3).map { _ in UUID() }, late = (0..<3).map { _ in UUID() }
        try append(writer, streams: early, rounds: 2)
        let keeping = try EventStore(path: path, access: .readOnly)
        keeping.keepStreamNames()
        func streamsRead(_ store: EventStore) throws -> [UUID] {
            var out: [UUID] = []
            try store.scan(verify: true) { out.append($0.stream) }
            return out
        }
        #expect(Set(try streamsRead(keeping)) == Set(early))
        try append(writer, streams: early + late, rounds: 4)
        let fresh = try EventStore(path: path, access: .readOnly)
        let expected = try streamsRead(fresh)
        #expect(Set(expected) == Set(early + late))
        #expect(try streamsRead(keeping) == expected)
        try expectHeadsMatchAScan(keeping, streams: 6)
    }

    @Test func headsOfALogPackedIntoBlocksHalfwayAreTheSame() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        let streams = (0..<7).map { _ in UUID() }
        try append(try EventStore(path: path, layout: .rows), streams: streams, rounds: 3)
        let packer = try EventStore(path: path)
        packer.blockCapacity = 5
        #expect(try packer.packRowsIntoBlocks() > 0)
        // The same streams go on in blocks, and new ones begin there.
        try append(packer, streams: streams + (0..<4).map { _ in UUID() }, rounds: 6)
        try expectHeadsMatchAScan(try EventStore(path: path, access: .readOnly), streams: 11)
    }

    /// A log in blocks has its chain hashes worked out on the block writer's own thread;
    /// a log in rows, by the planner as it plans. The same batches (new recordings, ones
    /// going on, retries of stored events, an event twice in one batch, a batch of retries
    /// alone, blocks of 5 so that a batch closes several and continues the last) give
    /// both the same positions, chain hashes and recording heads.
    @Test func aLogInBlocksHashesAsALogInRowsDoes() throws {
        let folder = try TemporaryFolder()
        let rows = try EventStore(path: folder.path("rows.sqlite"), layout: .rows)
        let blocks = try EventStore(path: folder.path("blocks.sqlite"))
        blocks.blockCapacity = 5
        let streams = (0..<6).map { _ in UUID() }
        var stored: [NewEvent] = []
        for round in 0..<12 {
            var batch: [NewEvent] = []
            for (index, stream) in streams.enumerated() where (round + index) % 3 != 0 {
                batch += sampleEvents(1 + (round * 7 + index) % 9, stream: stream, startingAt: Int64(round * 100 + index))
            }
            if !stored.isEmpty {
                batch.insert(stored[(round * 13) % stored.count], at: batch.count / 2)
                batch.append(batch[0])
            }
            if round == 6 { batch = Array(stored.suffix(4)) }
            let positions = try rows.append(batch)
            #expect(try blocks.append(batch) == positions)
            stored += batch
        }
        func chain(_ store: EventStore) throws -> [String] {
            var out: [String] = []
            try store.scan(verify: true) { out.append("\($0.position) \($0.stream) \($0.streamVersion) \(Data($0.hash).base64EncodedString())") }
            return out
        }
        let expected = try chain(rows)
        #expect(expected.count > 150)
        #expect(try chain(blocks) == expected)
        func heads(_ store: EventStore) throws -> [Row] {
            try DatabaseQueue(path: store.path).read { try Row.fetchAll($0, sql: "SELECT uuid, version, head FROM streams ORDER BY uuid") }
        }
        let rowHeads = try heads(rows)
        #expect(rowHeads.count == streams.count)
        #expect(try heads(blocks) == rowHeads)
        try expectHeadsMatchAScan(blocks, streams: streams.count)
    }
}
