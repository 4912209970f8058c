import GameKit
import MessagesModel

/// Tic-tac-toe's rules (seed 003), stated once: the plug-in (`TicTacToePlugin`), its audit
/// checks and its simulated players come from them; the seed's own extension plays them.
/// X moves first; players alternate, one mark on an empty cell each; three in a row wins;
/// a full board without one is a draw (the seed shows "Game On"; we name it).
public struct TicTacToeRules: GameRules {
    public typealias State = TicTacToe.GameState
    /// A cell, 0...8, row-major.
    public typealias Move = Int

    public init() {}

    public var kind: String { TicTacToeExtension.kind }
    public var title: String { "Tic-tac-toe" }
    public var seats: [String] { ["X", "O"] }
    public var boardColumns: Int { TicTacToe.rowCount }

    public func setup() -> State { State() }

    public func seatToMove(in state: State) -> Int? {
        state.winner != 0 || state.isDraw ? nil : seat(state.player)
    }

    public func lastMover(in state: State) -> Int? { state.lastMover.map(seat) }

    public func moveCount(in state: State) -> Int { state.markCount }

    public func legalMoves(in state: State) -> [Move] {
        seatToMove(in: state) == nil ? [] : state.cells.indices.filter { state.cells[$0] == 0 }
    }

    public func play(_ move: Move, in state: State) throws(IllegalMove) -> State {
        guard seatToMove(in: state) != nil else { throw IllegalMove("the game is over") }
        guard var next = state.placing(at: move) else { throw IllegalMove("cell \(move) is taken or not on the board") }
        // As a message carries it: the mover in the trailing item, the other player to move.
        next.player = -state.player
        return next
    }

    public func outcome(of state: State) -> GameOutcome? {
        if state.winner != 0 { return .won(seat: seat(state.winner)) }
        return state.isDraw ? .draw : nil
    }

    public func input(for move: Move, in state: State) -> [Touch] { [.cell(move)] }

    public func picture(of state: State) -> BoardPicture {
        let status = state.winner == TicTacToe.x ? "X won" : state.winner == TicTacToe.o ? "O won"
            : state.isDraw ? "draw" : "\(state.player == TicTacToe.x ? "X" : "O") to move"
        return BoardPicture(cells: state.cellNames, columns: TicTacToe.rowCount, lines: [status])
    }

    /// What the seed's extension sends: the nine cells and the mover in the URL, its
    /// caption, and the board as the bubble's image.
    public func face(of state: State) -> MessageFace {
        MessageFace(url: state.encode(mover: state.lastMover ?? TicTacToe.x), caption: state.caption,
                    image: MessageImage(kind: "tictactoe-board", cells: state.cellNames))
    }

    public func state(from message: Message) throws(UnreadableMessage) -> State {
        guard let url = message.url else { throw UnreadableMessage("the message has no URL") }
        do {
            return try State(url: url)
        } catch {
            throw UnreadableMessage(error.description)
        }
    }

    public func result(of state: State, players: [String?]) -> String {
        if state.winner == TicTacToe.x { return "X (\(players[0] ?? "?")) won" }
        if state.winner == TicTacToe.o { return "O (\(players[1] ?? "?")) won" }
        if state.isDraw { return "a draw" }
        return "in progress, \(state.markCount) \(state.markCount == 1 ? "mark" : "marks")"
    }

    private func seat(_ mark: Int) -> Int { mark == TicTacToe.x ? 0 : 1 }
}

/// Tic-tac-toe (seed 003) as a gamelog plug-in: its rules, played through the seed's extension.
public typealias TicTacToePlugin = RulesGame<TicTacToeRules>

extension RulesGame where Rules == TicTacToeRules {
    /// Tic-tac-toe, played through `TicTacToeExtension` (seed 003, as shipped).
    public init() {
        self.init(TicTacToeRules(), extension: { TicTacToeExtension() })
    }
}

extension TicTacToePlugin {
    /// The demo's game, step by step: X (Alice) takes the centre and wins on the middle row.
    public static func demoScript(_ game: ConversationID) -> [(DeviceID, PlayerStep)] {
        var steps: [(DeviceID, PlayerStep)] = [
            ("A", .act(.openConversation(game))), ("A", .act(.openExtension)), ("A", .act(.expand)),
            ("A", .act(.touch(.cell(4)))), ("A", .act(.tapSend)),
            ("B", .act(.openConversation(game))),
        ]
        let moves: [(DeviceID, Int)] = [("B", 0), ("A", 2), ("B", 6), ("A", 3), ("B", 1), ("A", 5)]
        for (device, cell) in moves {
            steps += [(device, .deliver), (device, .tapLatestMessage), (device, .act(.touch(.cell(cell)))), (device, .act(.tapSend))]
        }
        steps += [("B", .deliver), ("B", .tapLatestMessage), ("B", .act(.dismissExtension))]
        return steps
    }
}
