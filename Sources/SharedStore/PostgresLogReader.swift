import EventStore
import Foundation
import NIOCore
import PostgresNIO

extension SharedStore {
    /// A reader of the store as it is in PostgreSQL: every answer is a few statements
    /// through the store's indexes (one game, one page of games, a recording's start),
    /// and nothing is copied to this machine.
    ///
    /// It follows the same rules as a SQLite log's reads (the chain, damage, payloads):
    /// see ``EventLogReader``.
    public func reader() -> PostgresLogReader { PostgresLogReader(store: self) }

    /// A reader of the store as it was at one moment, whatever is written meanwhile: its
    /// statements run in one read-only `REPEATABLE READ` transaction, and every reader made
    /// from it (``PostgresLogReader/anotherReader()``) shares that transaction's snapshot
    /// (`pg_export_snapshot`). An audit reads through it, so that an upload stored while
    /// it runs (events and the head that signs them, in one transaction) is wholly in or
    /// wholly out of everything it reads. A connection lost meanwhile cannot get the moment
    /// back: its next read fails, saying so.
    public func snapshotReader() -> PostgresLogReader { PostgresLogReader(store: self, snapshot: .exports) }
}

/// The shared store read natively: an ``EventLogReader`` over PostgreSQL.
///
/// It holds one connection, opened at its first read (which also checks the schema's
/// version) and opened again if the server dropped it. Like a SQLite ``EventStore``, it
/// is used from one thread at a time; make one per thread for parallel reads.
public class PostgresLogReader: EventLogReader, @unchecked Sendable {
    public let store: SharedStore
    public var location: String { store.location.description }

    /// Events fetched per statement when a read pages through the log: a whole game is
    /// usually one statement, and a read of the whole log holds one page at a time.
    public var pageSize = 2_000

    private let lock = NSLock()
    private var connection: PostgresConnection?
    private let payloads = PayloadDecoder()
    /// The log's dictionaries by id, fetched at the first payload that names one (a log
    /// has a handful, each at most 32 KiB).
    private var dictionaries: [Int64: [UInt8]]?

    /// Whether the reader opened its connection (and closes it), rather than reading
    /// on a writer's, inside the writer's transaction.
    private let ownsConnection: Bool

    /// How a reader's reads see the store: each statement as it is then, or all of them
    /// at one moment (a snapshot it exports, or one another reader exported).
    enum Snapshot: Sendable {
        case exports
        case imports(String)
    }
    private let snapshot: Snapshot?
    /// The snapshot this reader's transaction exported (for readers made from it), once open.
    private var exported: String?
    /// Whether a connection was opened once: a snapshot reader cannot open a second.
    private var opened = false

    init(store: SharedStore, snapshot: Snapshot? = nil) {
        self.store = store
        self.snapshot = snapshot
        ownsConnection = true
    }

    /// A reader on `connection`, which the caller owns: it sees what the caller's open
    /// transaction wrote.
    init(store: SharedStore, borrowing connection: PostgresConnection) {
        self.store = store
        self.connection = connection
        snapshot = nil
        ownsConnection = false
    }

    deinit {
        if ownsConnection, let connection { connection.closeAndRelease() }
    }

    // MARK: - Statements

