import EventStore
import Foundation
import GRDB
import ZlibCodec

/// Changes a log's stored events with raw SQL and docs/FORMAT.md, as a forger who knows
/// the format would: a block is inflated, its events changed, and the body written back
/// (uncompressed, which the format allows), its row and index rows made to agree unless
/// asked otherwise. Works on events stored in blocks, and on rows where noted.
public enum BlockSurgery {
    /// A block as stored: its first position and its events.
    public struct Opened {
        public var first: Int64
        public var events: [EventBlock.Event]
    }

    /// The block that holds `position`.
    public static func open(_ db: Database, holding position: Int64) throws -> Opened {
        guard let row = try Row.fetchOne(db, sql: """
            SELECT first_position, count, codec, dictionary_id, raw_size, body FROM event_blocks
            WHERE first_position <= ? ORDER BY first_position DESC LIMIT 1
            """, arguments: [position]) else {
            throw SurgeryError("no block holds position \(position)")
        }
        let codec: Int64 = row[2], stored = Array(row[5] as Data), rawSize: Int = row[4]
        let body: [UInt8]
        switch codec {
        case 0: body = stored
        case 1:
            let dictionary = Array(try Data.fetchOne(db, sql: "SELECT bytes FROM dictionaries WHERE id = ?", arguments: [row[3] as Int64])!)
            body = try RawInflater(dictionary: dictionary).decompress(stored, expectedSize: rawSize, limit: 64 << 20)
        default: body = try RawInflater().decompress(stored, expectedSize: rawSize, limit: 64 << 20)
        }
        return Opened(first: row[0], events: try EventBlock(body: body).events)
    }

    /// Writes `block` back over the row whose first position is `block.first`, raw.
    /// With `indexes`, its `block_ids` and `block_streams` rows are made to match.
    public static func write(_ block: Opened, _ db: Database, indexes: Bool = true) throws {
        let body = EventBlock(events: block.events).body()
        try db.execute(sql: """
            UPDATE event_blocks SET count = ?, codec = 0, dictionary_id = NULL, raw_size = ?, body = ?, last_hash = ?
            WHERE first_position = ?
            """, arguments: [block.events.count, body.count, Data(body), Data(block.events.last!.hash), block.first])
        guard indexes else { return }
        let last = block.first + Int64(block.events.count) - 1
        try db.execute(sql: "DELETE FROM block_ids WHERE position BETWEEN ? AND ?", arguments: [block.first, last])
        try db.execute(sql: "DELETE FROM block_streams WHERE block = ?", arguments: [block.first])
        var streams: [Int64: (Int64, Int64)] = [:]
        for (offset, event) in block.events.enumerated() {
            try db.execute(sql: "INSERT INTO block_ids (event_id, position) VALUES (?, ?)",
                           arguments: [withUnsafeBytes(of: event.id.uuid) { Data($0) }, block.first + Int64(offset)])
            streams[event.streamRowID] = (event.streamVersion, block.first + Int64(offset))
        }
        for (stream, end) in streams {
            try db.execute(sql: "INSERT INTO block_streams (stream_id, block, last_version, last_position) VALUES (?, ?, ?, ?)",
                           arguments: [stream, block.first, end.0, end.1])
        }
        try db.execute(sql: "DELETE FROM block_leaves WHERE block = ?", arguments: [block.first])
        var trees: [Int64: Int64] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, tree_id FROM streams WHERE tree_id IS NOT NULL") { trees[row[0]] = row[1] }
        var leaves: [Int64: (first: Int64, last: Int64)] = [:]
        for event in block.events {
            guard let leaf = event.leaf, let tree = trees[event.streamRowID] else { continue }
            leaves[tree] = (min(leaves[tree]?.first ?? leaf, leaf), max(leaves[tree]?.last ?? leaf, leaf))
        }
        for (tree, range) in leaves {
            try db.execute(sql: "INSERT INTO block_leaves (tree_id, block, first_leaf, last_leaf) VALUES (?, ?, ?, ?)",
                           arguments: [tree, block.first, range.first, range.last])
        }
    }

    /// Applies `change` to every event whose position is in `positions`, each block
    /// opened and written once.
    public static func update(_ db: Database, positions: [Int64], _ change: (Int64, inout EventBlock.Event) throws -> Void) throws {
        var index = 0
        let sorted = positions.sorted()
        while index < sorted.count {
            var block = try open(db, holding: sorted[index])
            let end = block.first + Int64(block.events.count)
            while index < sorted.count && sorted[index] < end {
                try change(sorted[index], &block.events[Int(sorted[index] - block.first)])
                index += 1
            }
            try write(block, db)
        }
    }

