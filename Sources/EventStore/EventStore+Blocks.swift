import EventLog
import Foundation
import GRDB

extension EventStore {
    /// The columns of `event_blocks` every reader selects, in the order ``decodeBlock(_:_:)`` reads them.
    static let blockColumns = "b.first_position, b.count, b.codec, b.dictionary_id, b.raw_size, b.body, b.last_hash"

    /// Calls `body` with what every position matching `query` holds, rows and blocks
    /// merged in position order, until it returns false. Damage is handed to `body`,
    /// never thrown, so the caller decides whether to stop.
    func forEachFound(_ db: Database, _ query: EventQuery, predecessors: Bool, _ body: (consuming FoundEvent) throws -> Bool) throws {
        let names = RowNames(known: knownNames)
        // Rows of `events`: the whole log of a file written before blocks, the first part
        // of one migrated with a recording open, every event of a shared store's copy.
        let (sql, arguments) = selectSQL(for: query, withPredecessorHash: predecessors)
        // A query of a usual shape keeps its prepared statement: preparing (parsing and
        // GRDB's authorizer) was a twentieth of a busy viewer's time, one game at a time.
        let usual = (query.streams?.count ?? 0) <= 8 && (query.types?.count ?? 0) <= 8
        let rows = usual ? try Row.fetchCursor(try db.cachedStatement(sql: sql), arguments: arguments)
                         : try Row.fetchCursor(db, sql: sql, arguments: arguments)
        func nextRow() throws -> FoundEvent? {
            guard let row = try rows.next() else { return nil }
            let position: Int64 = row[0]
            do {
                let event = try decodeRow(db, row, names)
                var predecessor: [UInt8]? = nil
                if predecessors && position > 1 {
                    predecessor = try row.bytes(at: 13)
                    if predecessor == nil { predecessor = try hash(db, at: position - 1) }
                }
                return .event(event, predecessorHash: predecessor, block: nil)
            } catch let error as EventStoreError {
                return .damaged(error, position: position, storedHash: try row.bytes(at: 11))
            }
        }
        var blocks = hasBlocks ? try BlockScan(store: self, db: db, query: query, names: names, predecessors: predecessors) : nil
        var row = try nextRow()
        var inBlock = try blocks?.next()
        while row != nil || inBlock != nil {
            let found: FoundEvent
            // Each taken out of its optional, not copied (a copy retained every reference
            // of the event, and the next assignment released them).
            if let candidate = row?.position, candidate <= inBlock?.position ?? .max {
                found = row.take()!
                row = try nextRow()
            } else {
                found = inBlock.take()!
                inBlock = try blocks?.next()
            }
            guard try body(found) else { return }
        }
    }

    /// The stored hash of the event at `position`, from its row or its block; nil if no
    /// event is stored there.
    func hash(_ db: Database, at position: Int64) throws -> [UInt8]? {
        if let stored = try Data.fetchOne(db.cachedStatement(sql: "SELECT hash FROM events WHERE position = ?"), arguments: [position]) {
            return Array(stored)
        }
        guard hasBlocks, let row = try Self.blockRow(db, holding: position) else { return nil }
        let (first, count) = try Self.blockBounds(row)
        if position == first + count - 1 { return try row.bytes(at: 6) }
        let block = try decodeBlock(db, row)
        return block.events[Int(position - first)].hash
    }