    /// One statement's rows, each turned into a value by `decode`.
    ///
    /// The caller's thread waits for the connection's event loop (no task is made: a
    /// reader sends hundreds of small statements for one page, and the hops through Swift
    /// tasks were most of each one's time). A statement has
    /// ``SharedStore/statementDeadline``, kept by a timer on the same event loop that
    /// closes the connection: a server gone without a word would otherwise hold the reader
    /// forever. Never called on an event loop (readers are used from the callers' threads).
    func fetch<T>(_ sql: String, _ binds: PostgresBindings = PostgresBindings(),
                          _ decode: (PostgresRandomAccessRow) throws -> T) throws -> [T] {
        let open: PostgresConnection? = lock.withLock { self.connection.flatMap { $0.isClosed ? nil : $0 } }
        if open == nil && !ownsConnection {
            throw SharedStoreError.unreachable(location: store.location.description, detail: "the writer's connection closed during its transaction")
        }
        let connection = try open ?? SharedStore.wait { [self] in try await self.openConnection() }
        let deadline = SharedStore.statementDeadlineFromNow()
        try beforeSend()
        let answer = connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: SharedStore.logger)
        // A writer's statements sent before this one answer first (the connection runs them
        // in order): waited for together, the first failure among them named.
        try beforeAnswer()
        let result: PostgresQueryResult
        do {
            result = try answer.wait(until: deadline, on: connection, onExpiry: { _ = connection.close() as EventLoopFuture<Void> })
        } catch {
            // A dropped connection is opened again by the next read.
            if (error is SharedStore.StatementDeadlinePassed || error is SharedStore.ConnectionClosed || connection.isClosed) && ownsConnection {
                forget(connection)
                throw SharedStoreError.unreachable(location: store.location.description,
                                                   detail: "the connection closed during a statement (no answer within \(SharedStore.statementDeadline), or the server went away)")
            }
            throw store.translate(error)
        }
        return try result.rows.map { try decode($0.makeRandomAccess()) }
    }

    /// What must happen before the answer to a statement whose rows are read is waited
    /// for (a writer's statements sent ahead of it are answered first).
    func beforeAnswer() throws {}

    /// What must happen before a statement whose rows are read is sent (a writer's held
    /// writes go first).
    func beforeSend() throws {}

    /// The borrowed connection a writer sends statements on.
    var borrowedConnection: PostgresConnection? { ownsConnection ? nil : lock.withLock { connection } }

    private func openConnection() async throws -> PostgresConnection {
        if let open = lock.withLock({ connection }), !open.isClosed { return open }
        if snapshot != nil, lock.withLock({ opened }) {
            throw SharedStoreError.unreachable(location: store.location.description, detail:
                "the connection closed during a read of the store at one moment (an audit), which a new connection cannot see again; run it again")
        }
        let made = try await store.connect()
        do {
            _ = try await store.version(made)
            switch snapshot {
            case .exports?:
                _ = try await made.query("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: SharedStore.logger)
                let rows = try await made.query("SELECT pg_export_snapshot()", logger: SharedStore.logger)
                var id: String?
                for try await row in rows { id = try row.decode(String.self) }
                lock.withLock { exported = id }
            case .imports(let id)?:
                _ = try await made.query("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: SharedStore.logger)
                // The id is the server's own answer (hexadecimal digits and dashes), never a user's text.
                _ = try await made.query(PostgresQuery(unsafeSQL: "SET TRANSACTION SNAPSHOT '\(id.filter { $0.isHexDigit || $0 == "-" })'"),
                                         logger: SharedStore.logger)
            case nil:
                break
            }
        } catch {
            _ = try? await made.close()
            throw store.translate(error)
        }
        lock.withLock {
            connection = made
            opened = true
        }
        return made
    }

    /// The snapshot this reader sees, if it sees one moment: the one it exported (its
    /// connection opened first if need be), or the one it imported.
    func exportedSnapshot() throws -> String? {
        switch snapshot {
        case nil: return nil
        case .imports(let id)?: return id
        case .exports?: break
        }
        if let id = lock.withLock({ exported }) { return id }
        _ = try SharedStore.wait { [self] in try await self.openConnection() }
        return lock.withLock { exported }
    }

    private func forget(_ closed: PostgresConnection) {
        lock.withLock { if connection === closed { connection = nil } }
    }

    static func binds(_ values: [any PostgresNonThrowingEncodable]) -> PostgresBindings {
        var binds = PostgresBindings()
        for value in values { binds.append(value) }
        return binds
    }

    // MARK: - Events

    public func forEachEvent(matching query: EventQuery, verify: Bool, skippingDamaged damaged: ((EventStoreError) -> Void)?,
                             _ body: (StoredEvent) throws -> Void) throws {
        var check = try ChainCheck(query: query, verify: verify, hashAt: { try hash(at: $0) }, lastPosition: { try lastPosition() })
        var after = max(0, (query.positions?.lowerBound ?? 1) - 1)
        // A read of a few events (a recording's first) asks for no more than that. A read
        // of some recordings (a page of games, a worker's claim) asks for ten pages at a
        // time: each statement merges every recording's events from the last position on,
        // so six statements for a page of 50 games cost twice one.
        let wanted = query.streams == nil ? pageSize : pageSize * 10
        let page = max(1, min(wanted, query.limit ?? wanted))
        let predecessors = check.needsPredecessors
        try check.read(skippingDamaged: damaged, body) { take in
            while true {
                let (sql, binds) = Self.eventSQL(query, after: after, predecessors: predecessors, byStreamVersion: false, limit: page)
                let rows = try fetch(sql, binds, EventRow.init)
                for row in rows {
                    guard try take(try found(row)) else { return }
                }
                guard rows.count == page, let last = rows.last else { return }
                after = last.position
            }
        }
    }

    public func firstEvent(ofStream stream: UUID) throws -> StoredEvent? {
        // By stream version, through the (stream_id, stream_version) index: by position
        // the planner may walk the log from its start to the recording's.
        let (sql, binds) = Self.eventSQL(EventQuery(stream: stream), after: 0, predecessors: false, byStreamVersion: true, limit: 1)
        guard let row = try fetch(sql, binds, EventRow.init).first else { return nil }
        switch try found(row) {
        case .event(let event, _, _): return event
        case .damaged(let error, _, _): throw error
        }
    }

    /// The stored hash at `position`, nil when no event is there.
    func hash(at position: Int64) throws -> [UInt8]? {
        try fetch("SELECT hash FROM events WHERE position = $1", Self.binds([position])) { row in
            Array(try row[0].decode(ByteBuffer.self).readableBytesView)
        }.first
    }

    public func lastPosition() throws -> Int64 {
        try fetch("SELECT coalesce(max(position), 0) FROM events") { try $0[0].decode(Int64.self) }.first ?? 0
    }

    public func count() throws -> (events: Int64, lastPosition: Int64) {
        try fetch("SELECT count(*), coalesce(max(position), 0) FROM events") { row in
            (try row[0].decode(Int64.self), try row[1].decode(Int64.self))
        }.first ?? (0, 0)
    }

    public func headHash() throws -> [UInt8] {
        try fetch("SELECT hash FROM events ORDER BY position DESC LIMIT 1") { row in
            Array(try row[0].decode(ByteBuffer.self).readableBytesView)
        }.first ?? ChainHash.genesis
    }

    public func eventTypes() throws -> [String] {
        try fetch("SELECT name FROM event_types ORDER BY name") { try $0[0].decode(String.self) }
    }

    /// One row of `events` as read, before any check.
    struct EventRow: Sendable {
        var position: Int64
        /// Nil where the column is null or not 16 bytes.
        var id: UUID?
        var stream: UUID?
        var streamVersion: Int64
        var type: String?
        var typeVersion: Int64
        var recordedAt: Int64
        var codec: Int64
        var dictionaryID: Int64?
        var rawSize: Int64
        var payload: [UInt8]
        var hash: [UInt8]
        var leaf: Int64?
        var predecessor: [UInt8]?

        init(_ row: PostgresRandomAccessRow) throws {
            func bytes(_ index: Int) throws -> [UInt8]? { try row[index].decode(ByteBuffer?.self).map { Array($0.readableBytesView) } }
            position = try row[0].decode(Int64.self)
            // Read where they lie (an array each first was two allocations an event).
            id = try row[1].decode(ByteBuffer?.self).flatMap { UUID(bytes: $0.readableBytesView) }
            stream = try row[2].decode(ByteBuffer?.self).flatMap { UUID(bytes: $0.readableBytesView) }
            streamVersion = try row[3].decode(Int64.self)
            type = try row[4].decode(String?.self)
            typeVersion = try row[5].decode(Int64.self)
            recordedAt = try row[6].decode(Int64.self)
            codec = try row[7].decode(Int64.self)
            dictionaryID = try row[8].decode(Int64?.self)
            rawSize = try row[9].decode(Int64.self)
            payload = try bytes(10) ?? []
            hash = try bytes(11) ?? []
            leaf = try row[12].decode(Int64?.self)
            predecessor = row.count > 13 ? try bytes(13) : nil
        }
    }

    /// What the row holds, by the rules a SQLite log's rows are read by.
    func found(_ row: EventRow) throws -> FoundEvent {
        do {
            guard let id = row.id, let stream = row.stream else {
                throw EventStoreError.corruptPayload(position: row.position, detail: "malformed event or stream id")
            }
            guard let type = row.type else {
                throw EventStoreError.corruptPayload(position: row.position, detail: "its stream or type row is missing")
            }
            guard let typeVersion = Int(exactly: row.typeVersion), let rawSize = Int(exactly: row.rawSize), rawSize >= 0 else {
                throw EventStoreError.corruptPayload(position: row.position, detail: "a size or version out of range")
            }
            if let reason = LogLimits.outOfRange(position: row.position, streamVersion: row.streamVersion, typeVersion: row.typeVersion,
                                                 leaf: row.leaf) {
                throw EventStoreError.corruptPayload(position: row.position, detail: reason)
            }
            let payload = try payloads.decode(position: row.position, codec: row.codec, dictionaryID: row.dictionaryID,
                                              rawSize: rawSize, stored: row.payload) { try dictionary($0) }
            let event = StoredEvent(position: row.position, id: id, stream: stream, streamVersion: row.streamVersion, type: type,
                                    typeVersion: typeVersion, recordedAt: Timestamp(microsecondsSince1970: row.recordedAt),
                                    payload: payload, hash: row.hash, leaf: row.leaf)
            return .event(event, predecessorHash: row.predecessor, block: nil)
        } catch let error as EventStoreError {
            return .damaged(error, position: row.position, storedHash: row.hash)
        }
    }

    private func dictionary(_ id: Int64) throws -> [UInt8]? {
        if dictionaries == nil {
            dictionaries = Dictionary(try fetch("SELECT id, bytes FROM dictionaries") { row in
                (try row[0].decode(Int64.self), Array(try row[1].decode(ByteBuffer.self).readableBytesView))
            }, uniquingKeysWith: { first, _ in first })
        }
        return dictionaries?[id]
    }

    /// The statement that reads a page of the events matching `query` after position
    /// `after`: the columns ``EventRow`` reads, names joined in (a missing stream or type
    /// row reads as NULL, which is damage, as in SQLite).
    static func eventSQL(_ query: EventQuery, after: Int64, predecessors: Bool, byStreamVersion: Bool,
                         limit: Int) -> (String, PostgresBindings) {
        var binds = PostgresBindings()
        func placeholder(_ value: some PostgresNonThrowingEncodable) -> String {
            binds.append(value)
            return "$\(binds.count)"
        }
        var sql = """
            SELECT e.position, e.event_id, s.uuid, e.stream_version, t.name, e.type_version, e.recorded_at, e.codec,
                   e.dictionary_id, e.raw_size, e.payload, e.hash, e.leaf
            """
        if predecessors { sql += ", (SELECT p.hash FROM events p WHERE p.position = e.position - 1)" }
        // Events of some recordings join just those recordings' rows (by their uuid index):
        // joined to every recording, PostgreSQL hashed all of them for each statement.
        let join = query.streams == nil ? "LEFT JOIN" : "JOIN"
        sql += """

            FROM events e \(join) streams s ON s.id = e.stream_id LEFT JOIN event_types t ON t.id = e.type_id
            WHERE e.position > \(placeholder(after))
            """
        if let range = query.positions { sql += " AND e.position <= \(placeholder(range.upperBound))" }
        if let stream = query.stream {
            sql += " AND e.stream_id = (SELECT id FROM streams WHERE uuid = \(placeholder(ByteBuffer(bytes: stream.bytes))))"
            if let from = query.fromStreamVersion { sql += " AND e.stream_version >= \(placeholder(from))" }
        }
        if let streams = query.streams {
            let list = streams.sorted { $0.precedes($1) }.map { placeholder(ByteBuffer(bytes: $0.bytes)) }
            sql += " AND s.uuid IN (\(list.isEmpty ? "NULL" : list.joined(separator: ", ")))"
        }
        if let types = query.types {
            let list = types.sorted().map { placeholder($0) }
            sql += " AND e.type_id IN (SELECT id FROM event_types WHERE name IN (\(list.isEmpty ? "NULL" : list.joined(separator: ", "))))"
        }
        if let since = query.since { sql += " AND e.recorded_at >= \(placeholder(since.microsecondsSince1970))" }
        if let until = query.until { sql += " AND e.recorded_at <= \(placeholder(until.microsecondsSince1970))" }
        sql += byStreamVersion ? " ORDER BY e.stream_version" : " ORDER BY e.position"
        sql += " LIMIT \(max(1, limit))"
        return (sql, binds)
    }

    // MARK: - Catalog

    public func catalogIsComplete() throws -> Bool {
        // One round trip: a page of games asks before anything else.
        try fetch("""
            SELECT coalesce((SELECT through FROM catalog_coverage) = (SELECT coalesce(max(position), 0) FROM events), false)
            """) { try $0[0].decode(Bool.self) }.first ?? false
    }

    public func catalogEntries(_ kind: EventTag.Kind, id: UUID) throws -> [CatalogEntry] {
        try catalogEntries(where: "c.kind = $1 AND c.key = $2", [Int64(kind.rawValue), ByteBuffer(bytes: id.bytes)])
    }

    public func catalogEntries(_ kind: EventTag.Kind, idPrefix prefix: String, limit: Int) throws -> [CatalogEntry] {
        let hex = prefix.lowercased().filter { $0 != "-" }
        guard !hex.isEmpty, hex.count <= 32, hex.allSatisfy(\.isHexDigit),
              let low = Hex.bytes(hex.padding(toLength: 32, withPad: "0", startingAt: 0), count: 16),
              let high = Hex.bytes(hex.padding(toLength: 32, withPad: "f", startingAt: 0), count: 16) else { return [] }
        return try catalogEntries(where: "c.kind = $1 AND c.key BETWEEN $2 AND $3",
                                  [Int64(kind.rawValue), ByteBuffer(bytes: low), ByteBuffer(bytes: high)], limit: limit)
    }

    public func catalogEntries(ofStream stream: UUID) throws -> [CatalogEntry] {
        try catalogEntries(where: "c.stream_id = (SELECT id FROM streams WHERE uuid = $1)", [ByteBuffer(bytes: stream.bytes)])
    }

    public func catalogEntries(_ kind: EventTag.Kind) throws -> [CatalogEntry] {
        try catalogEntries(where: "c.kind = $1", [Int64(kind.rawValue)], ordered: true)
    }

    public func firstCatalogEntries(_ kind: EventTag.Kind, offset: Int, limit: Int) throws -> [CatalogEntry] {
        // The page is cut before its recordings are joined, and an entry is first when no
        // earlier one has its id: PostgreSQL walks (kind, position) and stops at the page.
        // Asked as "position = (SELECT min ...)", the planner guessed one row in 200 matched,
        // read and sorted every entry of the kind, and took 64-82 ms for any page of 5,013
        // games (now 1.6 ms for the first, 28 ms for the last: docs/BENCHMARKS.md, session 27).
        let sql = """
            SELECT p.kind, p.key, s.uuid, p.position FROM (
                SELECT c.kind, c.key, c.stream_id, c.position FROM catalog c
                WHERE c.kind = $1 AND NOT EXISTS (
                    SELECT 1 FROM catalog d WHERE d.kind = c.kind AND d.key = c.key AND d.position < c.position)
                ORDER BY c.position, c.key, c.stream_id LIMIT \(max(0, limit)) OFFSET \(max(0, offset))
            ) p JOIN streams s ON s.id = p.stream_id
            ORDER BY p.position, p.key, p.stream_id
            """
        return try fetch(sql, Self.binds([Int64(kind.rawValue)]), Self.catalogEntry).compactMap { $0 }
    }

    public func catalogCount(_ kind: EventTag.Kind) throws -> Int {
        Int(try fetch("SELECT count(DISTINCT key) FROM catalog WHERE kind = $1", Self.binds([Int64(kind.rawValue)])) {
            try $0[0].decode(Int64.self)
        }.first ?? 0)
    }

    public func catalogEntries(ofStreams streams: Set<UUID>) throws -> [CatalogEntry] {
        guard !streams.isEmpty else { return [] }
        return try catalogEntries(where: "s.uuid = ANY($1::bytea[])", [streams.map { ByteBuffer(bytes: $0.bytes) }])
    }

    public func catalogEntries(_ kind: EventTag.Kind, ids: Set<UUID>) throws -> [CatalogEntry] {
        guard !ids.isEmpty else { return [] }
        return try catalogEntries(where: "c.kind = $1 AND c.key = ANY($2::bytea[])", [Int64(kind.rawValue), ids.map { ByteBuffer(bytes: $0.bytes) }])
    }

    public func events(atPositions positions: Set<Int64>) throws -> [Int64: StoredEvent] {
        try found(atPositions: positions).mapValues { found in
            switch found {
            case .event(let event, _, _): return event
            case .damaged(let error, _, _): throw error
            }
        }
    }

    /// What the rows at `positions` hold, in one statement.
    func found(atPositions positions: Set<Int64>) throws -> [Int64: FoundEvent] {
        guard !positions.isEmpty else { return [:] }
        var binds = PostgresBindings()
        binds.append(positions.sorted())
        var out: [Int64: FoundEvent] = [:]
        for row in try fetch("""
            SELECT e.position, e.event_id, s.uuid, e.stream_version, t.name, e.type_version, e.recorded_at, e.codec,
                   e.dictionary_id, e.raw_size, e.payload, e.hash, e.leaf
            FROM events e LEFT JOIN streams s ON s.id = e.stream_id LEFT JOIN event_types t ON t.id = e.type_id
            WHERE e.position = ANY($1::bigint[])
            """, binds, EventRow.init) {
            out[row.position] = try found(row)
        }
        return out
    }

    public func allCatalogEntries() throws -> [CatalogEntry] {
        try catalogEntries(where: "TRUE", [], ordered: true)
    }

    private func catalogEntries(where condition: String, _ values: [any PostgresNonThrowingEncodable], limit: Int? = nil,
                                ordered: Bool = false) throws -> [CatalogEntry] {
        var sql = "SELECT c.kind, c.key, s.uuid, c.position FROM catalog c JOIN streams s ON s.id = c.stream_id WHERE \(condition)"
        if ordered { sql += " ORDER BY c.position, c.kind, c.key" }
        if let limit { sql += " LIMIT \(max(0, limit))" }
        return try fetch(sql, Self.binds(values), Self.catalogEntry).compactMap { $0 }
    }

    /// A row of (kind, key, recording's uuid, position) as an entry; nil where it cannot be one.
    private static func catalogEntry(_ row: PostgresRandomAccessRow) throws -> CatalogEntry? {
        let kind = try row[0].decode(Int64.self)
        guard let id = UUID(bytes: Array(try row[1].decode(ByteBuffer.self).readableBytesView)),
              let stream = UUID(bytes: Array(try row[2].decode(ByteBuffer.self).readableBytesView)),
              let kindNumber = Int(exactly: kind) else { return nil }
        return CatalogEntry(tag: EventTag(kind: EventTag.Kind(rawValue: kindNumber), id: id), stream: stream,
                            position: try row[3].decode(Int64.self))
    }

    // MARK: - Forks and snapshots

    public func forkOrigins() throws -> [UUID: ForkOrigin] {
        let origins = try fetch("""
            SELECT conversation, source_game, source_conversation, source_step, source_head, branch_step, created_at FROM forks
            """) { row -> ForkOrigin? in
            func bytes(_ index: Int) throws -> [UInt8] { Array(try row[index].decode(ByteBuffer.self).readableBytesView) }
            guard let conversation = UUID(bytes: try bytes(0)), let source = UUID(bytes: try bytes(2)),
                  let step = Int(exactly: try row[3].decode(Int64.self)), let branch = Int(exactly: try row[5].decode(Int64.self))
            else { return nil }
            return ForkOrigin(conversation: conversation, sourceGame: try row[1].decode(String.self), sourceConversation: source,
                              sourceStep: step, sourceHead: try bytes(4), branchStep: branch,
                              createdAt: Timestamp(microsecondsSince1970: try row[6].decode(Int64.self)))
        }
        return Dictionary(origins.compactMap { $0 }.map { ($0.conversation, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The shared store keeps no snapshots (they are a SQLite log's cache of folds): a
    /// game is folded from its first event.
    public func snapshots(conversation: UUID, projectionVersion: Int) throws -> [StoredSnapshot] { [] }

    /// The rows of `game_summaries` (schema 8) in `format` for `conversations`; a row whose
    /// columns do not read as theirs, or whose body is past
    /// ``StoredSummaries/maximumBodySize``, is left out (a page folds that conversation).
    public func storedSummaries(conversations: Set<UUID>, format: String) throws -> [UUID: StoredSummaries] {
        guard !conversations.isEmpty else { return [:] }
        var binds = PostgresBindings()
        binds.append(conversations.map { ByteBuffer(bytes: $0.bytes) })
        binds.append(format)
        binds.append(Int64(StoredSummaries.maximumBodySize))
        let rows = try fetch("""
            SELECT conversation, recordings, body FROM game_summaries
            WHERE conversation = ANY($1::bytea[]) AND format = $2 AND length(body) <= $3
            """, binds) { row -> StoredSummaries? in
            func bytes(_ index: Int) throws -> [UInt8] { Array(try row[index].decode(ByteBuffer.self).readableBytesView) }
            guard let conversation = UUID(bytes: try bytes(0)), let recordings = StoredSummaries.recordings(from: try bytes(1)) else { return nil }
            return StoredSummaries(conversation: conversation, format: format, recordings: recordings, body: try bytes(2))
        }
        return Dictionary(rows.compactMap { $0 }.map { ($0.conversation, $0) }, uniquingKeysWith: { first, _ in first })
    }
}
