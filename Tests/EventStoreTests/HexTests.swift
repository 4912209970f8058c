import EventLog
import Foundation
import Testing

/// Hex as byte fields are read: either case, every other character refused, wherever it is.
@Suite struct HexTests {
    @Test func digitsOfEitherCaseReadBackAsTheirBytes() {
        var checked = 0
        for length in [0, 1, 2, 16, 31, 32, 33, 100] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255) }
            let text = Hex.string(bytes)
            #expect(text == bytes.map { String(format: "%02x", $0) }.joined())
            #expect(Hex.bytes(text, count: length) == bytes)
            #expect(Hex.bytes(text.uppercased(), count: length) == bytes)
            #expect(Hex.bytes(Array(text.utf8)[...]) == bytes)
            checked += 1
        }
        #expect(checked == 8)
        // Every byte value as a digit: the 22 hex digits alone read, each as its value.
        var digits = 0
        for byte in UInt8.min...UInt8.max {
            let read = Hex.bytes([UInt8(ascii: "0"), byte][...])
            let expected: UInt8? = switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
            #expect(read == expected.map { [$0] }, "byte \(byte)")
            if expected != nil { digits += 1 }
            // The same character first, and in the middle of a long text: refused alike.
            if expected == nil {
                #expect(Hex.bytes([byte, UInt8(ascii: "0")][...]) == nil)
                var long = Array(String(repeating: "ab", count: 40).utf8)
                long[Int.random(in: 0..<long.count)] = byte
                #expect(Hex.bytes(long[...]) == nil)
            }
        }
        #expect(digits == 22)
        #expect(Hex.bytes(Array("abc".utf8)[...]) == nil)
        #expect(Hex.bytes("abcd", count: 1) == nil)
    }
}
