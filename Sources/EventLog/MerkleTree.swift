import Crypto
import Foundation

/// Merkle tree hashing as RFC 9162 (Certificate Transparency 2.0), section 2.1, defines
/// it: a leaf hash is `SHA-256(0x00 || data)`, an interior node `SHA-256(0x01 || left ||
/// right)`, and a tree of `n > 1` leaves splits at the largest power of two below `n`.
/// A device's events are the leaves of its tree; see docs/FORMAT.md.
public enum MerkleTree {
    /// The smallest subtree a log keeps the hash of as it appends (a tile of 256 leaves,
    /// and every aligned subtree above it): about one row per 128 events.
    public static let tileSize: Int64 = 256

    /// The root of a tree with no leaves: SHA-256 of nothing.
    public static let emptyRoot: [UInt8] = Array(SHA256.hash(data: [UInt8]()))

    /// `SHA-256(0x00 || data)`; a slice of an envelope hashes without a copy.
    public static func leafHash(_ data: some DataProtocol) -> [UInt8] {
        if let hash = data.withContiguousStorageIfAvailable({ data in
            withUnsafeBytes(of: UInt8(0)) { tag in Hash32.sha256(tag, UnsafeRawBufferPointer(data)) }
        }) {
            return hash.bytes
        }
        var hasher = SHA256()
        hasher.update(data: [0])
        hasher.update(data: data)
        return Array(hasher.finalize())
    }

    /// `SHA-256(0x01 || left || right)`.
    public static func nodeHash(_ left: [UInt8], _ right: [UInt8]) -> [UInt8] {
        withUnsafeBytes(of: UInt8(1)) { tag in
            left.withUnsafeBytes { left in right.withUnsafeBytes { right in Hash32.sha256(tag, left, right) } }
        }.bytes
    }

    /// ``nodeHash(_:_:)`` of hashes held inline.
    package static func nodeHash(_ left: Hash32, _ right: Hash32) -> Hash32 {
        withUnsafeBytes(of: UInt8(1)) { tag in
            left.withUnsafeBytes { left in right.withUnsafeBytes { right in Hash32.sha256(tag, left, right) } }
        }
    }

    /// The largest tree a log may claim: 2^62 leaves. Sizes, leaf indexes and ranges read
    /// from a file or a request are held to it before any arithmetic, so `lo + width` never
    /// overflows (docs/FORMAT.md).
    public static let maximumSize: Int64 = 1 << 62

    /// The largest power of two smaller than `n` (for `n >= 2`): where RFC 9162 splits.
    static func split(_ n: Int64) -> Int64 {
        // From the bit length, so no size (however large a file claims) loops or overflows.
        Int64(1) << (63 - (n - 1).leadingZeroBitCount)
    }

    /// The root over leaf hashes given in order.
    public static func root(_ leaves: [[UInt8]]) -> [UInt8] {
        var frontier = Frontier()
        for leaf in leaves { frontier.append(leaf) }
        return frontier.root
    }

    /// The inclusion proof (audit path) of leaf `index` in the tree over `leaves`
    /// (RFC 9162 section 2.1.3.1), from the leaf's sibling up.
    public static func inclusionProof(of index: Int64, in leaves: [[UInt8]]) -> [[UInt8]] {
        func path(_ m: Int64, _ lo: Int64, _ hi: Int64) -> [[UInt8]] {
            let n = hi - lo
            guard n > 1 else { return [] }
            let k = split(n)
            if m < k { return path(m, lo, lo + k) + [subtreeRoot(lo + k, hi)] }
            return path(m - k, lo + k, hi) + [subtreeRoot(lo, lo + k)]
        }
        func subtreeRoot(_ lo: Int64, _ hi: Int64) -> [UInt8] { root(Array(leaves[Int(lo)..<Int(hi)])) }
        return path(index, 0, Int64(leaves.count))
    }

    /// Whether `proof` shows that `leafHash` is leaf `index` of the tree of `size` leaves
    /// whose root is `root` (RFC 9162 section 2.1.3.2).
    public static func verifyInclusion(index: Int64, size: Int64, leafHash: [UInt8], proof: [[UInt8]], root: [UInt8]) -> Bool {
        guard index >= 0, index < size else { return false }
        var fn = index, sn = size - 1, r = leafHash
        for p in proof {
            if sn == 0 { return false }
            if fn & 1 == 1 || fn == sn {
                r = nodeHash(p, r)
                if fn & 1 == 0 {
                    while fn & 1 == 0 && fn != 0 { fn >>= 1; sn >>= 1 }
                }
            } else {
                r = nodeHash(r, p)
            }
            fn >>= 1
            sn >>= 1
        }
        return sn == 0 && r == root
    }

