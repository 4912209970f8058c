import EventLog
import Foundation
import GRDB

extension EventStore {
    /// Every checkpoint (the older kind), by key, then sequence.
    public func checkpoints() throws -> [Checkpoint] {
        try read { db in
            try Row.fetchAll(db, sql: """
                SELECT public_key, sequence, device, previous, signed_at, heads, signature FROM checkpoints
                ORDER BY public_key, sequence
                """).compactMap(Self.checkpoint)
        }
    }

    /// Tree `id`'s heads from the newest down to the first that verifies under its key
    /// (all of them if none does), oldest first.
    public func latestValidHeads(tree id: Int64, owner: TreeOwner) throws -> [TreeHead] {
        var out: [TreeHead] = []
        try read { db in
            let cursor = try Row.fetchCursor(db, sql: "SELECT size, root, signed_at, flags, signature FROM tree_heads WHERE tree_id = ? ORDER BY size DESC",
                                             arguments: [id])
            while let row = try cursor.next() {
                guard let size = Int64.fromDatabaseValue(row[0]), let root = Data.fromDatabaseValue(row[1]),
                      let signedAt = Int64.fromDatabaseValue(row[2]), let flags = Int64.fromDatabaseValue(row[3]),
                      let signature = Data.fromDatabaseValue(row[4]) else { continue }
                let head = TreeHead(device: owner.device, publicKey: owner.publicKey, size: size, root: Array(root),
                                    signedAt: Timestamp(microsecondsSince1970: signedAt), isTestKey: flags != 0, signature: Array(signature))
                out.append(head)
                if head.isValid { break }
            }
        }
        return out.reversed()
    }

