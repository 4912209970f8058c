import EventLog
import Foundation
import GRDB

extension EventStore {
    /// Whether the catalog covers every event, so that its answers are the log's. False
    /// for a log written before the catalog existed (until it is filled) and for a log
    /// an appender without tags wrote to.
    public func catalogIsComplete() throws -> Bool {
        guard let coverage = try catalogCoverage() else { return false }
        return coverage.through == coverage.last
    }

    /// Through which position the catalog covers the log, and the log's last position;
    /// nil for a log from before the catalog existed (schema 5).
    public func catalogCoverage() throws -> (through: Int64, last: Int64)? {
        try read { db in
            guard try db.tableExists("catalog_coverage") else { return nil }
            // Cached: a viewer asks this before each read of a game (parsed anew, the
            // statements here were 4% of a page of a game not opened yet).
            let through = try Int64.fetchOne(db.cachedStatement(sql: "SELECT through FROM catalog_coverage")) ?? -1
            let last = try lastPosition(db)
            return (through, last)
        }
    }

    /// The catalog entries of `kind` whose id starts with the hexadecimal `prefix`
    /// (dashes ignored, any case), at most `limit`. Empty when the prefix is not hex.
    public func catalogEntries(_ kind: EventTag.Kind, idPrefix prefix: String, limit: Int = 1000) throws -> [CatalogEntry] {
        let hex = prefix.lowercased().filter { $0 != "-" }
        guard !hex.isEmpty, hex.count <= 32, hex.allSatisfy(\.isHexDigit) else { return [] }
        // The ids between the prefix padded with zeros and padded with f's.
        let low = Self.bytes(hex: hex.padding(toLength: 32, withPad: "0", startingAt: 0))
        let high = Self.bytes(hex: hex.padding(toLength: 32, withPad: "f", startingAt: 0))
        return try catalogEntries(where: "c.kind = ? AND c.key BETWEEN ? AND ?", [kind.rawValue, Data(low), Data(high)], limit: limit)
    }

    /// The catalog entries that name `id` as `kind`.
    public func catalogEntries(_ kind: EventTag.Kind, id: UUID) throws -> [CatalogEntry] {
        try catalogEntries(where: "c.kind = ? AND c.key = ?", [kind.rawValue, Data(id.bytes)], limit: nil)
    }

    /// The catalog entries of one recording.
    public func catalogEntries(ofStream stream: UUID) throws -> [CatalogEntry] {
        try catalogEntries(where: "c.stream_id = (SELECT id FROM streams WHERE uuid = ?)", [Data(stream.bytes)], limit: nil)
    }

    /// Every catalog entry of `kind`, in order of first position.
    public func catalogEntries(_ kind: EventTag.Kind) throws -> [CatalogEntry] {
        try catalogEntries(where: "c.kind = ?", [kind.rawValue], limit: nil, ordered: true)
    }

    /// The first entry of each id of `kind`, in order of first position: `limit` of them
    /// after skipping `offset`, read through an index, so a page costs the same however
    /// many ids there are.
    public func firstCatalogEntries(_ kind: EventTag.Kind, offset: Int, limit: Int) throws -> [CatalogEntry] {
        // Each id's first position computed once for all (a correlated `min` per row let
        // SQLite walk the (kind, position) index for every row: 2.1 s for the last page of
        // 10,000 games, 13 ms this way).
        try catalogEntries(where: """
            c.kind = ? AND (c.key, c.position) IN (SELECT key, min(position) FROM catalog WHERE kind = ? GROUP BY key)
            """, [kind.rawValue, kind.rawValue], limit: limit, offset: offset, ordered: true)
    }

    /// How many distinct ids of `kind` the catalog holds.
    public func catalogCount(_ kind: EventTag.Kind) throws -> Int {
        try read { db in
            guard try db.tableExists("catalog") else { return 0 }
            return try Int.fetchOne(db, sql: "SELECT count(DISTINCT key) FROM catalog WHERE kind = ?", arguments: [kind.rawValue]) ?? 0
        }
    }

    /// Every entry of `kind` with the position of its recording's last event, read from
    /// the catalog and the stream indexes alone (no block inflated); nil when the catalog
    /// does not cover the whole log. The entries are what the catalog says: a reader that
    /// relies on them checks each against the event at its position.
    public func catalogEntriesWithLastPositions(_ kind: EventTag.Kind) throws -> [(entry: CatalogEntry, lastPosition: Int64)]? {
        try read { db in
            guard try db.tableExists("catalog_coverage"),
                  try Int64.fetchOne(db, sql: "SELECT through FROM catalog_coverage") == (try lastPosition(db)) else { return nil }
            // A stream's last event: in its last block's entry, or its last row (a log with
            // both kept the rows of a recording open when it was migrated).
            let inBlocks = hasBlocks
                ? "(SELECT b.last_position FROM block_streams b WHERE b.stream_id = c.stream_id ORDER BY b.block DESC LIMIT 1)"
                : "NULL"
            let rows = try Row.fetchCursor(db, sql: """
                SELECT c.key, s.uuid, c.position,
                       max(coalesce(\(inBlocks), 0),
                           coalesce((SELECT l.position FROM events l WHERE l.stream_id = c.stream_id
                                     ORDER BY l.stream_version DESC LIMIT 1), 0))
                FROM catalog c JOIN streams s ON s.id = c.stream_id
                WHERE c.kind = ?
                """, arguments: [kind.rawValue])
            var out: [(entry: CatalogEntry, lastPosition: Int64)] = []
            while let row = try rows.next() {
                // A row of the wrong types (a file changed by hand) is left out here; the
                // reader's check against the events names what is missing.
                guard let position = Int64.fromDatabaseValue(row[2]), let last = Int64.fromDatabaseValue(row[3]),
                      let id = Data.fromDatabaseValue(row[0]).flatMap(UUID.init(bytes:)),
                      let stream = Data.fromDatabaseValue(row[1]).flatMap(UUID.init(bytes:)) else { continue }
                out.append((CatalogEntry(tag: EventTag(kind: kind, id: id), stream: stream, position: position), last))
            }
            return out
        }
    }

