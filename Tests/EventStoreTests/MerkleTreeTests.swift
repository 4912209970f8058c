import EventStore
import Foundation
import Testing

/// RFC 9162 hashing against the reference vectors of transparency-dev/merkle
/// (testonly/constants.go: the leaves, every root by size, the inclusion proof of
/// testdata/inclusion/1/happy-path.json).
@Suite struct MerkleTreeTests {
    static let leaves: [[UInt8]] = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657",
                                    "606162636465666768696a6b6c6d6e6f"].map(bytes)
    static let roots: [String] = [
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
        "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
        "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
        "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
        "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
    ]

    static func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! }
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test func everyRootOfTheReferenceTreeMatches() {
        var frontier = MerkleTree.Frontier()
        #expect(Self.hex(frontier.root) == Self.roots[0])
        for (size, leaf) in Self.leaves.enumerated() {
            frontier.append(MerkleTree.leafHash(leaf))
            #expect(Self.hex(frontier.root) == Self.roots[size + 1], "size \(size + 1)")
            #expect(Self.hex(MerkleTree.root(Self.leaves.prefix(size + 1).map(MerkleTree.leafHash))) == Self.roots[size + 1])
        }
    }

    @Test func theReferenceInclusionProofVerifiesAndOneFlippedBitDoesNot() {
        let hashes = Self.leaves.map(MerkleTree.leafHash)
        let proof = MerkleTree.inclusionProof(of: 0, in: hashes)
        // testdata/inclusion/1/happy-path.json, in hex.
        #expect(proof.map(Self.hex) == ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                                         "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                                         "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"])
        let root = Self.bytes(Self.roots[8])
        #expect(MerkleTree.verifyInclusion(index: 0, size: 8, leafHash: hashes[0], proof: proof, root: root))
        var flipped = proof
        flipped[1][0] ^= 1
        #expect(!MerkleTree.verifyInclusion(index: 0, size: 8, leafHash: hashes[0], proof: flipped, root: root))
        #expect(!MerkleTree.verifyInclusion(index: 1, size: 8, leafHash: hashes[0], proof: proof, root: root))
        #expect(!MerkleTree.verifyInclusion(index: 0, size: 9, leafHash: hashes[0], proof: proof, root: root))
    }

    @Test func everyLeafOfEveryTreeUpToFortyIsProvenIncluded() {
        let hashes = (0..<40).map { MerkleTree.leafHash([UInt8($0)]) }
        var checked = 0
        for size in 1...40 {
            let tree = Array(hashes.prefix(size)), root = MerkleTree.root(tree)
            for index in 0..<size {
                let proof = MerkleTree.inclusionProof(of: Int64(index), in: tree)
                #expect(MerkleTree.verifyInclusion(index: Int64(index), size: Int64(size), leafHash: tree[index], proof: proof, root: root))
                checked += 1
            }
        }
        #expect(checked == 820)
    }

    @Test func aStoredFrontierReadsBackAndAWrongOneIsRefused() {
        var frontier = MerkleTree.Frontier()
        for byte in 0..<13 { frontier.append(MerkleTree.leafHash([UInt8(byte)])) }
        #expect(frontier.hashes.count == 3) // 13 = 8 + 4 + 1
        #expect(MerkleTree.Frontier(size: 13, packed: frontier.packed) == frontier)
        #expect(MerkleTree.Frontier(size: 12, packed: frontier.packed) == nil)
        #expect(MerkleTree.ranges(of: frontier).map { [$0.lo, $0.hi] } == [[0, 8], [8, 12], [12, 13]])
    }

    /// A partial export: the held leaves and a multiproof give the whole tree's root;
    /// without the proof the first missing leaf is named; a held leaf changed is never
    /// hidden behind a proof node.
    @Test func aMultiproofStandsInForTheLeavesNotHeld() {
        let hashes = (0..<100).map { MerkleTree.leafHash([UInt8($0)]) }
        let root = MerkleTree.root(hashes)
        let held = Set([3, 4, 5, 40, 41, 77].map(Int64.init))
        let proof = MerkleTree.multiproof(size: 100, held: { lo, hi in held.contains { $0 >= lo && $0 < hi } },
                                          subtreeRoot: { lo, hi in MerkleTree.root(Array(hashes[Int(lo)..<Int(hi)])) })
        #expect(proof.count > 5 && proof.count < 30)
        let nodes = Dictionary(uniqueKeysWithValues: proof.map { ($0.lo..<$0.hi, $0.hash) })
        func rebuild(_ leaf: (Int64) -> [UInt8]?, _ nodes: [Range<Int64>: [UInt8]]) -> ([UInt8]?, Int64?) {
            var missing: Int64?
            let made = MerkleTree.root(size: 100, known: { _, _ in nil }, holds: { lo, hi in held.contains { $0 >= lo && $0 < hi } },
                                       leaf: leaf, proof: { nodes[$0..<$1] }, missing: &missing)
            return (made, missing)
        }
        #expect(rebuild({ held.contains($0) ? hashes[Int($0)] : nil }, nodes).0 == root)
        #expect(rebuild({ held.contains($0) ? hashes[Int($0)] : nil }, [:]) == (nil, 0))
        let changed = rebuild({ held.contains($0) ? ($0 == 40 ? MerkleTree.leafHash([9, 9]) : hashes[Int($0)]) : nil }, nodes).0
        #expect(changed != nil && changed != root)
    }

    // Issue 38: consistency proofs as RFC 9162 section 2.1.4 gives them, held to
    // transparency-dev/merkle's vectors (Tests/Fixtures/rfc9162-consistency).
    struct Vector: Decodable {
        var size1: Int64, size2: Int64, root1: String, root2: String, proof: [String]?, desc: String, wantErr: Bool
    }

    /// The RFC 6962 test leaves the vectors are made over.
    static let rfcLeaves: [[UInt8]] = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"]
        .map { hex in stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! } }

    @Test func consistencyProofsMatchTheRFCVectors() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "Fixtures/rfc9162-consistency")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }.sorted()
        #expect(files.count >= 90)
        let hashes = Self.rfcLeaves.map { MerkleTree.leafHash($0) }
        var happy = 0
        for file in files {
            let vector = try JSONDecoder().decode(Vector.self, from: Data(contentsOf: folder.appending(path: file)))
            let proof = (vector.proof ?? []).compactMap { Data(base64Encoded: $0).map(Array.init) }
            let old = Array(Data(base64Encoded: vector.root1) ?? Data()), new = Array(Data(base64Encoded: vector.root2) ?? Data())
            let verified = proof.count == (vector.proof ?? []).count
                && MerkleTree.verifyConsistency(from: vector.size1, to: vector.size2, oldRoot: old, newRoot: new, proof: proof)
            #expect(verified == !vector.wantErr, "\(file): \(vector.desc)")
            guard file.contains("happy-path") else { continue }
            // Made from the leaves, the proof is the vector's, hash for hash.
            let made = MerkleTree.consistencyProof(from: vector.size1, to: vector.size2) { lo, hi in MerkleTree.root(Array(hashes[Int(lo)..<Int(hi)])) }
            #expect(made == proof, "\(file)")
            #expect(MerkleTree.root(Array(hashes.prefix(Int(vector.size1)))) == old && MerkleTree.root(Array(hashes.prefix(Int(vector.size2)))) == new)
            happy += 1
        }
        #expect(happy == 5)
    }

    @Test func consistencyProofsOfEverySizePairVerifyAndAChangedOneDoesNot() throws {
        let hashes = (0..<70).map { MerkleTree.leafHash([UInt8($0)]) }
        var checked = 0
        for to in 1...70 {
            for from in 1...to {
                let proof = MerkleTree.consistencyProof(from: Int64(from), to: Int64(to)) { lo, hi in MerkleTree.root(Array(hashes[Int(lo)..<Int(hi)])) }
                let old = MerkleTree.root(Array(hashes.prefix(from))), new = MerkleTree.root(Array(hashes.prefix(to)))
                #expect(MerkleTree.verifyConsistency(from: Int64(from), to: Int64(to), oldRoot: old, newRoot: new, proof: proof))
                if var changed = proof.first {
                    changed[0] ^= 1
                    #expect(!MerkleTree.verifyConsistency(from: Int64(from), to: Int64(to), oldRoot: old, newRoot: new, proof: [changed] + proof.dropFirst()))
                }
                checked += 1
            }
        }
        #expect(checked == 70 * 71 / 2)
    }
}
