import EventStore
import Foundation

/// What an export carries so a reader can check its events against their devices'
/// signed heads besides each event's leaf index (which the event line takes from the
/// stored event): per device tree a tree line (its recordings and, for an export of
/// some of them, a multiproof) and its head lines.
struct ExportProofs {
    let store: any SignedLogReader
    let layout: TreeLayout
    let streams: Set<UUID>?

    init(store: any SignedLogReader, streams: Set<UUID>?) throws {
        self.store = store
        self.streams = streams
        layout = try store.treeLayout()
    }

    /// The tree and head lines of every tree an exported recording belongs to.
    func lines() throws -> [any Encodable] {
        var out: [any Encodable] = []
        for (id, tree) in layout.trees.sorted(by: { $0.key < $1.key }) {
            let all = layout.streams(of: id)
            let mine = streams.map { all.intersection($0) } ?? all
            guard !mine.isEmpty else { continue }
            var heads = tree.heads
            var nodes: [ExportedTree.Node] = []
            // Only an export of some of a tree's leaves needs a multiproof: some of its
            // recordings, or a tree this file holds in part (an import of part of a log, with
            // proof nodes for the rest). Otherwise every leaf is there to check every head
            // against, and every head goes (docs/FORMAT.md).
            let partial = mine != all || (!tree.holdsEveryLeaf && layout.nodes[id] != nil)
            if partial, let last = heads.last {
                // The leaves exported of this tree. Only the last head can be checked: the
                // multiproof is for its size.
                let sorted = Set(try store.leafIndexes(streams: mine).leaves).sorted()
                heads = [last]
                var hashes: [Int64: [UInt8]]?, held: [Int64] = []
                let stored = layout.nodes[id] ?? [:]
                nodes = try MerkleTree.multiproof(size: last.size, held: { MerkleTree.anyLeaf(sorted, in: $0, $1) }, subtreeRoot: { lo, hi in
                    if hashes == nil {
                        hashes = try store.leafHashes(streams: all)
                        held = hashes!.keys.sorted()
                    }
                    var missing: Int64?
                    guard let root = MerkleTree.subtree(lo: lo, hi: hi, known: { _, _ in nil }, holds: { MerkleTree.anyLeaf(held, in: $0, $1) },
                                                        leaf: { hashes![$0] }, proof: { stored[$0..<$1] }, missing: &missing) else {
                        throw InterchangeError.badHead(file: store.location, line: 0, detail:
                            "device \(SafeText.line(tree.owner.device))'s tree lacks leaf \(missing ?? -1) here, so no proof of its other events can be made")
                    }
                    return root
                }).map { ExportedTree.Node(lo: $0.lo, hi: $0.hi, hash: Hex.string($0.hash)) }
            }
            out.append(ExportedTree.Line(tree: ExportedTree(device: tree.owner.device, publicKey: Hex.string(tree.owner.publicKey),
                                                            streams: mine.sorted { $0.precedes($1) }, nodes: nodes)))
            for head in heads { out.append(ExportedHead.Line(head: ExportedHead(head))) }
        }
        return out
    }
}
