import GameKit
import MessagesHost
import MessagesModel

/// A tic-tac-toe game's board: the last move sent or received.
public struct TicTacToeBoard: GameBoard {
    /// Nine cells, row-major: 1 (X), -1 (O) or 0.
    public var cells: [Int] = Array(repeating: 0, count: TicTacToe.cellCount)
    public var toMove: Int = TicTacToe.x
    public var winner: Int = 0
    public var isDraw = false
    /// The players of X (the first mover) and O, by name.
    public var x: String?
    public var o: String?

    public init() {}

    public var markCount: Int { cells.filter { $0 != 0 }.count }
}

/// Tic-tac-toe (seed 003) as a gamelog plug-in.
public struct TicTacToePlugin: GamePlugin {
    public init() {}

    public var kind: String { TicTacToeExtension.kind }
    public var title: String { "Tic-tac-toe" }
    public var boardColumns: Int { TicTacToe.rowCount }

    public func makeExtension() -> any MessagesAppExtension { TicTacToeExtension() }

    public func isGameMessage(_ message: Message) -> Bool {
        message.url != nil && (try? TicTacToe.GameState(url: message.url)) != nil
    }

    public func newBoard() -> TicTacToeBoard { TicTacToeBoard() }

    public func reduce(_ board: inout TicTacToeBoard, _ event: GameEvent) {
        // A move counts once it is sent; a staged one may still be deleted.
        guard case .message(let seen) = event, seen.route != .staged,
              let state = try? TicTacToe.GameState(url: seen.message.url) else { return }
        // Copies of a message seen on several devices, or an older one seen late, never undo a later move.
        guard state.markCount >= board.markCount else { return }
        board.cells = state.cells
        board.toMove = state.player
        board.winner = state.winner
        board.isDraw = state.isDraw
        if state.lastMover == TicTacToe.x { board.x = board.x ?? seen.sender }
        if state.lastMover == TicTacToe.o { board.o = board.o ?? seen.sender }
    }

    public func progress(of board: TicTacToeBoard) -> GameProgress {
        if board.winner == TicTacToe.x { return .finished(winner: board.x ?? "X") }
        if board.winner == TicTacToe.o { return .finished(winner: board.o ?? "O") }
        return board.isDraw ? .finished(winner: nil) : .inProgress
    }

    /// Nothing is hidden in tic-tac-toe: every move travels to both players.
    public func playerView(of board: TicTacToeBoard, for player: String?) -> TicTacToeBoard { board }

    public func picture(of board: TicTacToeBoard) -> BoardPicture {
        let status = board.winner == TicTacToe.x ? "X won" : board.winner == TicTacToe.o ? "O won"
            : board.isDraw ? "draw" : "\(board.toMove == TicTacToe.x ? "X" : "O") to move"
        return BoardPicture(cells: board.cells.map { $0 == TicTacToe.x ? "x" : $0 == TicTacToe.o ? "o" : "empty" },
                            columns: boardColumns, lines: [status])
    }

    public func result(of board: TicTacToeBoard) -> String {
        if board.winner == TicTacToe.x { return "X (\(board.x ?? "?")) won" }
        if board.winner == TicTacToe.o { return "O (\(board.o ?? "?")) won" }
        if board.isDraw { return "a draw" }
        return "in progress, \(board.markCount) \(board.markCount == 1 ? "mark" : "marks")"
    }

    public func makeChecker() -> any LegalityChecker { TicTacToeChecker() }

    public var ruleNames: [String] {
        ["tictactoe-url-decodes", "no-move-after-win", "one-mark-per-message", "players-alternate", "trailing-item-names-mover", "caption-matches-board", "image-matches-url"]
    }

    public func makeStrategy(players: [DeviceID], conversation: ConversationID) -> any GameStrategy {
        TicTacToeStrategy(first: players[0], second: players[1], conversation: conversation)
    }
}

/// Tic-tac-toe's rules per session, from each message the first time the log shows
/// it (sent, or arrived when the sender's log is absent): one new mark per message,
/// players alternating from X, the trailing item naming the mover, the caption
/// matching the board, nothing after a win.
struct TicTacToeChecker: LegalityChecker {
    struct Game {
        var cells = Array(repeating: 0, count: TicTacToe.cellCount)
        var lastMover: Int?
        var finished = false
    }

    private var games: [SessionID: Game] = [:]

    mutating func check(_ event: GameEvent) -> [RuleBreak] {
        guard case .message(let seen) = event, seen.route != .staged, seen.isAuthoritative,
              let session = seen.message.session else { return [] }
        var breaks: [RuleBreak] = []
        func fail(_ rule: String, expected: String, found: String) {
            breaks.append(RuleBreak(rule: rule, expected: expected, found: found, session: session, device: seen.device))
        }
        let message = seen.message
        let state: TicTacToe.GameState
        do {
            state = try TicTacToe.GameState(url: message.url)
        } catch {
            fail("tictactoe-url-decodes", expected: "a valid tic-tac-toe URL", found: error.description)
            return breaks
        }
        var game = games[session] ?? Game()
        defer { games[session] = game }
        if game.finished {
            fail("no-move-after-win", expected: "no move after the game was won", found: "another message")
        }
        let added = (0..<TicTacToe.cellCount).filter { game.cells[$0] == 0 && state.cells[$0] != 0 }
        let changed = (0..<TicTacToe.cellCount).filter { game.cells[$0] != 0 && state.cells[$0] != game.cells[$0] }
        if added.count != 1 || !changed.isEmpty {
            fail("one-mark-per-message", expected: "exactly one new mark",
                 found: "\(added.count) new marks\(changed.isEmpty ? "" : ", \(changed.count) changed")")
        }
        let expectedMover = game.lastMover.map { -$0 } ?? TicTacToe.x
        if state.lastMover != expectedMover {
            fail("players-alternate", expected: "\(expectedMover == TicTacToe.x ? "X" : "O") to move",
                 found: "\(state.lastMover == TicTacToe.x ? "X" : "O") moved")
        }
        if let cell = added.first, added.count == 1, state.cells[cell] != state.lastMover {
            fail("trailing-item-names-mover", expected: "the mover \(state.cells[cell])", found: "trailing item \(state.lastMover ?? 0)")
        }
        if let image = message.layout?.template.image, image.cells != state.cellNames {
            fail("image-matches-url", expected: "the board image \(state.cellNames)", found: "\(image.cells)")
        }
        if message.caption != state.caption {
            fail("caption-matches-board", expected: "\"\(state.caption)\"", found: "\"\(message.caption ?? "")\"")
        }
        game.cells = state.cells
        game.lastMover = state.lastMover
        game.finished = state.winner != 0
        return breaks
    }
}
