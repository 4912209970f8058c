import Foundation

/// An RFC 9162 consistency proof between two sizes of one device's tree: what a witness
/// checks before it cosigns a newer head (C2SP tlog-witness), and what shows that the
/// device's later history extends the earlier one.
public struct ConsistencyProof: Hashable, Sendable {
    public var device: String
    public var publicKey: [UInt8]
    public var from: Int64
    public var to: Int64
    public var oldRoot: [UInt8]
    public var newRoot: [UInt8]
    /// The hashes, in RFC 9162's order (section 2.1.4.1).
    public var proof: [[UInt8]]

    /// Whether the proof holds (RFC 9162 section 2.1.4.2).
    public var isValid: Bool {
        MerkleTree.verifyConsistency(from: from, to: to, oldRoot: oldRoot, newRoot: newRoot, proof: proof)
    }
}

/// Why a consistency proof cannot be made from this log.
public enum ConsistencyProofError: Error, Hashable, Sendable, CustomStringConvertible {
    case noSuchDevice(String)
    case sizes(from: Int64, to: Int64, treeSize: Int64)
    case absentLeaf(device: String, leaf: Int64)

    public var description: String {
        switch self {
        case .noSuchDevice(let device): "the log holds no tree of device \(SafeText.line(device))"
        case .sizes(let from, let to, let size):
            "a proof goes from a smaller tree to a larger one within the device's \(size) leaves; \(from) to \(to) is not"
        case .absentLeaf(let device, let leaf):
            "the log lacks leaf \(leaf) of device \(SafeText.line(device))'s tree, which the proof needs (only a log holding the whole tree proves consistency)"
        }
    }
}

extension SignedLogReader {
    /// The consistency proof of device `device`'s tree from `from` leaves to `to`
    /// (default: its newest signed head's size, else the tree's size), from the leaves
    /// this log holds.
    public func consistencyProof(device: String, from: Int64, to: Int64? = nil) throws -> ConsistencyProof {
        let layout = try treeLayout()
        guard let (id, tree) = layout.trees.filter({ $0.value.owner.device == device }).max(by: { $0.value.size < $1.value.size }) else {
            throw ConsistencyProofError.noSuchDevice(device)
        }
        let to = to ?? tree.heads.last?.size ?? tree.size
        guard from >= 0, from <= to, to <= tree.size, to <= MerkleTree.maximumSize else {
            throw ConsistencyProofError.sizes(from: from, to: to, treeSize: tree.size)
        }
        let hashes = try leafHashes(streams: layout.streams(of: id))
        for leaf in 0..<to where hashes[leaf] == nil { throw ConsistencyProofError.absentLeaf(device: device, leaf: leaf) }
        // Every subtree the proof asks for from one frontier pass would cost as much; the
        // leaves are at hand, so each is hashed from them.
        func root(_ lo: Int64, _ hi: Int64) -> [UInt8] { MerkleTree.root((lo..<hi).map { hashes[$0]! }) }
        return ConsistencyProof(device: tree.owner.device, publicKey: tree.owner.publicKey, from: from, to: to,
                                oldRoot: from == 0 ? MerkleTree.emptyRoot : root(0, from), newRoot: root(0, to),
                                proof: MerkleTree.consistencyProof(from: from, to: to, subtreeRoot: root))
    }
}
