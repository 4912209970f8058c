import EventLog
import Foundation
import GRDB

/// A SQLite log's tree rows.
struct SQLiteTreeRows: TreeRowStore {
    let db: Database

    func tree(publicKey: [UInt8]) throws -> (id: Int64, device: String?)? {
        guard let row = try Row.fetchOne(db, sql: "SELECT id, device FROM trees WHERE public_key = ?", arguments: [Data(publicKey)]) else { return nil }
        return (row[0], String.fromDatabaseValue(row[1]))
    }

    func treeRow(id: Int64) throws -> (publicKey: [UInt8], device: String, size: Int64, frontier: [UInt8]?)? {
        guard let row = try Row.fetchOne(db, sql: "SELECT public_key, device, size, frontier FROM trees WHERE id = ?", arguments: [id]),
              let key = Data.fromDatabaseValue(row[0]), let device = String.fromDatabaseValue(row[1]),
              let size = Int64.fromDatabaseValue(row[2]) else { return nil }
        return (Array(key), device, size, Data.fromDatabaseValue(row[3]).map(Array.init))
    }

    func insertTree(_ owner: TreeOwner) throws -> Int64 {
        try db.execute(sql: "INSERT INTO trees (public_key, device, size, frontier) VALUES (?, ?, 0, x'')",
                       arguments: [Data(owner.publicKey), owner.device])
        return db.lastInsertedRowID
    }

    func setTree(_ tree: Int64, ofStream rowID: Int64) throws {
        try db.execute(sql: "UPDATE streams SET tree_id = ? WHERE id = ?", arguments: [tree, rowID])
    }
}

extension EventStore {
    /// The proof nodes stored, by tree id: `[lo, hi) -> hash`.
    /// - Parameter trees: only these trees' nodes (nil: every tree's).
    func treeNodes(_ db: Database, trees: Set<Int64>? = nil) throws -> [Int64: [Range<Int64>: [UInt8]]] {
        var out: [Int64: [Range<Int64>: [UInt8]]] = [:]
        if let trees, trees.isEmpty { return out }
        let only = trees.map { " WHERE tree_id IN (" + $0.sorted().map(String.init).joined(separator: ",") + ")" } ?? ""
        for row in try Row.fetchAll(db, sql: "SELECT tree_id, lo, hi, hash FROM tree_nodes" + only) {
            guard let id = Int64.fromDatabaseValue(row[0]), let lo = Int64.fromDatabaseValue(row[1]),
                  let hi = Int64.fromDatabaseValue(row[2]), hi > lo, let hash = Data.fromDatabaseValue(row[3]), hash.count == 32 else { continue }
            out[id, default: [:]][lo..<hi] = Array(hash)
        }
        return out
    }
}


extension EventStore: SignedLogReader {
    /// Another read-only connection to the same file.
    public func anotherReader() throws -> any SignedLogReader {
        let another = try EventStore(path: path, access: .readOnly)
        another.proofCache = proofCache
        return another
    }

    public func recordingRows(_ streams: Set<UUID>) throws -> [UUID: RecordingRow] {
        guard !streams.isEmpty else { return [:] }
        return try read { db in
            // Logs before schema 7 have no trees.
            let hasTrees = try db.columns(in: "streams").contains { $0.name == "tree_id" }
            // Each recording's row alone, through the unique index: listing every row would grow with the log.
            let statement = try db.cachedStatement(sql: "SELECT version, head, \(hasTrees ? "tree_id" : "NULL") FROM streams WHERE uuid = ?")
            var out: [UUID: RecordingRow] = [:]
            for stream in streams {
                guard let row = try Row.fetchOne(statement, arguments: [Data(stream.bytes)]) else { continue }
                out[stream] = RecordingRow(version: Int64.fromDatabaseValue(row[0]) ?? 0, head: Data.fromDatabaseValue(row[1]).map(Array.init),
                                           tree: Int64.fromDatabaseValue(row[2]))
            }
            return out
        }
    }