    /// The consistency proof between the tree of `from` leaves and the tree of `to`
    /// leaves (RFC 9162 section 2.1.4.1, SUBPROOF), in the RFC's order. `subtreeRoot(lo,
    /// hi)` gives the hash of the subtree over leaves `[lo, hi)` of the larger tree; it is
    /// asked for O(log n) subtrees. Empty when `from` is 0 or equals `to`.
    public static func consistencyProof(from: Int64, to: Int64, subtreeRoot: (Int64, Int64) throws -> [UInt8]) rethrows -> [[UInt8]] {
        precondition(from >= 0 && from <= to, "a consistency proof goes from a smaller tree to a larger one")
        guard from > 0, from < to else { return [] }
        // SUBPROOF(m, D[lo:hi], b), with m counted from lo.
        func subproof(_ m: Int64, _ lo: Int64, _ hi: Int64, _ whole: Bool) throws -> [[UInt8]] {
            let n = hi - lo
            if m == n { return whole ? [] : [try subtreeRoot(lo, hi)] }
            let k = split(n)
            if m <= k { return try subproof(m, lo, lo + k, whole) + [subtreeRoot(lo + k, hi)] }
            return try subproof(m - k, lo + k, hi, false) + [subtreeRoot(lo, lo + k)]
        }
        return try subproof(from, 0, to, true)
    }

    /// Whether `proof` shows that the tree of `to` leaves whose root is `newRoot` extends
    /// the tree of `from` leaves whose root is `oldRoot` (RFC 9162 section 2.1.4.2).
    public static func verifyConsistency(from: Int64, to: Int64, oldRoot: [UInt8], newRoot: [UInt8], proof: [[UInt8]]) -> Bool {
        guard from >= 0, from <= to, to <= maximumSize, proof.allSatisfy({ $0.count == 32 }) else { return false }
        // An empty first tree proves nothing (transparency-dev's verifiers refuse it too).
        guard from >= 1 else { return false }
        if from == to { return proof.isEmpty && oldRoot == newRoot }
        guard !proof.isEmpty else { return false }
        var path = proof
        // A first tree that is a perfect subtree is its own first node.
        if from & (from - 1) == 0 { path.insert(oldRoot, at: 0) }
        var fn = from - 1, sn = to - 1
        while fn & 1 == 1 { fn >>= 1; sn >>= 1 }
        var fr = path[0], sr = path[0]
        for c in path.dropFirst() {
            if sn == 0 { return false }
            if fn & 1 == 1 || fn == sn {
                fr = nodeHash(c, fr)
                sr = nodeHash(c, sr)
                if fn & 1 == 0 {
                    while fn & 1 == 0 && fn != 0 { fn >>= 1; sn >>= 1 }
                }
            } else {
                sr = nodeHash(sr, c)
            }
            fn >>= 1
            sn >>= 1
        }
        return fr == oldRoot && sr == newRoot && sn == 0
    }

    /// The roots of the perfect subtrees that make up the first `size` leaves, largest
    /// first (one per set bit of `size`): all a device needs to append a leaf and name
    /// its new root, in O(log n) hashes.
    public struct Frontier: Hashable, Sendable {
        public private(set) var size: Int64 = 0
        /// Held inline: every leaf appended completes a node about once, and a node as an
        /// array was an allocation a leaf on each appending and checking path.
        private var nodes: [Hash32] = []

        /// The subtree roots, largest first.
        public var hashes: [[UInt8]] { nodes.map(\.bytes) }

        public init() {}

        /// A stored frontier: nil unless its hash count is `size`'s number of set bits.
        public init?(size: Int64, packed: [UInt8]) {
            guard size >= 0, packed.count % 32 == 0, packed.count / 32 == size.nonzeroBitCount else { return nil }
            self.size = size
            nodes = packed.withUnsafeBytes { bytes in
                stride(from: 0, to: packed.count, by: 32).map { Hash32(UnsafeRawBufferPointer(rebasing: bytes[$0..<($0 + 32)]))! }
            }
        }

        public var packed: [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(32 * nodes.count)
            for node in nodes { node.withUnsafeBytes { out.append(contentsOf: $0) } }
            return out
        }

