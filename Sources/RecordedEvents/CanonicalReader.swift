import Foundation
import MessagesModel

/// A reader for the canonical JSON that ``RecordedEvent/payload()`` writes (sorted
/// keys, no whitespace, no escapes in keys): a cursor over the bytes that yields
/// typed values directly, with no tree and no `Codable` machinery in between.
///
/// It accepts only that canonical form. Anything else (whitespace, unsorted or
/// unknown keys, escapes, numbers with fractions or leading zeros, invalid UTF-8)
/// stops it with ``NotCanonical``, and the caller hands the bytes to `JSONDecoder`,
/// which accepts or refuses them with a precise message. So this reader can only
/// make decoding faster, never make it accept something the reference refuses.
struct CanonicalReader {
    /// The bytes are not in the canonical form this reader handles.
    struct NotCanonical: Error {}

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    /// True right after `{`, when the next key must not be preceded by a comma.
    private var atObjectStart = false
    /// The recording of a type version 2 payload: its string values are read as the
    /// upcaster (``CompactPayload/expand(_:with:)``) would write them, without writing
    /// the version 1 bytes first. Nil for version 1.
    let compactOf: StreamConstants?
    /// Values read before from the same bytes, if the caller keeps any.
    let memo: DecodingMemo?

    init(_ bytes: UnsafeBufferPointer<UInt8>, compactOf constants: StreamConstants? = nil, memo: DecodingMemo? = nil) {
        self.bytes = bytes
        compactOf = constants
        self.memo = memo
    }

    /// Reads a value with `read`, or hands the memo's when the input here begins with the
    /// bytes it was read from; a value read from at most ``DecodingMemo/largestValue`` bytes
    /// is kept for the next time.
    mutating func remembered<Value>(_ find: (DecodingMemo, UnsafeBufferPointer<UInt8>, StreamConstants?) -> (Value, Int)?,
                                    _ keep: (DecodingMemo, Value, UnsafeBufferPointer<UInt8>, StreamConstants?) -> Void,
                                    _ read: (inout CanonicalReader) throws(NotCanonical) -> Value) throws(NotCanonical) -> Value {
        guard let memo else { return try read(&self) }
        let rest = UnsafeBufferPointer(rebasing: bytes[index...])
        if let (value, count) = find(memo, rest, compactOf) {
            index += count
            atObjectStart = false
            return value
        }
        let start = index
        let value = try read(&self)
        if index - start <= DecodingMemo.largestValue {
            keep(memo, value, UnsafeBufferPointer(rebasing: bytes[start..<index]), compactOf)
        }
        return value
    }

