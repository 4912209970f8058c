import Audit
import ConnectFourGame
import EventStore
import Foundation
import GameKit
import Games
import MessagesHost
import MessagesModel
import Projections
import Recorder
import Replay
import Simulation
import TestSupport
import Testing

@Suite struct ConnectFourRulesTests {
    @Test func discsFallToTheLowestFreeRowAndFourInARowWins() throws {
        var state = ConnectFour.GameState()
        for column in [3, 3, 4, 4, 5, 5] { state = try #require(state.dropping(in: column)) }
        #expect(state.cells[5 * 7 + 3] == .red && state.cells[4 * 7 + 3] == .yellow)
        #expect(state.winner == nil && state.toMove == .red)
        state = try #require(state.dropping(in: 6))
        #expect(state.winner == .red)
        #expect(state.caption == "Red wins!")
        #expect(state.dropping(in: 0) == nil) // nothing after a win
    }

    /// `winner` scans without allocating (the viewer asks it before every drop): it must
    /// find every line a plain reading of the rules finds, in each direction and at the edges.
    @Test func theWinnerIsFoundAsAPlainReadingOfTheRulesFindsIt() throws {
        func reference(_ cells: [ConnectFour.Disc?]) -> ConnectFour.Disc? {
            for row in 0..<6 {
                for column in 0..<7 {
                    for (dr, dc) in [(0, 1), (1, 0), (1, 1), (1, -1)] {
                        let line = (0..<4).map { (row + dr * $0, column + dc * $0) }
                        guard line.allSatisfy({ (0..<6).contains($0.0) && (0..<7).contains($0.1) }) else { continue }
                        let discs = line.map { cells[$0.0 * 7 + $0.1] }
                        if let first = discs[0], discs.allSatisfy({ $0 == first }) { return first }
                    }
                }
            }
            return nil
        }
        var generator = SystemRandomNumberGenerator()
        var (states, wins) = (0, Set<String>())
        for _ in 0..<400 {
            var state = ConnectFour.GameState()
            while let column = (0..<7).filter({ state.isOpen($0) }).randomElement(using: &generator),
                  let next = state.dropping(in: column) {
                state = next
                states += 1
                #expect(state.winner == reference(state.cells), "\(state.moves)")
                if state.winner != nil { wins.insert(state.moves.count.isMultiple(of: 2) ? "yellow" : "red") }
            }
        }
        #expect(states > 1_000 && wins.count == 2)
    }

    /// Moves replayed in place (a URL, `init(moves:)`) end where dropping disc after disc
    /// ends, and refuse the same move: into a full column, off the grid, after four in a row.
    @Test func replayingMovesInPlaceEqualsDroppingOneAfterAnother() throws {
        var generator = SystemRandomNumberGenerator()
        var (compared, refused, refusedAfterFour) = (0, 0, 0)
        for round in 0..<600 {
            // Half the games on the grid only, so that some go on past four in a row.
            let range = round.isMultiple(of: 2) ? 0...6 : -1...7
            let moves = (0..<Int.random(in: 0...45, using: &generator)).map { _ in Int.random(in: range, using: &generator) }
            var stepwise: ConnectFour.GameState? = ConnectFour.GameState()
            var firstRefused: Int?
            for (index, column) in moves.enumerated() {
                guard let next = stepwise?.dropping(in: column) else { firstRefused = index; break }
                stepwise = next
            }
            let replayed = ConnectFour.GameState(moves: moves)
            let url = "\(ConnectFour.baseURL)?moves=" + moves.map(String.init).joined(separator: ",")
            if let firstRefused {
                refused += 1
                if stepwise?.winner != nil { refusedAfterFour += 1 }
                #expect(replayed == nil, "\(moves)")
                #expect(throws: ConnectFour.DecodeError.illegalMove(index: firstRefused, column: moves[firstRefused])) {
                    try ConnectFour.GameState(url: url)
                }
            } else {
                compared += 1
                #expect(replayed == stepwise, "\(moves)")
                #expect(try ConnectFour.GameState(url: url) == stepwise, "\(moves)")
            }
        }
        #expect(compared > 20 && refused > 100 && refusedAfterFour > 20, "\(compared) \(refused) \(refusedAfterFour)")
    }