        /// Appends a leaf's hash (32 bytes: a SHA-256).
        public mutating func append(_ leafHash: [UInt8]) {
            append(leafHash) { _, _, _ in }
        }

        package mutating func append(_ leafHash: Hash32) {
            append(leafHash, completing: MerkleTree.tileSize) { _, _, _ in }
        }

        /// Appends a leaf; `completed` is called with every perfect subtree `[lo, hi)` of
        /// at least `minimumWidth` (by default ``MerkleTree/tileSize``) leaves the leaf completes (the tiles a log
        /// keeps so one game's proof needs only its own leaves and their neighbours).
        public mutating func append(_ leafHash: [UInt8], completing minimumWidth: Int64 = MerkleTree.tileSize,
                                    completed: (_ lo: Int64, _ hi: Int64, _ hash: [UInt8]) -> Void) {
            append(Hash32(leafHash: leafHash), completing: minimumWidth) { completed($0, $1, $2.bytes) }
        }

        package mutating func append(_ leafHash: Hash32, completing minimumWidth: Int64,
                                     completed: (_ lo: Int64, _ hi: Int64, _ hash: Hash32) -> Void) {
            var hash = leafHash, n = size, width: Int64 = 1
            if minimumWidth <= 1 { completed(size, size + 1, hash) }
            while n & 1 == 1 {
                hash = MerkleTree.nodeHash(nodes.removeLast(), hash)
                n >>= 1
                width <<= 1
                if width >= minimumWidth { completed(size + 1 - width, size + 1, hash) }
            }
            nodes.append(hash)
            size += 1
        }

        /// The root of the first `size` leaves.
        public var root: [UInt8] {
            guard var root = nodes.last else { return MerkleTree.emptyRoot }
            for hash in nodes.dropLast().reversed() { root = MerkleTree.nodeHash(hash, root) }
            return root.bytes
        }
    }

    /// The root of the tree of `size` leaves when only some are at hand: the subtree
    /// `[0, size)` of ``subtree(lo:hi:known:holds:leaf:proof:proofsWithin:missing:)``.
    public static func root(size: Int64, known: (Int64, Int64) -> [UInt8]?, holds: (Int64, Int64) -> Bool,
                            leaf: (Int64) -> [UInt8]?, proof: (Int64, Int64) -> [UInt8]?,
                            proofsWithin: (Int64, Int64) -> Bool = { _, _ in false }, missing: inout Int64?) -> [UInt8]? {
        guard size > 0 else { return emptyRoot }
        return subtree(lo: 0, hi: size, known: known, holds: holds, leaf: leaf, proof: proof, proofsWithin: proofsWithin, missing: &missing)
    }

    /// The hash of the subtree over leaves `[lo, hi)` when only some are at hand.
    /// - `known(lo, hi)`: the hash of a subtree already computed from leaves (a
    ///   frontier's, or a tile known to hold none of the leaves being proven), used first.
    /// - `holds(lo, hi)`: whether any leaf of `[lo, hi)` is at hand; `leaf(i)` gives it.
    /// - `proof(lo, hi)`: a subtree hash carried by a partial export, used only where no
    ///   leaf of it is at hand, so a held leaf can never be hidden behind a proof.
    /// - `proofsWithin(lo, hi)`: whether `known` or `proof` may answer for some smaller
    ///   range inside `[lo, hi)`. A range that holds no leaf and has none is missing at
    ///   once, so the work is bounded by the leaves and proofs at hand, never by the size
    ///   a head claims (a forged head of 2^40 leaves costs 40 steps, not 2^40).
    /// Nil when a leaf is neither at hand nor under a proof; `missing` is then the first.
    public static func subtree(lo: Int64, hi: Int64, known: (Int64, Int64) -> [UInt8]?, holds: (Int64, Int64) -> Bool,
                               leaf: (Int64) -> [UInt8]?, proof: (Int64, Int64) -> [UInt8]?,
                               proofsWithin: (Int64, Int64) -> Bool = { _, _ in false }, missing: inout Int64?) -> [UInt8]? {
        if let known = known(lo, hi) { return known }
        let held = holds(lo, hi)
        if !held, let proof = proof(lo, hi) { return proof }
        if hi - lo == 1 || (!held && !proofsWithin(lo, hi)) {
            if held, let leaf = leaf(lo) { return leaf }
            if missing == nil { missing = lo }
            return nil
        }
        // Split as RFC 9162 does; a proof may cover only part of the range.
        let k = split(hi - lo)
        let left = subtree(lo: lo, hi: lo + k, known: known, holds: holds, leaf: leaf, proof: proof, proofsWithin: proofsWithin, missing: &missing)
        let right = subtree(lo: lo + k, hi: hi, known: known, holds: holds, leaf: leaf, proof: proof, proofsWithin: proofsWithin, missing: &missing)
        guard let left, let right else { return nil }
        return nodeHash(left, right)
    }

