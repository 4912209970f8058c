import GameKit
import MessagesModel

/// A Battleship game's board as one device (or an auditor) knows it.
public struct BattleshipBoard: GameBoard {
    /// The placed ships, ascending; in a guesser's view only those it hit.
    public var ships: [Int] = []
    public var hits: [Int] = []
    public var misses: [Int] = []
    /// The player who placed the ships, and the one hunting them, by name.
    public var placer: String?
    public var guesser: String?
    /// Set once the result message is seen.
    public var outcome: Battleship.Outcome?
    /// Set once a result message exists (staged or sent): its URL shows every ship.
    public var revealed = false

    public init() {}

    public var livesLeft: Int { Battleship.incorrectAttemptsAllowed - misses.count }

    /// Cells as drawn: `hit`, `miss`, `ship` or `empty`.
    public var cells: [String] {
        (0..<Battleship.cellCount).map { cell in
            hits.contains(cell) ? "hit" : misses.contains(cell) ? "miss" : ships.contains(cell) ? "ship" : "empty"
        }
    }
}

/// Battleship (seeds 000-002) as a gamelog plug-in.
public struct BattleshipPlugin: GamePlugin {
    public init() {}

    public var kind: String { BattleshipExtension.kind }
    public var title: String { "Battleship" }
    public var boardColumns: Int { 3 }

    public func makeExtension() -> any MessagesAppExtension { BattleshipExtension() }

    public func isGameMessage(_ message: Message) -> Bool { model(message) != nil }

    private func model(_ message: Message) -> Battleship.GameModel? {
        message.url.flatMap { try? Battleship.GameModel(url: $0) }
    }

    public func newBoard() -> BattleshipBoard { BattleshipBoard() }

    public func reduce(_ board: inout BattleshipBoard, _ event: GameEvent) {
        switch event {
        case .message(let seen):
            guard let model = model(seen.message) else { return }
            board.ships = model.shipLocations
            if !model.isComplete {
                board.placer = board.placer ?? seen.sender
                return
            }
            // The result: its image shows the guesser's board, its caption the outcome. Once
            // the guesser's extension has made it (staged or sent), its URL shows every ship.
            board.revealed = true
            guard seen.route != .staged else { return }
            board.guesser = seen.sender ?? board.guesser
            // A result arrives on the placer's device, even one whose placement bubble is gone.
            if seen.route == .arrived { board.placer = board.placer ?? seen.viewer }
            let cells = seen.message.layout?.template.image?.cells ?? []
            board.hits = cells.indices.filter { cells[$0] == "hit" }
            board.misses = cells.indices.filter { cells[$0] == "miss" }
            board.outcome = board.hits.count >= Battleship.totalShipCount ? .won : .lost
        case .screen(let sighting):
            // The guesser's taps, live, on the ship-destroy screen of this game's placement.
            let screen = sighting.screen
            guard board.outcome == nil, screen.name == "shipDestroy", screen.cells.count == Battleship.cellCount else { return }
            board.hits = screen.cells.indices.filter { screen.cells[$0] == "hit" }
            board.misses = screen.cells.indices.filter { screen.cells[$0] == "miss" }
            board.guesser = sighting.player
        case .touch:
            break
        }
    }

    public func progress(of board: BattleshipBoard) -> GameProgress {
        switch board.outcome {
        case .won?: return .finished(winner: board.guesser)
        case .lost?: return .finished(winner: board.placer)
        case nil: return .inProgress
        }
    }

    /// Only the placer sees where the ships are; anyone else sees the ships hit.
    public func playerView(of board: BattleshipBoard, for player: String?) -> BattleshipBoard {
        guard player == nil || player != board.placer else { return board }
        var view = board
        view.ships = board.ships.filter { board.hits.contains($0) }
        return view
    }

