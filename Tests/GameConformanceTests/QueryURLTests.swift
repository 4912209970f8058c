import Foundation
@testable import GameKit
import Testing

/// The games' URLs are split without Foundation; whatever that path takes, it must split
/// exactly as `URLComponents` does, and it must leave everything else to it.
@Suite struct QueryURLTests {
    /// What `URLComponents` makes of `url`: the reference.
    func reference(_ url: String) -> [String]? {
        guard let components = URLComponents(string: url) else { return nil }
        return (components.queryItems ?? []).map { "\($0.name)|\($0.value ?? "<nil>")" }
    }

    func plain(_ url: String) -> [String]? {
        QueryURL.plainItems(url).map { $0.map { "\($0.name)|\($0.value ?? "<nil>")" } }
    }

    @Test func theGamesURLsTakeThePlainPathAndSplitAsURLComponents() {
        let urls = ["www.example.com/connectfour?moves=3,4,3", "www.example.com/connectfour?moves=",
                    "?-1=-1&0=0&1=1&-1=-1&0=0&0=0&1=1&0=0&0=0&1=0",
                    "www.shinobicontrols.com/battleship?Ship_Location=A1&Ship_Location=B2&Hits=C3,D4",
                    "plain", "a.b-c_d~e/f"]
        for url in urls {
            let items = plain(url)
            #expect(items != nil, "\(url)")
            #expect(items == reference(url), "\(url)")
        }
    }

    @Test func whatThePlainPathCannotBeSureOfGoesToURLComponents() {
        for url in ["", "http://host/x?a=1", "//host?a=1", "/x?a=1", "x?a=1#f", "x?a=%41", "x?a", "x?a=1&", "x?=1",
                    "x?a=b=c", "x?a=1?b=2", "x?a=1&&b=2", "x?", "x?a=1/2", "x?a=1+2", "x y?a=1", "mailto:x", "x?a=é"] {
            #expect(plain(url) == nil, "\(url)")
        }
    }

    /// Random strings over the characters that matter: where the plain path answers, it
    /// answers as `URLComponents`.
    @Test func randomURLsSplitAsURLComponentsWhereverThePlainPathAnswers() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ab1-._~/,=&?%#:+ ")
        var answered = 0
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...12, using: &generator)
            let url = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            guard let items = plain(url) else { continue }
            answered += 1
            #expect(items == reference(url), "\(url)")
        }
        #expect(answered > 500)
    }

    @Test func aURLTooLongIsStillRefused() {
        let url = "x?a=" + String(repeating: "1", count: QueryURL.maximumLength)
        guard case .failure(.tooLong) = QueryURL.parse(url) else {
            Issue.record("a URL of \(url.count) characters was accepted")
            return
        }
    }
}
