import EventStore
import Foundation
import GRDB

/// Why a forgery could not be made: the test that asked for it is wrong.
public enum ForgeryError: Error {
    case noEvent(Int64)
    case unchanged(Int64)
}

/// A forger who knows docs/FORMAT.md and holds no device key: edits rows with raw
/// SQL and recomputes everything that is not signed.
public struct LogForger {
    public init(path: String) { self.path = path }

    public let path: String

    /// Replaces the payload of the event at `position` (stored raw, codec 0), then
    /// recomputes the global chain from there and the stream's stored head.
    public func rewrite(position: Int64, _ change: (String) -> String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            let store = try EventStore(path: path, access: .readOnly)
            guard let event = try store.event(at: position, verify: false) else { throw ForgeryError.noEvent(position) }
            let payload = Array(change(String(decoding: event.payload, as: UTF8.self)).utf8)
            guard payload != event.payload else { throw ForgeryError.unchanged(position) }
            if try BlockSurgery.storesRows(db) {
                try db.execute(sql: "UPDATE events SET codec = 0, dictionary_id = NULL, payload = ?, raw_size = ? WHERE position = ?",
                               arguments: [Data(payload), payload.count, position])
            } else {
                try BlockSurgery.update(db, positions: [position]) { _, event in event.payload = payload }
            }
            try rechain(db, from: position)
        }
    }

    /// Recomputes the global chain from `position` on, and every stream's head.
    public func rechain(_ db: Database, from position: Int64) throws {
        let store = try EventStore(path: path, access: .readOnly)
        let rows = try BlockSurgery.storesRows(db)
        var previous = position <= 1 ? ChainHash.genesis : try store.event(at: position - 1, verify: false)!.hash
        var chains = StreamChains()
        var hashes: [Int64: [UInt8]] = [:]
        for event in try store.events(verify: false) {
            chains.advance(event)
            guard event.position >= position else { continue }
            let hash = ChainHash.hash(previous: previous, envelope: ChainHash.envelope(
                position: event.position, id: event.id, stream: event.stream, streamVersion: event.streamVersion, type: event.type,
                typeVersion: event.typeVersion, recordedAt: event.recordedAt, payload: event.payload))
            if rows {
                try db.execute(sql: "UPDATE events SET hash = ? WHERE position = ?", arguments: [Data(hash), event.position])
            } else {
                hashes[event.position] = hash
            }
            previous = hash
        }
        try BlockSurgery.update(db, positions: Array(hashes.keys)) { position, event in event.hash = hashes[position]! }
        for (stream, head) in chains.heads {
            try db.execute(sql: "UPDATE streams SET head = ? WHERE uuid = ?", arguments: [Data(head), withUnsafeBytes(of: stream.uuid) { Data($0) }])
        }
    }
}

/// A forger of device trees who knows docs/FORMAT.md: renumbers leaves, moves
/// recordings between trees, drops heads, and signs heads with whatever key it holds
/// (its own, or one device's when the attack says so).
public struct TreeForger {
    public let path: String
    public init(path: String) { self.path = path }

