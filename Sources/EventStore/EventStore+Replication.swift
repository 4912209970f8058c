import EventLog
import Foundation
import GRDB

/// One value of a row copied between a SQLite log and the shared store.
public enum ReplicatedValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case text(String)
    case blob([UInt8])
}

/// A table of the log as the shared store copies it: the same columns in both stores.
public struct ReplicatedTable: Hashable, Sendable {
    /// What a column holds.
    public enum Kind: Hashable, Sendable { case integer, text, blob }

    public var name: String
    public var columns: [String]
    public var kinds: [Kind]
    /// The primary key's columns.
    public var key: [String]
    /// Whether a write may change a stored row (else rows are only ever added).
    public var updatable: Bool

    /// Every table of a log, parents before children. Snapshots are a cache each reader
    /// makes for itself, and the migration ledger is each file's own: neither is copied.
    public static let all: [ReplicatedTable] = [
        ReplicatedTable("dictionaries", ["id": .integer, "name": .text, "bytes": .blob, "sha256": .blob, "created_at": .integer],
                        key: ["id"]),
        ReplicatedTable("event_types", ["id": .integer, "name": .text], key: ["id"]),
        ReplicatedTable("trees", ["id": .integer, "public_key": .blob, "device": .text, "size": .integer, "frontier": .blob],
                        key: ["id"], updatable: true),
        ReplicatedTable("streams", ["id": .integer, "uuid": .blob, "version": .integer, "head": .blob, "tree_id": .integer],
                        key: ["id"], updatable: true),
        ReplicatedTable("events", ["position": .integer, "event_id": .blob, "stream_id": .integer, "stream_version": .integer,
                                   "type_id": .integer, "type_version": .integer, "recorded_at": .integer, "codec": .integer,
                                   "dictionary_id": .integer, "raw_size": .integer, "payload": .blob, "hash": .blob, "leaf": .integer],
                        key: ["position"]),
        ReplicatedTable("catalog", ["kind": .integer, "key": .blob, "stream_id": .integer, "position": .integer],
                        key: ["kind", "key", "stream_id"]),
        ReplicatedTable("catalog_coverage", ["only": .integer, "through": .integer], key: ["only"], updatable: true),
        ReplicatedTable("tree_heads", ["tree_id": .integer, "size": .integer, "root": .blob, "signed_at": .integer, "flags": .integer,
                                       "signature": .blob], key: ["tree_id", "size"]),
        ReplicatedTable("tree_nodes", ["tree_id": .integer, "lo": .integer, "hi": .integer, "hash": .blob], key: ["tree_id", "lo", "hi"]),
        ReplicatedTable("checkpoints", ["public_key": .blob, "sequence": .integer, "device": .text, "previous": .blob,
                                        "signed_at": .integer, "heads": .blob, "signature": .blob], key: ["public_key", "sequence"]),
        ReplicatedTable("forks", ["conversation": .blob, "source_game": .text, "source_conversation": .blob, "source_step": .integer,
                                  "source_head": .blob, "branch_step": .integer, "created_at": .integer], key: ["conversation"]),
        ReplicatedTable("cosignatures", ["tree_id": .integer, "size": .integer, "witness": .text, "witness_key": .blob,
                                         "cosigned_at": .integer, "signature": .blob], key: ["tree_id", "size", "witness_key"]),
    ]

    /// A table by name.
    public static func named(_ name: String) -> ReplicatedTable? { all.first { $0.name == name } }

    init(_ name: String, _ columns: KeyValuePairs<String, Kind>, key: [String], updatable: Bool = false) {
        self.name = name
        self.columns = columns.map(\.key)
        self.kinds = columns.map(\.value)
        self.key = key
        self.updatable = updatable
    }
}

/// Some rows of one table.
public struct ReplicatedRows: Sendable {
    public var table: ReplicatedTable
    public var rows: [[ReplicatedValue]]

    public init(table: ReplicatedTable, rows: [[ReplicatedValue]]) {
        self.table = table
        self.rows = rows
    }
}

/// What a log held before a write, so the write's rows could be sent to the shared store.
@available(*, unavailable, message: "the shared store is written as itself now (SharedStore.writeNatively), so no write of a local copy is sent back")
public struct ReplicaMark: Sendable {}

extension EventStore {
    /// What the log held, to find what a write added.
    @available(*, unavailable, message: "the shared store is written as itself now (SharedStore.writeNatively), so no write of a local copy is sent back")
    public func replicaMark() throws -> ReplicaMark { fatalError("unavailable") }

    /// Every row written since `mark`.
    @available(*, unavailable, message: "the shared store is written as itself now (SharedStore.writeNatively), so no write of a local copy is sent back")
    public func rowsWritten(since mark: ReplicaMark) throws -> [ReplicatedRows] { fatalError("unavailable") }

    /// Every row of the log, by table.
    @available(*, unavailable, message: "the shared store is written as itself now (SharedStore.writeNatively), so no write of a local copy is sent back")
    public func allReplicatedRows() throws -> [ReplicatedRows] { fatalError("unavailable") }

    /// Stores rows copied from the shared store, in one transaction: a row whose key is
    /// stored replaces it. Used only on a local copy of a shared store, never on a log of
    /// record; the rows meet the same constraints as any, and every read checks them.
    public func applyReplicatedRows(_ batches: [ReplicatedRows]) throws {
        guard access == .readWrite else { throw EventStoreError.readOnly(path: path, detail: "opened read-only") }
        try Self.translating(path) {
            try queue.inTransaction(.immediate) { db in
                for batch in batches {
                    let table = batch.table
                    let others = table.columns.filter { !table.key.contains($0) }
                    let update = others.isEmpty ? "NOTHING" : "UPDATE SET " + others.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
                    let statement = try db.cachedStatement(sql: """
                        INSERT INTO \(table.name) (\(table.columns.joined(separator: ", "))) \
                        VALUES (\(table.columns.map { _ in "?" }.joined(separator: ", "))) \
                        ON CONFLICT (\(table.key.joined(separator: ", "))) DO \(update)
                        """)
                    for row in batch.rows {
                        try statement.execute(arguments: StatementArguments(row.map { value -> DatabaseValueConvertible? in
                            switch value {
                            case .null: return nil
                            case .integer(let number): return number
                            case .text(let text): return text
                            case .blob(let bytes): return Data(bytes)
                            }
                        }))
                    }
                }
                return .commit
            }
        }
        typeIDs = [:]
        storedCatalogRows = []
    }
}

extension EventStore {
    /// The dictionaries whose id is above `id`.
    @available(*, unavailable, message: "the shared store is written as itself now (SharedStore.writeNatively), so no write of a local copy is sent back")
    public func dictionaryRows(above id: Int64) throws -> [ReplicatedRows] { fatalError("unavailable") }
}
