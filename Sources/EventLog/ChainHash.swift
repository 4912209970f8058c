import CSHA256
import Foundation

/// The tamper-evidence chain: `hash(n) = SHA-256(hash(n-1) || envelope(n))`, with
/// `hash(0)` 32 zero bytes. The envelope covers every field but the storage form
/// (codec, dictionary), so re-compressing never breaks the chain. docs/FORMAT.md
/// gives the byte layout; keep the two in step.
public enum ChainHash {
    /// The predecessor hash of position 1.
    public static let genesis = [UInt8](repeating: 0, count: 32)

    /// The canonical, uncompressed envelope bytes of an event.
    public static func envelope(position: Int64, id: UUID, stream: UUID, streamVersion: Int64,
                                type: String, typeVersion: Int, recordedAt: Timestamp,
                                payload: [UInt8]) -> [UInt8] {
        var out = [UInt8]()
        envelope(position: position, id: id, stream: stream, streamVersion: streamVersion, type: type,
                 typeVersion: typeVersion, recordedAt: recordedAt, payload: payload, into: &out)
        return out
    }

    /// Writes an event's envelope bytes into `out`, replacing its contents and
    /// keeping its capacity, so a loop over many events allocates once.
    public static func envelope(position: Int64, id: UUID, stream: UUID, streamVersion: Int64,
                         type: String, typeVersion: Int, recordedAt: Timestamp,
                         payload: [UInt8], into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        out.reserveCapacity(8 + 16 + 16 + 8 + 2 + type.utf8.count + 4 + 8 + 4 + payload.count)
        header(position: position, id: id, stream: stream, streamVersion: streamVersion, type: type, typeVersion: typeVersion,
               recordedAt: recordedAt, payloadCount: payload.count, into: &out)
        out += payload
    }

    /// Appends to `out` the envelope's bytes before the payload.
    static func header(position: Int64, id: UUID, stream: UUID, streamVersion: Int64, type: String, typeVersion: Int,
                       recordedAt: Timestamp, payloadCount: Int, into out: inout [UInt8]) {
        append(UInt64(bitPattern: position), to: &out)
        appendUUID(id, to: &out)
        appendUUID(stream, to: &out)
        append(UInt64(bitPattern: streamVersion), to: &out)
        append(UInt16(type.utf8.count), to: &out)
        out += type.utf8
        append(UInt32(typeVersion), to: &out)
        append(UInt64(bitPattern: recordedAt.microsecondsSince1970), to: &out)
        append(UInt32(payloadCount), to: &out)
    }

    /// The chain hash of an event given its predecessor's.
    public static func hash(previous: [UInt8], envelope: [UInt8]) -> [UInt8] {
        digest(previous, envelope, from: 0).bytes
    }

    /// A stream chain's hash: `SHA-256(previous || envelope without its position)`.
    /// Positions change when logs are merged; a stream's chain does not, so a
    /// device's events keep their proof in any log.
    public static func streamHash(previous: [UInt8], envelope: [UInt8]) -> [UInt8] {
        digest(previous, envelope, from: 8).bytes
    }

    /// The stream hash of a stored event given its stream predecessor's. `scratch` holds
    /// the envelope's fields; pass the same one for every event of a scan.
    package static func streamHash(previous: [UInt8], event e: StoredEvent, scratch: inout SplitEnvelope) -> [UInt8] {
        scratch.set(e)
        return scratch.streamHash(previous: previous).bytes
    }

    /// Whether a stored event's hash is its chain hash given its predecessor's: what every
    /// read that checks the chain asks of each event, so no copy of the hash is made.
    package static func matches(previous: [UInt8], event e: StoredEvent, scratch: inout SplitEnvelope) -> Bool {
        scratch.set(e)
        return scratch.chainHash(previous: previous).withUnsafeBytes { $0.elementsEqual(e.hash) }
    }

    /// The one SHA-256 every hash of an envelope is: `prefix` (a predecessor's hash, or a
    /// leaf's 0x00), then `bytes` from `offset` (8 skips the position), then `tail`.
    static func digest(_ prefix: some ContiguousBytes, _ bytes: [UInt8], from offset: Int, _ tail: [UInt8] = []) -> Hash32 {
        prefix.withUnsafeBytes { prefix in
            bytes.withUnsafeBytes { bytes in
                tail.withUnsafeBytes { tail in
                    Hash32.sha256(prefix, UnsafeRawBufferPointer(rebasing: bytes[offset...]), tail)
                }
            }
        }
    }

    package static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { Hash32.sha256($0) }.bytes
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { out += $0 }
    }

    private static func appendUUID(_ id: UUID, to out: inout [UInt8]) {
        withUnsafeBytes(of: id.uuid) { out += $0 }
    }
}

