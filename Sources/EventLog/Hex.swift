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
    /// (Read in place, a digit at a time without a branch per range: every exported line's
    /// stream hash is 64 digits, and reading them was a twentieth of an upload's check.)
    package static func bytes(_ utf8: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard utf8.count % 2 == 0 else { return nil }
        let count = utf8.count / 2
        var valid = true
        let out = [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            for index in 0..<count {
                let high = nibble(utf8[2 * index]), low = nibble(utf8[2 * index + 1])
                // 0xFF marks another character; any such nibble leaves bits above the low four.
                valid = valid && (high | low) < 16
                out[index] = high << 4 | (low & 0x0F)
            }
            initialized = count
        }
        return valid ? out : nil
    }

    /// The value of hex digit `byte` (either case), or 0xFF for another character.
    @inline(__always)
    private static func nibble(_ byte: UInt8) -> UInt8 {
        let digit = byte &- UInt8(ascii: "0")
        if digit < 10 { return digit }
        // A letter of either case, as lower case: 'A'...'F' and 'a'...'f' alone land in 'a'...'f'.
        let letter = (byte | 0x20) &- UInt8(ascii: "a")
        return letter < 6 ? letter + 10 : 0xFF
    }
}
