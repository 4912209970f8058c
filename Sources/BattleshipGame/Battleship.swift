import GameKit

/// Battleship as seeds 000-002 play it ("iOS 10 Day by Day, Day 1"): a 3 x 3 board,
/// two hidden ships, three misses allowed. The whole state travels in the URL.
public enum Battleship {
    public static let totalShipCount = 2
    public static let incorrectAttemptsAllowed = 3
    public static let cellCount = 9
    public static let baseURL = "www.shinobicontrols.com/battleship"

    /// The seed's `GameModel`.
    public struct GameModel: Hashable, Codable, Sendable {
        /// Ascending cell numbers.
        public var shipLocations: [Int]
        public var isComplete: Bool

        public init(shipLocations: [Int], isComplete: Bool) {
            self.shipLocations = shipLocations
            self.isComplete = isComplete
        }

        /// The seed's `encode()`: one `Ship_Location` per ship, then `Is_Complete`.
        public func encode() -> String {
            QueryURL.encode(base: Battleship.baseURL,
                            items: shipLocations.map { ("Ship_Location", String($0)) }
                                + [("Is_Complete", isComplete ? "1" : "0")])
        }

        /// Decodes a URL the way the seed does, but with typed errors where the seed
        /// would crash, and stricter checks an audit can rely on.
        public init(url: String) throws(DecodeError) {
            let parsed: QueryURL
            switch QueryURL.parse(url) {
            case .success(let value): parsed = value
            case .failure(let failure): throw .url(failure)
            }
            guard !parsed.items.isEmpty else { throw .noQueryItems }
            var ships: [Int] = []
            var complete: Bool?
            for (name, value) in parsed.items {
                switch name {
                case "Ship_Location":
                    guard let text = value, let cell = Int(text) else { throw .nonNumericCell(value ?? "") }
                    guard (0..<Battleship.cellCount).contains(cell) else { throw .cellOutOfRange(cell) }
                    guard !ships.contains(cell) else { throw .duplicateShip(cell) }
                    ships.append(cell)
                case "Is_Complete":
                    guard complete == nil else { throw .duplicateIsComplete }
                    switch value {
                    case "1": complete = true
                    case "0": complete = false
                    default: throw .invalidIsComplete(value ?? "")
                    }
                default:
                    throw .unexpectedItem(name)
                }
            }
            guard let complete else { throw .missingIsComplete }
            self.init(shipLocations: ships.sorted(), isComplete: complete)
        }
    }

    /// Why a Battleship URL was refused.
    public enum DecodeError: Error, Hashable, Sendable, CustomStringConvertible {
        /// Not a URL the seeds could send.
        case url(QueryURL.Failure)
        case noQueryItems
        case missingIsComplete
        case duplicateIsComplete
        case invalidIsComplete(String)
        case nonNumericCell(String)
        case cellOutOfRange(Int)
        case duplicateShip(Int)
        case unexpectedItem(String)

        public var description: String {
            switch self {
            case .url(let failure): return failure.description
            case .noQueryItems: return "the URL has no query items"
            case .missingIsComplete: return "the URL has no Is_Complete item"
            case .duplicateIsComplete: return "the URL has Is_Complete twice"
            case .invalidIsComplete(let v): return "Is_Complete is '\(v)', not 0 or 1"
            case .nonNumericCell(let v): return "Ship_Location '\(v)' is not a number"
            case .cellOutOfRange(let n): return "Ship_Location \(n) is outside the board (0...8)"
            case .duplicateShip(let n): return "two ships are placed on cell \(n)"
            case .unexpectedItem(let name): return "unexpected query item '\(name)'"
            }
        }
    }

    /// The first player's ship-placement board.
    public struct Placement: Hashable, Codable, Sendable {
        /// Ascending.
        public private(set) var ships: [Int] = []
        public init(ships: [Int] = []) { self.ships = ships.sorted() }

        public var shipsLeftToPosition: Int { Battleship.totalShipCount - ships.count }
        /// The Finished button is enabled only when every ship is placed.
        public var canFinish: Bool { shipsLeftToPosition == 0 }

        /// A tap on a ship removes it; on an empty cell places one unless all are placed.
        public func tapping(_ cell: Int) -> Placement {
            guard (0..<Battleship.cellCount).contains(cell) else { return self }
            var next = self
            if let index = ships.firstIndex(of: cell) {
                next.ships.remove(at: index)
            } else if shipsLeftToPosition > 0 {
                next.ships.append(cell)
                next.ships.sort()
            }
            return next
        }
    }

    /// How a guessing game ended.
    public enum Outcome: String, Hashable, Codable, Sendable {
        case won, lost
    }

    /// The second player's guesses against a placement.
    public struct Hunt: Hashable, Codable, Sendable {
        public var model: GameModel
        public private(set) var hits: [Int] = []
        public private(set) var misses: [Int] = []

        public init(model: GameModel) { self.model = model }

        public var livesLeft: Int { Battleship.incorrectAttemptsAllowed - misses.count }

        /// After a tap: lost at three misses, else won when both ships are hit.
        public var outcome: Outcome? {
            if misses.count >= Battleship.incorrectAttemptsAllowed { return .lost }
            if hits.count == Battleship.totalShipCount { return .won }
            return nil
        }

        /// Marks a hit or a miss; re-tapping a cell changes nothing.
        public func tapping(_ cell: Int) -> Hunt {
            guard (0..<Battleship.cellCount).contains(cell), !hits.contains(cell), !misses.contains(cell) else { return self }
            var next = self
            if model.shipLocations.contains(cell) { next.hits.append(cell) } else { next.misses.append(cell) }
            return next
        }

        /// Cells as the guesser sees them: `hit`, `miss` or `empty`.
        public var cells: [String] {
            (0..<Battleship.cellCount).map { hits.contains($0) ? "hit" : misses.contains($0) ? "miss" : "empty" }
        }
    }

    public static func placedCaption(_ local: String) -> String { "$\(local) placed their ships! Can you find them?" }
    public static func wonCaption(_ local: String) -> String { "$\(local) destroyed all the ships!" }
    public static func lostCaption(_ local: String) -> String { "$\(local) lost!" }
}
