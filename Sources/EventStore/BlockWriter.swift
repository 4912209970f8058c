import EventLog
import Foundation
import GRDB
import ZlibCodec

/// Gathers an append's new events into blocks and stores them with their
/// `block_streams` and `block_leaves` rows (docs/FORMAT.md, "Event blocks"); the caller
/// writes each event's `block_ids` row as it gives the event its position.
///
/// The log's last block, when it holds fewer than the capacity, is continued rather
/// than followed by another small one: a device that appends a few events at a time
/// still ends up with full blocks. Only that one block is ever rewritten, and only by
/// the append that continues it, so nothing larger than a block is rewritten and no
/// other row changes.
final class BlockWriter {
    struct Pending {
        var first: Int64
        var events: [EventBlock.Event] = []
        /// The device tree of each event's recording, for `block_leaves`.
        var trees: [Int64?] = []
        var rawSize = 0
        /// Events before this index were stored by an earlier append (a continued block).
        var storedBefore = 0
        /// With a ``ChainHashing``, what each new event (from `storedBefore` on) is hashed from.
        var unhashed: [(event: NewEvent, headAtStart: Hash32)] = []
    }

    private let capacity: Int
    private var blocks: [Pending] = []
    /// Blocks before this index are closed and handed to a lane.
    private var submitted = 0
    private let lanes: Lanes
    private let dictionaryID: Int64?
    private let hashing: ChainHashing?

    /// - Parameters:
    ///   - last: the log's last block, decoded, with the trees of its events'
    ///     recordings, if it may be continued.
    ///   - compressor: its block deflaters compress closed blocks on background
    ///     threads while the appender goes on.
    ///   - lastHash: given, the writer works out the events' chain hashes itself, on a
    ///     thread of its own, from the log's last chain hash (``AppendPlanner/Hashing/byStore``):
    ///     hand it each event with ``add(_:at:tree:hashing:)``.
    init(capacity: Int, continuing last: (first: Int64, events: [EventBlock.Event], trees: [Int64?])?,
         compressor: EventStore.Compressor, lastHash: Hash32? = nil) throws {
        self.capacity = max(1, min(capacity, EventBlock.maximumCount))
        lanes = Lanes(deflaters: try compressor.blockDeflaters())
        dictionaryID = compressor.dictionaryID
        hashing = lastHash.map(ChainHashing.init)
        if let last, last.events.count < self.capacity {
            var pending = Pending(first: last.first, events: last.events, trees: last.trees, storedBefore: last.events.count)
            pending.rawSize = last.events.reduce(0) { $0 + 60 + $1.payload.count }
            blocks.append(pending)
        }
    }

    deinit {
        // The hashing thread hands blocks to the lanes: it finishes first.
        hashing?.wait()
        lanes.wait()
    }

    /// Adds the next event of the log, at `position`. With a writer that hashes,
    /// `hashing` is what the event is hashed from (`event.hash` is filled in then).
    func add(_ event: consuming EventBlock.Event, at position: Int64, tree: Int64?,
             hashing source: (event: NewEvent, headAtStart: Hash32)? = nil) {
        let size = 60 + event.payload.count
        // Read in place, not through a copy of the open block: a copy would share its
        // arrays, and the append below would then copy them whole.
        let last = blocks.count - 1
        if last >= 0, blocks[last].first + Int64(blocks[last].events.count) == position,
           blocks[last].events.count < capacity, blocks[last].rawSize < EventBlock.closingSize {
            blocks[last].events.append(event)
            blocks[last].trees.append(tree)
            blocks[last].rawSize += size
            if let source { blocks[last].unhashed.append(source) }
        } else {
            var block = Pending(first: position, rawSize: size)
            // At its capacity at once: grown one event at a time, each array was copied six times.
            block.events.reserveCapacity(capacity)
            block.events.append(event)
            block.trees.reserveCapacity(capacity)
            block.trees.append(tree)
            if let source {
                block.unhashed.reserveCapacity(capacity)
                block.unhashed.append(source)
            }
            blocks.append(block)
            // The block before is closed: hash and compress it while this thread goes on.
            submit(upTo: blocks.count - 1)
        }
    }

