import Foundation
import GRDB
import EventLog

extension EventStore {
    /// Stores cosignatures of heads this log holds (one already stored is kept). A
    /// cosignature that does not verify, or of a head the log lacks, is refused.
    public func store(cosignatures: [(head: TreeHead, cosignature: Cosignature)]) throws {
        guard access == .readWrite else { throw EventStoreError.readOnly(path: path, detail: "opened read-only") }
        try Self.translating(path) {
            try queue.inTransaction(.immediate) { db in
                for (head, cosignature) in cosignatures {
                    guard cosignature.isValid(for: head) else {
                        throw EventStoreError.invalidCosignature(device: head.device, size: head.size, witness: cosignature.witness)
                    }
                    guard let tree = try Int64.fetchOne(db, sql: """
                        SELECT t.id FROM trees t JOIN tree_heads h ON h.tree_id = t.id
                        WHERE t.public_key = ? AND h.size = ? AND h.root = ? AND h.signature = ?
                        """, arguments: [Data(head.publicKey), head.size, Data(head.root), Data(head.signature)]) else {
                        throw EventStoreError.invalidCosignature(device: head.device, size: head.size, witness: cosignature.witness)
                    }
                    try db.execute(sql: """
                        INSERT INTO cosignatures (tree_id, size, witness, witness_key, cosigned_at, signature) VALUES (?, ?, ?, ?, ?, ?)
                        ON CONFLICT DO NOTHING
                        """, arguments: [tree, head.size, cosignature.witness, Data(cosignature.witnessKey), Int64(cosignature.cosignedAt),
                                         Data(cosignature.signature)])
                }
                return .commit
            }
        }
    }

    /// The witnesses' cosignatures of `head` that verify (one head's rows only: a collector
    /// asks this on every upload, and ``cosignedHeads()`` checks every row of every device).
    public func cosignatures(of head: TreeHead) throws -> [Cosignature] {
        try read { db in
            guard try db.tableExists("cosignatures") else { return [] }
            return try Row.fetchAll(db, sql: """
                SELECT c.witness, c.witness_key, c.cosigned_at, c.signature
                FROM cosignatures c JOIN trees t ON t.id = c.tree_id
                WHERE t.public_key = ? AND c.size = ? ORDER BY c.witness
                """, arguments: [Data(head.publicKey), head.size]).compactMap { row -> Cosignature? in
                guard let witness = String.fromDatabaseValue(row[0]), let witnessKey = Data.fromDatabaseValue(row[1]),
                      let seconds = Int64.fromDatabaseValue(row[2]), seconds >= 0, let signature = Data.fromDatabaseValue(row[3]) else { return nil }
                let cosignature = Cosignature(witness: witness, witnessKey: Array(witnessKey), cosignedAt: UInt64(seconds), signature: Array(signature))
                return cosignature.isValid(for: head) ? cosignature : nil
            }
        }
    }
}

extension EventStore {
    /// The frontier the log keeps of the tree of `publicKey` (nil where it holds only
    /// part of the tree, or no such tree).
    public func treeFrontier(publicKey: [UInt8]) throws -> MerkleTree.Frontier? {
        try read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT size, frontier FROM trees WHERE public_key = ?", arguments: [Data(publicKey)]),
                  let size = Int64.fromDatabaseValue(row[0]), let packed = Data.fromDatabaseValue(row[1]) else { return nil }
            return MerkleTree.Frontier(size: size, packed: Array(packed))
        }
    }
}
