import EventStore
import Foundation
import GRDB

/// Turns a log back into one an older gamelog wrote, to test reading and migrating
/// such logs. The log must keep its events as rows (``EventStore/Layout/rows``): blocks
/// came with schema 9, and rolling back past it would drop them.
public enum OlderSchema {
    /// Rolls the file at `path` back to schema `version`: 8 (before blocks), 5 (before
    /// the catalog and device trees) or 2 (before snapshots, checkpoints and forks).
    public static func rollBack(_ path: String, to version: Int) throws {
        precondition([8, 5, 2].contains(version), "rolls back to 8, 5 or 2")
        try DatabaseQueue(path: path).writeWithoutTransaction { db in
            guard try Int.fetchOne(db, sql: "SELECT count(*) FROM event_blocks") == 0 else {
                throw OlderSchemaError(description: "\(path) keeps events in blocks: write it with layout .rows to roll it back")
            }
            try db.execute(sql: """
                DROP INDEX block_leaves_by_leaf; DROP TABLE block_leaves; DROP TABLE block_ids; DROP TABLE block_streams; DROP TABLE event_blocks;
                CREATE INDEX events_by_type ON events(type_id, position);
                CREATE INDEX events_by_time ON events(recorded_at);
                """)
            if version <= 5 {
                try db.execute(sql: """
                    DROP INDEX events_by_leaf; DROP INDEX streams_by_tree; DROP TABLE cosignatures; DROP TABLE tree_nodes; DROP TABLE tree_heads;
                    ALTER TABLE events DROP COLUMN leaf; ALTER TABLE streams DROP COLUMN tree_id; DROP TABLE trees;
                    DROP TABLE catalog; DROP TABLE catalog_coverage;
                    """)
            }
            if version <= 2 {
                try db.execute(sql: """
                    DROP TABLE snapshots; DROP TABLE checkpoints; DROP TABLE forks; ALTER TABLE streams DROP COLUMN head;
                    """)
            }
            try db.execute(sql: "DELETE FROM schema_migrations WHERE version > ?", arguments: [version])
            try db.execute(sql: "PRAGMA user_version = \(version)")
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    /// A copy of the log at `source` as rows, at `path`: every event appended again,
    /// unsigned and without catalog entries.
    public static func rowsCopy(of source: EventStore, to path: String) throws -> EventStore {
        let copy = try EventStore(path: path, layout: .rows)
        try copy.append(try source.events(verify: false).map {
            NewEvent(id: $0.id, stream: $0.stream, type: $0.type, typeVersion: $0.typeVersion, recordedAt: $0.recordedAt, payload: $0.payload)
        })
        return copy
    }

    public struct OlderSchemaError: Error, CustomStringConvertible {
        public var description: String
    }
}
