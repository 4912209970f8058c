import Foundation

/// Hex for byte fields: lower case when written (exported lines, keys files, `--json`),
/// either case when read.
public enum Hex {
    /// Lower-case hex of `bytes`.
    public static func string(_ bytes: [UInt8]) -> String {
        // Not String(format:) per byte: sorting a collector's device trees by key spent most
        // of an upload's time formatting hex.
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        return String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            for (index, byte) in bytes.enumerated() {
                buffer[2 * index] = digits[Int(byte >> 4)]
                buffer[2 * index + 1] = digits[Int(byte & 0x0F)]
            }
            return bytes.count * 2
        }
    }

    /// The bytes `text` spells, if it is exactly `count` bytes of hex.
    public static func bytes(_ text: String, count: Int) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count == count * 2 else { return nil }
        return bytes(utf8[...])
    }

    /// The bytes hex digits in UTF-8 spell, or nil for an odd count or another character.
    public static func bytes(_ utf8: ArraySlice<UInt8>) -> [UInt8]? {
        utf8.withUnsafeBufferPointer { bytes($0) }
    }

    /// The bytes hex digits in UTF-8 spell, or nil for an odd count or another character.
    /// (Read in place and without a branch a digit: every exported line's stream hash is
    /// 64 digits, random ones, so a branch on digit or letter was mispredicted a third of
    /// the time, and reading them was a twentieth of an upload's check.)
    package static func bytes(_ utf8: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard utf8.count % 2 == 0 else { return nil }
        let count = utf8.count / 2
        var valid = false
        let out = [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            valid = decode(utf8, into: UnsafeMutableRawBufferPointer(out))
            initialized = count
        }
        return valid ? out : nil
    }

    /// The hash 64 hex digits in UTF-8 spell, held inline (no array), or nil for another
    /// count or character.
    package static func hash32(_ utf8: UnsafeBufferPointer<UInt8>) -> Hash32? {
        guard utf8.count == 64 else { return nil }
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        return withUnsafeMutableBytes(of: &words) { out in
            decode(utf8, into: out) ? Hash32(UnsafeRawBufferPointer(out)) : nil
        }
    }

    /// Decodes `utf8` (an even count of digits) into `out` (half as many bytes); whether
    /// every character was a digit.
    private static func decode(_ utf8: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableRawBufferPointer) -> Bool {
        var invalid: UInt8 = 0
        for index in 0..<(utf8.count / 2) {
            let high = utf8[2 * index], low = utf8[2 * index + 1]
            invalid |= notADigit(high) | notADigit(low)
            out[index] = value(high) << 4 | value(low)
        }
        return invalid == 0
    }

    /// The value of hex digit `byte` (either case); meaningless for another character.
    /// Letters alone have bit 6 set, and their low four bits count from 1 at 'a' or 'A'.
    @inline(__always)
    private static func value(_ byte: UInt8) -> UInt8 {
        (byte & 0x0F) &+ ((byte >> 6) & 1) &* 9
    }

    /// 1 unless `byte` is a hex digit of either case.
    @inline(__always)
    private static func notADigit(_ byte: UInt8) -> UInt8 {
        let digit = byte &- UInt8(ascii: "0"), letter = (byte | 0x20) &- UInt8(ascii: "a")
        return (digit < 10 ? 0 : 1) & (letter < 6 ? 0 : 1)
    }
}
