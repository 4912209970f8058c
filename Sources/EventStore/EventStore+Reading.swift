import EventLog
import Foundation
import GRDB

extension EventStore {
    /// Rows and blocks merged in position order, each checked by ``ChainCheck``: see
    /// ``EventLogReader/scan(_:verify:skippingDamaged:_:)``. Reading never writes.
    public func forEachEvent(matching query: EventQuery, verify: Bool, skippingDamaged damaged: ((EventStoreError) -> Void)?,
                             _ body: (StoredEvent) throws -> Void) throws {
        try Self.translating(path) {
            try queue.read { db in
                var check = try ChainCheck(query: query, verify: verify, hashAt: { try hash(db, at: $0) },
                                           lastPosition: { try lastPosition(db) })
                let predecessors = check.needsPredecessors
                try check.read(skippingDamaged: damaged, body) { take in
                    try forEachFound(db, query, predecessors: predecessors, take)
                }
            }
        }
    }

    /// A stream's first event (a recording's `recording.started`), or nil. Callable from
    /// inside a ``scan(_:verify:skippingDamaged:_:)`` body, which readers of compact
    /// payloads need when they meet a recording in the middle. Its hash is not checked
    /// here: scans and `verify` check it where it stands.
    public func firstEvent(ofStream stream: UUID) throws -> StoredEvent? {
        try Self.translating(path) {
            try queue.unsafeReentrantRead { db in
                var first: StoredEvent?
                try forEachFound(db, EventQuery(stream: stream), predecessors: false) { found in
                    switch found {
                    case .event(let event, _, _): first = event
                    case .damaged(let error, _, _): throw error
                    }
                    return false
                }
                return first
            }
        }
    }

    /// Calls `body` with where each stream begins and ends: its first event (for a
    /// recording, its `recording.started`) and the position of its last event, in
    /// order of first event. Costs a few index lookups per stream and one block read
    /// for each block a stream starts in, however long the log; hashes are not checked
    /// here (``scan(_:verify:_:)`` and ``verifyIntegrity(progress:)`` do).
    public func scanStreamHeads(_ body: (StreamHead) throws -> Void) throws {
        try scanStreamHeads(part: 0, of: 1, body)
    }

