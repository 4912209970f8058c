import Foundation
@testable import Projections
import Replay
import Testing

/// How a change reads to a person: identifiers cut short the way the regular expression
/// it replaced cut them.
@Suite struct StateChangeTests {
    /// The expression the byte scanner stands for.
    static func reference(_ text: String) -> String {
        text.replacing(/([0-9A-Fa-f]{8})-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}/) { String($0.output.1).lowercased() }
    }

    @Test func identifiersAreCutToTheirFirstEightDigitsInLowerCase() {
        let id = "0CEDEEEA-8C79-42FA-87DC-7B1360C8F23B"
        #expect(StateChange.shorteningIdentifiers("devices.\(id).names") == "devices.0cedeeea.names")
        // Nine digits first: the match starts one later, as the expression's did.
        #expect(StateChange.shorteningIdentifiers("A\(id)x") == "A0cedeeeax")
        #expect(StateChange.shorteningIdentifiers("\(id)\(id)") == "0cedeeea0cedeeea")
        // One digit short, or a letter that is not a hex digit: left as it is.
        #expect(StateChange.shorteningIdentifiers(String(id.dropLast())) == String(id.dropLast()))
        #expect(StateChange.shorteningIdentifiers(id.replacingOccurrences(of: "7B", with: "7G")) == id.replacingOccurrences(of: "7B", with: "7G"))
        let change = StateChange(path: "games.\(id).turn", before: "\(id.lowercased())", after: nil)
        #expect(change.readable == "- games.0cedeeea.turn: 0cedeeea")
    }

    @Test func theScannerAgreesWithTheExpressionOnRandomText() {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["0CEDEEEA-8C79-42FA-87DC-7B1360C8F23B", "a1b2c3d4-", "-", "0123", "abcdef", "ABCDEF", "9", "g", " ", "\r\n", "\"", "é", "e\u{301}", "🙂", "-0000-"]
        var compared = 0, shortened = 0
        for _ in 0..<3_000 {
            var text = ""
            for _ in 0..<Int.random(in: 1...24, using: &generator) {
                if Bool.random(using: &generator), Bool.random(using: &generator) {
                    text += UUID().uuidString
                    if Bool.random(using: &generator) { text = String(text.dropLast(Int.random(in: 0...3, using: &generator))) }
                } else {
                    text += pieces.randomElement(using: &generator)!
                }
            }
            let expected = Self.reference(text)
            #expect(StateChange.shorteningIdentifiers(text) == expected, "\(text.debugDescription)")
            compared += 1
            if expected != text { shortened += 1 }
        }
        #expect(compared == 3_000 && shortened > 500)
    }
}

/// A state's presentation is encoded from its presentable fields alone: it must be what
/// cutting them from the whole state's encoding gives, at every step of games of every kind.
@Suite struct PresentationTests {
    @Test func thePresentationIsTheWholeEncodingsPresentablePart() throws {
        let log = try EveryKindLog(seed: 31)
        var compared = 0, withGames = 0
        for replayer in try log.replayers() {
            for perspective in [Perspective.auditor] + replayer.devices.map(Perspective.device) {
                let view = replayer.seen(by: perspective)
                for step in 0...view.stepCount {
                    let state = try view.state(at: step, as: perspective)
                    let whole = ConversationState.presentation(of: try state.styledJSON())
                    #expect(state.presentation() == whole, "\(perspective) step \(step)")
                    #expect(whole.keys.sorted() == ["devices", "games", "kind", "position", "step"])
                    if case .object(let games)? = whole["games"], !games.isEmpty { withGames += 1 }
                    compared += 1
                }
            }
        }
        #expect(compared > 500 && withGames > 100, "\(compared) states, \(withGames) with games")
    }
}
