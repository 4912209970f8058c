import Foundation
import MessagesModel

/// The games gamelog knows, by extension kind. Projections, audits, replays and the
/// simulator look games up here; nothing outside a game's own module names it.
public struct GameRegistry: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The games, in registration order.
    public let plugins: [any GamePlugin]

    /// A registry of `plugins`; of two with the same kind, the first is kept.
    public init(_ plugins: [any GamePlugin]) {
        var seen = Set<String>()
        self.plugins = plugins.filter { seen.insert($0.kind).inserted }
    }

    /// The plug-in for an extension kind.
    public func plugin(for kind: String) -> (any GamePlugin)? {
        plugins.first { $0.kind == kind }
    }

    /// Every kind, in registration order.
    public var kinds: [String] { plugins.map(\.kind) }

    /// A registry with one more game (replacing one of the same kind).
    public func adding(_ plugin: any GamePlugin) -> GameRegistry {
        GameRegistry(plugins.filter { $0.kind != plugin.kind } + [plugin])
    }

    public var description: String { kinds.joined(separator: ", ") }

    /// Every registered game's board invariant names.
    public var invariantNames: [String] { plugins.flatMap(\.invariantNames) }

    // Registries compare and hash by their kinds, so states holding one stay values.
    public static func == (a: GameRegistry, b: GameRegistry) -> Bool { a.kinds == b.kinds }
    public func hash(into hasher: inout Hasher) { hasher.combine(kinds) }

    /// The key under which a decoder finds the registry that decodes boards.
    public static let userInfoKey = CodingUserInfoKey(rawValue: "gamelog.gameRegistry")!

    /// A registry is stored as its kinds; decoding takes the plug-ins from the
    /// registry in the decoder's `userInfo`.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(kinds)
    }

    public init(from decoder: Decoder) throws {
        let kinds = try decoder.singleValueContainer().decode([String].self)
        let known = try Self.fromUserInfo(decoder)
        self.init(kinds.compactMap { known.plugin(for: $0) })
    }

    static func fromUserInfo(_ decoder: Decoder) throws -> GameRegistry {
        guard let registry = decoder.userInfo[userInfoKey] as? GameRegistry else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath,
                debugDescription: "decoding game boards needs a GameRegistry in the decoder's userInfo"))
        }
        return registry
    }
}

extension JSONDecoder {
    /// A decoder for projection states whose boards belong to `games`.
    public convenience init(games: GameRegistry) {
        self.init()
        userInfo[GameRegistry.userInfoKey] = games
    }
}

/// The board of a game whose kind no registered plug-in has: nothing is known of it but
/// that its messages were exchanged.
public struct UnregisteredBoard: GameBoard {
    public init() {}
}

/// A board of any registered game: what a game view holds.
public struct AnyBoard: Hashable, Codable, Sendable {
    public let kind: String
    public internal(set) var base: any GameBoard

    public init(kind: String, _ base: any GameBoard) {
        self.kind = kind
        self.base = base
    }

    public static func == (a: AnyBoard, b: AnyBoard) -> Bool {
        a.kind == b.kind && AnyHashable(a.base) == AnyHashable(b.base)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(AnyHashable(base))
    }

    private enum CodingKeys: String, CodingKey { case kind, board }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(base, forKey: .board)
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(String.self, forKey: .kind)
        guard let plugin = try GameRegistry.fromUserInfo(decoder).plugin(for: kind) else {
            // A kind this gamelog does not know has no board it could fold.
            self.init(kind: kind, UnregisteredBoard())
            return
        }
        self.init(kind: kind, try plugin.decodeBoard(from: container.superDecoder(forKey: .board)))
    }
}

/// The plug-in's operations on a board of unknown type: what projections call.
extension GamePlugin {
    public func makeBoard() -> AnyBoard { AnyBoard(kind: kind, newBoard()) }

    func decodeBoard(from decoder: Decoder) throws -> any GameBoard { try Board(from: decoder) }

    private func typed(_ board: AnyBoard) -> Board { board.base as? Board ?? newBoard() }

    public func reduce(_ board: inout AnyBoard, _ event: GameEvent) {
        // Changed where the existential holds it: taken out and put back, a board larger
        // than the existential's inline buffer went into a new heap box at every event.
        if reduceInPlace(&board.base, event) { return }
        var value = typed(board)
        // The box lets go of its copy first, so the board's arrays are the value's alone
        // and the reducer changes them in place (a copy of each array every event, else).
        board.base = UnregisteredBoard()
        reduce(&value, event)
        board.base = value
    }

    /// Reduces `base` in place when it is this plug-in's board (the existential opened,
    /// its box made unique if shared, as any mutation of it would); false otherwise.
    private func reduceInPlace<B: GameBoard>(_ base: inout B, _ event: GameEvent) -> Bool {
        guard B.self == Board.self else { return false }
        withUnsafeMutablePointer(to: &base) { pointer in
            pointer.withMemoryRebound(to: Board.self, capacity: 1) { reduce(&$0.pointee, event) }
        }
        return true
    }

    public func progress(of board: AnyBoard) -> GameProgress { progress(of: typed(board)) }

    public func playerView(of board: AnyBoard, for player: String?) -> AnyBoard {
        AnyBoard(kind: kind, playerView(of: typed(board), for: player))
    }

    /// A message as `viewer` may see it, with the game as the viewer's device knows it.
    public func playerView(of message: Message, board: AnyBoard, viewer: String?, direction: MessageDirection) -> Message {
        playerView(of: message, in: MessageSight(board: typed(board), viewer: viewer, direction: direction))
    }

    public func secrets(of board: AnyBoard, hiddenFrom player: String?) -> [String] { secrets(of: typed(board), hiddenFrom: player) }

    public func picture(of board: AnyBoard) -> BoardPicture { picture(of: typed(board)) }

    public func result(of board: AnyBoard) -> String { result(of: typed(board)) }

    /// The names of the board's invariants.
    public var invariantNames: [String] { invariants.map(\.name) }

    /// The invariants `board` breaks: each one's name and what is wrong.
    public func violations(of board: AnyBoard) -> [(name: String, problem: String)] {
        let value = typed(board)
        return invariants.compactMap { rule in rule.violation(value).map { (rule.name, $0) } }
    }
}
