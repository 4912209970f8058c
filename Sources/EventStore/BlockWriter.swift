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
    }

    private let capacity: Int
    private var blocks: [Pending] = []
    /// Blocks before this index are closed and handed to a lane.
    private var submitted = 0
    private let lanes: Lanes
    private let dictionaryID: Int64?

    /// - Parameters:
    ///   - last: the log's last block, decoded, with the trees of its events'
    ///     recordings, if it may be continued.
    ///   - compressor: its block deflaters compress closed blocks on background
    ///     threads while the appender goes on.
    init(capacity: Int, continuing last: (first: Int64, events: [EventBlock.Event], trees: [Int64?])?,
         compressor: EventStore.Compressor) throws {
        self.capacity = max(1, min(capacity, EventBlock.maximumCount))
        lanes = Lanes(deflaters: try compressor.blockDeflaters())
        dictionaryID = compressor.dictionaryID
        if let last, last.events.count < self.capacity {
            var pending = Pending(first: last.first, events: last.events, trees: last.trees, storedBefore: last.events.count)
            pending.rawSize = last.events.reduce(0) { $0 + 60 + $1.payload.count }
            blocks.append(pending)
        }
    }

    deinit { lanes.wait() }

    /// Adds the next event of the log, at `position`.
    func add(_ event: consuming EventBlock.Event, at position: Int64, tree: Int64?) {
        let size = 60 + event.payload.count
        // Read in place, not through a copy of the open block: a copy would share its
        // arrays, and the append below would then copy them whole.
        let last = blocks.count - 1
        if last >= 0, blocks[last].first + Int64(blocks[last].events.count) == position,
           blocks[last].events.count < capacity, blocks[last].rawSize < EventBlock.closingSize {
            blocks[last].events.append(event)
            blocks[last].trees.append(tree)
            blocks[last].rawSize += size
        } else {
            blocks.append(Pending(first: position, events: [event], trees: [tree], rawSize: size))
            // The block before is closed: compress it while this thread goes on.
            submit(upTo: blocks.count - 1)
        }
    }

    private func submit(upTo end: Int) {
        while submitted < end {
            let block = blocks[submitted]
            if block.events.count > block.storedBefore {
                lanes.compress(EventBlock(events: block.events), at: submitted, dictionaryID: dictionaryID)
            }
            submitted += 1
        }
    }

    /// Compresses what is left, waits for the lanes, and stores the blocks with their
    /// index rows.
    func store(_ db: Database) throws {
        submit(upTo: blocks.count)
        lanes.wait()
        if let failure = lanes.failure { throw failure }
        let new = blocks.indices.filter { blocks[$0].events.count > blocks[$0].storedBefore }
        guard !new.isEmpty else { return }
        let encoded = lanes.results

        let insertBlock = try db.cachedStatement(sql: """
            INSERT INTO event_blocks (first_position, count, codec, dictionary_id, raw_size, body, last_hash)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (first_position) DO UPDATE SET count = excluded.count, codec = excluded.codec,
                dictionary_id = excluded.dictionary_id, raw_size = excluded.raw_size, body = excluded.body,
                last_hash = excluded.last_hash
            """)
        let insertStream = try db.cachedStatement(sql: """
            INSERT INTO block_streams (stream_id, block, last_version, last_position) VALUES (?, ?, ?, ?)
            ON CONFLICT (stream_id, block) DO UPDATE SET last_version = excluded.last_version, last_position = excluded.last_position
            """)
        let insertLeaves = try db.cachedStatement(sql: """
            INSERT INTO block_leaves (tree_id, block, first_leaf, last_leaf) VALUES (?, ?, ?, ?)
            ON CONFLICT (tree_id, block) DO UPDATE SET first_leaf = excluded.first_leaf, last_leaf = excluded.last_leaf
            """)
        for index in new {
            let block = blocks[index]
            guard let stored = encoded[index] else { preconditionFailure("block \(index) was not compressed") }
            try insertBlock.execute(arguments: [block.first, block.events.count, stored.codec.rawValue, stored.dictionaryID,
                                                stored.rawSize, Data(stored.bytes), Data(block.events.last!.hash)])
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
                try insertStream.execute(arguments: [stream, block.first, last.version, last.position])
            }
            for (tree, range) in leaves.sorted(by: { $0.key < $1.key }) {
                try insertLeaves.execute(arguments: [tree, block.first, range.first, range.last])
            }
        }
    }
}

/// Compresses closed blocks on background threads, block `i` on lane `i % lanes`: a
/// serial queue with its own deflater, so no deflater runs on two threads at once.
private final class Lanes: @unchecked Sendable {
    private let deflaters: [RawDeflater]
    private let queues: [DispatchQueue]
    private let group = DispatchGroup()
    private let lock = NSLock()
    // Guarded by `lock`.
    private var encoded: [Int: (codec: PayloadCodec, dictionaryID: Int64?, rawSize: Int, bytes: [UInt8])] = [:]
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
                lock.withLock { encoded[index] = (stored.codec, stored.dictionaryID, body.count, stored.bytes) }
            } catch {
                lock.withLock { self.error = self.error ?? error }
            }
        }
    }

    func wait() { group.wait() }

    var results: [Int: (codec: PayloadCodec, dictionaryID: Int64?, rawSize: Int, bytes: [UInt8])] { lock.withLock { encoded } }
    var failure: Error? { lock.withLock { error } }
}