    /// A placement carries the ships in its URL; the seed's image hides them, and so
    /// does every view but the placer's, until the game is complete.
    public func playerView(of message: Message, in sight: MessageSight<BattleshipBoard>) -> Message {
        guard sight.direction == .incoming || (sight.viewer != nil && sight.viewer != sight.board.placer),
              let model = model(message), !model.isComplete else { return message }
        var hidden = message
        hidden.url = nil
        return hidden
    }

    /// The URL items of the ships not hit yet, hidden from all but the placer until the
    /// guesser's game is over (the result message then carries every ship).
    public func secrets(of board: BattleshipBoard, hiddenFrom player: String?) -> [String] {
        guard board.outcome == nil, !board.revealed, board.hits.count < Battleship.totalShipCount, board.livesLeft > 0,
              player == nil || player != board.placer else { return [] }
        return board.ships.filter { !board.hits.contains($0) }.map { "Ship_Location=\($0)" }
    }

    public func picture(of board: BattleshipBoard) -> BoardPicture {
        BoardPicture(cells: board.cells, columns: boardColumns, lines: [
            "hits \(board.hits.count)/\(Battleship.totalShipCount) · lives \(board.livesLeft)/\(Battleship.incorrectAttemptsAllowed)"
                + " · placer \(board.placer ?? "?") · guesser \(board.guesser ?? "?")",
        ])
    }

    public func result(of board: BattleshipBoard) -> String {
        let guesser = board.guesser ?? "the guesser"
        switch board.outcome {
        case .won?: return "\(guesser) destroyed all the ships (\(board.misses.count) missed)"
        case .lost?: return "\(guesser) lost: \(count(board.misses.count, "miss", "misses")), \(count(board.hits.count, "hit", "hits"))"
        case nil: return "\(board.placer ?? "?") hid ships; \(count(board.hits.count, "hit", "hits")), \(board.misses.count) missed"
        }
    }

    public func makeChecker() -> any LegalityChecker { BattleshipChecker() }

    public var ruleNames: [String] {
        ["battleship-url-decodes", "nothing-after-completion", "two-distinct-ships", "ships-unchanged", "result-after-placement", "result-matches-taps", "image-matches-url"]
    }

    public var invariants: [BoardInvariant<BattleshipBoard>] {
        [BoardInvariant("lives-never-negative") { board in board.livesLeft < 0 ? "\(board.livesLeft) lives" : nil }]
    }

    public func makeStrategy(players: [DeviceID], conversation: ConversationID) -> any GameStrategy {
        BattleshipStrategy(placer: players[0], guesser: players[1], conversation: conversation)
    }
}

/// "no hits", "1 hit", "2 hits".
private func count(_ n: Int, _ one: String, _ many: String) -> String {
    n == 0 ? "no \(many)" : n == 1 ? "1 \(one)" : "\(n) \(many)"
}

extension BattleshipPlugin {
    /// The demo's game, step by step: Alice hides two ships, Bob hits one, misses three
    /// times and loses; Alice opens the finished game and dismisses its alert.
    public static func demoScript(_ game: ConversationID) -> [(DeviceID, PlayerStep)] {
        [
            ("A", .act(.openConversation(game))), ("A", .act(.openExtension)),
            ("A", .act(.touch(.button("Start game")))),
            ("A", .act(.touch(.cell(2)))), ("A", .act(.touch(.cell(6)))), ("A", .act(.touch(.button("Finished")))),
            ("A", .act(.tapSend)),
            ("B", .act(.openConversation(game))), ("B", .deliver), ("B", .tapLatestMessage),
            ("B", .act(.touch(.cell(4)))), ("B", .act(.touch(.cell(2)))), ("B", .act(.touch(.cell(2)))),
            ("B", .act(.touch(.cell(0)))), ("B", .act(.touch(.cell(6)))),
            ("B", .act(.tapSend)),
            ("A", .deliver), ("A", .tapLatestMessage), ("A", .act(.touch(.dismissAlert))), ("A", .act(.dismissExtension)),
        ]
    }
}
