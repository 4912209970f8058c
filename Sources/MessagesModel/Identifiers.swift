import Foundation

/// An identity carried as a UUID. Conforming types get their coding (a plain UUID
/// string, also as a dictionary key, so maps of them encode as sorted JSON objects)
/// and description from here.
public protocol UUIDIdentifier: Hashable, Codable, Sendable, CustomStringConvertible, CodingKeyRepresentable {
    var uuid: UUID { get }
    init(_ uuid: UUID)
}

extension UUIDIdentifier {
    public var description: String { uuid.uuidString }
    public init(from decoder: Decoder) throws { self.init(try decoder.singleValueContainer().decode(UUID.self)) }
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(uuid)
    }
    public var codingKey: any CodingKey { IDKey(stringValue: uuid.uuidString) }

    /// The id as two words, for ``hash(into:)`` of the types that carry one.
    func hashWords(into hasher: inout Hasher) {
        // UUID hashes its sixteen bytes through `Hasher.combine(bytes:)`, the slow path:
        // a fold looks messages, sessions and conversations up by id at nearly every event,
        // and that was a twentieth of a full replay. Equal ids give equal words.
        let (high, low) = uuid.words
        hasher.combine(high)
        hasher.combine(low)
    }
    public init?<T: CodingKey>(codingKey: T) {
        guard let uuid = UUID(uuidString: codingKey.stringValue) else { return nil }
        self.init(uuid)
    }
}

/// A participant as one device knows them. The same person has a different
/// identifier on every device (Messages keeps them private).
public struct ParticipantID: UUIDIdentifier, Comparable {
    public var uuid: UUID
    public init(_ uuid: UUID) { self.uuid = uuid }
    public func hash(into hasher: inout Hasher) { hashWords(into: &hasher) }
    public static func < (a: Self, b: Self) -> Bool { a.uuid.sortsBefore(b.uuid) }
}

/// An `MSSession`: it has no properties, only identity. Messages in the same session
/// replace each other in the transcript. The identity travels with the message.
public struct SessionID: UUIDIdentifier {
    public var uuid: UUID
    public init(_ uuid: UUID) { self.uuid = uuid }
    public func hash(into hasher: inout Hasher) { hashWords(into: &hasher) }
}

/// The identity of one message across devices (Messages' message GUID).
public struct MessageID: UUIDIdentifier {
    public var uuid: UUID
    public init(_ uuid: UUID) { self.uuid = uuid }
    public func hash(into hasher: inout Hasher) { hashWords(into: &hasher) }
}

/// A conversation. Its identity is shared by every device taking part.
public struct ConversationID: UUIDIdentifier {
    public var uuid: UUID
    public init(_ uuid: UUID) { self.uuid = uuid }
    public func hash(into hasher: inout Hasher) { hashWords(into: &hasher) }
}

/// A deterministic source of UUIDs (SplitMix64), so a seeded simulation produces the
/// same identifiers every run.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A version-4 UUID drawn from this generator.
    public mutating func uuid() -> UUID {
        let a = next(), b = next()
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            bytes[i] = UInt8(truncatingIfNeeded: a >> (8 * UInt64(i)))
            bytes[8 + i] = UInt8(truncatingIfNeeded: b >> (8 * UInt64(i)))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}

/// The coding key of an identifier used as a dictionary key, so such dictionaries
/// encode as JSON objects (sorted, canonical) rather than arrays in hash order.
struct IDKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension UUID {
    /// Whether this UUID comes before `other` in the order of their `uuidString`s, which is
    /// the order of their bytes: compared without making the strings, which Linux's
    /// Foundation formats through `vfprintf` (sorting 20,000 recordings by their strings
    /// took a quarter of a second).
    @inlinable
    public func sortsBefore(_ other: UUID) -> Bool {
        withUnsafeBytes(of: uuid) { a in withUnsafeBytes(of: other.uuid) { b in a.lexicographicallyPrecedes(b) } }
    }

    /// Parses the 36-character form `XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX` (either
    /// case), as `UUID(uuidString:)` does, without going through `sscanf`: captions
    /// and name tables are parsed on every replayed event, where that call showed
    /// up in profiles.
    @inlinable
    public init?(hyphenated text: some StringProtocol) {
        // Over the text's bytes where they lie (a native string's always do): iterating
        // the UTF-8 view took nearly 3,000 instructions an id, and a recording's names,
        // a caption's mentions and a transcript's names are parsed so at every fold.
        if let parsed = text.utf8.withContiguousStorageIfAvailable({ UUID(hyphenatedUTF8: $0) }) {
            guard let parsed else { return nil }
            self = parsed
        } else {
            self.init(hyphenatedUTF8: text.utf8)
        }
    }

