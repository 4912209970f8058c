import Foundation
import GRDB

extension EventStore {
    /// Appends a batch of events in one transaction: all are stored, or none.
    ///
    /// - An event whose id is already stored is skipped and reports its stored
    ///   position, so a retried batch is safe.
    /// - `expecting` gives, per stream, the version the caller believes the stream is
    ///   at before this batch. A mismatch throws
    ///   ``EventStoreError/versionConflict(stream:expected:actual:)`` and writes
    ///   nothing. A stream whose events in the batch are all already stored is not
    ///   checked (that is a retry of a batch that succeeded).
    /// - `signing` gives the key of the device that recorded a stream: the stream's
    ///   events become the next leaves of that device's Merkle tree, and the device
    ///   signs, in the same transaction, a ``TreeHead`` over its tree as it now stands.
    /// - Returns: for each event, in order, its position and stream version.
    @discardableResult
    public func append(_ events: [NewEvent], expecting: [UUID: ExpectedVersion] = [:],
                       signing: ((UUID) -> DeviceKey?)? = nil) throws -> [AppendedEvent] {
        guard access == .readWrite else { throw EventStoreError.readOnly(path: path, detail: "opened read-only") }
        guard !events.isEmpty else { return [] }
        try Self.validate(events)
        var results: [AppendedEvent] = []
        var newTypes: [String: Int64] = [:]
        try Self.translating(path) {
            try queue.inTransaction(.immediate) { db in
                var trees = TreeStates()
                results = try appendInTransaction(db, events, expecting: expecting, newTypes: &newTypes, trees: &trees,
                                                  owner: { stream in signing?(stream).map { TreeOwner(device: $0.device, publicKey: $0.publicKey) } })
                try trees.save(db)
                if let signing { try sign(db, &trees, signing) }
                return .commit
            }
        }
        // Only now are the new type ids known to exist.
        typeIDs.merge(newTypes) { old, _ in old }
        return results
    }

    /// Imports signed logs in one transaction: all of it is stored, or nothing.
    ///
    /// `body` appends batches through the ``ImportTransaction`` it is handed (each event
    /// with the leaf index it was exported with, each recording in the tree `owners`
    /// names), and stores the heads and proof nodes that came with them. Heads already
    /// stored must match (``EventStoreError/headConflict(device:size:)``).
    public func importing(_ body: (ImportTransaction) throws -> Void) throws {
        guard access == .readWrite else { throw EventStoreError.readOnly(path: path, detail: "opened read-only") }
        var newTypes: [String: Int64] = [:]
        try Self.translating(path) {
            try queue.inTransaction(.immediate) { db in
                let transaction = ImportTransaction(store: self, db: db)
                try body(transaction)
                try transaction.trees.save(db)
                newTypes = transaction.newTypes
                return .commit
            }
        }
        typeIDs.merge(newTypes) { old, _ in old }
    }

    /// One import's transaction: see ``EventStore/importing(_:)``.
    public final class ImportTransaction {
        let store: EventStore
        let db: Database
        var trees = TreeStates()
        var newTypes: [String: Int64] = [:]

        init(store: EventStore, db: Database) {
            self.store = store
            self.db = db
        }

        /// Appends a batch (skipping ids already stored); `owners` names the device tree
        /// of each recording that has one.
        @discardableResult
        public func append(_ events: [NewEvent], owners: [UUID: TreeOwner]) throws -> [AppendedEvent] {
            try EventStore.validate(events)
            return try store.appendInTransaction(db, events, expecting: [:], newTypes: &newTypes, trees: &trees,
                                                 owner: { owners[$0] })
        }

        /// Stores checkpoints of the older kind (those already stored must be equal).
        public func store(_ checkpoints: [Checkpoint]) throws {
            _ = try EventStore.store(checkpoints, db)
        }

