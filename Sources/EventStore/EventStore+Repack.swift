import EventLog
import Foundation
import GRDB

extension EventStore {
    /// How many events the log keeps as rows of `events` rather than in blocks.
    public func storedAsRows() throws -> Int64 {
        try read { try Int64.fetchOne($0, sql: "SELECT count(*) FROM events") ?? 0 }
    }

    /// How many blocks the log keeps, and how many events they hold (0 and 0 for a log
    /// written before blocks).
    public func storedInBlocks() throws -> (blocks: Int64, events: Int64) {
        guard hasBlocks else { return (0, 0) }
        return try read { db in
            let row = try Row.fetchOne(db, sql: "SELECT count(*), coalesce(sum(count), 0) FROM event_blocks")!
            return (row[0], row[1])
        }
    }

    /// Moves every event stored as a row of `events` into blocks, in one transaction: a
    /// log written before blocks then reads as one written since. Nothing an event is
    /// changes (its position, id, payload, chain hash and leaf stay as they were), so
    /// `verify`, proofs and `export` give the same answers before and after.
    ///
    /// A log that does not verify is left as it is (a damaged event would have to be
    /// dropped or changed to move), and so is a copy of a shared store, which keeps rows.
    /// - Parameter progress: called now and then with (events moved, events to move).
    /// - Returns: the number of events moved.
    @discardableResult
    public func packRowsIntoBlocks(progress: ((Int64, Int64) -> Void)? = nil) throws -> Int64 {
        guard access == .readWrite else { throw EventStoreError.readOnly(path: path, detail: "opened read-only") }
        guard layout == .blocks, hasBlocks else { return 0 }
        let report = try verifyIntegrity()
        if let problem = report.problems.first {
            throw EventStoreError.damagedLog(path: path, detail: "\(report.problems.count) problems, the first: \(problem)")
        }
        var moved: Int64 = 0
        try Self.translating(path) {
            try queue.inTransaction(.immediate) { db in
                let total = try Int64.fetchOne(db, sql: "SELECT count(*) FROM events") ?? 0
                guard total > 0 else { return .commit }
                if let firstBlock = try Int64.fetchOne(db, sql: "SELECT min(first_position) FROM event_blocks"),
                   try Int64.fetchOne(db, sql: "SELECT max(position) FROM events") ?? 0 >= firstBlock {
                    throw EventStoreError.damagedLog(path: path, detail: "rows lie after events stored in blocks, which gamelog never writes")
                }
                let compressor = try currentCompressor(db)
                var trees = TreeOfStream()
                var writer = try BlockWriter(capacity: blockCapacity, continuing: nil, compressor: compressor)
                let indexID = try db.cachedStatement(sql: "INSERT INTO block_ids (event_id, position) VALUES (?, ?)")
                var pending = 0
                let cursor = try Row.fetchCursor(db, sql: """
                    SELECT position, event_id, stream_id, stream_version, type_id, type_version, recorded_at,
                           codec, dictionary_id, raw_size, payload, hash, \(hasLeafColumn ? "leaf" : "NULL") FROM events ORDER BY position
                    """)
                while let row = try cursor.next() {
                    let position: Int64 = row[0], stream: Int64 = row[2]
                    guard let id = try row.bytes(at: 1).flatMap(UUID.init(bytes:)), let hash = try row.bytes(at: 11) else {
                        throw EventStoreError.corruptPayload(position: position, detail: "malformed event id or hash")
                    }
                    let payload = try decodePayload(db, position: position, codec: row[7], dictionaryID: row[8], rawSize: row[9],
                                                    stored: try row.bytes(at: 10) ?? [])
                    try indexID.execute(arguments: [Data(id.bytes), position])
                    writer.add(EventBlock.Event(id: id, hash: hash, streamRowID: stream, streamVersion: row[3], typeRowID: row[4],
                                                typeVersion: row[5], recordedAt: row[6], leaf: row[12], payload: payload),
                               at: position, tree: try trees.tree(db, stream: stream))
                    moved += 1
                    pending += 1
                    // Whole blocks at a time, so memory holds a few thousand events, not the log.
                    if pending >= 64 * blockCapacity {
                        try writer.store(db)
                        writer = try BlockWriter(capacity: blockCapacity, continuing: nil, compressor: compressor)
                        pending = 0
                        progress?(moved, total)
                    }
                }
                try writer.store(db)
                try db.execute(sql: "DELETE FROM events")
                progress?(moved, total)
                return .commit
            }
        }
        return moved
    }

    /// Rewrites the file without the pages its deleted rows left free (SQLite's `VACUUM`,
    /// itself a transaction): after ``packRowsIntoBlocks(progress:)`` the rows' pages
    /// would otherwise stay in the file, to be reused by later appends.
    public func reclaimFreePages() throws {
        guard access == .readWrite else { throw EventStoreError.readOnly(path: path, detail: "opened read-only") }
        try Self.translating(path) {
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "VACUUM")
                try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
        }
    }
}
