import EventStore
import Foundation
import NIOCore
import PostgresNIO

/// What one game's audit reads of the shared store, read as it is: the checks themselves
/// are ``SignedLogReader``'s, the same code a SQLite log is judged by.
extension PostgresLogReader: SignedLogReader {
    /// Another reader of the store, with a connection of its own; of a snapshot reader
    /// (``SharedStore/snapshotReader()``), one that sees the same moment.
    public func anotherReader() throws -> any SignedLogReader {
        if let id = try exportedSnapshot() { return PostgresLogReader(store: store, snapshot: .imports(id)) }
        return PostgresLogReader(store: store)
    }

    public func recordingRows(_ streams: Set<UUID>) throws -> [UUID: RecordingRow] {
        guard !streams.isEmpty else { return [:] }
        var binds = PostgresBindings()
        binds.append(streams.map { ByteBuffer(bytes: $0.bytes) })
        var out: [UUID: RecordingRow] = [:]
        for (uuid, row) in try fetch("SELECT uuid, version, head, tree_id FROM streams WHERE uuid = ANY($1::bytea[])", binds, { row in
            (Array(try row[0].decode(ByteBuffer.self).readableBytesView),
             RecordingRow(version: try row[1].decode(Int64.self), head: try row[2].decode(ByteBuffer?.self).map { Array($0.readableBytesView) },
                          tree: try row[3].decode(Int64?.self)))
        }) {
            if let stream = UUID(bytes: uuid) { out[stream] = row }
        }
        return out
    }

    public func streams(inTree id: Int64) throws -> Set<UUID> {
        Set(try fetch("SELECT uuid FROM streams WHERE tree_id = $1", Self.binds([id])) { row in
            UUID(bytes: Array(try row[0].decode(ByteBuffer.self).readableBytesView))
        }.compactMap { $0 })
    }

    public func treeRows(heads withHeads: Bool) throws -> [Int64: DeviceTree] {
        var out: [Int64: DeviceTree] = [:]
        for (id, tree) in try fetch("SELECT id, public_key, device, size, frontier IS NOT NULL FROM trees", PostgresBindings(), { row in
            (try row[0].decode(Int64.self),
             DeviceTree(owner: TreeOwner(device: try row[2].decode(String.self), publicKey: Array(try row[1].decode(ByteBuffer.self).readableBytesView)),
                        size: try row[3].decode(Int64.self), heads: [], holdsEveryLeaf: try row[4].decode(Bool.self)))
        }) {
            out[id] = tree
        }
        guard withHeads else { return out }
        for (id, head) in try fetch("SELECT tree_id, size, root, signed_at, flags, signature FROM tree_heads ORDER BY tree_id, size",
                                    PostgresBindings(), { row in (try row[0].decode(Int64.self), try Self.head(row, from: 1)) }) {
            guard let owner = out[id]?.owner else { continue }
            out[id]!.heads.append(head(owner))
        }
        return out
    }

    public func latestValidHeads(tree id: Int64, owner: TreeOwner) throws -> [TreeHead] {
        var out: [TreeHead] = []
        var below = Int64.max
        // Newest first, a page at a time: the first that verifies ends the read.
        while true {
            let page = try fetch("SELECT size, root, signed_at, flags, signature FROM tree_heads WHERE tree_id = $1 AND size < $2 ORDER BY size DESC LIMIT 16",
                                 Self.binds([id, below])) { row in try Self.head(row, from: 0)(owner) }
            for head in page {
                out.append(head)
                if head.isValid { return out.reversed() }
            }
            guard page.count == 16, let last = page.last else { return out.reversed() }
            below = last.size
        }
    }

    /// A head from a `tree_heads` row's size, root, signed_at, flags and signature, from column `first` on.
    static func head(_ row: PostgresRandomAccessRow, from first: Int) throws -> (TreeOwner) -> TreeHead {
        let size = try row[first].decode(Int64.self), root = Array(try row[first + 1].decode(ByteBuffer.self).readableBytesView)
        let signedAt = try row[first + 2].decode(Int64.self), flags = try row[first + 3].decode(Int64.self)
        let signature = Array(try row[first + 4].decode(ByteBuffer.self).readableBytesView)
        return { owner in
            TreeHead(device: owner.device, publicKey: owner.publicKey, size: size, root: root,
                     signedAt: Timestamp(microsecondsSince1970: signedAt), isTestKey: flags != 0, signature: signature)
        }
    }

