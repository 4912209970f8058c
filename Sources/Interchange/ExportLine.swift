import EventStore
import Foundation
import MessagesModel

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
        /// differently (surrogate pairs, control characters, invalid UTF-8).
        private mutating func string() -> [UInt8]? {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            index += 1
            var out: [UInt8] = []
            out.reserveCapacity(64)
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return String(validating: out, as: UTF8.self) == nil ? nil : out
                case UInt8(ascii: "\\"):
                    guard index + 1 < bytes.count else { return nil }
                    let escaped = bytes[index + 1]
                    index += 2
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escaped)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "u"):
                        guard index + 4 <= bytes.count else { return nil }
                        var scalar: UInt32 = 0
                        for offset in 0..<4 {
                            guard let digit = hexDigit(bytes[index + offset]) else { return nil }
                            scalar = scalar << 4 | UInt32(digit)
                        }
                        index += 4
                        // Only single scalars below the surrogates; pairs go to the reference.
                        guard scalar < 0xD800, let unicode = Unicode.Scalar(scalar) else { return nil }
                        out.append(contentsOf: Array(String(Character(unicode)).utf8))
                    default:
                        return nil
                    }
                case 0..<0x20:
                    return nil
                default:
                    out.append(byte)
                    index += 1
                }
            }
            return nil
        }

        private func hexDigit(_ byte: UInt8) -> UInt8? {
            switch byte {
            case 48...57: byte - 48
            case 65...70: byte - 55
            case 97...102: byte - 87
            default: nil
            }
        }
    }
}
