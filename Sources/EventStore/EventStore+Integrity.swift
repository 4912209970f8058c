import EventLog
import Foundation
import GRDB

extension EventStore {
    /// Checks the whole log: the hash chain, gapless positions, gapless versions in
    /// every stream, that every payload decodes with its dictionary, and that no
    /// stream's tail was cut off. Unlike ``scan(_:verify:_:)`` it does not stop at the
    /// first problem. Constant memory but for one entry per stream.
    ///
    /// - Parameter progress: called now and then with (events read, total).
    public func verifyIntegrity(progress: ((Int64, Int64) -> Void)? = nil) throws -> IntegrityReport {
        var report = IntegrityReport()
        try Self.translating(path) {
            try queue.read { db in
                let total = try eventCount(db)
                var previousHash = ChainHash.genesis
                var expectedPosition: Int64 = 1
                var lastVersion: [UUID: Int64] = [:]
                // The chain's digests, checked 32 at a time (``DigestBatch``); a mismatch goes
                // where one at a time would have put it among the problems.
                var digests = DigestBatch()
                var checks: [(message: Int, problemIndex: Int, position: Int64)] = []
                func checkDigests() {
                    guard !checks.isEmpty else { return }
                    digests.compute()
                    for check in checks.reversed() where !digests.matchesExpected(check.message) {
                        report.problems.insert(.hashMismatch(position: check.position), at: check.problemIndex)
                    }
                    checks.removeAll(keepingCapacity: true)
                    digests.removeAll()
                }
                var indexes = BlockIndexCheck(store: self, db: db)
                try forEachFound(db, .all, predecessors: false) { found in
                    let position = found.position
                    report.eventCount += 1
                    if report.eventCount % 10_000 == 0 { progress?(report.eventCount, total) }
                    if position != expectedPosition {
                        if position > expectedPosition {
                            for missing in expectedPosition..<min(position, expectedPosition + 10) {
                                report.problems.append(.missingEvent(position: missing))
                            }
                        } else {
                            report.problems.append(.outOfOrder(position: position, detail: "expected \(expectedPosition)"))
                        }
                    }
                    // A row's position past any log's (a hand-written one) is damage the
                    // decoding names; counting on from it would overflow.
                    if position >= 1 && position < LogLimits.maximumCount { expectedPosition = position + 1 }
                    let event: StoredEvent
                    switch found {
                    case .damaged(let error, _, let storedHash):
                        report.problems.append(error)
                        if let storedHash { previousHash = storedHash }
                        return true
                    case .event(let found, _, let block):
                        event = found
                        try indexes.note(event, block: block, into: &report.problems)
                    }
                    checks.append((digests.addChainEnvelope(of: event, after: previousHash, expecting: event.hash),
                                   report.problems.count, position))
                    previousHash = event.hash
                    let expectedVersion = (lastVersion[event.stream] ?? 0) + 1
                    if event.streamVersion != expectedVersion {
                        report.problems.append(.streamVersionGap(position: position, stream: event.stream,
                                                                 expected: expectedVersion, found: event.streamVersion))
                    }
                    lastVersion[event.stream] = event.streamVersion
                    if checks.count == ChainCheck.batchSize { checkDigests() }
                    return true
                }
                checkDigests()
                try indexes.finish(into: &report.problems)
                report.headHash = previousHash
                // A cut-off tail leaves the chain intact, but streams remember their versions.
                let streams = try Row.fetchAll(db, sql: "SELECT uuid, version FROM streams")
                for row in streams {
                    guard let stream = UUID(bytes: row[0] as Data) else { continue }
                    let version: Int64 = row[1]
                    let found = lastVersion[stream] ?? 0
                    if version > found {
                        report.problems.append(.streamVersionGap(position: expectedPosition, stream: stream,
                                                                 expected: version, found: found))
                    }
                }
                progress?(report.eventCount, total)
            }
        }
        return report
    }
}

extension EventStore {
    /// Reads every event from the block holding `position` to the end of the log, by
    /// position (never through the per-recording index), re-deriving the index rows of
    /// every block it reads that find a recording's events (`block_streams`,
    /// `block_leaves`) and comparing them with the stored ones; `body` sees each event.
    /// What one game's audit uses to know that the index hid none of the game's events: a
    /// recording's tail or a later recording of its conversation whose index rows were
    /// removed still lies on this path. (`block_ids`, which finds an event by its id and
    /// which one game's reads do not use, is re-derived by ``verifyIntegrity(progress:)``.)
    /// - Returns: the index rows that disagree with the blocks, and events that could not be read.
    public func verifyIndexes(from position: Int64, _ body: (StoredEvent) throws -> Void) throws -> [EventStoreError] {
        var problems: [EventStoreError] = []
        try Self.translating(path) {
            try queue.read { db in
                let last = try lastPosition(db)
                // From the first event of its block, so that the block's rows are re-derived whole.
                var start = max(1, position)
                if hasBlocks, let row = try Self.blockRow(db, holding: start) { start = try Self.blockBounds(row).first }
                guard start <= last else { return }
                var indexes = BlockIndexCheck(store: self, db: db, checksIDs: false)
                try forEachFound(db, EventQuery(positions: start...last), predecessors: false) { found in
                    switch found {
                    case .damaged(let error, _, _):
                        problems.append(error)
                    case .event(let event, _, let block):
                        try indexes.note(event, block: block, into: &problems)
                        try body(event)
                    }
                    return true
                }
                try indexes.finishRange(into: &problems)
            }
        }
        return problems
    }
}