    /// Stored subtree ranges, answering "does one lie inside `[lo, hi)`?" in O(1) after an
    /// O(n log n) build (a sparse table of the smallest end among ranges sorted by start),
    /// for ``subtree(lo:hi:known:holds:leaf:proof:proofsWithin:missing:)``.
    public struct RangeIndex: Sendable {
        private let starts: [Int64]
        /// `levels[j][i]`: the smallest end among the ranges `i ..< i + 2^j` (by start).
        private var levels: [[Int64]] = []

        public init(_ ranges: some Sequence<Range<Int64>>) {
            let sorted = ranges.sorted { $0.lowerBound < $1.lowerBound }
            starts = sorted.map(\.lowerBound)
            var level = sorted.map(\.upperBound)
            var width = 1
            while !level.isEmpty {
                levels.append(level)
                guard width * 2 <= sorted.count else { break }
                level = (0...(sorted.count - width * 2)).map { min(level[$0], level[$0 + width]) }
                width *= 2
            }
        }

        public var isEmpty: Bool { starts.isEmpty }

        /// Whether some range lies inside `[lo, hi)`.
        public func any(within lo: Int64, _ hi: Int64) -> Bool {
            // The ranges that start in [lo, hi): indexes first..<last.
            let first = MerkleTree.lowerBound(starts, lo), last = MerkleTree.lowerBound(starts, hi)
            guard first < last else { return false }
            let j = (last - first).bitWidth - 1 - (last - first).leadingZeroBitCount
            return min(levels[j][first], levels[j][last - (1 << j)]) <= hi
        }
    }

    /// Whether the sorted leaf indexes `sorted` hold one in `[lo, hi)`: what `holds`
    /// asks of the leaves at hand.
    public static func anyLeaf(_ sorted: [Int64], in lo: Int64, _ hi: Int64) -> Bool {
        let index = lowerBound(sorted, lo)
        return index < sorted.count && sorted[index] < hi
    }

    /// The index of the first of `sorted` that is at least `value` (`sorted.count` if none).
    public static func lowerBound(_ sorted: [Int64], _ value: Int64) -> Int {
        var low = 0, high = sorted.count
        while low < high {
            let mid = (low + high) / 2
            if sorted[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The dyadic subtrees a frontier stands for: `[lo, hi) -> hash`, largest first.
    public static func ranges(of frontier: Frontier) -> [(lo: Int64, hi: Int64, hash: [UInt8])] {
        var out: [(lo: Int64, hi: Int64, hash: [UInt8])] = []
        var lo: Int64 = 0, index = 0
        let hashes = frontier.hashes
        for bit in stride(from: 62, through: 0, by: -1) where frontier.size & (Int64(1) << bit) != 0 {
            out.append((lo, lo + (Int64(1) << bit), hashes[index]))
            lo += Int64(1) << bit
            index += 1
        }
        return out
    }

    /// The hashes a reader needs besides `held` leaves to recompute the root of `size`
    /// leaves: one per maximal subtree holding none of them (a multiproof), as
    /// `(lo, hi, hash)`. `leafHash(i)` is called only for leaves outside `held`.
    public static func multiproof(size: Int64, held: (Int64, Int64) -> Bool,
                                  subtreeRoot: (Int64, Int64) throws -> [UInt8]) rethrows -> [(lo: Int64, hi: Int64, hash: [UInt8])] {
        var out: [(lo: Int64, hi: Int64, hash: [UInt8])] = []
        func walk(_ lo: Int64, _ hi: Int64) throws {
            if !held(lo, hi) {
                out.append((lo, hi, try subtreeRoot(lo, hi)))
                return
            }
            guard hi - lo > 1 else { return }
            let k = split(hi - lo)
            try walk(lo, lo + k)
            try walk(lo + k, hi)
        }
        if size > 0 { try walk(0, size) }
        return out
    }
}