    public func leafHashes(tree id: Int64, range: Range<Int64>) throws -> [Int64: [UInt8]] {
        // Through the tree's recordings (streams_by_tree) and their leaves (events_by_leaf).
        let rows = try fetch("""
            SELECT e.position, e.event_id, s.uuid, e.stream_version, t.name, e.type_version, e.recorded_at, e.codec,
                   e.dictionary_id, e.raw_size, e.payload, e.hash, e.leaf
            FROM streams s JOIN events e ON e.stream_id = s.id LEFT JOIN event_types t ON t.id = e.type_id
            WHERE s.tree_id = $1 AND e.leaf >= $2 AND e.leaf < $3 ORDER BY e.position
            """, Self.binds([id, range.lowerBound, range.upperBound]), EventRow.init)
        var out: [Int64: [UInt8]] = [:], scratch = SplitEnvelope()
        for row in rows {
            // A damaged event is no leaf: the proof then lacks it, and the whole tree's check names the damage.
            guard case .event(let event, _, _) = try found(row), let leaf = event.leaf else { continue }
            scratch.set(event)
            out[leaf] = scratch.leafHash().bytes
        }
        return out
    }

    public func storedNode(tree id: Int64, range: Range<Int64>) throws -> [UInt8]? {
        try fetch("SELECT hash FROM tree_nodes WHERE tree_id = $1 AND lo = $2 AND hi = $3",
                  Self.binds([id, range.lowerBound, range.upperBound])) { row in
            Array(try row[0].decode(ByteBuffer.self).readableBytesView)
        }.first.flatMap { $0.count == 32 ? $0 : nil }
    }

    public func storedNodes(trees: Set<Int64>?) throws -> [Int64: [Range<Int64>: [UInt8]]] {
        if let trees, trees.isEmpty { return [:] }
        var binds = PostgresBindings()
        var sql = "SELECT tree_id, lo, hi, hash FROM tree_nodes"
        if let trees {
            binds.append(trees.sorted())
            sql += " WHERE tree_id = ANY($1::bigint[])"
        }
        var out: [Int64: [Range<Int64>: [UInt8]]] = [:]
        for (id, lo, hi, hash) in try fetch(sql, binds, { row in
            (try row[0].decode(Int64.self), try row[1].decode(Int64.self), try row[2].decode(Int64.self),
             Array(try row[3].decode(ByteBuffer.self).readableBytesView))
        }) where hi > lo && hash.count == 32 {
            out[id, default: [:]][lo..<hi] = hash
        }
        return out
    }

    public func cosignatureRows() throws -> [CosignatureRow] {
        try fetch("""
            SELECT t.public_key, c.size, c.witness, c.witness_key, c.cosigned_at, c.signature
            FROM cosignatures c JOIN trees t ON t.id = c.tree_id ORDER BY c.tree_id, c.size, c.witness
            """) { row in
            CosignatureRow(publicKey: Array(try row[0].decode(ByteBuffer.self).readableBytesView), size: try row[1].decode(Int64.self),
                           witness: try row[2].decode(String.self), witnessKey: Array(try row[3].decode(ByteBuffer.self).readableBytesView),
                           cosignedAt: try row[4].decode(Int64.self), signature: Array(try row[5].decode(ByteBuffer.self).readableBytesView))
        }
    }

    /// Reads where each event from `position` on is, by position through the primary key,
    /// and each recording's first event whole (a page's in one statement). The store keeps
    /// no index rows of its own to compare (its indexes are PostgreSQL's): what comes back
    /// is the events that could not be read.
    public func passByPosition(from position: Int64, _ body: (PassedEvent) throws -> Void) throws -> [EventStoreError] {
        var problems: [EventStoreError] = []
        var after = max(1, position) - 1
        let page = 10_000
        while true {
            let rows = try fetch("""
                SELECT e.position, s.uuid, e.stream_version FROM events e LEFT JOIN streams s ON s.id = e.stream_id
                WHERE e.position > $1 ORDER BY e.position LIMIT \(page)
                """, Self.binds([after])) { row in
                (try row[0].decode(Int64.self), try row[1].decode(ByteBuffer?.self).flatMap { UUID(bytes: Array($0.readableBytesView)) },
                 try row[2].decode(Int64.self))
            }
            let whole = try found(atPositions: Set(rows.filter { $0.2 == 1 }.map(\.0)))
            for (position, stream, version) in rows {
                guard let stream else {
                    problems.append(.corruptPayload(position: position, detail: "its stream row is missing"))
                    continue
                }
                var first: StoredEvent?
                switch whole[position] {
                case .event(let event, _, _)?: first = event
                case .damaged(let error, _, _)?: problems.append(error); continue
                case nil: break
                }
                try body(PassedEvent(position: position, stream: stream, streamVersion: version, first: first))
            }
            guard rows.count == page, let last = rows.last else { return problems }
            after = last.0
        }
    }

    // MARK: - The whole log's checks

    public func allRecordingRows() throws -> [UUID: RecordingRow] {
        var out: [UUID: RecordingRow] = [:]
        var after: Int64 = 0
        // A page of rows at a time, by row id: a studio's store has many recordings.
        while true {
            let page = try fetch("SELECT id, uuid, version, head, tree_id FROM streams WHERE id > $1 ORDER BY id LIMIT 10000", Self.binds([after])) { row in
                (try row[0].decode(Int64.self), Array(try row[1].decode(ByteBuffer.self).readableBytesView),
                 RecordingRow(version: try row[2].decode(Int64.self), head: try row[3].decode(ByteBuffer?.self).map { Array($0.readableBytesView) },
                              tree: try row[4].decode(Int64?.self)))
            }
            for (_, uuid, row) in page { if let stream = UUID(bytes: uuid) { out[stream] = row } }
            guard page.count == 10_000, let last = page.last else { return out }
            after = last.0
        }
    }

