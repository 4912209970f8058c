import EventStore
import Foundation
import GameKit
import Games
@testable import Projections
import Recorder
import Replay
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
            let parsed = try JSONValue(parsing: fast)
            let reference = try JSONStyle.normalize(json: Data(event.payload))
            #expect(parsed == reference, "position \(event.position): \(String(decoding: fast, as: UTF8.self))")
            // Keys sorted, as the reference prints them.
            #expect(String(decoding: fast, as: UTF8.self) == JSONStyle.text(reference), "position \(event.position)")
            compared += 1
        }
        #expect(compared > 1_000)
        #expect(JSONStyleRewriter.rewrite(Array("{\"a\":".utf8)) == nil)
        #expect(JSONStyleRewriter.rewrite(Array("{\"a\":1} x".utf8)) == nil)
    }

    @Test func theStyleRules() throws {
        let text = #"{"body":{"arrived":{"_0":{"text":{"_0":"hi $ABCDEF01-2345-6789-ABCD-EF0123456789"}},"sender":"ABCDEF01-2345-6789-ABCD-EF0123456789"}},"context":{"style":1,"names":{"ABCDEF01-2345-6789-ABCD-EF0123456789":"Bo"}}}"#
        let expected = #"{"body":{"arrived":{"sender":"abcdef01-2345-6789-abcd-ef0123456789","value":{"text":"hi $abcdef01-2345-6789-abcd-ef0123456789"}}},"context":{"names":{"abcdef01-2345-6789-abcd-ef0123456789":"Bo"},"style":"expanded"}}"#
        #expect(JSONStyle.text(try JSONStyle.normalize(json: Data(text.utf8))) == expected)
        #expect(JSONStyleRewriter.rewrite(Array(text.utf8)).map { String(decoding: $0, as: UTF8.self) } == expected)
    }
}

/// The JSON reader behind the style and the diffs: every JSON text, nothing else, and
/// never a crash on hostile input.
@Suite struct JSONValueTests {
    @Test func readsEveryKindOfValue() throws {
        let text = #"{"a":[1,-2,3.5,1e3,true,false,null],"b":"\u00e9\ud83d\ude00\n\"q\"","c":{}," d":[]}"#
        let value = try JSONValue(parsing: Array(text.utf8))
        #expect(value == .object(["a": .array([.integer(1), .integer(-2), .double(3.5), .integer(1000), .bool(true), .bool(false), .null]),
                                  "b": .string("é😀\n\"q\""), "c": .object([:]), " d": .array([])]))
        #expect(JSONStyle.text(value) == #"{" d":[],"a":[1,-2,3.5,1000,true,false,null],"b":"é😀\n\"q\"","c":{}}"#)
        #expect(try JSONValue(parsing: Array(" 42 ".utf8)) == .integer(42))
    }

    /// Strings are escaped as `JSONEncoder` escapes them, every control character and
    /// past ASCII too, in the canonical and the indented text alike.
    @Test func escapesStringsAsJSONEncoderDoes() throws {
        let controls = String(String.UnicodeScalarView((0..<0x20).compactMap(Unicode.Scalar.init)))
        let strings = [controls, "\"q\" \\ / é😀 \u{7F} \u{2028}", "", "plain", "a\u{0}b"]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var checked = 0
        for string in strings {
            let value = JSONValue.object(["k\n" + string: .array([.string(string)])])
            let reference = String(decoding: try encoder.encode(["k\n" + string: [string]]), as: UTF8.self)
            #expect(JSONStyle.text(value) == reference, "\(Array(string.unicodeScalars))")
            #expect(try JSONValue(parsing: Array(JSONStyle.indentedText(value).utf8)) == value)
            checked += 1
        }
        #expect(checked == strings.count)
        #expect(JSONStyle.indentedText(.object(["a": .array([.integer(1), .object([:])]), "b": .null])) == "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": null\n}")
    }

    @Test func refusesWhatIsNotJSON() {
        for bad in ["", "{", "[1,]", #"{"a" 1}"#, "tru", #""open"#, "1 2", #"{"a":1,}"#, #""\u12""#, "-", "\"a\u{0001}\"",
                    "1.", "01", "+1", ".5", "1e", "1e+", "-a", "1.e3", "--1", "0x10"] {
            #expect(throws: JSONValue.ParseError.self, "\(bad)") { try JSONValue(parsing: Array(bad.utf8)) }
        }
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: Array(deep.utf8)) }
    }

    /// Found by the fuzzer: `1.` read as 1.0 and was written back as `1`, another value.
    @Test func readsWhatItWritesAsTheSameValue() throws {
        var checked = 0
        for text in ["1.0", "1e2", "-0.0", "2.5e-3", "1e19", "9007199254740993", "0", "-7", "1E+2", "123.456"] {
            let value = try JSONValue(parsing: Array(text.utf8))
            #expect(try JSONValue(parsing: Array(JSONStyle.text(value).utf8)) == value, "\(text)")
            checked += 1
        }
        #expect(checked == 10)
        #expect(try JSONValue(parsing: Array("1.0".utf8)) == .integer(1))
        #expect(try JSONValue(parsing: Array("1e19".utf8)) == .double(1e19))
    }
}

