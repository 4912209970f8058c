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
        var streamHash: [UInt8]?
        var streamVersion: Int64
        var type: String
        var typeVersion: Int
        var leaf: Int64? = nil
    }

    static func parse(_ line: UnsafeRawBufferPointer) -> Fields? {
        var reader = Reader(bytes: line)
        return reader.line()
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        mutating func line() -> Fields? {
            guard literal("{\"id\":"), let id = uuid(),
                  let leaf = optionalLeaf(),
                  literal(",\"payload\":"), let payload = string(),
                  literal(",\"position\":"), let position = integer(),
                  literal(",\"recordedAt\":"), let recordedAt = integer(),
                  literal(",\"stream\":"), let stream = uuid(),
                  let streamHash = optionalStreamHash(),
                  literal(",\"streamVersion\":"), let streamVersion = integer(),
                  literal(",\"type\":"), let typeBytes = string(),
                  literal(",\"typeVersion\":"), let typeVersion = integer(),
                  literal("}"), index == bytes.count,
                  let type = String(validating: typeBytes, as: UTF8.self),
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
        private mutating func optionalStreamHash() -> (hash: [UInt8]?, Void)? {
            guard literal(",\"streamHash\":") else { return (nil, ()) }
            // As exports write it, 64 plain digits between quotes: read where they lie.
            if index + 66 <= bytes.count, bytes[index] == UInt8(ascii: "\""), bytes[index + 65] == UInt8(ascii: "\""),
               let hash = Hex.bytes(UnsafeRawBufferPointer(rebasing: bytes[(index + 1)..<(index + 65)]).assumingMemoryBound(to: UInt8.self)) {
                index += 66
                return (hash, ())
            }
            guard let text = string(), text.count == 64, let hash = Hex.bytes(text[...]) else { return nil }
            return (hash, ())
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