    /// Every catalog entry, to compare with what the events say.
    public func allCatalogEntries() throws -> [CatalogEntry] {
        try catalogEntries(where: "1", [], limit: nil, ordered: true)
    }

    private func catalogEntries(where condition: String, _ arguments: [any DatabaseValueConvertible], limit: Int?,
                                offset: Int = 0, ordered: Bool = false) throws -> [CatalogEntry] {
        try read { db in
            guard try db.tableExists("catalog") else { return [] }
            var sql = """
                SELECT c.kind, c.key, s.uuid, c.position FROM catalog c JOIN streams s ON s.id = c.stream_id
                WHERE \(condition)
                """
            if ordered { sql += " ORDER BY c.position, c.kind, c.key" }
            var bound: [any DatabaseValueConvertible] = arguments
            if let limit {
                // Bound, not written in: the statement's text stays one, kept prepared
                // (preparing it was a twentieth of a game page's work).
                sql += " LIMIT ? OFFSET ?"
                bound += [max(0, limit), max(0, offset)] as [any DatabaseValueConvertible]
            }
            // A row of the wrong kinds (a file changed by hand) is left out, never a crash.
            return try Row.fetchAll(db.cachedStatement(sql: sql), arguments: StatementArguments(bound)).compactMap { row in
                guard let kind = Int.fromDatabaseValue(row[0]), let position = Int64.fromDatabaseValue(row[3]),
                      let id = Data.fromDatabaseValue(row[1]).flatMap(UUID.init(bytes:)),
                      let stream = Data.fromDatabaseValue(row[2]).flatMap(UUID.init(bytes:)) else { return nil }
                return CatalogEntry(tag: EventTag(kind: EventTag.Kind(rawValue: kind), id: id), stream: stream, position: position)
            }
        }
    }

    /// Fills the catalog from the events it does not cover yet, with `tags` saying what
    /// each names, then marks it complete. Only events of `types` are read (the others
    /// name nothing). Writes in batches, so an interrupted fill resumes where it stopped.
    /// - Returns: the number of events read.
    @discardableResult
    public func fillCatalog(types: Set<String>, progress: ((Int64, Int64) -> Void)? = nil,
                            tags: (StoredEvent) throws -> [EventTag]) throws -> Int {
        guard access == .readWrite else { throw EventStoreError.readOnly(path: path, detail: "opened read-only") }
        let (through, last) = try read { db in
            (try Int64.fetchOne(db, sql: "SELECT through FROM catalog_coverage") ?? 0,
             try lastPosition(db))
        }
        guard through < last else { return 0 }
        var read = 0
        var pending: [CatalogEntry] = []
        var start = through + 1
        let batch: Int64 = 100_000
        while start <= last {
            let end = min(last, start + batch - 1)
            try scan(EventQuery(positions: start...end, types: types)) { event in
                read += 1
                for tag in try tags(event) { pending.append(CatalogEntry(tag: tag, stream: event.stream, position: event.position)) }
            }
            let rows = pending
            pending.removeAll()
            try Self.translating(path) {
                try queue.inTransaction(.immediate) { db in
                    try Self.insert(rows, db)
                    try db.execute(sql: "UPDATE catalog_coverage SET through = ? WHERE through = ?", arguments: [end, start - 1])
                    return .commit
                }
            }
            progress?(end, last)
            start = end + 1
        }
        return read
    }

    /// Writes catalog rows, keeping each (id, stream)'s earliest position.
    static func insert(_ entries: [CatalogEntry], _ db: Database) throws {
        guard !entries.isEmpty else { return }
        let insert = try db.cachedStatement(sql: """
            INSERT INTO catalog (kind, key, stream_id, position)
            VALUES (?, ?, (SELECT id FROM streams WHERE uuid = ?), ?)
            ON CONFLICT (kind, key, stream_id) DO UPDATE SET position = min(position, excluded.position)
            """)
        for entry in entries {
            try insert.execute(arguments: [entry.tag.kind.rawValue, Data(entry.tag.id.bytes), Data(entry.stream.bytes), entry.position])
        }
    }

    private static func bytes(hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return bytes
    }
}
