import Foundation
import Testing
@testable import WebViewer

/// Links' parts percent-encoded by bytes, as Foundation encodes RFC 3986's unreserved set.
@Suite struct PercentEncodingTests {
    @Test func bytesAreEncodedAsFoundationEncodesThem() {
        var allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        allowed.insert(charactersIn: "-._~")
        let pieces = ["auditor", "Phone A", "a&b=c", "<script>", "%", "é", "e\u{301}", "🙂", "~._-", "/?#[]@!$'()*+,;", "\u{0}", "\n", "Ω"]
        var generator = SystemRandomNumberGenerator()
        var compared = 0
        for _ in 0..<2_000 {
            let text = (0..<Int.random(in: 0...6, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            #expect(Pages.percentEncoded(text) == text.addingPercentEncoding(withAllowedCharacters: allowed), "\(text.debugDescription)")
            compared += 1
        }
        #expect(compared == 2_000)
        #expect(Pages.percentEncoded("Phone A/é") == "Phone%20A%2F%C3%A9")
    }
}
