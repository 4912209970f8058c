import CSHA256
import Foundation

/// Many SHA-256 digests computed together: envelopes laid end to end in one buffer and
/// hashed side by side where the processor allows (Sources/CSHA256/sha256_many.c: about
/// four times the digests a second of one at a time on a core without SHA instructions).
///
/// Every digest a read checks is of a predecessor's *stored* hash and the event's
/// envelope, so a read's digests do not wait for one another (``ChainCheck``, `verify`).
/// Reused from batch to batch, it allocates only to grow.
package struct DigestBatch {
    private var bytes: [UInt8] = []
    /// Where each message ends; message `i` starts where `i - 1` ends (the first at 0).
    private var ends: [Int] = [0]
    private var digests: [UInt8] = []
    /// For each message, the digest it was added expecting; nil for none (or a stored hash
    /// of another length than 32, which matches no digest).
    private var expected: [Hash32?] = []

    package init() {}

    /// Messages added since the last ``removeAll()``.
    package var count: Int { ends.count - 1 }

    package mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        ends.append(0)
        expected.removeAll(keepingCapacity: true)
    }

    /// Adds a message of `bytes`; returns its index.
    @discardableResult
    package mutating func add(_ message: some ContiguousBytes) -> Int {
        message.withUnsafeBytes { bytes.append(contentsOf: $0) }
        return ended()
    }

    /// Adds a message of `first` followed by `second` (a hash and an envelope, say); returns its index.
    @discardableResult
    package mutating func add(_ first: some ContiguousBytes, _ second: some ContiguousBytes) -> Int {
        first.withUnsafeBytes { bytes.append(contentsOf: $0) }
        second.withUnsafeBytes { bytes.append(contentsOf: $0) }
        return ended()
    }

    /// Ends the message being added; returns its index.
    private mutating func ended() -> Int {
        ends.append(bytes.count)
        expected.append(nil)
        return count - 1
    }

    /// Adds `prefix` followed by an event's envelope, as ``ChainHash/hash(previous:envelope:)``
    /// hashes them. Returns the message's index.
    @discardableResult
    package mutating func add(prefix: some ContiguousBytes, position: Int64, id: UUID, stream: UUID, streamVersion: Int64,
                              type: String, typeVersion: Int, recordedAt: Timestamp, payload: [UInt8]) -> Int {
        prefix.withUnsafeBytes { bytes.append(contentsOf: $0) }
        ChainHash.header(position: position, id: id, stream: stream, streamVersion: streamVersion, type: type,
                         typeVersion: typeVersion, recordedAt: recordedAt, payloadCount: payload.count, into: &bytes)
        bytes.append(contentsOf: payload)
        return ended()
    }

    /// ``add(prefix:position:id:stream:streamVersion:type:typeVersion:recordedAt:payload:)``
    /// of a stored event's chain envelope after `previous`; ``matchesExpected(_:)`` tells
    /// whether its digest is `expected` (the event's stored hash).
    @discardableResult
    package mutating func addChainEnvelope(of e: StoredEvent, after previous: [UInt8], expecting expected: [UInt8]) -> Int {
        let index = add(prefix: previous, position: e.position, id: e.id, stream: e.stream, streamVersion: e.streamVersion,
                        type: e.type, typeVersion: e.typeVersion, recordedAt: e.recordedAt, payload: e.payload)
        self.expected[index] = Hash32(expected)
        return index
    }

    /// Computes every message's digest; read them with ``digest(_:)``.
    package mutating func compute(engine: Int32? = nil) {
        let count = self.count
        // Grown when needed, never shrunk: a batch is reused for every batch of a read.
        if digests.count < 32 * count { digests.append(contentsOf: repeatElement(0, count: 32 * count - digests.count)) }
        guard count > 0 else { return }
        bytes.withUnsafeBufferPointer { bytes in
            ends.withUnsafeBufferPointer { ends in
                digests.withUnsafeMutableBufferPointer { out in
                    if let engine {
                        _ = gamelog_sha256_many_with(engine, bytes.baseAddress, ends.baseAddress, count, out.baseAddress)
                    } else {
                        gamelog_sha256_many(bytes.baseAddress, ends.baseAddress, count, out.baseAddress)
                    }
                }
            }
        }
    }

    /// Message `index`'s digest, after ``compute(engine:)``.
    package func digest(_ index: Int) -> Hash32 {
        digests.withUnsafeBytes { Hash32(UnsafeRawBufferPointer(rebasing: $0[(32 * index)..<(32 * index + 32)]))! }
    }

    /// Whether message `index`'s digest is the one it was added expecting.
    package func matchesExpected(_ index: Int) -> Bool {
        expected[index].map { digest(index) == $0 } ?? false
    }

    /// The engines this processor can run (`GAMELOG_SHA256_*` of Sources/CSHA256), for tests and benchmarks.
    package static var availableEngines: [Int32] {
        [GAMELOG_SHA256_ONE_AT_A_TIME, GAMELOG_SHA256_AVX2].map(Int32.init).filter {
            gamelog_sha256_engine_available($0) != 0
        }
    }

    /// The engine used for two messages or more.
    package static var preferredEngine: Int32 { gamelog_sha256_preferred_engine() }
}
