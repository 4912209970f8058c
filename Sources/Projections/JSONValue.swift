import Foundation
import RecordedEvents

/// A JSON value as a Swift value: what gamelog's outward JSON (``JSONStyle``) and the
/// diffs of states are made of, so nothing passes through `Any`.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    /// A number written without a fraction or exponent that fits in 64 bits.
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses JSON text (a scalar at the top level is accepted).
    /// - Throws: ``JSONValue/ParseError`` naming the byte offset where the text stops being JSON.
    public init(parsing data: some Collection<UInt8>) throws(ParseError) {
        var parser = Parser(bytes: Array(data))
        parser.skipSpace()
        self = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.index == parser.bytes.count else { throw ParseError(offset: parser.index, reason: "text after the value") }
    }

    /// An `Encodable` value as JSON (keys as its `CodingKeys` name them): the value
    /// `JSONEncoder`'s text reads as, made directly (tests hold the two equal).
    public init(encoding value: some Encodable) throws {
        self = try JSONValueEncoder.encode(value)
    }

    /// The same value through `JSONEncoder`'s text and this reader: the reference the
    /// direct encoder is tested against.
    init(encodingThroughText value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        self = try JSONValue(parsing: try encoder.encode(value))
    }

    /// A finite number as the reader reads it: a whole one that fits in 64 bits is an
    /// integer (`1.0` and `1e2` read as 1 and 100), so values written and read back, or
    /// encoded directly, are the same value.
    init(number: Double) {
        if number == number.rounded(), let integer = Int64(exactly: number) { self = .integer(integer) } else { self = .double(number) }
    }

    /// Why a text is not JSON.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public var offset: Int
        public var reason: String
        public var description: String { "not JSON at byte \(offset): \(reason)" }
    }

    /// Whether the value holds other values (an object or an array).
    public var isContainer: Bool {
        switch self {
        case .array, .object: return true
        default: return false
        }
    }

    /// Deeper nesting than this is refused: what is read may be hostile.
    static let maximumDepth = 512

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
        }

        func fail(_ reason: String) -> ParseError { ParseError(offset: index, reason: reason) }

        mutating func expect(_ literal: String, _ value: JSONValue) throws(ParseError) -> JSONValue {
            let utf8 = Array(literal.utf8)
            guard bytes.count - index >= utf8.count, Array(bytes[index..<index + utf8.count]) == utf8 else {
                throw fail("expected \(literal)")
            }
            index += utf8.count
            return value
        }

        mutating func value(depth: Int) throws(ParseError) -> JSONValue {
            guard depth < JSONValue.maximumDepth else { throw fail("nested deeper than \(JSONValue.maximumDepth) levels") }
            guard index < bytes.count else { throw fail("the text ends where a value should be") }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var out: [String: JSONValue] = [:]
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(out) }
                while true {
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a key") }
                    let key = try string()
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                    index += 1
                    skipSpace()
                    out[key] = try value(depth: depth + 1)
                    skipSpace()
                    guard index < bytes.count else { throw fail("an object is not closed") }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    guard bytes[index] == UInt8(ascii: "}") else { throw fail("expected ',' or '}'") }
                    index += 1
                    return .object(out)
                }
            case UInt8(ascii: "["):
                index += 1
                var out: [JSONValue] = []
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(out) }
                while true {
                    skipSpace()
                    out.append(try value(depth: depth + 1))
                    skipSpace()
                    guard index < bytes.count else { throw fail("an array is not closed") }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    guard bytes[index] == UInt8(ascii: "]") else { throw fail("expected ',' or ']'") }
                    index += 1
                    return .array(out)
                }
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"): return try expect("true", .bool(true))
            case UInt8(ascii: "f"): return try expect("false", .bool(false))
            case UInt8(ascii: "n"): return try expect("null", .null)
            default:
                return try number()
            }
        }

        /// RFC 8259's number grammar, `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`, exactly:
        /// `1.`, `01`, `+1` and `.5` are refused, because text that another reader would refuse
        /// must not read as a value here. A number with a fraction or exponent whose value is a
        /// whole number that fits in 64 bits reads as an integer (`1.0` and `1e2` are the integers
        /// 1 and 100), so a value written by ``JSONStyle`` reads back as itself.
        mutating func number() throws(ParseError) -> JSONValue {
            let start = index
            func isDigit(_ at: Int) -> Bool { at < bytes.count && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[at]) }
            func digits() throws(ParseError) {
                guard isDigit(index) else { throw ParseError(offset: index, reason: "a number needs a digit here") }
                while isDigit(index) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard isDigit(index) else { throw fail("expected a value") }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
                if isDigit(index) { throw ParseError(offset: start, reason: "a number may not start with 0") }
            } else {
                try digits()
            }
            var isInteger = true
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                isInteger = false
                try digits()
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                isInteger = false
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                try digits()
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if isInteger, let integer = Int64(text) { return .integer(integer) }
            guard let double = Double(text), double.isFinite else { throw ParseError(offset: start, reason: "'\(text)' is not a number") }
            return JSONValue(number: double)
        }

        mutating func string() throws(ParseError) -> String {
            do {
                return String(decoding: try JSONStringReading.read(bytes, at: &index, loneSurrogates: .replace), as: UTF8.self)
            } catch {
                throw ParseError(offset: error.offset, reason: error.reason)
            }
        }
    }
}
