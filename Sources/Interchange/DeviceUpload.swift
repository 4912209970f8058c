import EventStore
import Foundation

/// What a device sends a collector: the events of its tree the collector has not
/// accepted yet, as export lines (`gamelog import` reads them too), with the proof that
/// they extend what it accepted: the tree line's proof nodes are the roots of the perfect
/// subtrees of the accepted leaves (the tree's frontier at that size), and the head lines
/// are the device's heads past it. The collector checks that those nodes are its own
/// frontier, so the new heads' roots, recomputed from them and the new events, prove the
/// new heads extend the accepted one (an RFC 9162 consistency proof in another form).
public struct DeviceUpload: Sendable {
    public var owner: TreeOwner
    /// The leaves the collector had accepted: the upload's events are leaves `from..<to`.
    public var from: Int64
    /// The size of the newest head sent.
    public var to: Int64
    public var events: Int
    /// The export lines, each ending in a line feed.
    public var body: String
}

/// Where a device's log stands against what a collector accepted from it.
public enum UploadPlan: Sendable {
    /// The collector holds every signed event of the tree.
    case upToDate(size: Int64)
    /// The collector holds more events of this device than this log has signed: this
    /// log is an older copy, or the device was rolled back.
    case behind(logSize: Int64, accepted: Int64)
    /// Send this.
    case send(DeviceUpload)
}

extension Interchange {
    /// The next upload of the tree of `publicKey` to a collector that accepted `accepted`
    /// of its leaves: at most about `maximumEvents` events (whole batches: it ends at a head).
    public static func upload(from store: EventStore, tree publicKey: [UInt8], accepted: Int64,
                              maximumEvents: Int64 = 20_000) throws -> UploadPlan {
        let layout = try store.treeLayout()
        guard let (id, tree) = layout.trees.first(where: { $0.value.owner.publicKey == publicKey }) else {
            throw InterchangeError.badHead(file: store.path, line: 0, detail: "the log holds no tree of key \(Hex.string(publicKey).prefix(16))")
        }
        guard let newest = tree.heads.last else { return .upToDate(size: 0) }
        if newest.size == accepted { return .upToDate(size: accepted) }
        if newest.size < accepted { return .behind(logSize: newest.size, accepted: accepted) }
        let later = tree.heads.filter { $0.size > accepted }
        let last = later.last { $0.size <= accepted + maximumEvents } ?? later[0]
        let heads = later.filter { $0.size <= last.size }

        let streams = layout.streams(of: id)
        let found = try store.leaves(streams: streams)
        let hashes = Dictionary(found.map { ($0.leaf, $0.hash) }, uniquingKeysWith: { _, later in later })
        var frontier = MerkleTree.Frontier()
        for leaf in 0..<accepted {
            guard let hash = hashes[leaf] else {
                throw InterchangeError.badHead(file: store.path, line: 0, detail:
                    "the log lacks leaf \(leaf) of device \(SafeText.line(tree.owner.device))'s tree: it holds only part of it, and only the device's own log can be pushed")
            }
            frontier.append(hash)
        }
        var leafAt: [Int64: Int64] = [:]
        for (position, leaf, _) in found where leaf >= accepted && leaf < last.size { leafAt[position] = leaf }
        guard leafAt.count == Int(last.size - accepted) else {
            throw InterchangeError.badHead(file: store.path, line: 0, detail:
                "the log lacks some of device \(SafeText.line(tree.owner.device))'s events \(accepted + 1)...\(last.size)")
        }
        var sentStreams = Set<UUID>()
        var chains: [UUID: [UInt8]] = [:]
        var scratch: [UInt8] = []
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var body = ""
        var events = 0
        let wanted = leafAt.keys
        // Read first, then chained: a stream's stored hash is read outside the scan.
        var chosen: [(event: StoredEvent, leaf: Int64)] = []
        try store.scan(EventQuery(positions: wanted.min()!...wanted.max()!, streams: streams)) { event in
            if let leaf = leafAt[event.position] { chosen.append((event, leaf)) }
        }
        for (event, leaf) in chosen {
            if chains[event.stream] == nil {
                guard let start = try store.streamHash(event.stream, at: event.streamVersion - 1) else {
                    throw InterchangeError.missingEvents(stream: event.stream, expectedVersion: 1, found: event.streamVersion)
                }
                chains[event.stream] = start
            }
            ChainHash.envelope(position: 0, id: event.id, stream: event.stream, streamVersion: event.streamVersion, type: event.type,
                               typeVersion: event.typeVersion, recordedAt: event.recordedAt, payload: event.payload, into: &scratch)
            let hash = ChainHash.streamHash(previous: chains[event.stream]!, envelope: scratch)
            chains[event.stream] = hash
            sentStreams.insert(event.stream)
            let line = ExportedEvent(id: event.id, stream: event.stream, streamVersion: event.streamVersion, type: event.type,
                                     typeVersion: event.typeVersion, recordedAt: event.recordedAt.microsecondsSince1970,
                                     payload: String(decoding: event.payload, as: UTF8.self), position: event.position,
                                     streamHash: Hex.string(hash), leaf: leaf)
            body += String(decoding: try encoder.encode(line), as: UTF8.self) + "\n"
            events += 1
        }
        let nodes = MerkleTree.ranges(of: frontier).map { ExportedTree.Node(lo: $0.lo, hi: $0.hi, hash: Hex.string($0.hash)) }
        let treeLine = ExportedTree.Line(tree: ExportedTree(device: tree.owner.device, publicKey: Hex.string(publicKey),
                                                            streams: sentStreams.sorted { $0.precedes($1) }, nodes: nodes))
        body += String(decoding: try encoder.encode(treeLine), as: UTF8.self) + "\n"
        for head in heads { body += String(decoding: try encoder.encode(ExportedHead.Line(head: ExportedHead(head))), as: UTF8.self) + "\n" }
        return .send(DeviceUpload(owner: tree.owner, from: accepted, to: last.size, events: events, body: body))
    }
}

/// A device tree an import plan carries, as a collector checks it.
public struct PlannedTree: Sendable {
    public var owner: TreeOwner
    /// Its signed heads, smallest first.
    public var heads: [TreeHead]
    /// The proof nodes its tree line carries.
    public var nodes: [Range<Int64>: [UInt8]]
    /// The leaf indexes of its events in the plan, ascending.
    public var leaves: [Int64]
    /// The recordings its tree line names.
    public var streams: Set<UUID>
}

extension ImportPlan {
    /// Every device tree the files carry, by key.
    public var plannedTrees: [PlannedTree] {
        trees.trees.values.map { tree in
            PlannedTree(owner: tree.owner,
                        heads: trees.heads.map(\.head).filter { $0.publicKey == tree.owner.publicKey }.sorted { $0.size < $1.size },
                        nodes: tree.nodes, leaves: tree.leaves.keys.sorted(), streams: tree.streams)
        }.sorted { $0.owner.device < $1.owner.device }
    }

    /// The recordings of the files' events that no tree line names (unsigned events).
    public var unsignedStreams: Set<UUID> {
        Set(keys.map(\.stream)).subtracting(trees.owners.keys)
    }
}