    public func checkpoints() throws -> [Checkpoint] {
        try fetch("""
            SELECT public_key, sequence, device, previous, signed_at, heads, signature FROM checkpoints ORDER BY public_key, sequence
            """) { row in
            Checkpoint(device: try row[2].decode(String.self), publicKey: Array(try row[0].decode(ByteBuffer.self).readableBytesView),
                       sequence: try row[1].decode(Int64.self), previous: Array(try row[3].decode(ByteBuffer.self).readableBytesView),
                       signedAt: Timestamp(microsecondsSince1970: try row[4].decode(Int64.self)),
                       heads: Checkpoint.unpacked(Array(try row[5].decode(ByteBuffer.self).readableBytesView)) ?? [],
                       signature: Array(try row[6].decode(ByteBuffer.self).readableBytesView))
        }
    }

    public func scanStreamHeads(_ body: (StreamHead) throws -> Void) throws {
        var after: Int64 = 0
        // Each recording's first event through (stream_id, stream_version), and its last
        // position through (stream_id, position): two index probes a recording.
        while true {
            let rows = try fetch("""
                SELECT e.position, e.event_id, s.uuid, e.stream_version, t.name, e.type_version, e.recorded_at, e.codec,
                       e.dictionary_id, e.raw_size, e.payload, e.hash, e.leaf, NULL::bytea,
                       (SELECT max(l.position) FROM events l WHERE l.stream_id = s.id), s.id
                FROM streams s CROSS JOIN LATERAL (SELECT * FROM events f WHERE f.stream_id = s.id ORDER BY f.stream_version LIMIT 1) e
                LEFT JOIN event_types t ON t.id = e.type_id
                WHERE s.id > $1 ORDER BY s.id LIMIT 500
                """, Self.binds([after])) { row in (try EventRow(row), try row[14].decode(Int64.self), try row[15].decode(Int64.self)) }
            for (row, last, _) in rows {
                guard case .event(let first, _, _) = try found(row) else { continue }
                try body(StreamHead(first: first, lastPosition: last))
            }
            guard rows.count == 500, let last = rows.last else { return }
            after = last.2
        }
    }

    /// By the rules every store shares (``SignedLogReader/chainIntegrity(progress:)``): the
    /// store keeps no index rows of its own to compare.
    public func verifyIntegrity(progress: ((Int64, Int64) -> Void)?) throws -> IntegrityReport {
        try chainIntegrity(progress: progress)
    }

    /// Nothing: the store's pages are PostgreSQL's to check (its data checksums, `amcheck`).
    public func structuralProblems() throws -> [String] { [] }
}

extension PostgresLogReader {
    /// What `gamelog info` says of a store, read as it is.
    public struct Description: Sendable {
        public var schemaVersion: Int
        public var events: Int64
        public var lastPosition: Int64
        public var recordings: Int
        public var headHash: [UInt8]
        /// The database's size on its server (`pg_database_size`).
        public var bytes: Int64
        public var dictionaries: [(id: Int64, name: String, size: Int)]
        /// How far the catalog reaches.
        public var catalogThrough: Int64
    }

    /// The store's revision (how many writes changed it), as this reader sees it.
    public func revision() throws -> Int64 {
        try fetch("SELECT revision FROM store_state") { try $0[0].decode(Int64.self) }.first ?? 0
    }

    /// The store described in a few statements (counting its events reads every row).
    public func describe() throws -> Description {
        let version = try fetch("SELECT coalesce(max(version), 0) FROM schema_migrations") { try $0[0].decode(Int64.self) }.first ?? 0
        let (events, last) = try count()
        let recordings = try fetch("SELECT count(*) FROM streams") { try $0[0].decode(Int64.self) }.first ?? 0
        let bytes = try fetch("SELECT pg_database_size(current_database())") { try $0[0].decode(Int64.self) }.first ?? 0
        let dictionaries = try fetch("SELECT id, name, length(bytes) FROM dictionaries ORDER BY id") { row in
            (id: try row[0].decode(Int64.self), name: try row[1].decode(String.self), size: Int(try row[2].decode(Int32.self)))
        }
        let through = try fetch("SELECT through FROM catalog_coverage") { try $0[0].decode(Int64.self) }.first ?? 0
        return Description(schemaVersion: Int(version), events: events, lastPosition: last, recordings: Int(recordings),
                           headHash: try headHash(), bytes: bytes, dictionaries: dictionaries, catalogThrough: through)
    }
}