        /// Stores signed heads (those already stored must be equal) and proof nodes.
        public func store(heads: [TreeHead], nodes: [(owner: TreeOwner, lo: Int64, hi: Int64, hash: [UInt8])]) throws {
            for head in heads {
                let tree = try trees.tree(db, owner: TreeOwner(device: head.device, publicKey: head.publicKey))
                if let stored = try Data.fetchOne(db, sql: "SELECT root FROM tree_heads WHERE tree_id = ? AND size = ?",
                                                  arguments: [tree, head.size]) {
                    guard Array(stored) == head.root else { throw EventStoreError.headConflict(device: head.device, size: head.size) }
                    continue
                }
                try EventStore.insert(head, tree: tree, db)
                trees.grow(tree, to: head.size)
            }
            for node in nodes {
                let tree = try trees.tree(db, owner: node.owner)
                try db.execute(sql: "INSERT INTO tree_nodes (tree_id, lo, hi, hash) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                               arguments: [tree, node.lo, node.hi, Data(node.hash)])
                trees.grow(tree, to: node.hi)
            }
        }
    }

    static func validate(_ events: [NewEvent]) throws {
        for event in events {
            if event.type.isEmpty || event.type.utf8.count > 200 {
                throw EventStoreError.invalidEvent(id: event.id, reason: "the type must have 1 to 200 bytes")
            }
            if event.typeVersion < 1 || event.typeVersion > Int(UInt32.max) {
                throw EventStoreError.invalidEvent(id: event.id, reason: "the type version must be at least 1")
            }
            if event.payload.count > Self.maximumPayloadSize {
                throw EventStoreError.invalidEvent(id: event.id, reason: "the payload exceeds \(Self.maximumPayloadSize) bytes")
            }
            if let leaf = event.leaf, leaf < 0 {
                throw EventStoreError.invalidEvent(id: event.id, reason: "a leaf index is never negative")
            }
        }
    }

    private struct StreamState {
        var rowID: Int64
        var version: Int64
        var startVersion: Int64
        /// The stream hash at `version`.
        var head: Hash32
        /// The device tree its events are leaves of, if any.
        var tree: Int64?
    }

