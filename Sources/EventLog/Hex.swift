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
        guard utf8.count % 2 == 0 else { return nil }
        func nibble(_ b: UInt8) -> UInt8? {
            switch b {
            case 48...57: b - 48
            case 97...102: b - 87
            case 65...70: b - 55
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count / 2)
        var index = utf8.startIndex
        while index < utf8.endIndex {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }
}
