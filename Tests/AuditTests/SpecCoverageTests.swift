import Audit
import EventStore
import Foundation
import Games
import MessagesHost
import MessagesModel
import Projections
import RecordedEvents
import Recorder
import Replay
import Simulation
import TestSupport
import Testing

/// `simulate` reaches every row of MESSAGES.md and GAMES.md that a log can show, and
/// the audit raises no false alarm on what it reaches.
@Suite struct SpecCoverageTests {
    /// The default run (seed 1, the phone network, every game in turn, 500 games):
    /// every row of the coverage table above zero, and `verify` finds no error.
    @Test func everyRowOccursForTheDefaultSeedAndNothingIsAnError() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("coverage.sqlite")
        let simulator = Simulator(recorder: Recorder(store: try EventStore(path: path), clock: FixedClock(), seed: 1),
                                  games: .standard, seed: 1)
        simulator.network = .phone
        for number in 0..<500 { try simulator.play(simulator.mixedKind(number)) }
        let table = simulator.coverage.table
        let rows = table.filter { Coverage.rows.contains($0.row) }
        #expect(rows.count == Coverage.rows.count && rows.count > 100)
        let never = rows.filter { $0.count == 0 }.map(\.row)
        #expect(never.isEmpty, "never occurred: \(never)")
        // Groups of three and four, every error code, and the iOS 11 send variants among them.
        for row in ["conversation of 3 participants", "conversation of 4 participants", "error 2 fileUnreadable",
                    "error 8 urlExceedsMaxSize", "error 11 apiUnavailableInPresentationContext",
                    "callback contentSizeThatFits in transcript", "action sendSticker: accepted",
                    "action insert(_:localizedChangeDescription:)"] {
            #expect((table.first { $0.row == row }?.count ?? 0) > 0, "\(row)")
        }
        // GAMES.md: each game's screens, alerts, captions and endings, as the games name them.
        let games = ["screen battleship/start", "screen battleship/shipPlacement", "screen battleship/shipDestroy",
                     "alert Game Complete!", "caption $ placed their ships! Can you find them?",
                     "caption $ destroyed all the ships!", "caption $ lost!", "game battleship finished with a winner",
                     "screen tictactoe/placeholder", "screen tictactoe/board", "caption Game On", "caption Game Over",
                     "game tictactoe finished with a winner", "game tictactoe finished without one (a draw)",
                     "caption Stepper Value", "game connectfour finished with a winner"]
        let counted = Dictionary(uniqueKeysWithValues: table.map { ($0.row, $0.count) })
        let missing = games.filter { (counted[$0] ?? 0) == 0 }
        #expect(missing.isEmpty, "never occurred: \(missing); the game rows: \(table.filter { $0.row.hasPrefix("screen") || $0.row.hasPrefix("game") || $0.row.hasPrefix("caption") || $0.row.hasPrefix("alert") })")
        let findings = try Auditor(games: .standard).audit(try EventStore(path: path, access: .readOnly))
        let errors = findings.filter { $0.severity == .error }
        #expect(errors.isEmpty, "\(errors.prefix(5))")
        #expect(findings.contains { $0.check == .network }) // the network did something, said as warnings
    }

    /// A group conversation: every device's transcript holds every message, each
    /// device's perspective sees only its own participants' identifiers, and the
    /// audit of the group's log has no error.
    @Test func aGroupOfFourPlaysAndVerifiesClean() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("group.sqlite")
        let simulator = Simulator(recorder: Recorder(store: try EventStore(path: path), clock: FixedClock(), seed: 7),
                                  games: .standard, seed: 7)
        var groups = 0
        for _ in 0..<12 {
            let report = try simulator.play("stickers")
            let host = try #require(simulator.lastHost)
            let members = host.members(of: report.conversation)
            guard members.count > 2 else { continue }
            groups += 1
            let sent = members.map { device in
                host.transcript(on: device, in: report.conversation).filter(\.isOutgoing).count
            }.reduce(0, +)
            // Every message one device sent reaches the others on the ideal network.
            for device in members {
                let incoming = host.transcript(on: device, in: report.conversation).filter { !$0.isOutgoing }.count
                let own = host.transcript(on: device, in: report.conversation).filter(\.isOutgoing).count
                #expect(incoming + own == sent, "\(device) has \(incoming) of \(sent - own) messages")
            }
            // Each device knows every other member by an identifier of its own.
            let info = try #require(host.instance(on: members[0], in: report.conversation)?.info)
            #expect(info.remoteParticipants.count == members.count - 1)
        }
        #expect(groups > 0)
        let errors = try Auditor(games: .standard).audit(try EventStore(path: path, access: .readOnly)).filter { $0.severity == .error }
        #expect(errors.isEmpty, "\(errors.prefix(5))")
    }
}

/// Rule breaks a player really makes (a second move in a row, played on the phone's own
/// last message) are the game's findings, once each, at the step of the move: on a
/// hostile network as on an ideal one, and never a tampering finding.
@Suite struct PlayingOutOfTurnTests {
    @Test(arguments: [NetworkProfile.ideal, .hostile])
    func aSecondMoveInARowIsOneTurnOrderFinding(_ profile: NetworkProfile) throws {
        let folder = try TemporaryFolder()
        let path = folder.path("turns.sqlite")
        let simulator = Simulator(recorder: Recorder(store: try EventStore(path: path), clock: FixedClock(), seed: 3),
                                  games: .standard, seed: 3, noise: 0)
        simulator.network = profile
        // A plays the centre; B answers in a corner, then taps its own message and plays again.
        var script: [(DeviceID, PlayerStep)] = []
        func play(_ device: DeviceID, _ cell: Int) {
            script += [(device, .tapLatestMessage), (device, .act(.touch(.cell(cell)))), (device, .act(.tapSend))]
        }
        script += [("A", .act(.openExtension)), ("A", .act(.expand)), ("A", .act(.touch(.cell(4)))), ("A", .act(.tapSend))]
        // On a hostile network the message may wait: B keeps asking for it.
        script += Array(repeating: ("B", .deliver), count: 200)
        play("B", 0)
        play("B", 8)
        script += Array(repeating: ("A", .deliver), count: 200)
        let report = try simulator.play("tictactoe") { game in
            [("A", .act(.openConversation(game))), ("B", .act(.openConversation(game)))] + script
        }
        #expect(report.steps.count > 10)
        let store = try EventStore(path: path, access: .readOnly)
        let findings = try Auditor(games: .standard).audit(store)
        let rules = findings.filter { $0.check == .legality }
        let turnOrder = rules.filter { $0.rule == "turn-order" }
        #expect(turnOrder.count == 1, "\(rules)")
        // At the step of the move: B sending its second message.
        let position = try #require(turnOrder.first?.position)
        let step = try #require(try store.event(at: position))
        let catalog = try GameCatalog(store: store, games: .standard)
        var bSends: [Int64] = []
        for (conversation, streams) in catalog.streams {
            let replayer = try Replayer(store: store, conversation: conversation, streams: streams, games: .standard)
            for event in replayer.events where event.device == "B" {
                if event.event.type == RecordedEvent.TypeName.transcriptSent { bSends.append(event.position) }
            }
        }
        #expect(turnOrder.first?.device == "B" && step.type == "transcript.sent", "\(step.type)")
        #expect(bSends.count == 2 && bSends.max() == position, "\(bSends) \(position)")
        #expect(!findings.contains { $0.severity == .error && [.integrity, .signature, .consistency].contains($0.check) },
                "\(findings.filter { $0.severity == .error })")
    }
}
