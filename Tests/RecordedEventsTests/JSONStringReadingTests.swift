import Foundation
@testable import RecordedEvents
import Testing

/// Bytes that are not contiguous in memory: read by the general loop alone.
private struct Scattered: RandomAccessCollection {
    var bytes: [UInt8]
    var startIndex: Int { 0 }
    var endIndex: Int { bytes.count }
    subscript(position: Int) -> UInt8 { bytes[position] }
}

@Suite struct JSONStringReadingTests {
    func read(_ text: String, _ policy: JSONStringReading.LoneSurrogates = .fail) throws -> (String, Int) {
        var index = 0
        let bytes = try JSONStringReading.read(Array(text.utf8), at: &index, loneSurrogates: policy)
        return (String(decoding: bytes, as: UTF8.self), index)
    }

    @Test func readsWhatJSONDecoderReads() throws {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["a", "é", "\\n", "\\t", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\r", "\\u00e9", "\\u0000", "\\u20AC",
                      "\\ud83d\\ude00", "😀", "\\uD834\\uDD1E", " ", "~"]
        var checked = 0
        for _ in 0..<2_000 {
            let body = (0..<Int.random(in: 0...12, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let text = "\"\(body)\""
            let expected = try JSONDecoder().decode(String.self, from: Data(text.utf8))
            let (read, end) = try read(text + ",")
            #expect(read == expected, "\(text)")
            #expect(end == text.utf8.count)
            checked += 1
        }
        #expect(checked == 2_000)
    }

    /// Bytes in memory go through a pointer loop first; it reads what the general loop
    /// reads, ends where it ends, and leaves to it whatever it does not read itself.
    @Test func thePointerLoopReadsWhatTheGeneralLoopReads() throws {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["a", "é", "\\n", "\\t", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\r", "\\u00e9", "\\ud83d", "\\q",
                      "\u{01}", "😀", " ", "\\", "\""]
        var read = 0, refused = 0, readByThePointerLoop = 0
        for _ in 0..<5_000 {
            let body = (0..<Int.random(in: 0...10, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let text = Array(("x\"" + body + (Bool.random(using: &generator) ? "\"," : "")).utf8)
            var contiguousIndex = 1, scatteredIndex = 1
            let contiguous = Result { () throws(JSONStringReading.Failure) in
                try JSONStringReading.read(text, at: &contiguousIndex, loneSurrogates: .fail)
            }
            let scattered = Result { () throws(JSONStringReading.Failure) in
                try JSONStringReading.read(Scattered(bytes: text), at: &scatteredIndex, loneSurrogates: .fail)
            }
            #expect(contiguous == scattered, "\(String(decoding: text, as: UTF8.self))")
            #expect(contiguousIndex == scatteredIndex)
            if case .success = contiguous { read += 1 } else { refused += 1 }
            if let (bytes, end) = text.withUnsafeBufferPointer({ JSONStringReading.readPlain($0, from: 1) }) {
                #expect(contiguous == .success(bytes) && end == contiguousIndex)
                readByThePointerLoop += 1
            }
        }
        #expect(read > 500 && refused > 500 && readByThePointerLoop > 200)
        // Past the pointer loop's room (16 KiB): the general loop reads it, the same way.
        let long = Array(("\"" + String(repeating: "ab\\\"c", count: 5_000) + "\"").utf8)
        var longIndex = 0, scatteredLongIndex = 0
        let longRead = try JSONStringReading.read(long, at: &longIndex, loneSurrogates: .fail)
        #expect(longRead.count == 20_000 && longIndex == long.count)
        #expect(longRead == (try JSONStringReading.read(Scattered(bytes: long), at: &scatteredLongIndex, loneSurrogates: .fail)))
        #expect(long.withUnsafeBufferPointer { JSONStringReading.readPlain($0, from: 0) } == nil)
        // Export lines are read from raw buffers: those must reach the pointer loop.
        let line = Array(#""{\"a\":\"b\"}""#.utf8)
        #expect(line.withUnsafeBytes { $0.withContiguousStorageIfAvailable { $0.count } } == line.count)
    }

    @Test func loneSurrogatesFailOrAreReplaced() throws {
        for text in [#""\ud83d""#, #""\ude00x""#, #""\ud83d\u0041""#] {
            #expect(throws: JSONStringReading.Failure.self) { try read(text, .fail) }
            #expect(throws: (any Error).self) { try JSONDecoder().decode(String.self, from: Data(text.utf8)) }
        }
        #expect(try read(#""\ud83d""#, .replace).0 == "\u{FFFD}")
        // The escape after a lone high half is its own character, not swallowed.
        #expect(try read(#""\ud83d\u0041""#, .replace).0 == "\u{FFFD}A")
    }

    @Test func malformedStringsNameTheirOffset() {
        let cases: [(String, Int, String)] = [
            (#""abc"#, 4, "not closed"), (#""a\q""#, 3, "unknown escape"), ("\"a\u{01}\"", 2, "control character"),
            (#""\u12""#, 3, "four hex digits"), ("abc", 0, "start with a quote"), (#""\"#, 2, "ends in an escape"),
        ]
        for (text, offset, reason) in cases {
            var index = 0
            do {
                _ = try JSONStringReading.read(Array(text.utf8), at: &index, loneSurrogates: .replace)
                Issue.record("\(text) was read")
            } catch {
                #expect(error.offset == offset, "\(text)")
                #expect(error.reason.contains(reason), "\(text): \(error.reason)")
            }
        }
        #expect(cases.count == 6)
    }
}
