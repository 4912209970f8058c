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

/// What a log held before a write, so the write's rows can be found afterwards
/// (``EventStore/rowsWritten(since:)``): the last position, each table's highest id,
/// and each tree's size and row counts.
public struct ReplicaMark: Sendable {
    /// The last event's position.
    public internal(set) var lastPosition: Int64
    /// The highest row id of `dictionaries`, `event_types`, `trees` and `streams`.
    public internal(set) var highestIDs: [String: Int64]
    var trees: [Int64: TreeMark]
    var checkpoints: Int
    var forks: Int

    struct TreeMark: Hashable {
        var size: Int64
        var hasFrontier: Bool
        var heads: Int
        var nodes: Int
        var cosignatures: Int
    }
}

extension EventStore {
    /// The log's rows that `rows` selects for `table` (`WHERE` clause, arguments), in key order.
    func replicatedRows(_ db: Database, _ table: ReplicatedTable, where condition: String = "1",
                        arguments: StatementArguments = []) throws -> [[ReplicatedValue]] {
        let sql = "SELECT \(table.columns.joined(separator: ", ")) FROM \(table.name) WHERE \(condition) ORDER BY \(table.key.joined(separator: ", "))"
        return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
            (0..<table.columns.count).map { index in
                switch row[index] as DatabaseValue {
                case let value where value.isNull: return .null
                case let value:
                    switch value.storage {
                    case .int64(let number): return .integer(number)
                    case .double(let number): return .integer(Int64(number))
                    case .string(let text): return .text(text)
                    case .blob(let data): return .blob(Array(data))
                    case .null: return .null
                    }
                }
            }
        }
    }

    /// What the log holds now, to find what a write adds (``rowsWritten(since:)``).
    public func replicaMark() throws -> ReplicaMark {
        try read { db in
            var highest: [String: Int64] = [:]
            for (table, column) in [("dictionaries", "id"), ("event_types", "id"), ("trees", "id"), ("streams", "id")] {
                highest[table] = try Int64.fetchOne(db, sql: "SELECT coalesce(max(\(column)), 0) FROM \(table)") ?? 0
            }
            return ReplicaMark(
                lastPosition: try lastPosition(db),
                highestIDs: highest, trees: try treeMarks(db),
                checkpoints: try Int.fetchOne(db, sql: "SELECT count(*) FROM checkpoints") ?? 0,
                forks: try Int.fetchOne(db, sql: "SELECT count(*) FROM forks") ?? 0)
        }
    }

    private func treeMarks(_ db: Database) throws -> [Int64: ReplicaMark.TreeMark] {
        var marks: [Int64: ReplicaMark.TreeMark] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, size, frontier IS NOT NULL FROM trees") {
            marks[row[0]] = ReplicaMark.TreeMark(size: row[1], hasFrontier: row[2], heads: 0, nodes: 0, cosignatures: 0)
        }
        for (table, path) in [("tree_heads", \ReplicaMark.TreeMark.heads), ("tree_nodes", \.nodes), ("cosignatures", \.cosignatures)] {
            for row in try Row.fetchAll(db, sql: "SELECT tree_id, count(*) FROM \(table) GROUP BY tree_id") {
                let tree: Int64 = row[0]
                marks[tree]?[keyPath: path] = row[1]
            }
        }
        return marks
    }

    /// Every row written since `mark` (added, or changed in place), by table, parents first:
    /// what a write into a copy of the shared store sends back to it.
    public func rowsWritten(since mark: ReplicaMark) throws -> [ReplicatedRows] {
        try read { db in
            let now = try treeMarks(db)
            var out: [ReplicatedRows] = []
            func add(_ name: String, _ condition: String, _ arguments: StatementArguments = []) throws {
                let table = ReplicatedTable.named(name)!
                let rows = try replicatedRows(db, table, where: condition, arguments: arguments)
                if !rows.isEmpty { out.append(ReplicatedRows(table: table, rows: rows)) }
            }
            let last = mark.lastPosition
            // A copy of a shared store writes rows (``EventStore/Layout/rows``): blocks
            // would not be sent back, and the shared store would miss their events.
            if hasBlocks, try Int64.fetchOne(db, sql: "SELECT 1 FROM event_blocks WHERE first_position + count - 1 > ? LIMIT 1",
                                             arguments: [last]) != nil {
                throw EventStoreError.blocksInCopy(path: path)
            }
            try add("dictionaries", "id > ?", [mark.highestIDs["dictionaries"] ?? 0])
            try add("event_types", "id > ?", [mark.highestIDs["event_types"] ?? 0])
            let changedTrees = now.filter { mark.trees[$0.key] != $0.value }.keys.sorted()
            let treeList = changedTrees.map(String.init).joined(separator: ",")
            if !changedTrees.isEmpty { try add("trees", "id IN (\(treeList))") }
            try add("streams", "id > ? OR id IN (SELECT DISTINCT stream_id FROM events WHERE position > ?)",
                    [mark.highestIDs["streams"] ?? 0, last])
            try add("events", "position > ?", [last])
            try add("catalog", "position > ?", [last])
            try add("catalog_coverage", "1")
            for tree in changedTrees {
                let before = mark.trees[tree], after = now[tree]!
                let size = before?.size ?? 0
                // Rows of a growing tree are past its old size; anything else (a merged
                // log's earlier heads, proof nodes) sends the tree's rows whole.
                for (table, column, path) in [("tree_heads", "size", \ReplicaMark.TreeMark.heads),
                                              ("tree_nodes", "hi", \.nodes), ("cosignatures", "size", \.cosignatures)]
                where after[keyPath: path] != before?[keyPath: path] ?? 0 {
                    let past = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table) WHERE tree_id = ? AND \(column) > ?",
                                                arguments: [tree, size]) ?? 0
                    if past == after[keyPath: path] - (before?[keyPath: path] ?? 0) {
                        try add(table, "tree_id = ? AND \(column) > ?", [tree, size])
                    } else {
                        try add(table, "tree_id = ?", [tree])
                    }
                }
            }
            if try Int.fetchOne(db, sql: "SELECT count(*) FROM checkpoints") != mark.checkpoints { try add("checkpoints", "1") }
            if try Int.fetchOne(db, sql: "SELECT count(*) FROM forks") != mark.forks { try add("forks", "1") }
            return out
        }
    }

    /// Every row of the log, by table, parents first (a whole copy).
    public func allReplicatedRows() throws -> [ReplicatedRows] {
        try read { db in
            try ReplicatedTable.all.map { ReplicatedRows(table: $0, rows: try replicatedRows(db, $0)) }.filter { !$0.rows.isEmpty }
        }
    }

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
    }
}

extension EventStore {
    /// The dictionaries whose id is above `id`, for a store that lacks them.
    public func dictionaryRows(above id: Int64) throws -> [ReplicatedRows] {
        try read { db in
            let table = ReplicatedTable.named("dictionaries")!
            let rows = try replicatedRows(db, table, where: "id > ?", arguments: [id])
            return rows.isEmpty ? [] : [ReplicatedRows(table: table, rows: rows)]
        }
    }
}