/// An event's envelope as its fields before the payload and the payload itself: the
/// chain, stream and leaf hashes read the payload where it is, instead of from a copy in
/// one buffer. Reused from event to event.
package struct SplitEnvelope {
    package init() {}
    /// The envelope's bytes before the payload.
    private var header: [UInt8] = []
    private var payload: [UInt8] = []

    mutating func set(position: Int64, id: UUID, stream: UUID, streamVersion: Int64, type: String, typeVersion: Int,
                      recordedAt: Timestamp, payload: [UInt8]) {
        header.removeAll(keepingCapacity: true)
        ChainHash.header(position: position, id: id, stream: stream, streamVersion: streamVersion, type: type,
                         typeVersion: typeVersion, recordedAt: recordedAt, payloadCount: payload.count, into: &header)
        self.payload = payload
    }

    package mutating func set(_ e: StoredEvent) {
        set(position: e.position, id: e.id, stream: e.stream, streamVersion: e.streamVersion, type: e.type,
            typeVersion: e.typeVersion, recordedAt: e.recordedAt, payload: e.payload)
    }

    /// ``ChainHash/hash(previous:envelope:)``.
    func chainHash(previous: some ContiguousBytes) -> Hash32 { ChainHash.digest(previous, header, from: 0, payload) }

    /// ``ChainHash/streamHash(previous:envelope:)``.
    func streamHash(previous: some ContiguousBytes) -> Hash32 { ChainHash.digest(previous, header, from: 8, payload) }

    /// ``MerkleTree/leafHash(_:)`` of the envelope without its position: ``TreeLeaf``'s data.
    package func leafHash() -> Hash32 { ChainHash.digest(CollectionOfOne(UInt8(0)), header, from: 8, payload) }
}

/// A SHA-256 hash held inline, for a value kept and replaced once per event.
package struct Hash32: ContiguousBytes, Hashable, Sendable {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    package func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }

    package static func == (lhs: Hash32, rhs: Hash32) -> Bool {
        lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2 && lhs.words.3 == rhs.words.3
    }

    /// Nil unless `bytes` holds exactly 32.
    package init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count == 32 else { return nil }
        Swift.withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: bytes) }
    }

    package init?(_ bytes: [UInt8]) {
        guard let hash = bytes.withUnsafeBytes({ Hash32($0) }) else { return nil }
        self = hash
    }

    /// A leaf hash given as bytes to public API that holds it inline: a SHA-256, so 32
    /// bytes (anything else is a caller's error, not input to refuse).
    package init(leafHash bytes: [UInt8]) {
        guard let hash = Hash32(bytes) else { preconditionFailure("a leaf hash is 32 bytes (a SHA-256), not \(bytes.count)") }
        self = hash
    }

    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try Swift.withUnsafeBytes(of: words, body)
    }

    package var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// SHA-256 of up to three ranges one after the other, without an allocation
    /// (Sources/CSHA256 says why not swift-crypto's `SHA256` here).
    package static func sha256(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
                                _ third: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)) -> Hash32 {
        var hash = Hash32()
        Swift.withUnsafeMutableBytes(of: &hash.words) { out in
            gamelog_sha256(first.baseAddress, first.count, second.baseAddress, second.count, third.baseAddress, third.count,
                           out.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return hash
    }

    private init() {}
}

extension UUID {
    /// Whether this UUID comes before `other` in the order of their `uuidString`s (their
    /// bytes' order), without making the strings (`vfprintf` on Linux). MessagesModel,
    /// which this module does not see, has the same as `sortsBefore(_:)`.
    package func precedes(_ other: UUID) -> Bool {
        withUnsafeBytes(of: uuid) { a in withUnsafeBytes(of: other.uuid) { b in a.lexicographicallyPrecedes(b) } }
    }

    /// The 16 bytes in RFC 4122 order.
    package var bytes: [UInt8] { withUnsafeBytes(of: uuid) { Array($0) } }

    package init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        // Copied into the value itself: an array of them first was an allocation an id.
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let copied: Void? = bytes.withContiguousStorageIfAvailable { stored in
            withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(stored)) }
        }
        if copied == nil {
            let b = Array(bytes)
            value = (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
        }
        self.init(uuid: value)
    }
}

/// Every stream's chain, advanced event by event in each stream's order: what export,
/// import checks, `verify` and forgers in tests all recompute.
public struct StreamChains: Sendable {
    /// Each stream's hash after the last event given.
    public private(set) var heads: [UUID: [UInt8]] = [:]
    private var scratch = SplitEnvelope()

    public init() {}

    /// The stream hash after this event, which becomes the stream's head.
    @discardableResult
    public mutating func advance(id: UUID, stream: UUID, streamVersion: Int64, type: String, typeVersion: Int,
                                 recordedAt: Timestamp, payload: [UInt8]) -> [UInt8] {
        // The stream hash skips the position, so any position serves.
        scratch.set(position: 0, id: id, stream: stream, streamVersion: streamVersion, type: type,
                    typeVersion: typeVersion, recordedAt: recordedAt, payload: payload)
        let head = scratch.streamHash(previous: heads[stream] ?? ChainHash.genesis).bytes
        heads[stream] = head
        return head
    }

    /// ``advance(id:stream:streamVersion:type:typeVersion:recordedAt:payload:)`` for a stored event.
    @discardableResult
    public mutating func advance(_ e: StoredEvent) -> [UInt8] {
        advance(id: e.id, stream: e.stream, streamVersion: e.streamVersion, type: e.type, typeVersion: e.typeVersion,
                recordedAt: e.recordedAt, payload: e.payload)
    }
}
