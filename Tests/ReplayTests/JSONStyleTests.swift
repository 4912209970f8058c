import EventStore
import Foundation
import GameKit
import Games
import Projections
import Recorder
import Simulation
import TestSupport
import Testing

/// The one-pass rewriter of payloads into the JSON style, against the reference.
@Suite struct JSONStyleTests {
    @Test func theRewriterAgreesWithTheReferenceOnEveryRecordedPayload() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("style.sqlite"))
        try playMixedGames(16, into: store, seed: 3, noise: 0.3)
        var compared = 0
        for event in try store.events() {
            let fast = try #require(JSONStyleRewriter.rewrite(event.payload), "position \(event.position)")
            let parsed = try JSONSerialization.jsonObject(with: Data(fast)) as? NSDictionary
            let reference = try JSONStyle.normalize(json: Data(event.payload)) as? NSDictionary
            #expect(parsed != nil && parsed == reference, "position \(event.position): \(String(decoding: fast, as: UTF8.self))")
            // Keys sorted, as the reference prints them.
            #expect(String(decoding: fast, as: UTF8.self) == (try JSONStyle.text(reference as Any)), "position \(event.position)")
            compared += 1
        }
        #expect(compared > 1_000)
        #expect(JSONStyleRewriter.rewrite(Array("{\"a\":".utf8)) == nil)
        #expect(JSONStyleRewriter.rewrite(Array("{\"a\":1} x".utf8)) == nil)
    }

    @Test func theStyleRules() throws {
        let text = #"{"body":{"arrived":{"_0":{"text":{"_0":"hi $ABCDEF01-2345-6789-ABCD-EF0123456789"}},"sender":"ABCDEF01-2345-6789-ABCD-EF0123456789"}},"context":{"style":1,"names":{"ABCDEF01-2345-6789-ABCD-EF0123456789":"Bo"}}}"#
        let expected = #"{"body":{"arrived":{"sender":"abcdef01-2345-6789-abcd-ef0123456789","value":{"text":"hi $abcdef01-2345-6789-abcd-ef0123456789"}}},"context":{"names":{"abcdef01-2345-6789-abcd-ef0123456789":"Bo"},"style":"expanded"}}"#
        #expect(try JSONStyle.text(try JSONStyle.normalize(json: Data(text.utf8))) == expected)
        #expect(JSONStyleRewriter.rewrite(Array(text.utf8)).map { String(decoding: $0, as: UTF8.self) } == expected)
    }
}
