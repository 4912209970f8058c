import Foundation

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
    /// it was exported with (an import). `hash` is the event's leaf hash.
    mutating func take(_ rows: inout some TreeRowStore, _ id: Int64, leaf given: Int64?, hash: Hash32) throws -> Int64 {
        // Taken out of the dictionary while it grows, so its frontier is not copied
        // for every leaf (copy-on-write while the dictionary still held it).
        if states[id] == nil { try load(&rows, id) }
        var state = states.removeValue(forKey: id)!
        defer { states[id] = state }
        let leaf: Int64
        if let given {
            leaf = given
            if state.frontier?.size == given {
                state.frontier!.append(hash, completing: MerkleTree.tileSize) { tiles.append((id, $0, $1, $2.bytes)) }
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
            state.frontier!.append(hash, completing: MerkleTree.tileSize) { tiles.append((id, $0, $1, $2.bytes)) }
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