    private func submit(upTo end: Int) {
        while submitted < end {
            let block = blocks[submitted]
            if block.events.count > block.storedBefore {
                if let hashing {
                    precondition(block.unhashed.count == block.events.count - block.storedBefore,
                                 "a writer that hashes is handed every new event's source")
                    hashing.hash(block, at: submitted) { [lanes, dictionaryID] hashed, index in
                        lanes.compress(hashed, at: index, dictionaryID: dictionaryID)
                    }
                } else {
                    lanes.compress(EventBlock(events: block.events), at: submitted, dictionaryID: dictionaryID)
                }
            }
            submitted += 1
        }
    }

    /// Each recording's hash after this append's events, once ``store(_:)`` has run (a
    /// writer that hashes; empty otherwise).
    private(set) var streamHeads: [UUIDKey: Hash32] = [:]

    /// Hashes and compresses what is left, and stores the blocks with their index rows,
    /// each as soon as its lane has it (the rows of one block are written while the
    /// next is still compressed).
    func store(_ db: Database) throws {
        submit(upTo: blocks.count)
        defer {
            if let hashing {
                hashing.wait()
                streamHeads = hashing.heads
            }
        }
        let new = blocks.indices.filter { blocks[$0].events.count > blocks[$0].storedBefore }
        guard !new.isEmpty else { return }

        // Through SQLite's C API: GRDB's argument values cost more than SQLite's own work here.
        let insertBlock = try SQLiteCall(db, db.cachedStatement(sql: """
            INSERT INTO event_blocks (first_position, count, codec, dictionary_id, raw_size, body, last_hash)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (first_position) DO UPDATE SET count = excluded.count, codec = excluded.codec,
                dictionary_id = excluded.dictionary_id, raw_size = excluded.raw_size, body = excluded.body,
                last_hash = excluded.last_hash
            """))
        let insertStream = try SQLiteCall(db, db.cachedStatement(sql: """
            INSERT INTO block_streams (stream_id, block, last_version, last_position) VALUES (?, ?, ?, ?)
            ON CONFLICT (stream_id, block) DO UPDATE SET last_version = excluded.last_version, last_position = excluded.last_position
            """))
        let insertLeaves = try SQLiteCall(db, db.cachedStatement(sql: """
            INSERT INTO block_leaves (tree_id, block, first_leaf, last_leaf) VALUES (?, ?, ?, ?)
            ON CONFLICT (tree_id, block) DO UPDATE SET first_leaf = excluded.first_leaf, last_leaf = excluded.last_leaf
            """))
        for index in new {
            let block = blocks[index]
            let stored = try lanes.result(at: index)
            _ = try stored.bytes.withUnsafeBytes { body in
                try stored.lastHash.withUnsafeBytes { lastHash in
                    try insertBlock.run(binding: {
                        $0.int64(1, block.first)
                        $0.int64(2, Int64(block.events.count))
                        $0.int64(3, stored.codec.rawValue)
                        if let dictionaryID = stored.dictionaryID { $0.int64(4, dictionaryID) } else { $0.null(4) }
                        $0.int64(5, Int64(stored.rawSize))
                        $0.blob(6, body)
                        $0.blob(7, lastHash)
                    }, row: { _ in () })
                }
            }
            var streams: [Int64: (version: Int64, position: Int64)] = [:]
            var leaves: [Int64: (first: Int64, last: Int64)] = [:]
            // By index, reading the fields it needs: copying each event would retain its
            // hash and payload only to release them again.
            for offset in block.events.indices {
                let (stream, version) = (block.events[offset].streamRowID, block.events[offset].streamVersion)
                streams[stream] = (version, block.first + Int64(offset))
                if let leaf = block.events[offset].leaf, let tree = block.trees[offset] {
                    let known = leaves[tree]
                    leaves[tree] = (min(known?.first ?? leaf, leaf), max(known?.last ?? leaf, leaf))
                }
            }
            for (stream, last) in streams.sorted(by: { $0.key < $1.key }) {
                _ = try insertStream.run(binding: {
                    $0.int64(1, stream); $0.int64(2, block.first); $0.int64(3, last.version); $0.int64(4, last.position)
                }, row: { _ in () })
            }
            for (tree, range) in leaves.sorted(by: { $0.key < $1.key }) {
                _ = try insertLeaves.run(binding: {
                    $0.int64(1, tree); $0.int64(2, block.first); $0.int64(3, range.first); $0.int64(4, range.last)
                }, row: { _ in () })
            }
        }
    }
}

