import EventStore
import Foundation
import MessagesModel
import RecordedEvents

/// A fast reader for the lines `gamelog export` writes: one JSON object with sorted
/// keys, no whitespace, the payload as an escaped string.
///
/// It accepts exactly that shape and returns nil for anything else, so callers fall
/// back to `JSONDecoder`, which stays the reference: the two must agree on every
/// line the fast reader accepts (InterchangeTests holds them to it). Decoding a
/// million lines with `JSONDecoder` alone took most of an import's time.
enum ExportLine {
    struct Fields: Equatable {
        var id: UUID
        var payload: [UInt8]
        var position: Int64
        var recordedAt: Int64
        var stream: UUID
        var streamHash: Hash32?
        var streamVersion: Int64
        var type: String
        var typeVersion: Int
        var leaf: Int64? = nil
    }

    /// - Parameter names: type names read before (a check's lines repeat a few dozen).
    static func parse(_ line: UnsafeRawBufferPointer, names: TypeNames? = nil) -> Fields? {
        var reader = Reader(bytes: line, names: names)
        return reader.line()
    }

    /// Type names by their bytes, a few dozen at most: nearly every name is longer than
    /// the 15 bytes a String holds without an allocation, and a log repeats a few of them
    /// on every line. A name that lands on another's slot replaces it, so hostile lines
    /// cost a slot, never a search.
    final class TypeNames {
        private var slots = [String?](repeating: nil, count: 64)

        /// The name these plain ASCII bytes spell.
        func name(_ bytes: UnsafeRawBufferPointer) -> String {
            guard !bytes.isEmpty else { return "" }
            var hash: UInt32 = 2_166_136_261
            for byte in bytes { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
            let slot = Int(hash & 63)
            if let known = slots[slot], known.utf8.count == bytes.count,
               known.utf8.withContiguousStorageIfAvailable({ memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }) == true {
                return known
            }
            let made = String(decoding: bytes, as: UTF8.self)
            slots[slot] = made
            return made
        }
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var index = 0
        var names: TypeNames?

        init(bytes: UnsafeRawBufferPointer, names: TypeNames?) {
            self.bytes = bytes
            self.names = names
        }

        mutating func line() -> Fields? {
            guard literal("{\"id\":"), let id = uuid(),
                  let leaf = optionalLeaf(),
                  literal(",\"payload\":"), let payload = string(),
                  literal(",\"position\":"), let position = integer(),
                  literal(",\"recordedAt\":"), let recordedAt = integer(),
                  literal(",\"stream\":"), let stream = uuid(),
                  let streamHash = optionalStreamHash(),
                  literal(",\"streamVersion\":"), let streamVersion = integer(),
                  literal(",\"type\":"), let type = typeName(),
                  literal(",\"typeVersion\":"), let typeVersion = integer(),
                  literal("}"), index == bytes.count,
                  let version = Int(exactly: typeVersion) else { return nil }
            return Fields(id: id, payload: payload, position: position, recordedAt: recordedAt, stream: stream,
                          streamHash: streamHash.hash, streamVersion: streamVersion, type: type, typeVersion: version,
                          leaf: leaf.leaf)
        }

        /// `,"leaf":N` if present (unsigned recordings and older exports have none); nil if malformed.
        private mutating func optionalLeaf() -> (leaf: Int64?, Void)? {
            guard literal(",\"leaf\":") else { return (nil, ()) }
            guard let leaf = integer(), leaf >= 0 else { return nil }
            return (leaf, ())
        }

        /// `,"streamHash":"<64 hex>"` if present (older exports have none); nil if malformed.
        private mutating func optionalStreamHash() -> (hash: Hash32?, Void)? {
            guard literal(",\"streamHash\":") else { return (nil, ()) }
            // As exports write it, 64 plain digits between quotes: read where they lie.
            if index + 66 <= bytes.count, bytes[index] == UInt8(ascii: "\""), bytes[index + 65] == UInt8(ascii: "\""),
               let hash = Hex.hash32(UnsafeRawBufferPointer(rebasing: bytes[(index + 1)..<(index + 65)]).assumingMemoryBound(to: UInt8.self)) {
                index += 66
                return (hash, ())
            }
            guard let text = string(), text.count == 64,
                  let hash = text.withUnsafeBufferPointer({ Hex.hash32($0) }) else { return nil }
            return (hash, ())
        }

        /// Where the string at `index` lies when it is plain printable ASCII between quotes
        /// (no escape: read as it is written), and `index` past it; nil, `index` unmoved,
        /// for any other string.
        private mutating func plainASCII() -> UnsafeRawBufferPointer? {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            var end = index + 1
            while end < bytes.count {
                let byte = bytes[end]
                if byte == UInt8(ascii: "\"") {
                    defer { index = end + 1 }
                    return UnsafeRawBufferPointer(rebasing: bytes[(index + 1)..<end])
                }
                guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
                end += 1
            }
            return nil
        }

        /// The event's type: read in place and looked up among the names met before where
        /// it is plain ASCII, as nearly every type is.
        private mutating func typeName() -> String? {
            if let names, let plain = plainASCII() { return names.name(plain) }
            guard let typeBytes = string() else { return nil }
            return String(validating: typeBytes, as: UTF8.self)
        }

        private mutating func literal(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            let start = text.utf8Start
            for offset in 0..<count where bytes[index + offset] != start[offset] { return false }
            index += count
            return true
        }

        /// A JSON integer without sign games: `-?[1-9][0-9]*|0`, within Int64.
        private mutating func integer() -> Int64? {
            var negative = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { negative = true; index += 1 }
            let start = index
            var value: Int64 = 0
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                let (times, overflowA) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflowB) = times.addingReportingOverflow(Int64(bytes[index] - 48))
                guard !overflowA, !overflowB else { return nil }
                value = sum
                index += 1
            }
            let digits = index - start
            guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
            return negative ? -value : value
        }

        /// A quoted UUID, hyphenated, in either case (as `JSONDecoder` reads them).
        private mutating func uuid() -> UUID? {
            // As exports write it, plain between quotes: read where it lies (two of a
            // line's allocations before).
            let before = index
            if let plain = plainASCII() {
                if let id = UUID(hyphenatedUTF8: plain.assumingMemoryBound(to: UInt8.self)) { return id }
                index = before
            }
            guard let text = string() else { return nil }
            return UUID(hyphenatedUTF8: text)
        }

        /// A JSON string's bytes, unescaped. Nil for anything `JSONDecoder` might read
        /// differently (lone surrogates, control characters, invalid UTF-8).
        private mutating func string() -> [UInt8]? {
            guard let out = try? JSONStringReading.read(bytes, at: &index, loneSurrogates: .fail) else { return nil }
            // ASCII (nearly every string of a log) is UTF-8 without making a String to say so.
            guard out.allSatisfy({ $0 < 0x80 }) || String(validating: out, as: UTF8.self) != nil else { return nil }
            return out
        }
    }
}
