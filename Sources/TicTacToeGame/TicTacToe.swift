import GameKit

/// Tic-tac-toe as seed 003 plays it (Y Labs, "Interactive messages in iOS 10").
/// The URL holds exactly ten query items: nine cells, then the player who just moved.
public enum TicTacToe {
    public static let rowCount = 3
    public static let cellCount = 9
    /// Player X. Player O is `-1`; an empty cell is `0`.
    public static let x = 1
    public static let o = -1

    /// The board and whose turn it is, as `GameStateVM` holds them.
    public struct GameState: Hashable, Codable, Sendable {
        /// Nine cells, row-major: 1 (X), -1 (O) or 0.
        public var cells: [Int]
        /// The player to move next.
        public var player: Int
        /// The player who made the last move, from the URL's trailing item.
        public var lastMover: Int?

        /// A new game: empty board, X to move.
        public init() {
            cells = Array(repeating: 0, count: TicTacToe.cellCount)
            player = TicTacToe.x
            lastMover = nil
        }

        public init(cells: [Int], player: Int, lastMover: Int?) {
            self.cells = cells
            self.player = player
            self.lastMover = lastMover
        }

        /// Decodes a message's URL; nil or no items is a new game, as in the seed.
        public init(url: String?) throws(DecodeError) {
            guard let url else { self.init(); return }
            let parsed: QueryURL
            switch QueryURL.parse(url) {
            case .success(let value): parsed = value
            case .failure(let failure): throw .url(failure)
            }
            if parsed.items.isEmpty { self.init(); return }
            guard parsed.items.count == TicTacToe.cellCount + 1 else { throw .wrongItemCount(parsed.items.count) }
            var cells: [Int] = []
            for (index, item) in parsed.items.prefix(TicTacToe.cellCount).enumerated() {
                guard let name = Int(item.name), let value = item.value.flatMap({ Int($0) }) else {
                    throw .nonNumericItem(index: index)
                }
                guard [-1, 0, 1].contains(value) else { throw .invalidMark(index: index, value: value) }
                guard name == value else { throw .nameValueMismatch(index: index) }
                cells.append(value)
            }
            let trailing = parsed.items[TicTacToe.cellCount]
            guard let mover = Int(trailing.name), mover == TicTacToe.x || mover == TicTacToe.o, trailing.value == "0" else {
                throw .invalidTrailingItem("\(trailing.name)=\(trailing.value ?? "")")
            }
            self.init(cells: cells, player: -mover, lastMover: mover)
        }

        /// The seed's URL: the nine cells, then `<mover>=0`.
        public func encode(mover: Int) -> String {
            QueryURL.encode(base: "", items: cells.map { (String($0), String($0)) } + [(String(mover), "0")])
        }

        /// 1 if X has three in a row, -1 if O has, else 0 (the seed's `decideWinner`).
        public var winner: Int {
            for line in TicTacToe.lines {
                let sum = line.reduce(0) { $0 + cells[$1] }
                if sum == TicTacToe.rowCount { return TicTacToe.x }
                if sum == -TicTacToe.rowCount { return TicTacToe.o }
            }
            return 0
        }

        /// A full board with no winner. The seed shows "Game On"; we name it.
        public var isDraw: Bool { winner == 0 && !cells.contains(0) }

        /// Counted in place: a fold asks at every move (filtering made an array each time).
        public var markCount: Int { cells.reduce(0) { $0 + ($1 != 0 ? 1 : 0) } }

        /// The seed's caption for a message carrying this board.
        public var caption: String { winner != 0 ? "Game Over" : "Game On" }

        /// Places the current player's mark, if the cell is empty and nobody has won.
        public func placing(at cell: Int) -> GameState? {
            guard (0..<TicTacToe.cellCount).contains(cell), cells[cell] == 0, winner == 0 else { return nil }
            var next = self
            next.cells[cell] = player
            next.lastMover = player
            return next
        }

        /// Cells for display: `x`, `o` or `empty`.
        public var cellNames: [String] { cells.map { $0 == 1 ? "x" : $0 == -1 ? "o" : "empty" } }
    }

    /// The 8 lines whose sums decide the winner: rows, columns, diagonals.
    public static let lines: [[Int]] = [
        [0, 1, 2], [3, 4, 5], [6, 7, 8],
        [0, 3, 6], [1, 4, 7], [2, 5, 8],
        [0, 4, 8], [2, 4, 6],
    ]

    /// Why a tic-tac-toe URL was refused.
    public enum DecodeError: Error, Hashable, Sendable, CustomStringConvertible {
        /// Not a URL the seeds could send.
        case url(QueryURL.Failure)
        case wrongItemCount(Int)
        case nonNumericItem(index: Int)
        case invalidMark(index: Int, value: Int)
        case nameValueMismatch(index: Int)
        case invalidTrailingItem(String)

        public var description: String {
            switch self {
            case .url(let failure): return failure.description
            case .wrongItemCount(let n): return "the URL has \(n) query items, not 10"
            case .nonNumericItem(let i): return "cell item \(i) is not numeric"
            case .invalidMark(let i, let v): return "cell item \(i) has mark \(v), not 1, -1 or 0"
            case .nameValueMismatch(let i): return "cell item \(i) has a name different from its value"
            case .invalidTrailingItem(let text): return "the trailing item '\(text)' does not name the mover as 1=0 or -1=0"
            }
        }
    }
}