/// Re-derives the block index rows (`block_ids`, `block_streams`, `block_leaves`) from
/// the blocks' events as a full check reads them, and compares them with the stored
/// ones: a changed index row would make a reader of one game or one recording skip
/// events that a full scan still finds sound.
struct BlockIndexCheck {
    let store: EventStore
    let db: Database
    private var block: Int64?
    private var streams: [Int64: (version: Int64, position: Int64)] = [:]
    private var leaves: [Int64: (first: Int64, last: Int64)] = [:]
    private var treeOfStream: [UUID: (row: Int64, tree: Int64?)] = [:]
    private var counts = (ids: 0, streams: 0, leaves: 0)
    /// Whether each event's `block_ids` row is looked up (one index search an event).
    private let checksIDs: Bool

    init(store: EventStore, db: Database, checksIDs: Bool = true) {
        self.store = store
        self.db = db
        self.checksIDs = checksIDs
    }

    mutating func note(_ event: StoredEvent, block: Int64?, into problems: inout [EventStoreError]) throws {
        guard store.hasBlocks else { return }
        if block != self.block { try close(into: &problems) }
        self.block = block
        guard block != nil else { return }
        counts.ids += 1
        if checksIDs {
            let stored = try Int64.fetchOne(db.cachedStatement(sql: "SELECT position FROM block_ids WHERE event_id = ?"),
                                            arguments: [Data(event.id.bytes)])
            if stored != event.position {
                problems.append(.blockIndexMismatch(position: event.position, detail: stored.map { "block_ids puts its id at \($0)" }
                                                        ?? "block_ids lacks its id"))
            }
        }
        let stream = try streamRow(event.stream)
        streams[stream.row] = (event.streamVersion, event.position)
        if let leaf = event.leaf, let tree = stream.tree {
            let known = leaves[tree]
            leaves[tree] = (min(known?.first ?? leaf, leaf), max(known?.last ?? leaf, leaf))
        }
    }

    mutating func finish(into problems: inout [EventStoreError]) throws {
        guard store.hasBlocks else { return }
        try close(into: &problems)
        for (table, derived) in [("block_ids", counts.ids), ("block_streams", counts.streams), ("block_leaves", counts.leaves)] {
            let stored = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0
            if stored != derived {
                problems.append(.blockIndexMismatch(position: 0, detail: "\(table) holds \(stored) rows, the blocks make \(derived)"))
            }
        }
    }

    /// The end of a read of some blocks (not the whole log): their rows compared, not the tables' sizes.
    mutating func finishRange(into problems: inout [EventStoreError]) throws {
        guard store.hasBlocks else { return }
        try close(into: &problems)
    }

    private mutating func streamRow(_ stream: UUID) throws -> (row: Int64, tree: Int64?) {
        if let known = treeOfStream[stream] { return known }
        let row = try Row.fetchOne(db, sql: "SELECT id, tree_id FROM streams WHERE uuid = ?", arguments: [Data(stream.bytes)])
        let found = (row: row.map { $0[0] as Int64 } ?? -1, tree: row.flatMap { $0[1] as Int64? })
        treeOfStream[stream] = found
        return found
    }

    private mutating func close(into problems: inout [EventStoreError]) throws {
        defer { streams = [:]; leaves = [:] }
        guard let block else { return }
        for (stream, last) in streams {
            counts.streams += 1
            let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT last_version, last_position FROM block_streams WHERE stream_id = ? AND block = ?"),
                                       arguments: [stream, block])
            if row.map({ ($0[0] as Int64, $0[1] as Int64) }).map({ $0 != last.version || $1 != last.position }) ?? true {
                problems.append(.blockIndexMismatch(position: last.position, detail: "block_streams does not say where recording row \(stream) ends in the block at \(block)"))
            }
        }
        for (tree, range) in leaves {
            counts.leaves += 1
            let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT first_leaf, last_leaf FROM block_leaves WHERE tree_id = ? AND block = ?"),
                                       arguments: [tree, block])
            if row.map({ ($0[0] as Int64, $0[1] as Int64) }).map({ $0 != range.first || $1 != range.last }) ?? true {
                problems.append(.blockIndexMismatch(position: block, detail: "block_leaves does not say which leaves of tree \(tree) the block at \(block) holds"))
            }
        }
    }
}