/// Works out the chain hashes of an append's closed blocks, in order, on a thread of its
/// own (``AppendPlanner/Hashing/byStore``), and hands each block on when it is hashed.
private final class ChainHashing: @unchecked Sendable {
    private let queue = DispatchQueue(label: "gamelog.blocks.hashes", qos: .userInitiated)
    private let group = DispatchGroup()
    // Used on `queue` alone, then read after `wait()`.
    private var chain: ChainHasher

    init(lastHash: Hash32) {
        chain = ChainHasher(lastHash: lastHash)
    }

    /// Hashes the new events of `block` (after those stored before), then calls `then`
    /// with the block as stored, on the hashing thread. Blocks are hashed in the order given.
    func hash(_ block: BlockWriter.Pending, at index: Int, then: @escaping @Sendable (EventBlock, Int) -> Void) {
        queue.async(group: group) { [self] in
            var events = block.events
            for (offset, source) in block.unhashed.enumerated() {
                let at = block.storedBefore + offset
                events[at].hash = chain.advance(source.event, position: block.first + Int64(at),
                                                streamVersion: events[at].streamVersion, headAtStart: source.headAtStart).bytes
            }
            then(EventBlock(events: events), index)
        }
    }

    func wait() { group.wait() }

    /// Each recording's hash after the events hashed; read after ``wait()``.
    var heads: [UUIDKey: Hash32] { chain.heads }
}

/// Compresses closed blocks on background threads, block `i` on lane `i % lanes`: a
/// serial queue with its own deflater, so no deflater runs on two threads at once.
private final class Lanes: @unchecked Sendable {
    /// A block as stored: its body compressed, and its last event's chain hash.
    struct Encoded {
        var codec: PayloadCodec
        var dictionaryID: Int64?
        var rawSize: Int
        var bytes: [UInt8]
        var lastHash: [UInt8]
    }

    private let deflaters: [RawDeflater]
    private let queues: [DispatchQueue]
    private let group = DispatchGroup()
    private let finished = NSCondition()
    // Guarded by `finished`.
    private var encoded: [Int: Encoded] = [:]
    private var error: Error?

    init(deflaters: [RawDeflater]) {
        self.deflaters = deflaters
        queues = deflaters.indices.map { DispatchQueue(label: "gamelog.blocks.\($0)", qos: .userInitiated) }
    }

    func compress(_ block: EventBlock, at index: Int, dictionaryID: Int64?) {
        let lane = index % deflaters.count
        queues[lane].async(group: group) { [self] in
            let body = block.body()
            do {
                let stored = try EventStore.encode(body, deflater: deflaters[lane], dictionaryID: dictionaryID)
                let result = Encoded(codec: stored.codec, dictionaryID: stored.dictionaryID, rawSize: body.count,
                                     bytes: stored.bytes, lastHash: block.events.last?.hash ?? [])
                finished.withLock { encoded[index] = result; finished.broadcast() }
            } catch {
                finished.withLock { self.error = self.error ?? error; finished.broadcast() }
            }
        }
    }

    func wait() { group.wait() }

    /// Block `index` as stored, once its lane has compressed it; throws the first
    /// failure of any lane instead.
    func result(at index: Int) throws -> Encoded {
        try finished.withLock {
            while encoded[index] == nil && error == nil { finished.wait() }
            if let error { throw error }
            return encoded.removeValue(forKey: index)!
        }
    }
}
