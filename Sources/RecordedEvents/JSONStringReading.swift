/// Reading one JSON string (RFC 8259, section 7) from bytes: the one unescaper behind
/// gamelog's byte-level JSON readers (the export line reader's fast path and
/// `JSONValue`'s parser), so that both read every escape the same way.
public enum JSONStringReading {
    /// What to do with a `\uD8xx` escape not followed by its low half (or a low half
    /// alone): JSON allows it, UTF-8 cannot hold it.
    public enum LoneSurrogates: Sendable {
        /// Give up: the reader fails, e.g. so that a caller can hand the text to
        /// `JSONDecoder`, which rejects it.
        case fail
        /// Write U+FFFD in its place.
        case replace
    }

    /// Why a string could not be read, and at which byte offset.
    public struct Failure: Error, Hashable, Sendable {
        public var offset: Int
        public var reason: String

        @usableFromInline
        init(offset: Int, reason: String) {
            self.offset = offset
            self.reason = reason
        }
    }

    /// Reads the string whose opening quote is at `index` and returns its bytes,
    /// unescaped; `index` is then just past the closing quote. The bytes are not
    /// checked for valid UTF-8 (callers decide whether to repair or refuse).
    @inlinable
    public static func read<Bytes: RandomAccessCollection<UInt8>>(
        _ bytes: Bytes, at index: inout Int, loneSurrogates: LoneSurrogates
    ) throws(Failure) -> [UInt8] where Bytes.Index == Int {
        guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "\"") else {
            throw Failure(offset: index, reason: "a string must start with a quote")
        }
        // Bytes in memory (an export line, a payload) go through a pointer loop first: a
        // payload inside an export line is short runs between escaped quotes, and the
        // loop below spent more on each run's bookkeeping than on its bytes.
        let start = index
        if let fast = bytes.withContiguousStorageIfAvailable({ readPlain($0, from: start - bytes.startIndex) }), let (out, end) = fast {
            index = bytes.startIndex + end
            return out
        }
        index += 1
        var out: [UInt8] = []
        while index < bytes.endIndex {
            // A run of bytes that stand for themselves, found first and copied at once
            // rather than appended one by one (a payload inside an export line is such
            // runs between escaped quotes; most other strings are one run).
            let run = index
            while index < bytes.endIndex {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
                index += 1
            }
            if index > run {
                if out.isEmpty, index < bytes.endIndex, bytes[index] == UInt8(ascii: "\"") {
                    // No escape at all: the string is this run.
                    index += 1
                    return Array(bytes[run..<(index - 1)])
                }
                if out.capacity == 0 { out.reserveCapacity(2 * (index - run) + 16) }
                out.append(contentsOf: bytes[run..<index])
                guard index < bytes.endIndex else { break }
            }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return out
            case UInt8(ascii: "\\"):
                guard index < bytes.endIndex else { throw Failure(offset: index, reason: "a string ends in an escape") }
                let escaped = bytes[index]
                index += 1
                if let unescaped = twoCharacterEscape(escaped) {
                    out.append(unescaped)
                    continue
                }
                switch escaped {
                case UInt8(ascii: "u"):
                    var scalar = try hex4(bytes, at: &index)
                    if (0xD800...0xDFFF).contains(scalar) {
                        if scalar <= 0xDBFF, bytes.endIndex - index >= 6,
                           bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                            var after = index + 2
                            let low = try hex4(bytes, at: &after)
                            if (0xDC00...0xDFFF).contains(low) {
                                index = after
                                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                            }
                        }
                        if (0xD800...0xDFFF).contains(scalar) {
                            guard loneSurrogates == .replace else {
                                throw Failure(offset: index, reason: "a lone UTF-16 surrogate escape")
                            }
                            scalar = 0xFFFD
                        }
                    }
                    appendUTF8(Unicode.Scalar(scalar) ?? "\u{FFFD}", to: &out)
                default:
                    throw Failure(offset: index - 1, reason: "unknown escape")
                }
            case 0..<0x20:
                throw Failure(offset: index - 1, reason: "a control character inside a string")
            default:
                out.append(byte)
            }
        }
        throw Failure(offset: index, reason: "a string is not closed")
    }

    /// The string whose opening quote is at offset `quote` of `bytes`, unescaped, and the
    /// offset just past its closing quote; nil for anything but plain bytes and the
    /// two-character escapes (a `\\u` escape, a control character, a string not closed,
    /// one longer than 16 KiB), which ``read(_:at:loneSurrogates:)`` then reads (or
    /// refuses) as it always has.
    @usableFromInline
    static func readPlain(_ bytes: UnsafeBufferPointer<UInt8>, from quote: Int) -> ([UInt8], Int)? {
        let end = bytes.count
        let start = quote + 1
        // One pass into room on the stack, then one copy of what it holds: sized to what
        // follows, a string would take the rest of a large document's size each time.
        let room = min(end - start, 1 << 14)
        guard room > 0 else { return nil }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: room) { out -> ([UInt8], Int)? in
            var offset = start, written = 0
            while offset < end {
                let byte = bytes[offset]
                if byte == UInt8(ascii: "\"") {
                    return (Array(UnsafeBufferPointer(rebasing: out[0..<written])), offset + 1)
                }
                guard written < room else { return nil }
                if byte == UInt8(ascii: "\\") {
                    guard offset + 1 < end else { return nil }
                    // `\u` (four hex digits, surrogates) and unknown escapes: the general reader's.
                    guard let unescaped = twoCharacterEscape(bytes[offset + 1]) else { return nil }
                    out[written] = unescaped
                    offset += 2
                } else {
                    guard byte >= 0x20 else { return nil }
                    out[written] = byte
                    offset += 1
                }
                written += 1
            }
            return nil
        }
    }

    /// The byte a two-character escape (`\\"`, `\\\\`, `\\/`, `\\b`, `\\f`, `\\n`, `\\r`, `\\t`)
    /// stands for, given the character after the backslash; nil for any other.
    @inlinable
    static func twoCharacterEscape(_ escaped: UInt8) -> UInt8? {
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return escaped
        case UInt8(ascii: "b"): return 0x08
        case UInt8(ascii: "f"): return 0x0C
        case UInt8(ascii: "n"): return 0x0A
        case UInt8(ascii: "r"): return 0x0D
        case UInt8(ascii: "t"): return 0x09
        default: return nil
        }
    }

    @inlinable
    static func hex4<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, at index: inout Int) throws(Failure) -> UInt32
    where Bytes.Index == Int {
        guard bytes.endIndex - index >= 4 else { throw Failure(offset: index, reason: "a \\u escape needs four hex digits") }
        var value: UInt32 = 0
        for offset in 0..<4 {
            let byte = bytes[index + offset]
            let digit: UInt8
            switch byte {
            case 48...57: digit = byte - 48
            case 65...70: digit = byte - 55
            case 97...102: digit = byte - 87
            default: throw Failure(offset: index + offset, reason: "a \\u escape needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
        }
        index += 4
        return value
    }

    @inlinable
    static func appendUTF8(_ scalar: Unicode.Scalar, to out: inout [UInt8]) {
        let value = scalar.value
        switch value {
        case 0..<0x80:
            out.append(UInt8(value))
        case 0x80..<0x800:
            out.append(0xC0 | UInt8(value >> 6))
            out.append(0x80 | UInt8(value & 0x3F))
        case 0x800..<0x10000:
            out.append(0xE0 | UInt8(value >> 12))
            out.append(0x80 | UInt8((value >> 6) & 0x3F))
            out.append(0x80 | UInt8(value & 0x3F))
        default:
            out.append(0xF0 | UInt8(value >> 18))
            out.append(0x80 | UInt8((value >> 12) & 0x3F))
            out.append(0x80 | UInt8((value >> 6) & 0x3F))
            out.append(0x80 | UInt8(value & 0x3F))
        }
    }
}