    /// The position of the last event, rows and blocks (0 for an empty log).
    func lastPosition(_ db: Database) throws -> Int64 {
        // Cached: every append asks (each statement parsed anew was a percent of an append of 1,000 events).
        let inRows = try Int64.fetchOne(db.cachedStatement(sql: "SELECT coalesce(max(position), 0) FROM events")) ?? 0
        guard hasBlocks else { return inRows }
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT first_position, count FROM event_blocks ORDER BY first_position DESC LIMIT 1")) else {
            return inRows
        }
        let (first, count) = try Self.blockBounds(row)
        return max(inRows, first + count - 1)
    }

    /// The number of events stored, rows and blocks.
    func eventCount(_ db: Database) throws -> Int64 {
        let inRows = try Int64.fetchOne(db, sql: "SELECT count(*) FROM events") ?? 0
        guard hasBlocks else { return inRows }
        return inRows + (try Int64.fetchOne(db, sql: "SELECT coalesce(sum(count), 0) FROM event_blocks") ?? 0)
    }

    /// A block row's first position and event count, held to the schema's bounds (a row
    /// written past its CHECKs is damage, never arithmetic that overflows).
    static func blockBounds(_ row: Row) throws -> (first: Int64, count: Int64) {
        guard let first = Int64.fromDatabaseValue(row[0]), let count = Int64.fromDatabaseValue(row[1]),
              first >= 1, first <= MerkleTree.maximumSize, count >= 1, count <= Int64(EventBlock.maximumCount) else {
            throw EventStoreError.corruptPayload(position: max(0, Int64.fromDatabaseValue(row[0]) ?? 0), detail:
                "its block's row has a first position or an event count outside the schema's bounds (written past its checks)")
        }
        return (first, count)
    }

    /// The row of the block that holds `position`, if any.
    static func blockRow(_ db: Database, holding position: Int64) throws -> Row? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT \(blockColumns) FROM event_blocks b WHERE b.first_position <= ? ORDER BY b.first_position DESC LIMIT 1
            """), arguments: [position]) else { return nil }
        let (first, count) = try blockBounds(row)
        return position < first + count ? row : nil
    }

    /// A block row's events: inflated, parsed and checked against the row (its count,
    /// its last hash). A block that fails any of these damages every event in it.
    func decodeBlock(_ db: Database, _ row: Row) throws -> EventBlock {
        let (first, count, codec, rawSize) = try Self.blockHeader(row)
        let dictionaryID = Int64.fromDatabaseValue(row[3]), stored = try row.bytes(at: 5) ?? [], lastHash = try row.bytes(at: 6)
        // Only work given a memo compares rows (a full replay's decoding threads are given none).
        let memo = blockMemo.map { ($0, BlockMemo.Row(count: count, codec: codec, dictionaryID: dictionaryID, rawSize: rawSize, stored: stored, lastHash: lastHash)) }
        if let (memo, key) = memo, let known = memo.block(at: first, row: key) { return known }
        let body = try decodePayload(db, position: first, codec: codec, dictionaryID: dictionaryID,
                                     rawSize: rawSize, stored: stored, limit: EventBlock.maximumBodySize)
        let block: EventBlock
        do {
            block = try EventBlock(body: body)
        } catch {
            throw EventStoreError.corruptPayload(position: first, detail: "its block does not decode: \(error.description)")
        }
        guard Int64(block.events.count) == count else {
            throw EventStoreError.corruptPayload(position: first, detail: "its block holds \(block.events.count) events, its row says \(count)")
        }
        guard block.events.last?.hash == lastHash else {
            throw EventStoreError.hashMismatch(position: first + count - 1)
        }
        if let (memo, key) = memo { memo.keep(block, at: first, row: key) }
        return block
    }

    /// Runs `body` with the blocks this store decodes kept in `memo`, and blocks `memo`
    /// holds answered from it: for work that reads the same blocks several times in a
    /// short while (a conversation's signature check reads its recordings, then each of
    /// its devices' tiles around them, and its own checks the recordings again).
    package func remembering<T>(blocks memo: BlockMemo, _ body: () throws -> T) rethrows -> T {
        let previous = memoLock.withLock { () -> BlockMemo? in
            defer { memoSlot = memo }
            return memoSlot
        }
        defer { memoLock.withLock { memoSlot = previous } }
        return try body()
    }

    private var blockMemo: BlockMemo? { memoLock.withLock { memoSlot } }

    /// A block row's bounds, codec and body size, held to what a reader accepts.
    private static func blockHeader(_ row: Row) throws -> (first: Int64, count: Int64, codec: Int64, rawSize: Int) {
        let (first, count) = try blockBounds(row)
        guard let codec = Int64.fromDatabaseValue(row[2]),
              let rawSize = Int.fromDatabaseValue(row[4]), rawSize >= 1, rawSize <= EventBlock.maximumBodySize else {
            throw EventStoreError.corruptPayload(position: first, detail: "its block's row has a value of the wrong kind or size")
        }
        return (first, count, codec, rawSize)
    }

    /// The first event of each of `streams` (row ids) in a block, with its index, inflating
    /// the body only as far as the last of them: its columns, its count and its last hash
    /// are checked against the row, as ``decodeBlock(_:_:)`` checks them; the payloads
    /// after those are left to a reader of the whole block.
    func firstEvents(_ db: Database, _ row: Row, of streams: Set<Int64>) throws -> [(index: Int, event: EventBlock.Event)] {
        let (first, count, codec, rawSize) = try Self.blockHeader(row)
        var found: [(index: Int, event: EventBlock.Event)] = []
        var header: (count: Int, lastHash: [UInt8])?
        // The columns of a block of 64 events take about 4 KB.
        try decodePayloadPrefix(db, position: first, codec: codec, dictionaryID: Int64.fromDatabaseValue(row[3]), rawSize: rawSize,
                                stored: try row.bytes(at: 5) ?? [], first: 4096) { prefix in
            var taken: Set<Int64> = []
            let answer: EventBlock.Prefix
            do throws(EventBlock.Malformed) {
                answer = try EventBlock.events(inPrefix: prefix, bodySize: rawSize) { streams.contains($0) && taken.insert($0).inserted }
            } catch {
                throw EventStoreError.corruptPayload(position: first, detail: "its block does not decode: \(error.description)")
            }
            switch answer {
            case .needs(let bytes):
                return bytes
            case .events(let events, let count, let lastHash):
                found = events
                header = (count, lastHash)
                return nil
            }
        }
        guard let header, Int64(header.count) == count else {
            throw EventStoreError.corruptPayload(position: first, detail: "its block holds \(header?.count ?? 0) events, its row says \(count)")
        }
        guard header.lastHash == (try row.bytes(at: 6)) else {
            throw EventStoreError.hashMismatch(position: first + count - 1)
        }
        return found
    }

    /// An event of a block as readers see it, its stream and type named.
    func storedEvent(_ db: Database, _ event: EventBlock.Event, position: Int64, _ names: RowNames) throws -> StoredEvent {
        guard let stream = try names.stream(db, id: event.streamRowID) else {
            throw EventStoreError.corruptPayload(position: position, detail: "its stream row is missing")
        }
        guard let type = try names.type(db, id: event.typeRowID) else {
            throw EventStoreError.corruptPayload(position: position, detail: "its type row is missing")
        }
        if let reason = LogLimits.outOfRange(position: position, streamVersion: event.streamVersion, typeVersion: event.typeVersion,
                                             leaf: event.leaf) {
            throw EventStoreError.corruptPayload(position: position, detail: reason)
        }
        guard event.typeVersion <= Int64(Int32.max) else {
            throw EventStoreError.corruptPayload(position: position, detail: "its type version \(event.typeVersion) is past what a block holds")
        }
        return StoredEvent(position: position, id: event.id, stream: stream, streamVersion: event.streamVersion, type: type,
                           typeVersion: Int(event.typeVersion), recordedAt: Timestamp(microsecondsSince1970: event.recordedAt),
                           payload: event.payload, hash: event.hash, leaf: event.leaf)
    }
}

/// Single events by position, rows or blocks, keeping the last block decoded: callers
/// ask for positions in increasing order, often several in one block.
struct BlockReader {
    let store: EventStore
    let db: Database
    private var cached: (first: Int64, block: EventBlock)?

    init(store: EventStore, db: Database) {
        self.store = store
        self.db = db
    }

    /// The row of the block whose first position is `first`, not decoded.
    func row(at first: Int64) throws -> Row? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT \(EventStore.blockColumns) FROM event_blocks b WHERE b.first_position = ?"),
                         arguments: [first])
    }

    /// The event at `position`, unchecked (its hash is not recomputed), or nil.
    mutating func event(at position: Int64, _ names: RowNames) throws -> StoredEvent? {
        let (sql, arguments) = store.selectSQL(for: EventQuery(positions: position...position), withPredecessorHash: false)
        if let row = try Row.fetchOne(db.cachedStatement(sql: sql), arguments: arguments) {
            return try store.decodeRow(db, row, names)
        }
        guard store.hasBlocks else { return nil }
        if let cached, position >= cached.first, position < cached.first + Int64(cached.block.events.count) {
            return try store.storedEvent(db, cached.block.events[Int(position - cached.first)], position: position, names)
        }
        guard let row = try EventStore.blockRow(db, holding: position) else { return nil }
        let first: Int64 = row[0]
        let block = try store.decodeBlock(db, row)
        cached = (first, block)
        return try store.storedEvent(db, block.events[Int(position - first)], position: position, names)
    }
}

/// The events of the blocks a query may touch, in position order, filtered as the
/// query says (the block rows are chosen by position and recording; the rest is
/// checked event by event).
struct BlockScan {
    let store: EventStore
    let db: Database
    let query: EventQuery
    let names: RowNames
    let predecessors: Bool
    private let cursor: RowCursor
    private let streamRowIDs: Set<Int64>?
    private let typeRowIDs: Set<Int64>?
    private var pending: [FoundEvent] = []
    private var pendingIndex = 0

    init(store: EventStore, db: Database, query: EventQuery, names: RowNames, predecessors: Bool) throws {
        self.store = store
        self.db = db
        self.query = query
        self.names = names
        self.predecessors = predecessors
        var conditions: [String] = []
        var arguments = StatementArguments()
        if let range = query.positions {
            // A block holds at most `maximumCount` events, so one that reaches `range`
            // starts at most that far before it: a range of the primary key.
            conditions.append("b.first_position BETWEEN ? AND ? AND b.first_position + b.count > ?")
            let reach = Int64(EventBlock.maximumCount) - 1
            arguments += [range.lowerBound > Int64.min + reach ? range.lowerBound - reach : Int64.min, range.upperBound, range.lowerBound]
        }
        var wanted: [UUID] = []
        if let stream = query.stream { wanted.append(stream) }
        if let streams = query.streams { wanted += streams.sorted(by: { $0.precedes($1) }) }
        if query.stream != nil || query.streams != nil {
            var ids: Set<Int64> = []
            for stream in wanted {
                if let id = try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM streams WHERE uuid = ?"), arguments: [Data(stream.bytes)]) {
                    ids.insert(id)
                }
            }
            // Both filters together select their common streams, as the rows' SQL does.
            if let stream = query.stream, query.streams != nil, !(query.streams!.contains(stream)) { ids = [] }
            streamRowIDs = ids
            if ids.isEmpty {
                conditions.append("0")
            } else {
                // Placeholders, not the ids themselves: the statement is cached by its text.
                conditions.append("b.first_position IN (SELECT block FROM block_streams WHERE stream_id IN (\(ids.map { _ in "?" }.joined(separator: ","))) AND last_version >= ?)")
                for id in ids.sorted() { arguments += [id] }
                arguments += [query.stream != nil ? (query.fromStreamVersion ?? 1) : 1]
            }
        } else {
            streamRowIDs = nil
        }
        if let types = query.types {
            var ids: Set<Int64> = []
            for type in types {
                if let id = try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM event_types WHERE name = ?"), arguments: [type]) {
                    ids.insert(id)
                }
            }
            typeRowIDs = ids
        } else {
            typeRowIDs = nil
        }
        var sql = "SELECT \(EventStore.blockColumns) FROM event_blocks b"
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        sql += " ORDER BY b.first_position"
        cursor = streamRowIDs.map { $0.count <= 8 } ?? true
            ? try Row.fetchCursor(try db.cachedStatement(sql: sql), arguments: arguments)
            : try Row.fetchCursor(db, sql: sql, arguments: arguments)
    }

    mutating func next() throws -> FoundEvent? {
        while pendingIndex == pending.count {
            guard let row = try cursor.next() else { return nil }
            pending = []
            pendingIndex = 0
            try fill(row)
        }
        pendingIndex += 1
        return pending[pendingIndex - 1]
    }

    private func selects(_ event: EventBlock.Event, at position: Int64) -> Bool {
        if let range = query.positions, !range.contains(position) { return false }
        if let ids = streamRowIDs, !ids.contains(event.streamRowID) { return false }
        if query.stream != nil, let from = query.fromStreamVersion, event.streamVersion < from { return false }
        if let ids = typeRowIDs, !ids.contains(event.typeRowID) { return false }
        if let since = query.since, event.recordedAt < since.microsecondsSince1970 { return false }
        if let until = query.until, event.recordedAt > until.microsecondsSince1970 { return false }
        return true
    }

    private mutating func fill(_ row: Row) throws {
        let first = min(max(Int64.fromDatabaseValue(row[0]) ?? 1, 1), MerkleTree.maximumSize)
        let block: EventBlock
        do {
            block = try store.decodeBlock(db, row)
        } catch let error as EventStoreError {
            // Nothing of it can be trusted: every position it covers is damaged.
            let count = max(1, min(Int64.fromDatabaseValue(row[1]) ?? 1, Int64(EventBlock.maximumCount)))
            let last = first + count - 1
            for position in first...last where query.positions?.contains(position) ?? true {
                let detail = "it is in the block of positions \(first)-\(last), which cannot be read"
                pending.append(.damaged(position == first ? error : .corruptPayload(position: position, detail: detail),
                                        position: position, storedHash: position == last ? try row.bytes(at: 6) : nil))
            }
            return
        }
        for (index, event) in block.events.enumerated() {
            let position = first + Int64(index)
            guard selects(event, at: position) else { continue }
            do {
                let stored = try store.storedEvent(db, event, position: position, names)
                var predecessor: [UInt8]? = nil
                if predecessors && position > 1 {
                    predecessor = index > 0 ? block.events[index - 1].hash : try store.hash(db, at: position - 1)
                }
                pending.append(.event(stored, predecessorHash: predecessor, block: first))
            } catch let error as EventStoreError {
                pending.append(.damaged(error, position: position, storedHash: event.hash))
            }
        }
    }
}

/// Blocks decoded during one piece of work (``EventStore/remembering(blocks:_:)``), each
/// answered again only for a row exactly like the one it was decoded from (its body's
/// bytes, count, codec, size and last hash), so what a read returns is what decoding that
/// row would. Bounded; safe to use from any thread.
package final class BlockMemo: @unchecked Sendable {
    /// A block row's stored form, compared whole before a kept block is used.
    struct Row: Equatable {
        var count: Int64
        var codec: Int64
        var dictionaryID: Int64?
        var rawSize: Int
        var stored: [UInt8]
        var lastHash: [UInt8]?
    }

    /// A block of 64 events decoded is some tens of kilobytes.
    static let maximumBlocks = 128

    private let lock = NSLock()
    // Guarded by `lock`.
    private var blocks: [Int64: (row: Row, block: EventBlock)] = [:]

    package init() {}

    func block(at first: Int64, row: Row) -> EventBlock? {
        lock.withLock { blocks[first].flatMap { $0.row == row ? $0.block : nil } }
    }

    /// How many blocks it holds.
    var count: Int { lock.withLock { blocks.count } }

    func keep(_ block: EventBlock, at first: Int64, row: Row) {
        lock.withLock {
            if blocks.count >= Self.maximumBlocks { blocks.removeAll(keepingCapacity: true) }
            blocks[first] = (row, block)
        }
    }
}