    /// Appends; returns the results and the new head of every stream that grew.
    func appendInTransaction(_ db: Database, _ events: [NewEvent], expecting: [UUID: ExpectedVersion],
                             newTypes: inout [String: Int64], trees: inout TreeStates,
                             owner: (UUID) -> TreeOwner?) throws -> [AppendedEvent] {
        let compressor = try currentCompressor(db)
        var position = try lastPosition(db)
        var previousHash = try hash(db, at: position) ?? ChainHash.genesis
        // Its lanes are waited for when it goes, also when the append throws: the next
        // append reuses their deflaters.
        let blocks = layout == .blocks && hasBlocks ? try blockWriter(db, lastPosition: position, compressor: compressor) : nil
        if blocks == nil {
            // Rows after blocks would store positions twice (a writer that took a new file
            // for empty while another made it): the file itself is asked, not what this
            // connection learned when it opened.
            let blocksStored = try Int.fetchOne(db, sql: """
                SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'event_blocks'
                """) == 1 && (try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM event_blocks)") ?? false)
            if blocksStored {
                throw EventStoreError.damagedLog(path: path, detail:
                    "it stores events in blocks, and this writer would append rows after them; nothing was written (open the file again to append)")
            }
        }
        var reader = BlockReader(store: self, db: db)

        // The per-event statements run through SQLite's C API: GRDB's argument and
        // row values cost more per event than SQLite's own work (tools/bench.sh,
        // perf). GRDB still prepares, caches and finalizes them.
        let findEvent = try SQLiteCall(db, try db.cachedStatement(sql: """
            SELECT position, stream_version FROM events WHERE event_id = ?
            """))
        let insertEvent = try SQLiteCall(db, try db.cachedStatement(sql: """
            INSERT INTO events (position, event_id, stream_id, stream_version, type_id, type_version,
                                recorded_at, codec, dictionary_id, raw_size, payload, hash, leaf)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """))
        let findInBlocks = hasBlocks ? try SQLiteCall(db, try db.cachedStatement(sql: "SELECT position FROM block_ids WHERE event_id = ?")) : nil
        // A new event in blocks claims its id in `block_ids` before it takes its position:
        // one index search serves the retry check and the index row (an id already
        // there is a retry, looked up then).
        let claimID = blocks != nil ? try SQLiteCall(db, try db.cachedStatement(sql: """
            INSERT INTO block_ids (event_id, position) VALUES (?, ?) ON CONFLICT (event_id) DO NOTHING
            """)) : nil
        // A log written since blocks has no rows to look in (one check per batch, not per event).
        let rowsExist = try Int64.fetchOne(db, sql: "SELECT 1 FROM events LIMIT 1") != nil
        let findStream = try db.cachedStatement(sql: "SELECT id, version, head, tree_id FROM streams WHERE uuid = ?")
        let insertStream = try db.cachedStatement(sql: "INSERT INTO streams (uuid, version) VALUES (?, 0)")

        var streams: [UUID: StreamState] = [:]
        var seenInBatch: [UUID: AppendedEvent] = [:]
        seenInBatch.reserveCapacity(events.count)
        var results: [AppendedEvent] = []
        results.reserveCapacity(events.count)
        let pipeline = blocks == nil ? CompressionPipeline(events: events, compressor: compressor) : nil
        defer { pipeline?.finish() }
        var envelope = SplitEnvelope()
        let firstPosition = position
        // The catalog rows of this batch, each (id, stream) once; and whether every new
        // event came with its tags, without which the catalog no longer covers the log.
        var catalogRows: [CatalogRow: Int64] = [:]
        var everyEventTagged = true

        for (index, event) in events.enumerated() {
            if let earlier = seenInBatch[event.id] {
                results.append(AppendedEvent(position: earlier.position, streamVersion: earlier.streamVersion, isNew: false))
                continue
            }
            let stored = rowsExist ? try withUnsafeBytes(of: event.id.uuid) { id in
                try findEvent.run(binding: { $0.blob(1, id) }, row: { ($0.int64(0), $0.int64(1)) })
            } : nil
            if let (storedPosition, storedVersion) = stored {
                results.append(AppendedEvent(position: storedPosition, streamVersion: storedVersion, isNew: false))
                continue
            }
            let claimed = try claimID.map { claim in
                try withUnsafeBytes(of: event.id.uuid) { id in
                    _ = try claim.run(binding: { $0.blob(1, id); $0.int64(2, position + 1) }, row: { _ in () })
                    return claim.changes == 1
                }
            }
            if claimed != true, let findInBlocks, let storedPosition = try withUnsafeBytes(of: event.id.uuid, { id in
                try findInBlocks.run(binding: { $0.blob(1, id) }, row: { $0.int64(0) })
            }) {
                // A retry: its version is read from its block (rare, so not kept in the index).
                let version = try reader.event(at: storedPosition, RowNames())?.streamVersion ?? 0
                results.append(AppendedEvent(position: storedPosition, streamVersion: version, isNew: false))
                continue
            }
            var stream: StreamState
            if let known = streams[event.stream] {
                stream = known
            } else {
                let uuidBytes = Data(event.stream.bytes)
                if let row = try Row.fetchOne(findStream, arguments: [uuidBytes]) {
                    let version: Int64 = row[1]
                    let stored = try (row[2] as Data?).map(Array.init)
                        ?? (version == 0 ? ChainHash.genesis : legacyHead(db, stream: event.stream))
                    guard let head = Hash32(stored) else {
                        throw EventStoreError.damagedDatabase(path: path, detail:
                            "recording \(event.stream.uuidString.lowercased())'s chain head is \(stored.count) bytes, not 32")
                    }
                    stream = StreamState(rowID: row[0], version: version, startVersion: version, head: head, tree: row[3])
                } else {
                    try insertStream.execute(arguments: [uuidBytes])
                    stream = StreamState(rowID: db.lastInsertedRowID, version: 0, startVersion: 0, head: Hash32(ChainHash.genesis)!)
                }
                stream.tree = try trees.join(db, stream: event.stream, rowID: stream.rowID, tree: stream.tree, owner: owner(event.stream))
                if let expected = expecting[event.stream], !expected.matches(stream.version) {
                    throw EventStoreError.versionConflict(stream: event.stream, expected: expected, actual: stream.version)
                }
            }
            position += 1
            stream.version += 1

            let typeID = try typeID(db, for: event.type, newTypes: &newTypes)
            envelope.set(position: position, id: event.id, stream: event.stream, streamVersion: stream.version,
                         type: event.type, typeVersion: event.typeVersion, recordedAt: event.recordedAt, payload: event.payload)
            let hash = envelope.chainHash(previous: previousHash)
            stream.head = envelope.streamHash(previous: stream.head)
            streams[event.stream] = stream
            let leaf = try stream.tree.map { try trees.take(db, $0, leaf: event.leaf, envelope: envelope) }
            if let blocks {
                blocks.add(EventBlock.Event(id: event.id, hash: hash, streamRowID: stream.rowID, streamVersion: stream.version,
                                            typeRowID: typeID, typeVersion: Int64(event.typeVersion),
                                            recordedAt: event.recordedAt.microsecondsSince1970, leaf: leaf, payload: event.payload),
                           at: position, tree: stream.tree)
            } else if let pipeline {
                try insertRow(insertEvent, pipeline.encoded(index), event: event, position: position, stream: stream,
                              typeID: typeID, hash: hash, leaf: leaf)
            }
            previousHash = hash
            if let tags = event.tags {
                for tag in tags where catalogRows[CatalogRow(tag: tag, streamRowID: stream.rowID)] == nil {
                    catalogRows[CatalogRow(tag: tag, streamRowID: stream.rowID)] = position
                }
            } else {
                everyEventTagged = false
            }
            let appended = AppendedEvent(position: position, streamVersion: stream.version, isNew: true)
            seenInBatch[event.id] = appended
            results.append(appended)
        }
        try blocks?.store(db)
        let updateStream = try db.cachedStatement(sql: "UPDATE streams SET version = ?, head = ? WHERE id = ?")
        for (_, stream) in streams where stream.version != stream.startVersion {
            try updateStream.execute(arguments: [stream.version, Data(stream.head.bytes), stream.rowID])
        }
        if position > firstPosition { try updateCatalog(db, catalogRows, from: firstPosition, to: position, covering: everyEventTagged) }
        return results
    }