    /// Whether two runs of bytes are the same: the one comparison the reader's word
    /// matching rests on (names of types, callbacks, enum cases).
    static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ other: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.count == other.count && (bytes.isEmpty || memcmp(bytes.baseAddress!, other.baseAddress!, bytes.count) == 0)
    }

    /// Whether `bytes` are `word`'s UTF-8 bytes.
    static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ word: String) -> Bool {
        word.utf8.withContiguousStorageIfAvailable { same(bytes, $0) } ?? bytes.elementsEqual(word.utf8)
    }

    /// Whether `bytes` are `word`'s UTF-8 bytes.
    static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
        same(bytes, UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount))
    }

    var isAtEnd: Bool { index == bytes.count }

    private func peek(_ offset: Int = 0) -> UInt8? {
        index + offset < bytes.count ? bytes[index + offset] : nil
    }

    mutating func expect(_ byte: UInt8) throws(NotCanonical) {
        guard index < bytes.count, bytes[index] == byte else { throw NotCanonical() }
        index += 1
    }

    // MARK: Objects

    mutating func beginObject() throws(NotCanonical) {
        try expect(UInt8(ascii: "{"))
        atObjectStart = true
    }

    mutating func endObject() throws(NotCanonical) {
        try expect(UInt8(ascii: "}"))
        // The enclosing object (if any) already has the member this object was.
        atObjectStart = false
    }

    /// Consumes `"name":` (with its leading comma unless first) if it comes next.
    /// Keys come sorted, so checking fields in sorted order reads every member;
    /// an unknown or out-of-order key is left unread and fails `endObject`.
    mutating func field(_ name: StaticString) -> Bool {
        let comma = atObjectStart ? 0 : 1
        let length = name.utf8CodeUnitCount
        guard index + comma + length + 3 <= bytes.count else { return false }
        if comma == 1 && bytes[index] != UInt8(ascii: ",") { return false }
        let start = index + comma
        guard bytes[start] == UInt8(ascii: "\""), bytes[start + length + 1] == UInt8(ascii: "\""),
              bytes[start + length + 2] == UInt8(ascii: ":") else { return false }
        let key = name.utf8Start
        for offset in 0..<length where bytes[start + 1 + offset] != key[offset] { return false }
        index = start + length + 3
        atObjectStart = false
        return true
    }

    /// A field that must be there.
    mutating func required(_ name: StaticString) throws(NotCanonical) {
        guard field(name) else { throw NotCanonical() }
    }

    /// `{}`.
    mutating func emptyObject() throws(NotCanonical) {
        try beginObject()
        try endObject()
    }

    /// The next member's key of an object whose keys are data (a map): reads
    /// `"key":` and returns the key, or nil at the closing `}` (consumed).
    mutating func nextMapKey() throws(NotCanonical) -> String? {
        if peek() == UInt8(ascii: "}") {
            try endObject()
            return nil
        }
        if !atObjectStart { try expect(UInt8(ascii: ",")) }
        // Keys are never references, also in version 2.
        let key = try string(asWritten: true)
        try expect(UInt8(ascii: ":"))
        atObjectStart = false
        return key
    }

    // MARK: Arrays

    /// Reads `[v, ...]`, calling `element` for each value.
    /// - Parameter count: room to make for the values up front.
    mutating func array<T>(reserving count: Int = 0,
                           _ element: (inout CanonicalReader) throws(NotCanonical) -> T) throws(NotCanonical) -> [T] {
        try expect(UInt8(ascii: "["))
        var out: [T] = []
        out.reserveCapacity(count)
        if peek() == UInt8(ascii: "]") {
            index += 1
        } else {
            while true {
                out.append(try element(&self))
                if peek() == UInt8(ascii: ",") { index += 1; continue }
                try expect(UInt8(ascii: "]"))
                break
            }
        }
        atObjectStart = false
        return out
    }

    /// How many strings the array of strings that comes next holds, counted without
    /// reading them (a guess when it is not one: the reading that follows decides).
    func countOfStrings() -> Int {
        guard peek() == UInt8(ascii: "[") else { return 0 }
        var count = 0, inString = false, at = index + 1
        while at < bytes.count {
            let byte = bytes[at]
            if byte == UInt8(ascii: "\"") {
                if !inString { count += 1 }
                inString.toggle()
            } else if !inString && byte == UInt8(ascii: "]") {
                break
            }
            at += 1
        }
        return count
    }

    /// `["…", …]`: an array of strings, counted first (an image's cells, a hundred for a
    /// battleship board, grew the array eight times), and a string spelled as the one
    /// before it (most cells are) handed again rather than made again.
    mutating func strings() throws(NotCanonical) -> [String] {
        var previous: (start: Int, count: Int, value: String)?
        return try array(reserving: countOfStrings()) { (r: inout CanonicalReader) throws(NotCanonical) -> String in
            let start = r.index
            // The same bytes as the last string (quotes and all) read as the same string,
            // whatever they say: `string()` reads nothing but them and the constants.
            if let previous, start + previous.count + 2 <= r.bytes.count,
               memcmp(r.bytes.baseAddress! + start, r.bytes.baseAddress! + previous.start, previous.count + 2) == 0 {
                r.index = start + previous.count + 2
                return previous.value
            }
            let value = try r.string()
            previous = (start, r.index - start - 2, value)
            return value
        }
    }

    // MARK: Scalars

    /// A string value; in a version 2 payload, a reference (`"$c"`) is read as the id it
    /// stands for and an escaped dollar (`"$$x"`) as one (`"$x"`).
    /// - Parameter asWritten: read the bytes as they are (keys).
    mutating func string(asWritten: Bool = false) throws(NotCanonical) -> String {
        try expect(UInt8(ascii: "\""))
        let start = index
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { break }
            // Escapes and raw control characters go to the reference decoder.
            if byte == UInt8(ascii: "\\") || byte < 0x20 { throw NotCanonical() }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        guard index < bytes.count else { throw NotCanonical() }
        var slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
        index += 1
        if let constants = compactOf, !asWritten, slice.first == UInt8(ascii: "$") {
            if slice.count > 1 && slice[1] == UInt8(ascii: "$") {
                slice = UnsafeBufferPointer(rebasing: slice.dropFirst())
            } else if let reference = constants.references.first(where: { slice.elementsEqual($0.name) }) {
                return String(decoding: reference.uuid, as: UTF8.self)
            } else {
                // A reference to nothing: the upcaster names it.
                throw NotCanonical()
            }
        }
        if ascii { return String(decoding: slice, as: UTF8.self) }
        guard let text = String(validating: slice, as: UTF8.self) else { throw NotCanonical() }
        return text
    }

    /// A string value that must be one of `words` (an enum's raw values), read as the
    /// value it names without making the string: its bytes compared with each word's.
    /// Words are never references (`$`), so version 2 reads them as version 1.
    mutating func word<T>(_ words: [(bytes: [UInt8], value: T)]) throws(NotCanonical) -> T {
        try expect(UInt8(ascii: "\""))
        let start = index
        while index < bytes.count && bytes[index] != UInt8(ascii: "\"") { index += 1 }
        guard index < bytes.count else { throw NotCanonical() }
        let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
        index += 1
        // Anything else (an escape, a reference, an unknown name) is the reference decoder's to refuse.
        guard let found = words.first(where: { word in word.bytes.withUnsafeBufferPointer { Self.same($0, slice) } }) else {
            throw NotCanonical()
        }
        return found.value
    }

    mutating func bool() throws(NotCanonical) -> Bool {
        if literal("true") { return true }
        if literal("false") { return false }
        throw NotCanonical()
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let length = word.utf8CodeUnitCount
        guard index + length <= bytes.count else { return false }
        for offset in 0..<length where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += length
        return true
    }

    /// A JSON integer: an optional minus, then `0` or digits not starting with 0.
    mutating func int() throws(NotCanonical) -> Int {
        var negative = false
        if peek() == UInt8(ascii: "-") { negative = true; index += 1 }
        guard let first = peek(), first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else { throw NotCanonical() }
        var value = 0
        var digits = 0
        while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { throw NotCanonical() }
            value = sum
            digits += 1
            index += 1
        }
        if first == UInt8(ascii: "0") && digits > 1 { throw NotCanonical() }
        if let next = peek(), next == UInt8(ascii: ".") || next == UInt8(ascii: "e") || next == UInt8(ascii: "E") {
            throw NotCanonical()
        }
        return negative ? -value : value
    }

    /// A UUID string, `XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX` in either case; in a
    /// version 2 payload also a reference to one of the recording's ids.
    mutating func uuid() throws(NotCanonical) -> UUID {
        if let constants = compactOf, index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\""),
           bytes[index + 1] == UInt8(ascii: "$") {
            var end = index + 1
            while end < bytes.count && bytes[end] != UInt8(ascii: "\"") {
                // A reference is a dollar, a letter and digits; anything else is left to the upcaster.
                guard end - index < 8 else { throw NotCanonical() }
                end += 1
            }
            guard end < bytes.count,
                  let which = constants.references.firstIndex(where: { bytes[(index + 1)..<end].elementsEqual($0.name) })
            else { throw NotCanonical() }
            index = end + 1
            return constants.referencedID(which)
        }
        guard index + 38 <= bytes.count, bytes[index] == UInt8(ascii: "\""), bytes[index + 37] == UInt8(ascii: "\""),
              let uuid = UUID(hyphenatedUTF8: bytes[(index + 1)..<(index + 37)]) else { throw NotCanonical() }
        index += 38
        return uuid
    }
}
