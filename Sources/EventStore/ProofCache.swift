import Foundation

/// Proof material a log's readers have read, kept for the next proof that needs it: what
/// does not change while a log only grows. A stored tree node (the hash of a range of a
/// device's leaves) is written once and never rewritten; a tile whose every leaf is present
/// keeps those leaves. A viewer checks each conversation's devices against their signed
/// trees, and the conversations of a device read the same nodes, the tiles around its
/// signed heads and each other's tiles: read again for each, they were most of a fresh
/// viewer's `/api/verify/ID`.
///
/// Absences are not kept (a node or leaf missing now may be appended later); a partial
/// tile (the last of a tree, which every conversation of its device reads) is kept with
/// the tree's size when it was read, and holds only while the tree has that size.
/// Bounded: past its limits a table is emptied and fills again. Readers of one log may
/// share one (``EventStore/proofCache``); safe to use from any thread.
package final class ProofCache: @unchecked Sendable {
    /// About 100 bytes each.
    static let maximumNodes = 65_536
    /// A full tile is 256 leaf hashes, about 25 KB.
    static let maximumTiles = 256

    private struct TreeRange: Hashable {
        var tree: Int64
        var lo: Int64
        var hi: Int64
        init(_ tree: Int64, _ range: Range<Int64>) { (self.tree, lo, hi) = (tree, range.lowerBound, range.upperBound) }
    }

    private let lock = NSLock()
    // Guarded by `lock`.
    private var nodes: [TreeRange: [UInt8]] = [:]
    private var tiles: [TreeRange: (leaves: [Int64: [UInt8]], treeSize: Int64?)] = [:]

    package init() {}

    func keep(node hash: [UInt8], tree: Int64, range: Range<Int64>) {
        lock.withLock {
            if nodes.count >= Self.maximumNodes { nodes.removeAll(keepingCapacity: true) }
            nodes[TreeRange(tree, range)] = hash
        }
    }

    func node(tree: Int64, range: Range<Int64>) -> [UInt8]? {
        lock.withLock { nodes[TreeRange(tree, range)] }
    }

    /// Keeps the `leaves` of `range` read when the tree had `treeSize` leaves (read before
    /// them): for good if they are every leaf of `range`, else while the tree keeps that
    /// size, if they are every leaf of it in `range`.
    func keep(tile leaves: [Int64: [UInt8]], tree: Int64, range: Range<Int64>, treeSize: Int64?) {
        guard leaves.keys.allSatisfy(range.contains) else { return }
        let full = Int64(leaves.count) == range.count
        guard full || treeSize.map({ Int64(leaves.count) == min(range.upperBound, $0) - range.lowerBound }) == true else { return }
        lock.withLock {
            if tiles.count >= Self.maximumTiles { tiles.removeAll(keepingCapacity: true) }
            tiles[TreeRange(tree, range)] = (leaves, full ? nil : treeSize)
        }
    }

    /// The leaves of `range` if kept and still whole: `treeSize` is asked for the tree's
    /// size now only when they were a partial tile.
    func tile(tree: Int64, range: Range<Int64>, treeSize: () throws -> Int64?) rethrows -> [Int64: [UInt8]]? {
        guard let kept = lock.withLock({ tiles[TreeRange(tree, range)] }) else { return nil }
        guard let size = kept.treeSize else { return kept.leaves }
        return try treeSize() == size ? kept.leaves : nil
    }

    /// How many nodes and tiles it holds (for tests).
    package var counts: (nodes: Int, tiles: Int) { lock.withLock { (nodes.count, tiles.count) } }
}