    @Test func aFullColumnTakesNoDisc() throws {
        var state = ConnectFour.GameState()
        for _ in 0..<6 { state = try #require(state.dropping(in: 0)) }
        #expect(!state.isOpen(0))
        #expect(state.dropping(in: 0) == nil)
        #expect(state.dropping(in: 7) == nil)
    }

    @Test func urlsRoundTripAndHostileOnesAreRefusedWithAReason() throws {
        var state = ConnectFour.GameState()
        for column in [0, 1, 2] { state = try #require(state.dropping(in: column)) }
        #expect(state.encode() == "www.example.com/connectfour?moves=0,1,2")
        #expect(try ConnectFour.GameState(url: state.encode()) == state)
        #expect(throws: ConnectFour.DecodeError.notConnectFour) { try ConnectFour.GameState(url: "www.example.com/x?a=1") }
        #expect(throws: ConnectFour.DecodeError.nonNumericMove("1,x")) { try ConnectFour.GameState(url: "?moves=1,x") }
        #expect(throws: ConnectFour.DecodeError.illegalMove(index: 6, column: 0)) {
            try ConnectFour.GameState(url: "?moves=0,0,0,0,0,0,0")
        }
        #expect(throws: ConnectFour.DecodeError.url(.badScheme("ftp"))) { try ConnectFour.GameState(url: "ftp://h?moves=1") }
    }
}

@Suite struct ConnectFourFlowTests {
    @Test func aMoveIsSentAtOnceAsALiveBubbleAndTheOtherPlayerAnswersInTheSameSession() throws {
        let t = try Table(ConnectFourPlugin())
        try t.do("A", .openConversation(t.game), .openExtension)
        #expect(t.screen("A")?.buttons.first?.title == "New game")
        try t.do("A", .touch(.button("New game")))
        #expect(t.screen("A")?.name == "grid")
        try t.do("A", .touch(.cell(3)))
        #expect(t.host.activeInstance(on: "A") == nil) // dismissed after the move
        #expect(t.staged("A") == nil) // sent, not staged
        let first = try #require(t.latest("A"))
        #expect(first.url == "www.example.com/connectfour?moves=3")
        guard case .live? = first.layout else { Issue.record("not a live layout"); return }
        try t.do("B", .openConversation(t.game))
        t.host.deliverAll()
        try t.do("B", .tapMessage(first.id))
        #expect(t.screen("B")?.labels == ["Yellow to play"])
        try t.do("B", .touch(.cell(3)))
        // One move per opening: the extension has dismissed itself.
        #expect(throws: HostError.extensionNotActive("B")) { try t.do("B", .touch(.cell(4))) }
        let answer = try #require(t.latest("B"))
        #expect(answer.url == "www.example.com/connectfour?moves=3,3")
        #expect(answer.session == first.session)
        t.host.deliverAll()
        // The live bubble runs an instance in transcript style that draws the grid.
        try t.do("A", .viewLiveMessage(answer.id))
        #expect(t.host.deliveredCallbacks[.willBecomeActive, default: 0] >= 3)
    }
}

@Suite struct ConnectFourAsAPlugInTests {
    /// Simulated games through the registry: recorded, replayed with boards, and
    /// audited clean; a forged double move is caught by the game's own checks.
    @Test func simulatedGamesReplayAndVerifyAndAForgedMoveIsCaught() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("c4.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: 4), games: .standard, seed: 4, noise: 0.2)
        var finished = 0
        for _ in 0..<12 {
            let report = try simulator.play(ConnectFourPlugin().kind)
            if report.isOver { finished += 1 }
        }
        #expect(finished >= 8)
        let catalog = try GameCatalog(store: store, games: .standard)
        #expect(catalog.games.count >= 12)
        #expect(catalog.games.allSatisfy { $0.kind == "connectfour" && $0.title == "Connect Four" })
        #expect(catalog.games.filter { $0.status == "finished" }.count >= 8)
        let findings = try Auditor(games: .standard).audit(store)
        #expect(findings.filter { $0.severity == .error }.isEmpty, "\(findings.prefix(3))")

        // A message that skips a move breaks legal-move; one whose caption lies, message-matches-position.
        let connectFour = ConnectFourRules()
        var rules = ConnectFourPlugin().makeChecker()
        func sent(_ moves: [Int], caption: String? = nil) -> GameEvent {
            var message = connectFour.face(of: ConnectFour.GameState(moves: moves)!)
                .applied(to: Message(id: MessageID(UUID()), session: SessionID(UUID(uuidString: "00000000-0000-4000-8000-000000000001")!)))
            if let caption { message.layout = .live(alternate: TemplateLayout(caption: caption, image: message.layout?.template.image)) }
            return .message(GameMessage(message: message, route: .sent, device: "A", sender: moves.count % 2 == 1 ? "Alice" : "Bob",
                                        viewer: "Alice", senderRecorded: true, isFirstSighting: true))
        }
        #expect(rules.check(sent([3])).isEmpty)
        let broken = rules.check(sent([3, 3, 4]))
        // Two discs at once, sent by Red's player when Yellow was to move.
        #expect(broken.map(\.rule) == ["legal-move", "turn-order"], "\(broken)")
        let lying = rules.check(sent([3, 3, 4, 4], caption: "Red wins!"))
        #expect(lying.map(\.rule) == ["message-matches-position"], "\(lying)")
        let honest = rules.check(sent([3, 3, 4, 4, 5]))
        #expect(honest.isEmpty, "\(honest)")
    }
}