    public func allRecordingRows() throws -> [UUID: RecordingRow] {
        try read { db in
            // Logs of schema 5 and 6 read without a migration: they have no trees.
            let hasTrees = try db.columns(in: "streams").contains { $0.name == "tree_id" }
            var out: [UUID: RecordingRow] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT uuid, version, head, \(hasTrees ? "tree_id" : "NULL") FROM streams") {
                guard let uuid = Data.fromDatabaseValue(row[0]).flatMap({ UUID(bytes: $0) }) else { continue }
                out[uuid] = RecordingRow(version: Int64.fromDatabaseValue(row[1]) ?? 0, head: Data.fromDatabaseValue(row[2]).map(Array.init),
                                         tree: Int64.fromDatabaseValue(row[3]))
            }
            return out
        }
    }

    public func streams(inTree id: Int64) throws -> Set<UUID> {
        try read { db in
            Set(try Data.fetchAll(db, sql: "SELECT uuid FROM streams WHERE tree_id = ?", arguments: [id]).compactMap { UUID(bytes: $0) })
        }
    }

    /// ``verifyIndexes(from:_:)``: every event read from its block, the block index rows re-derived.
    public func passByPosition(from position: Int64, _ body: (PassedEvent) throws -> Void) throws -> [EventStoreError] {
        try verifyIndexes(from: position) { event in
            try body(PassedEvent(position: event.position, stream: event.stream, streamVersion: event.streamVersion,
                                 first: event.streamVersion == 1 ? event : nil))
        }
    }

    public func storedNode(tree id: Int64, range: Range<Int64>) throws -> [UInt8]? {
        if let known = proofCache.node(tree: id, range: range) { return known }
        guard hasTreeNodes else { return nil }
        let found = try read { db in
            try Data.fetchOne(db.cachedStatement(sql: "SELECT hash FROM tree_nodes WHERE tree_id = ? AND lo = ? AND hi = ?"),
                              arguments: [id, range.lowerBound, range.upperBound]).flatMap { $0.count == 32 ? Array($0) : nil }
        }
        if let found { proofCache.keep(node: found, tree: id, range: range) }
        return found
    }

    public func storedNodes(trees: Set<Int64>?) throws -> [Int64: [Range<Int64>: [UInt8]]] {
        guard hasTreeNodes else { return [:] }
        return try read { db in try treeNodes(db, trees: trees) }
    }

    public func cosignatureRows() throws -> [CosignatureRow] {
        try read { db in
            guard try db.tableExists("cosignatures") else { return [] }
            return try Row.fetchAll(db, sql: """
                SELECT t.public_key, c.size, c.witness, c.witness_key, c.cosigned_at, c.signature
                FROM cosignatures c JOIN trees t ON t.id = c.tree_id ORDER BY c.tree_id, c.size, c.witness
                """).map { row in
                CosignatureRow(publicKey: Data.fromDatabaseValue(row[0]).map(Array.init) ?? [], size: Int64.fromDatabaseValue(row[1]) ?? 0,
                               witness: String.fromDatabaseValue(row[2]), witnessKey: Data.fromDatabaseValue(row[3]).map(Array.init),
                               cosignedAt: Int64.fromDatabaseValue(row[4]), signature: Data.fromDatabaseValue(row[5]).map(Array.init))
            }
        }
    }
}

extension TreeStates {
    /// Writes the tiles and the trees that changed into a SQLite log.
    func save(_ db: Database) throws {
        if !tiles.isEmpty {
            let insert = try db.cachedStatement(sql: "INSERT INTO tree_nodes (tree_id, lo, hi, hash) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING")
            for tile in tiles { try insert.execute(arguments: [tile.tree, tile.lo, tile.hi, Data(tile.hash)]) }
        }
        for (id, state) in states where state.changed {
            try db.execute(sql: "UPDATE trees SET size = ?, frontier = ? WHERE id = ?",
                           arguments: [state.size, state.frontier.map { Data($0.packed) }, id])
        }
    }
}