    private func insertRow(_ insertEvent: SQLiteCall, _ encoded: CompressionPipeline.Encoded, event: NewEvent, position row: Int64,
                           stream: StreamState, typeID: Int64, hash: [UInt8], leaf: Int64?) throws {
        let version = stream.version
        try withUnsafeBytes(of: event.id.uuid) { id in
            try encoded.bytes.withUnsafeBytes { payload in
                try hash.withUnsafeBytes { hashBytes in
                    _ = try insertEvent.run(binding: { statement in
                        statement.int64(1, row)
                        statement.blob(2, id)
                        statement.int64(3, stream.rowID)
                        statement.int64(4, version)
                        statement.int64(5, typeID)
                        statement.int64(6, Int64(event.typeVersion))
                        statement.int64(7, event.recordedAt.microsecondsSince1970)
                        statement.int64(8, encoded.codec.rawValue)
                        if let dictionaryID = encoded.dictionaryID { statement.int64(9, dictionaryID) } else { statement.null(9) }
                        statement.int64(10, Int64(event.payload.count))
                        statement.blob(11, payload)
                        statement.blob(12, hashBytes)
                        if let leaf { statement.int64(13, leaf) } else { statement.null(13) }
                    }, row: { _ in () })
                }
            }
        }
    }

    /// The writer of an append's blocks, continuing the log's last block if it is the
    /// log's end and not full. A last block that does not read is left as it is (new
    /// events start a block of their own, chained to its stored last hash): rewriting it
    /// would change what is stored.
    private func blockWriter(_ db: Database, lastPosition: Int64, compressor: Compressor) throws -> BlockWriter {
        var continuing: (first: Int64, events: [EventBlock.Event], trees: [Int64?])?
        if lastPosition > 0, let row = try Self.blockRow(db, holding: lastPosition), (row[1] as Int64) < Int64(blockCapacity),
           let block = try? decodeBlock(db, row) {
            var trees = TreeOfStream()
            continuing = (row[0], block.events, try block.events.map { try trees.tree(db, stream: $0.streamRowID) })
        }
        return try BlockWriter(capacity: blockCapacity, continuing: continuing, compressor: compressor)
    }

    /// The device tree of each recording (by row id), read once: its block's `block_leaves` rows need it.
    struct TreeOfStream {
        private var known: [Int64: Int64?] = [:]

        mutating func tree(_ db: Database, stream: Int64) throws -> Int64? {
            if let tree = known[stream] { return tree }
            let tree = try Int64.fetchOne(db.cachedStatement(sql: "SELECT tree_id FROM streams WHERE id = ?"), arguments: [stream])
            known[stream] = tree
            return tree
        }
    }

