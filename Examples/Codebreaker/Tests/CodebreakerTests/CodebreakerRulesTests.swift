import Codebreaker
import Foundation
import GameKit
import GameKitTesting
import MessagesModel
import Testing

/// The rules alone: pure functions, no host.
@Suite struct CodebreakerRulesTests {
    let rules = Codebreaker()

    @Test func scoringCountsEachCodePegOnce() {
        #expect(Codebreaker.score([0, 0, 1, 2], against: [0, 1, 0, 0]) == (1, 2))
        #expect(Codebreaker.score([2, 2, 2, 2], against: [0, 1, 0, 1]) == (0, 0))
        #expect(Codebreaker.score([0, 1, 2, 0], against: [0, 1, 2, 0]) == (4, 0))
    }

    @Test func theMakerSetsTheCodeThenTheBreakerGuessesUntilBrokenOrOutOfGuesses() throws {
        var state = rules.setup()
        #expect(rules.seatToMove(in: state) == 0 && rules.legalMoves(in: state).count == 81)
        #expect(throws: IllegalMove.self) { try rules.play(.guess([0, 0, 0, 0]), in: state) }
        state = try rules.play(.setCode([0, 1, 2, 0]), in: state)
        #expect(rules.seatToMove(in: state) == 1 && rules.lastMover(in: state) == 0)
        state = try rules.play(.guess([0, 0, 0, 0]), in: state)
        #expect(state.guesses.last == Codebreaker.Guess(pegs: [0, 0, 0, 0], exact: 2, near: 0))
        let broken = try rules.play(.guess([0, 1, 2, 0]), in: state)
        #expect(rules.outcome(of: broken) == .won(seat: 1) && rules.legalMoves(in: broken).isEmpty)
        for _ in 0..<5 { state = try rules.play(.guess([2, 2, 2, 2]), in: state) }
        #expect(rules.outcome(of: state) == .won(seat: 0))
    }

    @Test func theBreakersViewHidesTheCodeUntilTheEndAndTheMessageRoundTrips() throws {
        let state = try rules.play(.guess([1, 1, 1, 1]), in: try rules.play(.setCode([2, 1, 0, 2]), in: rules.setup()))
        let face = rules.face(of: state)
        #expect(face.url.contains("code=BRGB") == false && face.url.contains("code=BGRB"))
        #expect(rules.secrets(of: state, hiddenFromSeat: 1) == ["code=BGRB"] && rules.secrets(of: state, hiddenFromSeat: 0).isEmpty)
        let hidden = rules.view(of: state, forSeat: 1)
        #expect(hidden.code == nil && hidden.guesses == state.guesses)
        #expect(!rules.face(of: hidden).url.contains("BGRB") && rules.face(of: hidden).url.contains("code=hidden"))
        var message = Message(id: MessageID(UUID()))
        message = face.applied(to: message)
        #expect(try rules.state(from: message) == state)
        #expect(throws: UnreadableMessage.self) { try rules.state(from: Message(id: MessageID(UUID()), url: "?code=RRRX")) }
    }

    /// The conformance kit: games end, re-run identically, a device's view equals its
    /// own export's, and the code never shows to the breaker before the end.
    @Test func conformsToTheKit() throws {
        let report = try GameConformance.check(Codebreaker.game, games: 10, seed: 3)
        #expect(report.finishedGames == 10 && report.identicalReruns == report.recordings && report.recordings > 0, "\(report)")
        #expect(report.secretChecks > 0, "\(report)")
        #expect(report.passed, "\(report)")
    }
}