    /// The row id of `device`'s tree.
    public func tree(of device: String) throws -> Int64 {
        try DatabaseQueue(path: path).read { db in
            guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM trees WHERE device = ? ORDER BY id LIMIT 1", arguments: [device]) else {
                throw ForgeryError.noEvent(0)
            }
            return id
        }
    }

    /// Recomputes `device`'s tree from the events its recordings now hold (leaves
    /// numbered in position order) and, with `key`, replaces its heads by heads signed
    /// with that key at `sizes` (default: the sizes it had, as far as the leaves reach).
    public func rebuild(device: String, signingWith key: DeviceKey?, sizes: [Int64]? = nil) throws {
        let id = try tree(of: device)
        let queue = try DatabaseQueue(path: path)
        let streams = try queue.read { db in
            Set(try Data.fetchAll(db, sql: "SELECT uuid FROM streams WHERE tree_id = ?", arguments: [id]).compactMap { data in
                data.count == 16 ? UUID(uuid: data.withUnsafeBytes { $0.load(as: uuid_t.self) }) : nil
            })
        }
        let store = try EventStore(path: path, access: .readOnly)
        var frontier = MerkleTree.Frontier(), roots: [Int64: [UInt8]] = [:], leaves: [(Int64, Int64)] = []
        var scratch: [UInt8] = []
        let oldSizes = try queue.read { try Int64.fetchAll($0, sql: "SELECT size FROM tree_heads WHERE tree_id = ? ORDER BY size", arguments: [id]) }
        var tiles: [(Int64, Int64, [UInt8])] = []
        for event in try store.events(EventQuery(streams: streams), verify: false) {
            leaves.append((event.position, frontier.size))
            frontier.append(MerkleTree.leafHash(TreeLeaf.data(of: event, scratch: &scratch))) { tiles.append(($0, $1, $2)) }
            roots[frontier.size] = frontier.root
        }
        try queue.writeWithoutTransaction { db in
            if try BlockSurgery.storesRows(db) {
                for (position, leaf) in leaves { try db.execute(sql: "UPDATE events SET leaf = ? WHERE position = ?", arguments: [leaf, position]) }
            } else {
                let byPosition = Dictionary(leaves, uniquingKeysWith: { a, _ in a })
                try BlockSurgery.update(db, positions: Array(byPosition.keys)) { position, event in event.leaf = byPosition[position]! }
            }
            // The tiles too: they are derived, and FORMAT.md says how.
            try db.execute(sql: "DELETE FROM tree_nodes WHERE tree_id = ?", arguments: [id])
            for (lo, hi, hash) in tiles {
                try db.execute(sql: "INSERT INTO tree_nodes (tree_id, lo, hi, hash) VALUES (?, ?, ?, ?)", arguments: [id, lo, hi, Data(hash)])
            }
            try db.execute(sql: "UPDATE trees SET size = ?, frontier = ? WHERE id = ?", arguments: [frontier.size, Data(frontier.packed), id])
            guard let key else { return }
            try db.execute(sql: "DELETE FROM tree_heads WHERE tree_id = ?", arguments: [id])
            try db.execute(sql: "UPDATE trees SET public_key = ? WHERE id = ?", arguments: [Data(key.publicKey), id])
            for size in (sizes ?? oldSizes).filter({ $0 >= 1 && $0 <= frontier.size }) {
                let head = try TreeHead.signing(size: size, root: roots[size]!, key: key, at: Timestamp(microsecondsSince1970: 1_800_000_000_000_000 + size))
                try db.execute(sql: "INSERT INTO tree_heads (tree_id, size, root, signed_at, flags, signature) VALUES (?, ?, ?, ?, ?, ?)",
                               arguments: [id, size, Data(head.root), head.signedAt.microsecondsSince1970, head.isTestKey ? 1 : 0,
                                           Data(head.signature)])
            }
        }
    }

    /// Puts `streams` into `device`'s tree.
    public func move(_ streams: Set<UUID>, to device: String) throws {
        let id = try tree(of: device)
        try DatabaseQueue(path: path).writeWithoutTransaction { db in
            for stream in streams {
                try db.execute(sql: "UPDATE streams SET tree_id = ? WHERE uuid = ?", arguments: [id, withUnsafeBytes(of: stream.uuid) { Data($0) }])
            }
            if !(try BlockSurgery.storesRows(db)) { try BlockSurgery.reindexAll(db) }
        }
    }

    /// Deletes `device`'s heads above `size` (all with 0).
    public func dropHeads(of device: String, above size: Int64) throws {
        let id = try tree(of: device)
        try DatabaseQueue(path: path).writeWithoutTransaction { db in
            try db.execute(sql: "DELETE FROM tree_heads WHERE tree_id = ? AND size > ?", arguments: [id, size])
        }
    }

    /// The sizes of `device`'s heads, smallest first.
    public func headSizes(of device: String) throws -> [Int64] {
        let id = try tree(of: device)
        return try DatabaseQueue(path: path).read { try Int64.fetchAll($0, sql: "SELECT size FROM tree_heads WHERE tree_id = ? ORDER BY size", arguments: [id]) }
    }
}

extension LogForger {
    /// Removes recordings whole: their events, their stream rows and catalog rows;
    /// then closes the gap in positions and recomputes the global chain, so only a
    /// signature can tell.
    public func delete(streams: Set<UUID>) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            var removed: Set<Int64> = []
            for stream in streams {
                let uuid = withUnsafeBytes(of: stream.uuid) { Data($0) }
                guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM streams WHERE uuid = ?", arguments: [uuid]) else { continue }
                removed.insert(id)
            }
            if !(try BlockSurgery.storesRows(db)) {
                // Blocks: the events kept, renumbered, stored again; the catalog follows.
                let kept = try BlockSurgery.events(path).filter { !removed.contains($0.event.streamRowID) }
                try db.execute(sql: "DELETE FROM catalog WHERE stream_id IN (\(removed.map(String.init).joined(separator: ",")))")
                for (index, (position, _)) in kept.enumerated() where position != Int64(index + 1) {
                    try db.execute(sql: "UPDATE catalog SET position = ? WHERE position = ?", arguments: [index + 1, position])
                }
                try BlockSurgery.replaceAll(db, with: kept.map(\.event))
                for id in removed { try db.execute(sql: "DELETE FROM streams WHERE id = ?", arguments: [id]) }
                try db.execute(sql: "DELETE FROM snapshots")
                try db.execute(sql: "UPDATE catalog_coverage SET through = ?", arguments: [kept.count])
                try rechain(db, from: 1)
                return
            }
            for id in removed {
                try db.execute(sql: "DELETE FROM events WHERE stream_id = ?", arguments: [id])
                try db.execute(sql: "DELETE FROM catalog WHERE stream_id = ?", arguments: [id])
                try db.execute(sql: "DELETE FROM streams WHERE id = ?", arguments: [id])
            }
            try db.execute(sql: "DELETE FROM snapshots")
            // Close the gaps: positions 1, 2, 3, ... again, in order.
            let positions = try Int64.fetchAll(db, sql: "SELECT position FROM events ORDER BY position")
            for (index, position) in positions.enumerated() where position != Int64(index + 1) {
                try db.execute(sql: "UPDATE events SET position = ? WHERE position = ?", arguments: [index + 1, position])
                try db.execute(sql: "UPDATE catalog SET position = ? WHERE position = ?", arguments: [index + 1, position])
            }
            try db.execute(sql: "UPDATE catalog_coverage SET through = ?", arguments: [positions.count])
            try rechain(db, from: 1)
        }
    }
}