    private struct CatalogRow: Hashable {
        var tag: EventTag
        var streamRowID: Int64
    }

    /// Writes a batch's catalog rows; the catalog goes on covering the log only if it
    /// covered it before the batch and every new event came with its tags.
    private func updateCatalog(_ db: Database, _ rows: [CatalogRow: Int64], from oldLast: Int64, to newLast: Int64,
                               covering: Bool) throws {
        let insert = try db.cachedStatement(sql: """
            INSERT INTO catalog (kind, key, stream_id, position) VALUES (?, ?, ?, ?)
            ON CONFLICT (kind, key, stream_id) DO NOTHING
            """)
        for (row, position) in rows {
            try insert.execute(arguments: [row.tag.kind.rawValue, Data(row.tag.id.bytes), row.streamRowID, position])
        }
        if covering {
            try db.execute(sql: "UPDATE catalog_coverage SET through = ? WHERE through = ?", arguments: [newLast, oldLast])
        }
    }

    /// The head of a stream written before streams kept one: its chain from its events.
    private func legacyHead(_ db: Database, stream: UUID) throws -> [UInt8] {
        var head = ChainHash.genesis, scratch = SplitEnvelope()
        try forEachFound(db, EventQuery(stream: stream), predecessors: false) { found in
            switch found {
            case .event(let event, _, _): head = ChainHash.streamHash(previous: head, event: event, scratch: &scratch)
            case .damaged(let error, _, _): throw error
            }
            return true
        }
        return head
    }

    /// Each device whose tree this batch grew signs its new head.
    private func sign(_ db: Database, _ trees: inout TreeStates, _ keyOf: (UUID) -> DeviceKey?) throws {
        for (tree, state) in trees.grown.sorted(by: { $0.key < $1.key }) {
            guard let key = trees.signers[tree].flatMap(keyOf), let frontier = state.frontier else { continue }
            let head = try TreeHead.signing(size: frontier.size, root: frontier.root, key: key, at: clock())
            try Self.insert(head, tree: tree, db)
        }
    }

    static func insert(_ head: TreeHead, tree: Int64, _ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO tree_heads (tree_id, size, root, signed_at, flags, signature) VALUES (?, ?, ?, ?, ?, ?)
            """, arguments: [tree, head.size, Data(head.root), head.signedAt.microsecondsSince1970, head.isTestKey ? 1 : 0,
                             Data(head.signature)])
    }

    /// A checkpoint row, or nil where a value has the wrong type (a file changed by hand).
    static func checkpoint(_ row: Row) -> Checkpoint? {
        guard let key = Data.fromDatabaseValue(row[0]), let sequence = Int64.fromDatabaseValue(row[1]),
              let device = String.fromDatabaseValue(row[2]), let previous = Data.fromDatabaseValue(row[3]),
              let signedAt = Int64.fromDatabaseValue(row[4]), let heads = Data.fromDatabaseValue(row[5]),
              let signature = Data.fromDatabaseValue(row[6]) else { return nil }
        return Checkpoint(device: device, publicKey: Array(key), sequence: sequence, previous: Array(previous),
                          signedAt: Timestamp(microsecondsSince1970: signedAt), heads: Checkpoint.unpacked(Array(heads)) ?? [],
                          signature: Array(signature))
    }

    static func insert(_ checkpoint: Checkpoint, _ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO checkpoints (public_key, sequence, device, previous, signed_at, heads, signature)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """, arguments: [Data(checkpoint.publicKey), checkpoint.sequence, checkpoint.device, Data(checkpoint.previous),
                             checkpoint.signedAt.microsecondsSince1970, Data(Checkpoint.packed(checkpoint.heads)),
                             Data(checkpoint.signature)])
    }

    private func typeID(_ db: Database, for name: String, newTypes: inout [String: Int64]) throws -> Int64 {
        if let id = typeIDs[name] ?? newTypes[name] { return id }
        if let id = try Int64.fetchOne(db, sql: "SELECT id FROM event_types WHERE name = ?", arguments: [name]) {
            newTypes[name] = id
            return id
        }
        try db.execute(sql: "INSERT INTO event_types (name) VALUES (?)", arguments: [name])
        newTypes[name] = db.lastInsertedRowID
        return db.lastInsertedRowID
    }
}