    /// Makes every block's index rows agree with its events and their recordings' trees
    /// again, as a forger who moved recordings between trees would.
    public static func reindexAll(_ db: Database) throws {
        for first in try Int64.fetchAll(db, sql: "SELECT first_position FROM event_blocks ORDER BY first_position") {
            try write(try open(db, holding: first), db)
        }
    }

    /// Replaces every stored block by blocks of `events`, at positions 1, 2, 3, ...
    public static func replaceAll(_ db: Database, with events: [EventBlock.Event]) throws {
        for table in ["event_blocks", "block_ids", "block_streams", "block_leaves"] { try db.execute(sql: "DELETE FROM \(table)") }
        var first = 0
        while first < events.count {
            let part = Array(events[first..<min(events.count, first + 64)])
            try db.execute(sql: """
                INSERT INTO event_blocks (first_position, count, codec, dictionary_id, raw_size, body, last_hash)
                VALUES (?, 1, 0, NULL, 1, X'00', ?)
                """, arguments: [first + 1, Data(part.last!.hash)])
            try write(Opened(first: Int64(first + 1), events: part), db)
            first += part.count
        }
    }

    /// Whether the log keeps its events as rows of `events` (a shared store's copy, or
    /// a log written before blocks).
    public static func storesRows(_ db: Database) throws -> Bool {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM events") ?? 0 > 0
    }

    /// Applies `change` to the event at `position` (in its block, or its row's payload
    /// and hash for a log stored as rows) and writes it back.
    public static func alter(_ path: String, position: Int64, _ change: (inout EventBlock.Event) throws -> Void) throws {
        try DatabaseQueue(path: path).write { db in
            var block = try open(db, holding: position)
            try change(&block.events[Int(position - block.first)])
            try write(block, db)
        }
    }

    /// Replaces the payload of the event at `position` with bytes that are no event.
    public static func garble(_ path: String, position: Int64) throws {
        try alter(path, position: position) { $0.payload = Array("garbage".utf8) }
    }

    /// Flips one bit of the payload of the event at `position`.
    public static func flipPayloadByte(_ path: String, position: Int64, offset: Int? = nil) throws {
        try alter(path, position: position) { event in
            let index = offset ?? event.payload.count / 2
            event.payload[index] ^= 0x10
        }
    }

    /// Removes the event at `position`, leaving a gap: its block is split in two around it.
    public static func delete(_ path: String, position: Int64) throws {
        try DatabaseQueue(path: path).write { db in
            let block = try open(db, holding: position)
            let index = Int(position - block.first)
            let before = Array(block.events[..<index]), after = Array(block.events[(index + 1)...])
            try db.execute(sql: "DELETE FROM event_blocks WHERE first_position = ?", arguments: [block.first])
            try db.execute(sql: "DELETE FROM block_streams WHERE block = ?", arguments: [block.first])
            try db.execute(sql: "DELETE FROM block_leaves WHERE block = ?", arguments: [block.first])
            try db.execute(sql: "DELETE FROM block_ids WHERE position = ?", arguments: [position])
            for part in [Opened(first: block.first, events: before), Opened(first: position + 1, events: after)] where !part.events.isEmpty {
                try db.execute(sql: """
                    INSERT INTO event_blocks (first_position, count, codec, dictionary_id, raw_size, body, last_hash)
                    VALUES (?, 1, 0, NULL, 1, X'00', ?)
                    """, arguments: [part.first, Data(part.events.last!.hash)])
                try write(part, db)
            }
        }
    }

    /// Swaps the stored events at `a` and `b` (in one block or two).
    public static func swap(_ path: String, _ a: Int64, _ b: Int64) throws {
        try DatabaseQueue(path: path).write { db in
            var first = try open(db, holding: a)
            var second = try open(db, holding: b)
            if first.first == second.first {
                first.events.swapAt(Int(a - first.first), Int(b - first.first))
                try write(first, db)
            } else {
                let moved = first.events[Int(a - first.first)]
                first.events[Int(a - first.first)] = second.events[Int(b - second.first)]
                second.events[Int(b - second.first)] = moved
                try write(first, db)
                try write(second, db)
            }
        }
    }

    /// Every event's position and stored form, blocks in order.
    public static func events(_ path: String) throws -> [(position: Int64, event: EventBlock.Event)] {
        try DatabaseQueue(path: path).read { db in
            var out: [(Int64, EventBlock.Event)] = []
            for first in try Int64.fetchAll(db, sql: "SELECT first_position FROM event_blocks ORDER BY first_position") {
                let block = try open(db, holding: first)
                for (offset, event) in block.events.enumerated() { out.append((first + Int64(offset), event)) }
            }
            return out
        }
    }

    public struct SurgeryError: Error, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }
}
