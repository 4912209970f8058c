import GameKit

/// Connect Four on a 7 x 6 grid, played in messages: the third game, written only
/// against gamelog's public plug-in protocol. The URL carries every move so far, as
/// the seeds carry their whole state: `www.example.com/connectfour?moves=3,3,4`
/// (columns 0...6, red moves first).
public enum ConnectFour {
    public static let columns = 7
    public static let rows = 6
    public static let baseURL = "www.example.com/connectfour"

    public enum Disc: String, Hashable, Codable, Sendable {
        case red, yellow
        public var other: Disc { self == .red ? .yellow : .red }
        public var name: String { self == .red ? "Red" : "Yellow" }
    }

    /// The game after some moves.
    public struct GameState: Hashable, Codable, Sendable {
        /// Columns played, in order.
        public private(set) var moves: [Int] = []
        /// Row-major from the top row: `nil` for an empty cell.
        public private(set) var cells: [Disc?] = Array(repeating: nil, count: ConnectFour.columns * ConnectFour.rows)

        public init() {}

        /// Replays `moves` from an empty grid; nil if one of them is illegal.
        public init?(moves: [Int]) {
            self.init()
            var over = false
            for column in moves {
                guard drop(in: column, over: &over) else { return nil }
            }
        }

        /// ``dropping(in:)`` in place, for replaying moves: `over` says whether a line of
        /// four was made, found around the new disc alone (a line without it would have
        /// ended the game before). A URL is decoded at every copy of every message a fold
        /// reads, and copying the grid and scanning all of it at each move was a fiftieth of
        /// a full replay.
        mutating func drop(in column: Int, over: inout Bool) -> Bool {
            guard !over, isOpen(column) else { return false }
            let row = (0..<ConnectFour.rows).last { cells[$0 * ConnectFour.columns + column] == nil }!
            let disc = toMove
            cells[row * ConnectFour.columns + column] = disc
            moves.append(column)
            over = makesFour(row: row, column: column, disc)
            return true
        }

        /// Whether the disc at (`row`, `column`) is part of four in a row of its colour.
        private func makesFour(row: Int, column: Int, _ disc: Disc) -> Bool {
            let (rows, columns) = (ConnectFour.rows, ConnectFour.columns)
            func run(_ dr: Int, _ dc: Int) -> Int {
                var count = 0, (r, c) = (row + dr, column + dc)
                while r >= 0, r < rows, c >= 0, c < columns, cells[r * columns + c] == disc {
                    count += 1
                    (r, c) = (r + dr, c + dc)
                }
                return count
            }
            for (dr, dc) in [(0, 1), (1, 0), (1, 1), (1, -1)] where 1 + run(dr, dc) + run(-dr, -dc) >= 4 { return true }
            return false
        }

        /// Whose disc falls next.
        public var toMove: Disc { moves.count.isMultiple(of: 2) ? .red : .yellow }
        /// Whose disc fell last.
        public var lastMover: Disc? { moves.isEmpty ? nil : toMove.other }

        /// Whether a disc can still fall in `column`.
        public func isOpen(_ column: Int) -> Bool {
            (0..<ConnectFour.columns).contains(column) && cells[column] == nil
        }

        /// The state after the player to move drops a disc in `column`; nil if the
        /// column is full or outside the grid, or the game is over.
        public func dropping(in column: Int) -> GameState? {
            var next = self, over = winner != nil
            return next.drop(in: column, over: &over) ? next : nil
        }

        /// The player with four in a row, if any. Asked before every drop while a URL is
        /// decoded, so it allocates nothing (it was a tenth of the viewer's time).
        public var winner: Disc? {
            let (rows, columns) = (ConnectFour.rows, ConnectFour.columns)
            for row in 0..<rows {
                for column in 0..<columns {
                    guard let disc = cells[row * columns + column] else { continue }
                    for (dr, dc) in [(0, 1), (1, 0), (1, 1), (1, -1)] {
                        let (endRow, endColumn) = (row + 3 * dr, column + 3 * dc)
                        guard endRow < rows, endColumn >= 0, endColumn < columns else { continue }
                        var count = 1
                        while count < 4, cells[(row + count * dr) * columns + column + count * dc] == disc { count += 1 }
                        if count == 4 { return disc }
                    }
                }
            }
            return nil
        }

        /// A full grid with no winner.
        public var isDraw: Bool { winner == nil && moves.count == ConnectFour.columns * ConnectFour.rows }

        /// The caption of a message carrying this state.
        public var caption: String {
            if let winner { return "\(winner.name) wins!" }
            if isDraw { return "A draw!" }
            return "\(toMove.name) to play"
        }

        /// Cell names for drawing: `red`, `yellow` or `empty`.
        public var cellNames: [String] { cells.map { $0?.rawValue ?? "empty" } }

        public func encode() -> String {
            QueryURL.encode(base: ConnectFour.baseURL, items: [("moves", moves.map(String.init).joined(separator: ","))])
        }

        /// Decodes a message URL: exactly one `moves` item, every move legal.
        public init(url: String) throws(DecodeError) {
            let parsed: QueryURL
            switch QueryURL.parse(url) {
            case .success(let value): parsed = value
            case .failure(let failure): throw .url(failure)
            }
            guard parsed.items.count == 1, parsed.items[0].name == "moves", let text = parsed.items[0].value else {
                throw .notConnectFour
            }
            guard let columns = ConnectFour.columns(text) else { throw .nonNumericMove(text) }
            var state = GameState()
            var over = false
            for (index, column) in columns.enumerated() {
                guard state.drop(in: column, over: &over) else { throw .illegalMove(index: index, column: column) }
            }
            self = state
        }
    }

    /// The comma-separated numbers of `text`, each read as `Int(_:)` reads one (a sign,
    /// then digits, in range); nil if one is not. Read as bytes: splitting the String into
    /// Characters was half of decoding a URL, which a fold does at every copy of every
    /// message (a comma with a combining mark after it is one Character, but whichever way
    /// it is split, a piece holds the mark and is no number).
    static func columns(_ text: String) -> [Int]? {
        var columns: [Int] = []
        guard !text.isEmpty else { return columns }
        var value = 0, negative = false, digits = 0, signed = false
        func finish() -> Bool {
            guard digits > 0 else { return false }
            columns.append(value)
            (value, negative, digits, signed) = (0, false, 0, false)
            return true
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: ","):
                guard finish() else { return nil }
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                guard digits == 0, !signed else { return nil }
                signed = true
                negative = byte == UInt8(ascii: "-")
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                // Read as a negative number grows, so Int.min fits as Int(_:) allows it.
                let digit = Int(byte - UInt8(ascii: "0"))
                let (times, overflow) = value.multipliedReportingOverflow(by: 10)
                let (next, overflow2) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
                guard !overflow, !overflow2 else { return nil }
                value = next
                digits += 1
            default:
                return nil
            }
        }
        guard finish() else { return nil }
        return columns
    }

    /// Why a Connect Four URL was refused.
    public enum DecodeError: Error, Hashable, Sendable, CustomStringConvertible {
        case url(QueryURL.Failure)
        case notConnectFour
        case nonNumericMove(String)
        case illegalMove(index: Int, column: Int)

        public var description: String {
            switch self {
            case .url(let failure): return failure.description
            case .notConnectFour: return "the URL has no single 'moves' item"
            case .nonNumericMove(let text): return "the moves '\(text)' are not column numbers"
            case .illegalMove(let index, let column): return "move \(index + 1) drops a disc in column \(column), which is full, outside 0...6 or after a win"
            }
        }
    }
}
