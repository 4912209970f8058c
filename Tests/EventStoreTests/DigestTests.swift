import Crypto
import EventLog
import Foundation
import Testing

/// The log's SHA-256 (Sources/CSHA256: BoringSSL without swift-crypto's wrapper) against
/// swift-crypto's, on every length around SHA-256's 64-byte blocks and its 56-byte padding
/// boundary, each input split into three ranges at random places.
@Suite struct DigestTests {
    @Test func everyDigestIsSwiftCryptosOnAnySplit() {
        var checked = 0
        var lengths = Array(0...200) + [1_000, 4_096, 70_001]
        lengths += (0..<20).map { _ in Int.random(in: 201...20_000) }
        for length in lengths {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255) }
            let expected = Array(SHA256.hash(data: bytes))
            for _ in 0..<4 {
                let first = Int.random(in: 0...length), second = Int.random(in: first...length)
                let ours = bytes.withUnsafeBytes { all in
                    Hash32.sha256(UnsafeRawBufferPointer(rebasing: all[..<first]), UnsafeRawBufferPointer(rebasing: all[first..<second]),
                                  UnsafeRawBufferPointer(rebasing: all[second...]))
                }
                #expect(ours.bytes == expected, "\(length) bytes split at \(first) and \(second)")
                checked += 1
            }
        }
        #expect(checked > 800)
    }

    @Test func treeHashesAreRFC9162sThroughSwiftCrypto() {
        var checked = 0
        for length in [0, 1, 31, 32, 33, 63, 64, 65, 500] {
            let left = (0..<length).map { _ in UInt8.random(in: 0...255) }
            let right = (0..<(length / 2)).map { _ in UInt8.random(in: 0...255) }
            #expect(MerkleTree.nodeHash(left, right) == Array(SHA256.hash(data: [1] + left + right)))
            #expect(MerkleTree.leafHash(left) == Array(SHA256.hash(data: [0] + left)))
            #expect(MerkleTree.leafHash(Data(left)) == Array(SHA256.hash(data: [0] + left)))
            #expect(ChainHash.sha256(left) == Array(SHA256.hash(data: left)))
            checked += 1
        }
        #expect(checked == 9)
    }
}
