import EventLog
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
        try AppendPlanner.validate(events)
        var results: [AppendedEvent] = []
        var newTypes: [String: Int64] = [:]
        var newCatalogRows: [AppendPlanner.CatalogRow] = []
        try Self.translating(path) {
            try queue.inTransaction(.immediate) { db in
                var trees = TreeStates()
                newCatalogRows = []
                results = try appendInTransaction(db, events, expecting: expecting, newTypes: &newTypes,
                                                  newCatalogRows: &newCatalogRows, trees: &trees,
                                                  owner: { stream in signing?(stream).map { TreeOwner(device: $0.device, publicKey: $0.publicKey) } })
                try trees.save(db)
                if let signing { try sign(db, &trees, signing) }
                return .commit
            }
        }
        // Only now are the new type ids and catalog rows known to exist.
        typeIDs.merge(newTypes) { old, _ in old }
        rememberCatalogRows(newCatalogRows)
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
        var newCatalogRows: [AppendPlanner.CatalogRow] = []
        try Self.translating(path) {
            try queue.inTransaction(.immediate) { db in
                let transaction = ImportTransaction(store: self, db: db)
                try body(transaction)
                try transaction.trees.save(db)
                newTypes = transaction.newTypes
                newCatalogRows = transaction.newCatalogRows
                return .commit
            }
        }
        typeIDs.merge(newTypes) { old, _ in old }
        rememberCatalogRows(newCatalogRows)
    }

    /// One import's transaction: see ``EventStore/importing(_:)``.
    public final class ImportTransaction {
        let store: EventStore
        let db: Database
        var trees = TreeStates()
        var newTypes: [String: Int64] = [:]
        var newCatalogRows: [AppendPlanner.CatalogRow] = []

        init(store: EventStore, db: Database) {
            self.store = store
            self.db = db
        }

        /// Appends a batch (skipping ids already stored); `owners` names the device tree
        /// of each recording that has one.
        @discardableResult
        public func append(_ events: [NewEvent], owners: [UUID: TreeOwner]) throws -> [AppendedEvent] {
            try AppendPlanner.validate(events)
            return try store.appendInTransaction(db, events, expecting: [:], newTypes: &newTypes, newCatalogRows: &newCatalogRows, trees: &trees,
                                                 owner: { owners[$0] })
        }

        /// Stores checkpoints of the older kind (those already stored must be equal).
        public func store(_ checkpoints: [Checkpoint]) throws {
            _ = try EventStore.store(checkpoints, db)
        }

        /// Stores signed heads (those already stored must be equal) and proof nodes.
        public func store(heads: [TreeHead], nodes: [(owner: TreeOwner, lo: Int64, hi: Int64, hash: [UInt8])]) throws {
            for head in heads {
                var rows = SQLiteTreeRows(db: db)
                let tree = try trees.tree(&rows, owner: TreeOwner(device: head.device, publicKey: head.publicKey))
                if let stored = try Data.fetchOne(db, sql: "SELECT root FROM tree_heads WHERE tree_id = ? AND size = ?",
                                                  arguments: [tree, head.size]) {
                    guard Array(stored) == head.root else { throw EventStoreError.headConflict(device: head.device, size: head.size) }
                    continue
                }
                try EventStore.insert(head, tree: tree, db)
                trees.grow(tree, to: head.size)
            }
            for node in nodes {
                var rows = SQLiteTreeRows(db: db)
                let tree = try trees.tree(&rows, owner: node.owner)
                try db.execute(sql: "INSERT INTO tree_nodes (tree_id, lo, hi, hash) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                               arguments: [tree, node.lo, node.hi, Data(node.hash)])
                trees.grow(tree, to: node.hi)
            }
        }
    }

    /// Appends; returns the results and the new head of every stream that grew.
    func appendInTransaction(_ db: Database, _ events: [NewEvent], expecting: [UUID: ExpectedVersion],
                             newTypes: inout [String: Int64], newCatalogRows: inout [AppendPlanner.CatalogRow],
                             trees: inout TreeStates, owner: (UUID) -> TreeOwner?) throws -> [AppendedEvent] {
        let compressor = try currentCompressor(db)
        let lastPosition = try lastPosition(db)
        let lastHash = try AppendPlanner.chainStart(try hash(db, at: lastPosition) ?? ChainHash.genesis, at: lastPosition, in: path)
        // Its lanes are waited for when it goes, also when the append throws: the next
        // append reuses their deflaters.
        // A block writer works out the chain hashes on a thread of its own while this one
        // plans and claims ids (tools/Benchmarks: hashing was a sixth of the appending thread).
        let blocks = layout == .blocks && hasBlocks
            ? try blockWriter(db, lastPosition: lastPosition, compressor: compressor, lastHash: lastHash) : nil
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
        let pipeline = blocks == nil ? CompressionPipeline(events: events, compressor: compressor) : nil
        defer { pipeline?.finish() }
        var rows = try SQLiteAppendRows(store: self, db: db, blocks: blocks, pipeline: pipeline, newTypes: newTypes)
        try rows.claimAtOnce(events, after: lastPosition)
        var planner = AppendPlanner(lastPosition: lastPosition, lastHash: lastHash, expectedEvents: events.count,
                                    hashing: blocks == nil ? .inPlanner : .byStore)
        var results: [AppendedEvent] = []
        results.reserveCapacity(events.count)
        for (index, event) in events.enumerated() {
            results.append(try planner.add(event, index: index, expecting: expecting, owner: owner, trees: &trees, store: &rows))
        }
        newTypes = rows.newTypes
        try blocks?.store(db)
        let updateStream = try db.cachedStatement(sql: "UPDATE streams SET version = ?, head = ? WHERE id = ?")
        for (key, stream) in planner.streams where stream.version != stream.startVersion {
            let head = blocks == nil ? stream.head : blocks?.streamHeads[key]
            guard let head else { preconditionFailure("recording \(key.uuid) grew and was not hashed") }
            try updateStream.execute(arguments: [stream.version, Data(head.bytes), stream.rowID])
        }
        if planner.position > lastPosition {
            try updateCatalog(db, planner.catalogRows, from: lastPosition, to: planner.position, covering: planner.everyEventTagged,
                              inserted: &newCatalogRows)
        }
        return results
    }

    /// A SQLite log as an append's ``AppendRowStore``.
    ///
    /// The per-event statements run through SQLite's C API: GRDB's argument and row values
    /// cost more per event than SQLite's own work (tools/bench.sh, perf). GRDB still
    /// prepares, caches and finalizes them.
    struct SQLiteAppendRows: AppendRowStore {
        let store: EventStore
        var location: String { store.path }
        let db: Database
        let blocks: BlockWriter?
        let pipeline: CompressionPipeline?
        var newTypes: [String: Int64]
        private let findEvent: SQLiteCall
        private let insertEvent: SQLiteCall
        private let findInBlocks: SQLiteCall?
        /// In a batch that ``claimAtOnce(_:after:)`` could not claim whole, a new event in
        /// blocks claims its id in `block_ids` before it takes its position: one index
        /// search serves the retry check and the index row (an id already there is a
        /// retry, looked up then).
        private let claimID: SQLiteCall?
        /// The position the next event takes if ``claimAtOnce(_:after:)`` claimed every id
        /// of the batch (none is stored or repeated, so each is new and takes the next
        /// position); nil if it did not.
        private var nextClaimed: Int64?
        /// A log written since blocks has no rows to look in (one check per batch, not per event).
        private let rowsExist: Bool
        private let findStream: SQLiteCall
        private let insertStream: SQLiteCall
        private var reader: BlockReader

        init(store: EventStore, db: Database, blocks: BlockWriter?, pipeline: CompressionPipeline?, newTypes: [String: Int64]) throws {
            self.store = store
            self.db = db
            self.blocks = blocks
            self.pipeline = pipeline
            self.newTypes = newTypes
            findEvent = try SQLiteCall(db, try db.cachedStatement(sql: "SELECT position, stream_version FROM events WHERE event_id = ?"))
            insertEvent = try SQLiteCall(db, try db.cachedStatement(sql: """
                INSERT INTO events (position, event_id, stream_id, stream_version, type_id, type_version,
                                    recorded_at, codec, dictionary_id, raw_size, payload, hash, leaf)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """))
            findInBlocks = store.hasBlocks ? try SQLiteCall(db, try db.cachedStatement(sql: "SELECT position FROM block_ids WHERE event_id = ?")) : nil
            claimID = blocks != nil ? try SQLiteCall(db, try db.cachedStatement(sql: """
                INSERT INTO block_ids (event_id, position) VALUES (?, ?) ON CONFLICT (event_id) DO NOTHING
                """)) : nil
            rowsExist = try Int64.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM events LIMIT 1")) != nil
            findStream = try SQLiteCall(db, try db.cachedStatement(sql: "SELECT id, version, head, tree_id FROM streams WHERE uuid = ?"))
            insertStream = try SQLiteCall(db, try db.cachedStatement(sql: "INSERT INTO streams (uuid, version) VALUES (?, 0)"))
            reader = BlockReader(store: store, db: db)
        }

        /// Claims every id of `events` in `block_ids` at once, at the positions they take
        /// if all are new (one after another from `lastPosition + 1`), a few hundred a
        /// statement: a statement an event, the claims were a third of the appending thread
        /// and two of its heap allocations an event (SQLite's own, for each execution;
        /// docs/BENCHMARKS.md, session 45). If any id is stored already or comes twice (a
        /// retry), nothing of it is kept and each event claims its id as it is planned.
        mutating func claimAtOnce(_ events: [NewEvent], after lastPosition: Int64) throws {
            guard claimID != nil, !rowsExist, !events.isEmpty else { return }
            var ids: [UInt8] = []
            ids.reserveCapacity(16 * events.count)
            for event in events { withUnsafeBytes(of: event.id.uuid) { ids.append(contentsOf: $0) } }
            // Groups of 256, the rest in halves: a statement of each kind for each size.
            func groups(_ body: (_ start: Int, _ count: Int) throws -> Bool) rethrows {
                var start = 0
                while start < events.count {
                    var count = Self.largestGroup
                    while count > events.count - start { count /= 2 }
                    guard try body(start, count) else { return }
                    start += count
                }
            }
            try ids.withUnsafeBytes { all in
                func id(_ at: Int) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: all[(16 * at)..<(16 * at + 16)]) }
                var tried = 0, claimedAll = true
                try groups { start, count in
                    let claim = try SQLiteCall(db, try db.cachedStatement(sql: Self.groupClaims[count]!))
                    _ = try claim.run(binding: { bindings in
                        for offset in 0..<count {
                            bindings.blob(Int32(2 * offset + 1), id(start + offset))
                            bindings.int64(Int32(2 * offset + 2), lastPosition + 1 + Int64(start + offset))
                        }
                    }, row: { _ in () })
                    tried = start + count
                    claimedAll = claim.changes == count
                    return claimedAll
                }
                if claimedAll {
                    nextClaimed = lastPosition + 1
                    return
                }
                // A retry: the claims made so far are undone (by their ids and positions, both
                // this batch's alone), and each event claims its own as it is planned.
                try groups { start, count in
                    guard start < tried else { return false }
                    let undo = try SQLiteCall(db, try db.cachedStatement(sql: Self.groupUndos[count]!))
                    _ = try undo.run(binding: { bindings in
                        bindings.int64(1, lastPosition)
                        for offset in 0..<count { bindings.blob(Int32(offset + 2), id(start + offset)) }
                    }, row: { _ in () })
                    return true
                }
            }
        }

        /// The most ids ``claimAtOnce(_:after:)`` binds in one statement.
        private static let largestGroup = 256
        /// Its statements' text by group size (256 and every smaller power of two), made
        /// once rather than for every batch.
        private static let groupClaims = statements { count in
            "INSERT INTO block_ids (event_id, position) VALUES " + Array(repeating: "(?, ?)", count: count).joined(separator: ", ")
                + " ON CONFLICT (event_id) DO NOTHING"
        }
        private static let groupUndos = statements { count in
            "DELETE FROM block_ids WHERE position > ?1 AND event_id IN (" + Array(repeating: "?", count: count).joined(separator: ", ") + ")"
        }
        private static func statements(_ text: (Int) -> String) -> [Int: String] {
            Dictionary(uniqueKeysWithValues: (0...largestGroup.trailingZeroBitCount).map { 1 << $0 }.map { ($0, text($0)) })
        }

        mutating func storedEvent(_ id: UUID, nextPosition: Int64) throws -> (position: Int64, streamVersion: Int64)? {
            if let claimed = nextClaimed {
                // Claimed with its batch, at the position the planner gives it now: the
                // two never part (a planner that skipped one would leave `block_ids` wrong).
                guard nextPosition == claimed else {
                    throw EventStoreError.damagedDatabase(path: store.path, detail:
                        "an append's claimed ids fell out of step with its positions at \(nextPosition); nothing was written")
                }
                nextClaimed = claimed + 1
                return nil
            }
            if rowsExist, let stored = try withUnsafeBytes(of: id.uuid, { id in
                try findEvent.run(binding: { $0.blob(1, id) }, row: { ($0.int64(0), $0.int64(1)) })
            }) {
                return stored
            }
            let claimed = try claimID.map { claim in
                try withUnsafeBytes(of: id.uuid) { id in
                    _ = try claim.run(binding: { $0.blob(1, id); $0.int64(2, nextPosition) }, row: { _ in () })
                    return claim.changes == 1
                }
            }
            if claimed != true, let findInBlocks, let position = try withUnsafeBytes(of: id.uuid, { id in
                try findInBlocks.run(binding: { $0.blob(1, id) }, row: { $0.int64(0) })
            }) {
                // A retry: its version is read from its block (rare, so not kept in the index).
                let version = try reader.event(at: position, RowNames())?.streamVersion ?? 0
                return (position, version)
            }
            return nil
        }

        mutating func stream(_ uuid: UUID) throws -> AppendPlanner.Stream {
            let found = try withUnsafeBytes(of: uuid.uuid) { id in
                try findStream.run(binding: { $0.blob(1, id) }, row: { row in
                    (rowID: row.int64(0), version: row.int64(1), head: row.bytes(2), tree: row.isNull(3) ? nil : row.int64(3))
                })
            }
            guard let row = found else {
                _ = try withUnsafeBytes(of: uuid.uuid) { id in try insertStream.run(binding: { $0.blob(1, id) }, row: { _ in () }) }
                return AppendPlanner.Stream(rowID: insertStream.lastInsertedRowID, version: 0, head: Hash32(ChainHash.genesis)!,
                                            tree: nil, isNew: true)
            }
            let version = row.version
            let stored = try row.head ?? (version == 0 ? ChainHash.genesis : store.legacyHead(db, stream: uuid))
            guard let head = Hash32(stored) else {
                throw EventStoreError.damagedDatabase(path: store.path, detail:
                    "recording \(uuid.uuidString.lowercased())'s chain head is \(stored.count) bytes, not 32")
            }
            return AppendPlanner.Stream(rowID: row.rowID, version: version, head: head, tree: row.tree, isNew: false)
        }

        mutating func typeID(_ name: String) throws -> Int64 {
            try store.typeID(db, for: name, newTypes: &newTypes)
        }

        func write(_ planned: AppendPlanner.PlannedEvent, of event: NewEvent, index: Int) throws {
            if let blocks {
                // Hashed by the block writer (``AppendPlanner/Hashing/byStore``): no hash yet.
                blocks.add(EventBlock.Event(id: event.id, hash: planned.hash?.bytes ?? [], streamRowID: planned.streamRowID,
                                            streamVersion: planned.streamVersion, typeRowID: planned.typeID,
                                            typeVersion: Int64(event.typeVersion), recordedAt: event.recordedAt.microsecondsSince1970,
                                            leaf: planned.leaf, payload: event.payload),
                           at: planned.position, tree: planned.tree, hashing: (event, planned.streamHeadAtStart))
            } else if let pipeline {
                try EventStore.insertRow(insertEvent, pipeline.encoded(index), event: event, planned: planned)
            }
        }

        func tree(publicKey: [UInt8]) throws -> (id: Int64, device: String?)? { try SQLiteTreeRows(db: db).tree(publicKey: publicKey) }
        func treeRow(id: Int64) throws -> (publicKey: [UInt8], device: String, size: Int64, frontier: [UInt8]?)? {
            try SQLiteTreeRows(db: db).treeRow(id: id)
        }
        func insertTree(_ owner: TreeOwner) throws -> Int64 { try SQLiteTreeRows(db: db).insertTree(owner) }
        func setTree(_ tree: Int64, ofStream rowID: Int64) throws { try SQLiteTreeRows(db: db).setTree(tree, ofStream: rowID) }
    }

    private static func withHashBytes<R>(_ hash: Hash32?, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if let hash { return try hash.withUnsafeBytes(body) }
        return try [UInt8]().withUnsafeBytes(body)
    }

    fileprivate static func insertRow(_ insertEvent: SQLiteCall, _ encoded: CompressionPipeline.Encoded, event: NewEvent,
                                      planned: AppendPlanner.PlannedEvent) throws {
        try withUnsafeBytes(of: event.id.uuid) { id in
            try encoded.bytes.withUnsafeBytes { payload in
                // Rows are hashed in the planner, so there is a hash; were there none, an
                // empty blob, as before hashes were held inline.
                try withHashBytes(planned.hash) { hashBytes in
                    _ = try insertEvent.run(binding: { statement in
                        statement.int64(1, planned.position)
                        statement.blob(2, id)
                        statement.int64(3, planned.streamRowID)
                        statement.int64(4, planned.streamVersion)
                        statement.int64(5, planned.typeID)
                        statement.int64(6, Int64(event.typeVersion))
                        statement.int64(7, event.recordedAt.microsecondsSince1970)
                        statement.int64(8, encoded.codec.rawValue)
                        if let dictionaryID = encoded.dictionaryID { statement.int64(9, dictionaryID) } else { statement.null(9) }
                        statement.int64(10, Int64(event.payload.count))
                        statement.blob(11, payload)
                        statement.blob(12, hashBytes)
                        if let leaf = planned.leaf { statement.int64(13, leaf) } else { statement.null(13) }
                    }, row: { _ in () })
                }
            }
        }
    }

    /// The writer of an append's blocks, continuing the log's last block if it is the
    /// log's end and not full. A last block that does not read is left as it is (new
    /// events start a block of their own, chained to its stored last hash): rewriting it
    /// would change what is stored.
    private func blockWriter(_ db: Database, lastPosition: Int64, compressor: Compressor, lastHash: Hash32) throws -> BlockWriter {
        var continuing: (first: Int64, events: [EventBlock.Event], trees: [Int64?])?
        if lastPosition > 0, let row = try Self.blockRow(db, holding: lastPosition), (row[1] as Int64) < Int64(blockCapacity),
           let block = try? decodeBlock(db, row) {
            var trees = TreeOfStream()
            continuing = (row[0], block.events, try block.events.map { try trees.tree(db, stream: $0.streamRowID) })
        }
        return try BlockWriter(capacity: blockCapacity, continuing: continuing, compressor: compressor, lastHash: lastHash)
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

    /// Writes a batch's catalog rows; the catalog goes on covering the log only if it
    /// covered it before the batch and every new event came with its tags.
    /// A row this store has committed is not written again: a game's row is met in every
    /// batch that holds its moves, and its insert (a lookup in the catalog's key) was most
    /// of what tags cost an append (tools/Benchmarks, `append-only`).
    private func updateCatalog(_ db: Database, _ rows: [AppendPlanner.CatalogRow: Int64], from oldLast: Int64, to newLast: Int64,
                               covering: Bool, inserted: inout [AppendPlanner.CatalogRow]) throws {
        let insert = try db.cachedStatement(sql: """
            INSERT INTO catalog (kind, key, stream_id, position) VALUES (?, ?, ?, ?)
            ON CONFLICT (kind, key, stream_id) DO NOTHING
            """)
        for (row, position) in rows where !storedCatalogRows.contains(row) {
            try insert.execute(arguments: [row.tag.kind.rawValue, Data(row.tag.id.bytes), row.streamRowID, position])
            inserted.append(row)
        }
        if covering {
            try db.cachedStatement(sql: "UPDATE catalog_coverage SET through = ? WHERE through = ?").execute(arguments: [newLast, oldLast])
        }
    }

    /// Rows of a committed transaction: kept so that later appends skip them, up to a bound
    /// (past it, forgotten at once: a row not known is inserted again, which does nothing).
    private func rememberCatalogRows(_ rows: [AppendPlanner.CatalogRow]) {
        if storedCatalogRows.count + rows.count > Self.catalogRowsKept { storedCatalogRows.removeAll() }
        storedCatalogRows.formUnion(rows)
    }

    static let catalogRowsKept = 100_000

    /// The head of a stream written before streams kept one: its chain from its events.
    func legacyHead(_ db: Database, stream: UUID) throws -> [UInt8] {
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

    func typeID(_ db: Database, for name: String, newTypes: inout [String: Int64]) throws -> Int64 {
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