    /// The heads of one of `parts` contiguous stretches of the log, in order of first
    /// event: callers read the parts on connections of their own, on as many threads,
    /// and put the parts one after another for every head in order.
    public func scanStreamHeads(part: Int, of parts: Int, _ body: (StreamHead) throws -> Void) throws {
        precondition(parts >= 1 && (0..<parts).contains(part), "part \(part) of \(parts)")
        try Self.translating(path) {
            try queue.read { db in
                // Where each stream begins and ends, in rows and in blocks (a recording open
                // when its log was migrated has both), then its first event, in order.
                // A row per stream, read where it lies (a cursor): copied, as `fetchAll` does,
                // each row was its column names and values made anew, a fifth of a full
                // replay's allocations at 20,000 recordings.
                var spans: [Int64: (first: Int64, last: Int64)] = [:]
                let spanRows = try Row.fetchCursor(db, sql: """
                    SELECT s.id, (SELECT l.position FROM events l WHERE l.stream_id = s.id AND l.stream_version = 1),
                           coalesce((SELECT l.position FROM events l WHERE l.stream_id = s.id AND l.stream_version = s.version),
                                    (SELECT max(l.position) FROM events l WHERE l.stream_id = s.id))
                    FROM streams s
                    """)
                while let row = try spanRows.next() {
                    guard let first = Int64.fromDatabaseValue(row[1]) else { continue }
                    spans[row[0]] = (first, Int64.fromDatabaseValue(row[2]) ?? first)
                }
                // Every stream of its stretch is met once: their names in one statement (kept
                // by the store if it keeps them all, else for this read).
                let names = RowNames(known: knownNames.flatMap { $0.loadsEveryStreamAtOnce ? $0 : nil } ?? KnownRowNames(loadingEveryStream: true))
                var blocks = BlockReader(store: self, db: db)
                // Streams that begin in a block, by that block: each block is inflated once,
                // for all the streams that begin in it (finding a stream's first event and
                // then reading it inflated each block twice, the pass's longest step alone).
                var beginningIn: [Int64: [(stream: Int64, last: Int64)]] = [:]
                if hasBlocks {
                    let starts = try Row.fetchCursor(db, sql: """
                        SELECT stream_id, min(block), max(last_position) FROM block_streams GROUP BY stream_id
                        """)
                    while let row = try starts.next() {
                        let stream: Int64 = row[0], block: Int64 = row[1], last: Int64 = row[2]
                        if let known = spans[stream] {
                            spans[stream] = (known.first, max(known.last, last))
                        } else {
                            beginningIn[block, default: []].append((stream, last))
                        }
                    }
                }
                // In order of first events: a stream known from rows at its first position, a
                // block's streams at the block's (a position is in a row or in a block, never both).
                let order = (spans.map { (position: $0.value.first, stream: $0.key) }
                             + beginningIn.keys.map { (position: $0, stream: Int64(-1)) })
                    .sorted { ($0.position, $0.stream) < ($1.position, $1.stream) }
                let share = (order.count + parts - 1) / parts
                let mine = order.dropFirst(share * part).prefix(share)
                // The stretch's blocks read in one pass, in order (a statement for each block
                // was a sixth of this read).
                let blockPositions = mine.lazy.filter { $0.stream < 0 }.map(\.position)
                let blockRows = try blockPositions.first.map { low in
                    try Row.fetchCursor(db.cachedStatement(sql: """
                        SELECT \(Self.blockColumns) FROM event_blocks b
                        WHERE b.first_position BETWEEN ? AND ? ORDER BY b.first_position
                        """), arguments: [low, blockPositions.max() ?? low])
                }
                /// The row of the block at `position`, the cursor moved on to it (a row past it
                /// kept for the next ask: a block missing from the table is not one to skip).
                var ahead: Row?
                func blockRow(at position: Int64) throws -> Row? {
                    while let row = try ahead ?? blockRows?.next() {
                        ahead = nil
                        let first: Int64 = row[0]
                        if first == position { return row }
                        if first > position {
                            ahead = row.copy()
                            return nil
                        }
                    }
                    return nil
                }
                for item in mine {
                    if item.stream >= 0, let span = spans[item.stream] {
                        guard let first = try blocks.event(at: span.first, names), first.streamVersion == 1 else { continue }
                        try body(StreamHead(first: first, lastPosition: span.last))
                        continue
                    }
                    guard let streams = beginningIn[item.position], let row = try blockRow(at: item.position) else { continue }
                    // Inflated only as far as the last of these first events: on average about
                    // half a block, and no other event made into values.
                    var lastOf: [Int64: Int64] = [:]
                    for (stream, last) in streams { lastOf[stream] = last }
                    for (index, event) in try firstEvents(db, row, of: Set(lastOf.keys)) {
                        let first = try storedEvent(db, event, position: item.position + Int64(index), names)
                        guard first.streamVersion == 1, let last = lastOf[event.streamRowID] else { continue }
                        try body(StreamHead(first: first, lastPosition: last))
                    }
                }
            }
        }
    }

