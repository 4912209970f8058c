import GameKit
import MessagesModel

/// Connect Four's rules, stated once: the plug-in (`ConnectFourPlugin`), its audit
/// checks and its simulated players all come from them. Red moves first; a disc falls
/// to the lowest free cell of its column; four in a row wins; a full grid is a draw.
/// The message carries every move so far, so nothing is hidden.
public struct ConnectFourRules: GameRules {
    public typealias State = ConnectFour.GameState
    /// A column, 0...6.
    public typealias Move = Int

    public init() {}

    public var kind: String { ConnectFourExtension.kind }
    public var title: String { "Connect Four" }
    public var seats: [String] { [ConnectFour.Disc.red.name, ConnectFour.Disc.yellow.name] }
    public var boardColumns: Int { ConnectFour.columns }

    public func setup() -> State { State() }

    public func seatToMove(in state: State) -> Int? {
        state.winner != nil || state.isDraw ? nil : seat(state.toMove)
    }

    public func lastMover(in state: State) -> Int? { state.lastMover.map(seat) }

    public func moveCount(in state: State) -> Int { state.moves.count }

    public func legalMoves(in state: State) -> [Move] {
        seatToMove(in: state) == nil ? [] : (0..<ConnectFour.columns).filter(state.isOpen)
    }

    public func play(_ move: Move, in state: State) throws(IllegalMove) -> State {
        guard seatToMove(in: state) != nil else { throw IllegalMove("the game is over") }
        guard let next = state.dropping(in: move) else { throw IllegalMove("column \(move + 1) is full or not on the grid") }
        return next
    }

    public func outcome(of state: State) -> GameOutcome? {
        if let winner = state.winner { return .won(seat: seat(winner)) }
        return state.isDraw ? .draw : nil
    }

    public func input(for move: Move, in state: State) -> [Touch] { [.cell(move)] }

    public func picture(of state: State) -> BoardPicture {
        BoardPicture(cells: state.cellNames, columns: ConnectFour.columns, lines: [state.caption])
    }

    /// What `ConnectFourExtension` sends: the moves in the URL, a live bubble over the grid.
    public func face(of state: State) -> MessageFace {
        let summary = state.lastMover.flatMap { mover in state.moves.last.map { "\(mover.name) played column \($0 + 1)" } }
        return MessageFace(url: state.encode(), caption: state.caption,
                           image: MessageImage(kind: "connectfour-grid", cells: state.cellNames), summaryText: summary, isLive: true)
    }

    public func state(from message: Message) throws(UnreadableMessage) -> State {
        do {
            return try State(url: message.url ?? "")
        } catch {
            throw UnreadableMessage(error.description)
        }
    }

    public func result(of state: State, players: [String?]) -> String {
        let name = { (disc: ConnectFour.Disc) in players[seat(disc)] ?? "?" }
        switch state.winner {
        case .red?: return "Red (\(name(.red))) won in \(state.moves.count) moves"
        case .yellow?: return "Yellow (\(name(.yellow))) won in \(state.moves.count) moves"
        case nil: return state.isDraw ? "a draw" : "in progress, \(state.moves.count) moves"
        }
    }

    private func seat(_ disc: ConnectFour.Disc) -> Int { disc == .red ? 0 : 1 }
}

/// Connect Four as a gamelog plug-in: its rules, played through its own extension.
public typealias ConnectFourPlugin = RulesGame<ConnectFourRules>

extension RulesGame where Rules == ConnectFourRules {
    /// Connect Four, played through `ConnectFourExtension` (whose recordings re-run as recorded).
    public init() {
        self.init(ConnectFourRules(), extension: { ConnectFourExtension() })
    }
}
