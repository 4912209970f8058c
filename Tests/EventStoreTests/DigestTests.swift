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

    /// Every engine this processor runs (Sources/CSHA256/sha256_many.c), and the one chosen,
    /// against swift-crypto one message at a time: batches of 1 to 40 messages of lengths
    /// around the block and padding boundaries and past them, a lane taking a new message
    /// while the others are mid-way.
    @Test func manyDigestsAtOnceAreSwiftCryptosOnEveryEngine() {
        let engines = DigestBatch.availableEngines
        #if arch(x86_64)
        // The machines gamelog is built for have AVX2; the batch would otherwise go untested.
        #expect(engines.count >= 2, "engines: \(engines)")
        #endif
        #expect(engines.contains(DigestBatch.preferredEngine))
        var checked = 0
        var batch = DigestBatch()
        for round in 0..<300 {
            let count = round < 40 ? round + 1 : Int.random(in: 1...40)
            let messages: [[UInt8]] = (0..<count).map { index in
                let length = round < 40 ? (round * 7 + index * 13) % 200
                    : Bool.random() ? Int.random(in: 0...130) : Int.random(in: 131...3_000)
                return (0..<length).map { _ in UInt8.random(in: 0...255) }
            }
            let expected = messages.map { Array(SHA256.hash(data: $0)) }
            for engine in [nil] + engines.map(Optional.some) {
                batch.removeAll()
                for message in messages { batch.add(message) }
                #expect(batch.count == count)
                batch.compute(engine: engine)
                for index in messages.indices {
                    #expect(batch.digest(index).bytes == expected[index], "engine \(String(describing: engine)), message \(index) of \(count)")
                    checked += 1
                }
            }
        }
        #expect(checked > 300 * 20)
    }

    /// An envelope added to a batch hashes as the chain hash does one at a time.
    @Test func aBatchsEnvelopesAreTheChains() {
        var batch = DigestBatch()
        var expected: [[UInt8]] = []
        for index in 0..<50 {
            let previous = (0..<32).map { _ in UInt8.random(in: 0...255) }
            let payload = (0..<Int.random(in: 0...900)).map { _ in UInt8.random(in: 0...255) }
            let (id, stream, type) = (UUID(), UUID(), index % 2 == 0 ? "transcript.sent" : "é.✓")
            let at = Timestamp(microsecondsSince1970: Int64.random(in: 0...(1 << 52)))
            let envelope = ChainHash.envelope(position: Int64(index + 1), id: id, stream: stream, streamVersion: Int64(index),
                                              type: type, typeVersion: 2, recordedAt: at, payload: payload)
            batch.add(prefix: previous, position: Int64(index + 1), id: id, stream: stream, streamVersion: Int64(index),
                      type: type, typeVersion: 2, recordedAt: at, payload: payload)
            expected.append(ChainHash.hash(previous: previous, envelope: envelope))
        }
        batch.compute()
        #expect(batch.count == 50)
        for (index, hash) in expected.enumerated() { #expect(batch.digest(index).bytes == hash, "message \(index)") }
    }
}