    /// The streams in the log, with their current versions, in order of first event.
    public func streams() throws -> [(stream: UUID, version: Int64)] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT uuid, version FROM streams ORDER BY id").compactMap { row in
                guard let id = UUID(bytes: row[0] as Data) else { return nil }
                return (id, row[1])
            }
        }
    }

    /// The columns every reader of `events` rows selects, in the order
    /// ``decodeRow(_:_:_:)`` reads them. Streams and types are read as ids and named
    /// through ``RowNames``: joining them row by row cost two B-tree lookups per event.
    func selectSQL(for query: EventQuery, withPredecessorHash: Bool) -> (String, StatementArguments) {
        var sql = """
            SELECT e.position, e.event_id, e.stream_id, e.stream_version, e.type_id, e.type_version,
                   e.recorded_at, e.codec, e.dictionary_id, e.raw_size, e.payload, e.hash, \(hasLeafColumn ? "e.leaf" : "NULL")
            """
        if withPredecessorHash {
            sql += ", (SELECT p.hash FROM events p WHERE p.position = e.position - 1)"
        }
        sql += "\nFROM events e"
        var conditions: [String] = []
        var arguments = StatementArguments()
        if let range = query.positions {
            conditions.append("e.position BETWEEN ? AND ?")
            arguments += [range.lowerBound, range.upperBound]
        }
        if let stream = query.stream {
            conditions.append("e.stream_id = (SELECT id FROM streams WHERE uuid = ?)")
            arguments += [Data(stream.bytes)]
            if let from = query.fromStreamVersion {
                conditions.append("e.stream_version >= ?")
                arguments += [from]
            }
        }
        if let streams = query.streams {
            conditions.append("e.stream_id IN (SELECT id FROM streams WHERE uuid IN (\(streams.map { _ in "?" }.joined(separator: ","))))")
            for stream in streams.sorted(by: { $0.precedes($1) }) { arguments += [Data(stream.bytes)] }
        }
        if let types = query.types {
            conditions.append("e.type_id IN (SELECT id FROM event_types WHERE name IN (\(types.map { _ in "?" }.joined(separator: ","))))")
            for type in types.sorted() { arguments += [type] }
        }
        if let since = query.since {
            conditions.append("e.recorded_at >= ?")
            arguments += [since.microsecondsSince1970]
        }
        if let until = query.until {
            conditions.append("e.recorded_at <= ?")
            arguments += [until.microsecondsSince1970]
        }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        sql += " ORDER BY e.position"
        return (sql, arguments)
    }

    func decodeRow(_ db: Database, _ row: Row, _ names: RowNames) throws -> StoredEvent {
        let position: Int64 = row[0]
        guard let id = try row.bytes(at: 1).flatMap(UUID.init(bytes:)),
              let stream = try names.stream(db, id: row[2]) else {
            throw EventStoreError.corruptPayload(position: position, detail: "malformed event or stream id")
        }
        guard let type = try names.type(db, id: row[4]) else {
            throw EventStoreError.corruptPayload(position: position, detail: "its stream or type row is missing")
        }
        guard let streamVersion = Int64.fromDatabaseValue(row[3]), let typeVersion = Int64.fromDatabaseValue(row[5]) else {
            throw EventStoreError.corruptPayload(position: position, detail: "a version of the wrong type")
        }
        let leaf: Int64? = row[12]
        if let reason = LogLimits.outOfRange(position: position, streamVersion: streamVersion, typeVersion: typeVersion, leaf: leaf) {
            throw EventStoreError.corruptPayload(position: position, detail: reason)
        }
        let stored = try row.bytes(at: 10) ?? []
        let hash = try row.bytes(at: 11) ?? []
        let payload = try decodePayload(db, position: position, codec: row[7], dictionaryID: row[8],
                                        rawSize: row[9], stored: stored)
        return StoredEvent(position: position, id: id, stream: stream, streamVersion: streamVersion, type: type,
                           typeVersion: Int(typeVersion), recordedAt: Timestamp(microsecondsSince1970: row[6]),
                           payload: payload, hash: hash, leaf: leaf)
    }
}

/// Stream and type names by row id, looked up once per read: a log has few of each
/// compared with its events.
final class RowNames {
    private var streams: [Int64: UUID?] = [:]
    private var types: [Int64: String?] = [:]
    /// Names kept beyond this read, when the store keeps them (``EventStore/knownNames``).
    private let known: KnownRowNames?

    init(known: KnownRowNames? = nil) { self.known = known }

    func stream(_ db: Database, id: Int64) throws -> UUID? {
        if let found = streams[id] { return found }
        if let found = try known?.stream(db, id: id) {
            streams[id] = found
            return found
        }
        let uuid = try Data.fetchOne(db.cachedStatement(sql: "SELECT uuid FROM streams WHERE id = ?"), arguments: [id]).flatMap { UUID(bytes: $0) }
        streams[id] = uuid
        // Only names found: a row missing now is damage, and this read reports it.
        if let uuid { known?.keep(stream: uuid, id: id) }
        return uuid
    }

