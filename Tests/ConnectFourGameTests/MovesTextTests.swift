@testable import ConnectFourGame
import Testing

/// A URL's moves are read as bytes; they must be read exactly as splitting the text into
/// Characters at commas and reading each piece with `Int(_:)` reads them.
@Suite struct MovesTextTests {
    static func reference(_ text: String) -> [Int]? {
        let columns = text.isEmpty ? [] : text.split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
        return columns.contains(nil) ? nil : columns.map { $0! }
    }

    @Test func chosenTextsReadAsIntReadsThem() {
        let texts = ["", "3", "3,3,4", "0,1,2,3,4,5,6", ",", "3,", ",3", "3,,4", "+3", "-3", "+", "-", "+-3", "3-", "03",
                     "-0", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
                     " 3", "3 ", "٣", "3,\u{301}4", "3\u{301},4", "a", "3.0", "1e2", "\u{FF13}"]
        for text in texts {
            #expect(ConnectFour.columns(text) == Self.reference(text), "\(text.debugDescription)")
        }
    }

    @Test func randomTextsReadAsIntReadsThem() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [String] = ["0", "1", "3", "6", "9", ",", ",", "+", "-", " ", "a", "\u{301}", "٣"]
        var numeric = 0
        for _ in 0..<5_000 {
            let text = (0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }.joined()
            let expected = Self.reference(text)
            #expect(ConnectFour.columns(text) == expected, "\(text.debugDescription)")
            if expected != nil { numeric += 1 }
        }
        #expect(numeric > 100, "the texts must include numbers, not only refusals")
    }
}