    /// The sixteen bytes as two words: equal ids have equal words, and hashing two words
    /// is a fraction of hashing sixteen bytes (the tables a full replay looks ids up in).
    package var words: (UInt64, UInt64) {
        withUnsafeBytes(of: uuid) { raw in
            (raw.loadUnaligned(as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
    }

    /// Whether `text` is this id's ``hyphenatedString``, byte for byte, without making
    /// that string: a fold looks a device's owner up by it at most events, and the
    /// 36-byte key it made each time was a heap allocation.
    package func isSpelled(by text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard bytes.count == 36 else { return false }
            return withUnsafeBytes(of: uuid) { raw in
                let digits: StaticString = "0123456789ABCDEF"
                var at = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        guard bytes[at] == UInt8(ascii: "-") else { return false }
                        at += 1
                    }
                    guard bytes[at] == digits.utf8Start[Int(raw[index] >> 4)],
                          bytes[at + 1] == digits.utf8Start[Int(raw[index] & 0x0F)] else { return false }
                    at += 2
                }
                return true
            }
        }
    }

    /// `uuidString` (upper case, hyphenated), without going through `snprintf`, which
    /// Foundation's takes: name tables are keyed by it and looked up for events folded.
    public var hyphenatedString: String {
        String(unsafeUninitializedCapacity: 36) { writeHyphenated(into: $0) }
    }

    /// ``hyphenatedString``'s UTF-8 bytes, made without the string.
    package var hyphenatedUTF8: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 36) { out, count in count = writeHyphenated(into: out) }
    }

    private func writeHyphenated(into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        withUnsafeBytes(of: uuid) { raw in
            let digits: StaticString = "0123456789ABCDEF"
            var at = 0
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    out[at] = UInt8(ascii: "-")
                    at += 1
                }
                out[at] = digits.utf8Start[Int(raw[index] >> 4)]
                out[at + 1] = digits.utf8Start[Int(raw[index] & 0x0F)]
                at += 2
            }
            return at
        }
    }

    /// ``init(hyphenated:)`` over UTF-8 bytes, for readers of raw JSON. Inlinable so
    /// that callers get a copy specialized to their byte container: unspecialized,
    /// the generic iteration made full replays three times slower.
    @inlinable
    public init?(hyphenatedUTF8 bytes: some Sequence<UInt8>) {
        // Bytes in one piece (an array, a slice of one, a line read in place) are read by
        // offset and without a branch a digit: random digits made one a third mispredicted.
        if let parsed = bytes.withContiguousStorageIfAvailable({ UUID.hyphenated(in: $0) }) {
            guard let parsed else { return nil }
            self = parsed
            return
        }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var utf8 = bytes.makeIterator()
        func nibble(_ byte: UInt8?) -> UInt8? {
            switch byte {
            case let b? where b >= 48 && b <= 57: b - 48
            case let b? where b >= 65 && b <= 70: b - 55
            case let b? where b >= 97 && b <= 102: b - 87
            default: nil
            }
        }
        let parsed = withUnsafeMutableBytes(of: &value) { raw -> Bool in
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    guard utf8.next() == UInt8(ascii: "-") else { return false }
                }
                guard let high = nibble(utf8.next()), let low = nibble(utf8.next()) else { return false }
                raw[index] = high << 4 | low
            }
            return utf8.next() == nil
        }
        guard parsed else { return nil }
        self.init(uuid: value)
    }

    /// The id the 36 bytes `utf8` spell in the hyphenated form (either case), or nil.
    @usableFromInline
    static func hyphenated(in utf8: UnsafeBufferPointer<UInt8>) -> UUID? {
        let hyphen = UInt8(ascii: "-")
        guard utf8.count == 36, utf8[8] == hyphen, utf8[13] == hyphen, utf8[18] == hyphen, utf8[23] == hyphen else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var invalid: UInt8 = 0
        withUnsafeMutableBytes(of: &value) { raw in
            var at = 0
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 { at += 1 }
                let high = utf8[at], low = utf8[at + 1]
                // A letter alone has bit 6 set, and its low four bits count from 1 at 'a' or 'A'.
                let highDigit = high &- 48, highLetter = (high | 0x20) &- 97
                let lowDigit = low &- 48, lowLetter = (low | 0x20) &- 97
                invalid |= (highDigit < 10 ? 0 : 1) & (highLetter < 6 ? 0 : 1)
                invalid |= (lowDigit < 10 ? 0 : 1) & (lowLetter < 6 ? 0 : 1)
                raw[index] = ((high & 0x0F) &+ ((high >> 6) & 1) &* 9) << 4 | ((low & 0x0F) &+ ((low >> 6) & 1) &* 9)
                at += 2
            }
        }
        return invalid == 0 ? UUID(uuid: value) : nil
    }
}