    func type(_ db: Database, id: Int64) throws -> String? {
        if let found = types[id] { return found }
        if let found = known?.type(id) {
            types[id] = found
            return found
        }
        let name = try String.fetchOne(db.cachedStatement(sql: "SELECT name FROM event_types WHERE id = ?"), arguments: [id])
        types[id] = name
        if let name { known?.keep(type: name, id: id) }
        return name
    }
}

/// The names of recordings and event types by row id that a store's reads found, kept for
/// its later reads: in a store that reads its file as immutable (as SQLite then does, the
/// file is taken as unchanging while it is open), and in one asked to
/// (``EventStore/keepStreamNames()``). A missing row is not kept (damage is reported by
/// each read that meets it). Each read looked its names up again, a statement each: a
/// conversation's signature check reads a tile's neighbours in several reads (the lookups
/// were a twentieth of a fresh viewer's work under load), and a full replay's chunks meet
/// the same recordings again and again. Bounded, but for the names loaded all at once:
/// past its limit a table is emptied and fills again. Safe to use from any thread.
final class KnownRowNames: @unchecked Sendable {
    /// About 50 bytes each; a log of a million events has some tens of thousands of recordings.
    static let maximumNames = 1 << 17

    private let lock = NSLock()
    // Guarded by `lock`.
    private var streams: [Int64: UUID] = [:]
    private var types: [Int64: String] = [:]
    private var loadsEveryStream: Bool
    private var loadedEveryStream = false

    /// - Parameter loadingEveryStream: the first stream looked up loads every stream's name,
    ///   in one statement (for reads that meet every recording: a pass over the log); a
    ///   stream added since is looked up alone.
    init(loadingEveryStream: Bool = false) { loadsEveryStream = loadingEveryStream }

    /// Loads every stream's name at the first lookup from now on.
    func loadEveryStream() { lock.withLock { loadsEveryStream = true } }

    var loadsEveryStreamAtOnce: Bool { lock.withLock { loadsEveryStream } }

    func stream(_ db: Database, id: Int64) throws -> UUID? {
        let (found, load) = lock.withLock { (streams[id], loadsEveryStream && !loadedEveryStream) }
        guard found == nil, load else { return found }
        var all: [Int64: UUID] = [:]
        // Read where the rows lie (see ``EventStore/scanStreamHeads(part:of:_:)``).
        let rows = try Row.fetchCursor(db, sql: "SELECT id, uuid FROM streams")
        while let row = try rows.next() {
            if let rowID = Int64.fromDatabaseValue(row[0]),
               let uuid = try row.withUnsafeData(atIndex: 1, { $0.flatMap { UUID(bytes: $0) } }) {
                all[rowID] = uuid
            }
        }
        return lock.withLock {
            loadedEveryStream = true
            streams.merge(all) { _, loaded in loaded }
            return streams[id]
        }
    }

    /// The name kept for stream `id`, without reading.
    func kept(stream id: Int64) -> UUID? { lock.withLock { streams[id] } }

    func type(_ id: Int64) -> String? { lock.withLock { types[id] } }

    func keep(stream: UUID, id: Int64) {
        lock.withLock {
            if streams.count >= Self.maximumNames { streams.removeAll(keepingCapacity: true) }
            streams[id] = stream
        }
    }

    func keep(type: String, id: Int64) {
        lock.withLock {
            if types.count >= Self.maximumNames { types.removeAll(keepingCapacity: true) }
            types[id] = type
        }
    }
}

extension Row {
    /// The blob at `index` copied out as bytes, or nil for NULL.
    func bytes(at index: Int) throws -> [UInt8]? {
        try withUnsafeData(atIndex: index) { $0.map(Array.init) }
    }
}

extension EventStore {
    /// The event type names the log holds (its `event_types` table), sorted.
    public func eventTypes() throws -> [String] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT name FROM event_types ORDER BY name").compactMap { String.fromDatabaseValue($0[0]) }
        }
    }
}