    /// The leaf hashes of tree `id`'s leaves in `range`, read through the leaf index (the
    /// CROSS JOIN keeps SQLite from walking every recording of the tree instead).
    public func leafHashes(tree id: Int64, range: Range<Int64>) throws -> [Int64: [UInt8]] {
        if let known = try proofCache.tile(tree: id, range: range, treeSize: { try treeSize(id) }) { return known }
        // Read before the leaves: a tile read while the tree grew is kept as of the smaller size.
        let sizeBefore = try treeSize(id)
        var runs: [ClosedRange<Int64>] = []
        try read { db in
            var positions: [Int64] = []
            if hasLeafColumn {
                positions = try Int64.fetchAll(db.cachedStatement(sql: """
                    SELECT e.position FROM events e CROSS JOIN streams s ON s.id = e.stream_id
                    WHERE e.leaf >= ? AND e.leaf < ? AND s.tree_id = ?
                    """), arguments: [range.lowerBound, range.upperBound, id])
            }
            // A tile's events mostly lie close together, so a few range reads fetch them
            // without reading far past them.
            for position in positions.sorted() {
                if let last = runs.last, position - last.upperBound <= 64 {
                    runs[runs.count - 1] = last.lowerBound...position
                } else {
                    runs.append(position...position)
                }
            }
            if hasBlocks {
                // A block holds at most `maximumCount` events, so its leaves of one tree,
                // given one after another as appends give them, end at most that far past
                // `range`: a bounded range of the index, not the rest of the tree. Leaves
                // spread wider (a file changed by hand) are missed, and the proof then
                // lacks a neighbour: the caller checks the whole tree instead.
                for row in try Row.fetchAll(db.cachedStatement(sql: """
                    SELECT l.block, b.count FROM block_leaves l JOIN event_blocks b ON b.first_position = l.block
                    WHERE l.tree_id = ? AND l.last_leaf BETWEEN ? AND ? AND l.first_leaf < ?
                    """), arguments: [id, range.lowerBound, min(range.upperBound, MerkleTree.maximumSize) + Int64(EventBlock.maximumCount), range.upperBound]) {
                    // A hostile row's numbers held to what a block can be, so the sums cannot overflow.
                    let first = min(max(Int64.fromDatabaseValue(row[0]) ?? 1, 1), MerkleTree.maximumSize)
                    let count = min(max(Int64.fromDatabaseValue(row[1]) ?? 1, 1), Int64(EventBlock.maximumCount))
                    runs.append(first...(first + count - 1))
                }
            }
        }
        // The runs hold other devices' events too, whose leaves number from 0 as well: only
        // the recordings of this tree count. Just the runs' recordings are looked up (the
        // tree's whole list, thousands of ids, was read for every tile: a tenth of a
        // viewer's work while it audited in the background).
        // Blocks one after another read as one range: one statement, not one a block.
        var merged: [ClosedRange<Int64>] = []
        for run in runs.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, run.lowerBound <= last.upperBound + 1 {
                merged[merged.count - 1] = last.lowerBound...max(last.upperBound, run.upperBound)
            } else {
                merged.append(run)
            }
        }
        var found: [StoredEvent] = []
        for run in merged {
            try scan(EventQuery(positions: run), verify: false) { event in
                if let leaf = event.leaf, range.contains(leaf) { found.append(event) }
            }
        }
        let inTree = try streams(Set(found.map(\.stream)), inTree: id)
        var out: [Int64: [UInt8]] = [:], scratch = SplitEnvelope()
        for event in found where inTree.contains(event.stream) {
            scratch.set(event)
            out[event.leaf!] = scratch.leafHash().bytes
        }
        proofCache.keep(tile: out, tree: id, range: range, treeSize: sizeBefore)
        return out
    }

    /// How many leaves tree `id` holds, as its row says (nil: no such tree).
    private func treeSize(_ id: Int64) throws -> Int64? {
        guard hasTreeNodes else { return nil }
        return try read { db in try Int64.fetchOne(db.cachedStatement(sql: "SELECT size FROM trees WHERE id = ?"), arguments: [id]) }
    }

    /// Those of `candidates` that are recordings of tree `id`.
    func streams(_ candidates: Set<UUID>, inTree id: Int64) throws -> Set<UUID> {
        guard !candidates.isEmpty else { return [] }
        let ids = candidates.sorted { $0.precedes($1) }
        var out = Set<UUID>()
        try read { db in
            // A tile's few recordings one by one, through one prepared statement: preparing a
            // statement for each set of candidates cost more than the lookups it made.
            if ids.count <= 16 {
                let statement = try db.cachedStatement(sql: "SELECT tree_id FROM streams WHERE uuid = ?")
                for uuid in ids where try Int64.fetchOne(statement, arguments: [Data(uuid.bytes)]) == id { out.insert(uuid) }
                return
            }
            // A few hundred at a time, well under SQLite's limit of bound values.
            for start in stride(from: 0, to: ids.count, by: 500) {
                let chunk = ids[start..<min(start + 500, ids.count)]
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                let arguments = StatementArguments(chunk.map { Data($0.bytes) })
                // Each candidate looked up by its uuid, the tree compared here: given `tree_id
                // = ?` too, SQLite (no statistics in a log) walked every recording of the tree
                // for five candidates or more, 4-6 ms a call on a log of 40,000 recordings.
                for row in try Row.fetchAll(db, sql: "SELECT uuid, tree_id FROM streams WHERE uuid IN (\(marks))", arguments: arguments) {
                    if let bytes = Data.fromDatabaseValue(row[0]), Int64.fromDatabaseValue(row[1]) == id, let uuid = UUID(bytes: bytes) {
                        out.insert(uuid)
                    }
                }
            }
        }
        return out
    }

    /// Every tree with its heads, by row id; rows of the wrong types are left out.
    public func treeRows(heads withHeads: Bool = true) throws -> [Int64: DeviceTree] {
        try read { db in
            guard try db.tableExists("trees") else { return [:] }
            var out: [Int64: DeviceTree] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, public_key, device, size, frontier IS NOT NULL FROM trees") {
                guard let id = Int64.fromDatabaseValue(row[0]), let key = Data.fromDatabaseValue(row[1]),
                      let device = String.fromDatabaseValue(row[2]), let size = Int64.fromDatabaseValue(row[3]) else { continue }
                out[id] = DeviceTree(owner: TreeOwner(device: device, publicKey: Array(key)), size: size, heads: [],
                                     holdsEveryLeaf: Bool.fromDatabaseValue(row[4]) ?? false)
            }
            guard withHeads else { return out }
            for row in try Row.fetchAll(db, sql: "SELECT tree_id, size, root, signed_at, flags, signature FROM tree_heads ORDER BY tree_id, size") {
                guard let id = Int64.fromDatabaseValue(row[0]), let tree = out[id], let size = Int64.fromDatabaseValue(row[1]),
                      let root = Data.fromDatabaseValue(row[2]), let signedAt = Int64.fromDatabaseValue(row[3]),
                      let flags = Int64.fromDatabaseValue(row[4]), let signature = Data.fromDatabaseValue(row[5]) else { continue }
                out[id]!.heads.append(TreeHead(device: tree.owner.device, publicKey: tree.owner.publicKey, size: size, root: Array(root),
                                               signedAt: Timestamp(microsecondsSince1970: signedAt), isTestKey: flags != 0,
                                               signature: Array(signature)))
            }
            return out
        }
    }

    /// SQLite's own check of the file: pages, indexes, constraints. Empty when sound.
    public func structuralProblems() throws -> [String] {
        try Self.translating(path) {
            try queue.read { db in
                try String.fetchAll(db, sql: "PRAGMA integrity_check").filter { $0 != "ok" }
            }
        }
    }
}


extension EventStore {
    /// The stored event with this id, if any.
    public func event(id: UUID) throws -> StoredEvent? {
        try read { db in
            guard let position = try Int64.fetchOne(db, sql: "SELECT position FROM events WHERE event_id = ?", arguments: [Data(id.bytes)])
                    ?? (hasBlocks ? try Int64.fetchOne(db, sql: "SELECT position FROM block_ids WHERE event_id = ?", arguments: [Data(id.bytes)]) : nil)
            else { return nil }
            var reader = BlockReader(store: self, db: db)
            guard let event = try reader.event(at: position, RowNames()), event.id == id else { return nil }
            return event
        }
    }

    /// Stores checkpoints from another log (an import), keeping those already here.
    /// - Throws: ``EventStoreError/checkpointConflict(device:sequence:)`` if one
    ///   stored here under the same key and sequence differs.
    /// - Returns: how many were new.
    static func store(_ checkpoints: [Checkpoint], _ db: Database) throws -> Int {
        var added = 0
        for checkpoint in checkpoints {
            if let stored = try Row.fetchOne(db, sql: """
                SELECT public_key, sequence, device, previous, signed_at, heads, signature FROM checkpoints
                WHERE public_key = ? AND sequence = ?
                """, arguments: [Data(checkpoint.publicKey), checkpoint.sequence]).flatMap(Self.checkpoint) {
                guard stored == checkpoint else {
                    throw EventStoreError.checkpointConflict(device: checkpoint.device, sequence: checkpoint.sequence)
                }
                continue
            }
            try insert(checkpoint, db)
            added += 1
        }
        return added
    }
}