/// The direct encoder behind every state's JSON, held to `JSONEncoder`'s text read back
/// (what it replaced) on every state of simulated games of every kind and on the values
/// where `JSONEncoder`'s defaults differ from a type's own encoding.
@Suite struct JSONValueEncoderTests {
    struct Edges: Encodable {
        var data = Data([0, 1, 2, 250])
        var url = URL(string: "https://example.com/a?b=1")!
        var float: Float = 0.1
        var whole = 3.0
        var big = UInt64.max
        var small: Int8 = -3
        var none: Int? = nil
        var nested: [[String: [Int]]] = [["a": [1, 2]], [:]]
        var byUUID = [UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!: "x"]
        var byInt = [3: "three", 1: "one"]
        var date = Date(timeIntervalSinceReferenceDate: 12.5)
        var text = "é \"q\" \u{1}"
        var maybeData: Data? = Data([9, 8])
        var maybeURL: URL? = URL(string: "file:///tmp/x y")
        var datas = [Data([1]), Data()]
        var flags: [Bool?] = [true, nil, false]
        var wide: [Int64] = [Int64.min, 0]
    }

    struct Outer: Encodable {
        struct Inner: Encodable { var label = "x"; var values = [1.0, Double.infinity] }
        var inner = Inner()
    }

    @Test func matchesJSONEncoderOnItsEdges() throws {
        #expect(try JSONValue(encoding: Edges()) == JSONValue(encodingThroughText: Edges()))
        #expect(try JSONValue(encoding: [1.5, 2, -0.0]) == JSONValue(encodingThroughText: [1.5, 2, -0.0]))
        #expect(throws: EncodingError.self) { try JSONValue(encoding: [Double.nan]) }
        #expect(try JSONValue(encoding: "top") == .string("top"))
        #expect(try JSONValue(encoding: Data([1, 2])) == JSONValue(encodingThroughText: Data([1, 2])))
    }

    /// A number JSON cannot hold is refused with the path to it, as JSONEncoder names it.
    @Test func aRefusedNumberNamesItsPath() throws {
        var paths: [[String]] = []
        for encode in [{ _ = try JSONValue(encoding: Outer()) }, { _ = try JSONValue(encodingThroughText: Outer()) }] {
            do {
                try encode()
                Issue.record("an infinite number was encoded")
            } catch EncodingError.invalidValue(_, let context) {
                paths.append(context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue })
            }
        }
        #expect(paths.count == 2 && paths[0] == paths[1] && paths[0].prefix(2) == ["inner", "values"], "\(paths)")
    }

    @Test func matchesJSONEncoderOnEveryStateOfSimulatedGames() throws {
        let log = try EveryKindLog(seed: 13)
        var compared = 0
        for replayer in try log.replayers() {
            for step in 0...replayer.stepCount {
                for perspective in [Perspective.auditor] + replayer.devices.map(Perspective.device) {
                    let state = try replayer.state(at: step, as: perspective)
                    #expect(try JSONValue(encoding: state) == JSONValue(encodingThroughText: state), "step \(step) as \(perspective)")
                    compared += 1
                }
            }
        }
        #expect(compared > 500)
        #expect(try JSONValue(encoding: log.catalog.games) == JSONValue(encodingThroughText: log.catalog.games))
    }
}
