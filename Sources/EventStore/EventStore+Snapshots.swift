import EventLog
import Foundation
import GRDB
import ZlibCodec

extension EventStore {
    /// The largest snapshot state written or read (inflated). A snapshot is a cache, so
    /// a larger one is skipped: the state is folded from the events instead. A file
    /// whose snapshots inflate past it (a zip bomb) costs at most this much per row.
    public static let maximumSnapshotSize = 4 << 20

    /// Replaces a conversation's snapshots (of every version) with these, in one transaction.
    /// States larger than ``maximumSnapshotSize`` are left out.
    public func replaceSnapshots(conversation: UUID, with snapshots: [StoredSnapshot]) throws {
        guard access == .readWrite else { throw EventStoreError.readOnly(path: path, detail: "opened read-only") }
        let deflater = try RawDeflater(level: 6)
        let rows = try snapshots.filter { $0.state.count <= Self.maximumSnapshotSize }.map { ($0, try deflater.compress($0.state)) }
        try Self.translating(path) {
            try queue.write { db in
                try db.execute(sql: "DELETE FROM snapshots WHERE conversation = ?", arguments: [Data(conversation.bytes)])
                let insert = try db.cachedStatement(sql: """
                    INSERT INTO snapshots (conversation, projection_version, step, position, event_hash, state)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """)
                for (snapshot, packed) in rows {
                    try insert.execute(arguments: [Data(conversation.bytes), snapshot.projectionVersion, snapshot.step,
                                                   snapshot.position, Data(snapshot.eventHash), Data(packed)])
                }
            }
        }
    }

    /// A conversation's snapshots of one projection version, by step. Rows that do not
    /// decompress are skipped: a snapshot is only a cache.
    public func snapshots(conversation: UUID, projectionVersion: Int) throws -> [StoredSnapshot] {
        let rows = try read { db in
            try Row.fetchAll(db.cachedStatement(sql: """
                SELECT step, position, event_hash, state FROM snapshots
                WHERE conversation = ? AND projection_version = ? AND length(state) <= ? ORDER BY step
                """), arguments: [Data(conversation.bytes), projectionVersion, Self.maximumSnapshotSize])
        }
        let inflater = try RawInflater()
        return rows.compactMap { row in
            guard let packed = try? row.bytes(at: 3), let state = try? inflater.decompress(packed, limit: Self.maximumSnapshotSize),
                  let hash = try? row.bytes(at: 2) else { return nil }
            guard let step = Int.fromDatabaseValue(row[0]), let position = Int64.fromDatabaseValue(row[1]) else { return nil }
            return StoredSnapshot(conversation: conversation, projectionVersion: projectionVersion, step: step,
                                  position: position, eventHash: hash, state: state)
        }
    }

    /// How many snapshot rows a conversation has of a projection version, readable or not.
    public func snapshotRowCount(conversation: UUID, projectionVersion: Int) throws -> Int {
        try read { db in
            try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM snapshots WHERE conversation = ? AND projection_version = ?"),
                             arguments: [Data(conversation.bytes), projectionVersion]) ?? 0
        }
    }

    /// How many snapshots are stored, per projection version.
    public func snapshotCounts() throws -> [Int: Int] {
        try read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT projection_version, count(*) FROM snapshots GROUP BY 1")
                .map { ($0[0] as Int, $0[1] as Int) })
        }
    }
}
