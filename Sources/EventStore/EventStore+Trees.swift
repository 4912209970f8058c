import Foundation
import GRDB

/// The device whose tree a recording's events are leaves of: its name and public key.
public struct TreeOwner: Hashable, Sendable {
    public var device: String
    /// Ed25519, 32 bytes.
    public var publicKey: [UInt8]

    public init(device: String, publicKey: [UInt8]) {
        self.device = device
        self.publicKey = publicKey
    }
}

/// The device-tree rows an append reads and makes: what ``TreeStates`` asks of a store.
package protocol TreeRowStore {
    /// The tree of `publicKey`: its id and device name (nil where the name is not text).
    mutating func tree(publicKey: [UInt8]) throws -> (id: Int64, device: String?)?
    /// Tree `id`'s row, or nil where it is missing or a value has the wrong type.
    mutating func treeRow(id: Int64) throws -> (publicKey: [UInt8], device: String, size: Int64, frontier: [UInt8]?)?
    /// Makes a tree for `owner` (size 0, empty frontier) and returns its id.
    mutating func insertTree(_ owner: TreeOwner) throws -> Int64
    /// Makes recording `rowID`'s events leaves of tree `tree`.
    mutating func setTree(_ tree: Int64, ofStream rowID: Int64) throws
}

/// The device trees one transaction touches: found or made on first use, grown leaf by
/// leaf, saved at the end. The rules of a tree's growth live here; the rows come from a
/// ``TreeRowStore``, so both stores grow a tree the same way.
package struct TreeStates {
    package struct State {
        package var owner: TreeOwner
        package var size: Int64
        package var startSize: Int64
        /// Nil where this file holds only part of the tree.
        package var frontier: MerkleTree.Frontier?
        package var changed = false
    }

    package private(set) var states: [Int64: State] = [:]
    /// Tiles completed in this transaction: tree, lo, hi, hash.
    package private(set) var tiles: [(tree: Int64, lo: Int64, hi: Int64, hash: [UInt8])] = []
    private var byKey: [[UInt8]: Int64] = [:]
    /// A recording of each tree whose key the appender gave, to ask for the key again when signing.
    package private(set) var signers: [Int64: UUID] = [:]

    package init() {}

    /// The trees the recorder's own leaves grew, which their devices sign.
    package var grown: [Int64: State] { states.filter { $0.value.frontier != nil && $0.value.size != $0.value.startSize } }

    /// The tree of `owner`'s key, made if new.
    package mutating func tree(_ rows: inout some TreeRowStore, owner: TreeOwner) throws -> Int64 {
        if let id = byKey[owner.publicKey] { return id }
        guard PublicKeyCheck.isAcceptable(owner.publicKey) else { throw KeyError.weakPublicKey }
        if let found = try rows.tree(publicKey: owner.publicKey) {
            guard let device = found.device, device == owner.device else {
                throw EventStoreError.treeConflict(device: owner.device, detail: "its key already signs for another device name here")
            }
            byKey[owner.publicKey] = found.id
            _ = try load(&rows, found.id)
            return found.id
        }
        let id = try rows.insertTree(owner)
        byKey[owner.publicKey] = id
        states[id] = State(owner: owner, size: 0, startSize: 0, frontier: MerkleTree.Frontier())
        return id
    }

    @discardableResult
    mutating func load(_ rows: inout some TreeRowStore, _ id: Int64) throws -> State {
        if let known = states[id] { return known }
        guard let row = try rows.treeRow(id: id) else {
            throw EventStoreError.treeConflict(device: "?", detail: "tree \(id) is missing or has values of the wrong type")
        }
        let frontier = row.frontier.flatMap { MerkleTree.Frontier(size: row.size, packed: $0) }
        let state = State(owner: TreeOwner(device: row.device, publicKey: row.publicKey), size: row.size, startSize: row.size, frontier: frontier)
        states[id] = state
        byKey[row.publicKey] = id
        return state
    }

    /// The tree a recording's next events join: the one it has, or `owner`'s for a
    /// recording that has none yet.
    mutating func join(_ rows: inout some TreeRowStore, stream: UUID, rowID: Int64, tree current: Int64?, owner: TreeOwner?) throws -> Int64? {
        guard let owner else { return current }
        let id = try tree(&rows, owner: owner)
        if let current {
            guard current == id else {
                throw EventStoreError.treeConflict(device: owner.device, detail:
                    "recording \(stream.uuidString.prefix(8).lowercased()) is already a leaf range of another device's tree")
            }
        } else {
            try rows.setTree(id, ofStream: rowID)
        }
        signers[id] = stream
        return id
    }

    /// The leaf an event takes in tree `id`: the next one (a recorded event), or the one
    /// it was exported with (an import).
    mutating func take(_ rows: inout some TreeRowStore, _ id: Int64, leaf given: Int64?, envelope: SplitEnvelope) throws -> Int64 {
        // Taken out of the dictionary while it grows, so its frontier is not copied
        // for every leaf (copy-on-write while the dictionary still held it).
        if states[id] == nil { try load(&rows, id) }
        var state = states.removeValue(forKey: id)!
        defer { states[id] = state }
        let hash = envelope.leafHash()
        let leaf: Int64
        if let given {
            leaf = given
            if state.frontier?.size == given {
                state.frontier!.append(hash) { tiles.append((id, $0, $1, $2)) }
            } else if state.frontier != nil, given < state.size {
                throw EventStoreError.treeConflict(device: state.owner.device, detail: "leaf \(given) is another event here")
            } else {
                state.frontier = nil
            }
            state.size = max(state.size, given + 1)
        } else {
            guard state.frontier != nil else {
                throw EventStoreError.treeConflict(device: state.owner.device, detail:
                    "this file holds only part of the device's tree (an import); record into the device's own log")
            }
            leaf = state.frontier!.size
            state.frontier!.append(hash) { tiles.append((id, $0, $1, $2)) }
            state.size = state.frontier!.size
        }
        state.changed = true
        return leaf
    }

    /// A signed head or proof from an import: the tree has at least `size` leaves.
    package mutating func grow(_ id: Int64, to size: Int64) {
        guard var state = states[id], size > state.size else { return }
        state.size = size
        if state.frontier?.size != size { state.frontier = nil }
        state.changed = true
        states[id] = state
    }

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

/// A device's tree as a log holds it: its key, its latest signed head and its size.
public struct DeviceTree: Hashable, Sendable {
    public var owner: TreeOwner
    /// Leaves this file knows the tree to have.
    public var size: Int64
    /// Every head the device signed that this file holds, smallest first.
    public var heads: [TreeHead]
    /// Whether this file holds every leaf of the tree (it grew it leaf by leaf, as the
    /// device's own log or a whole import does), rather than some leaves and proof
    /// nodes for the others (an import of part of a log).
    public var holdsEveryLeaf = true

    public init(owner: TreeOwner, size: Int64, heads: [TreeHead], holdsEveryLeaf: Bool = true) {
        self.owner = owner
        self.size = size
        self.heads = heads
        self.holdsEveryLeaf = holdsEveryLeaf
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

/// Where a log's device trees are: what export and `verify GAME` need.
public struct TreeLayout: Sendable {
    /// Each tree with its heads, by row id.
    public var trees: [Int64: DeviceTree]
    /// The tree each signed recording belongs to.
    public var treeOfStream: [UUID: Int64]
    /// Proof nodes stored for partly held trees: `[lo, hi) -> hash`.
    public var nodes: [Int64: [Range<Int64>: [UInt8]]]

    /// The recordings of tree `id`.
    public func streams(of id: Int64) -> Set<UUID> { Set(treeOfStream.filter { $0.value == id }.keys) }
}


/// A leaf's data: the event's envelope without its global position (docs/FORMAT.md),
/// the same bytes its stream chain hashes, so a device's tree outlives any merge.
public enum TreeLeaf {
    public static func data(id: UUID, stream: UUID, streamVersion: Int64, type: String, typeVersion: Int, recordedAt: Timestamp,
                            payload: [UInt8], scratch: inout [UInt8]) -> [UInt8] {
        ChainHash.envelope(position: 0, id: id, stream: stream, streamVersion: streamVersion, type: type, typeVersion: typeVersion,
                           recordedAt: recordedAt, payload: payload, into: &scratch)
        return Array(scratch[8...])
    }

    public static func data(of e: StoredEvent, scratch: inout [UInt8]) -> [UInt8] {
        data(id: e.id, stream: e.stream, streamVersion: e.streamVersion, type: e.type, typeVersion: e.typeVersion,
             recordedAt: e.recordedAt, payload: e.payload, scratch: &scratch)
    }
}

extension EventStore: SignedLogReader {
    /// Another read-only connection to the same file.
    public func anotherReader() throws -> any SignedLogReader {
        try EventStore(path: path, access: .readOnly)
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
        try read { db in
            guard try db.tableExists("tree_nodes") else { return nil }
            return try Data.fetchOne(db.cachedStatement(sql: "SELECT hash FROM tree_nodes WHERE tree_id = ? AND lo = ? AND hi = ?"),
                                     arguments: [id, range.lowerBound, range.upperBound]).flatMap { $0.count == 32 ? Array($0) : nil }
        }
    }

    public func storedNodes(trees: Set<Int64>?) throws -> [Int64: [Range<Int64>: [UInt8]]] {
        try read { db in try db.tableExists("tree_nodes") ? try treeNodes(db, trees: trees) : [:] }
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
