import EventStore
import GameRules
import Foundation
import MessagesModel
import Projections
import RecordedEvents

/// A game as `gamelog games` lists it.
public struct GameSummary: Hashable, Codable, Sendable {
    /// The game's id: its session.
    public var id: String
    public var kind: String
    public var conversation: String
    public var devices: [String]
    /// Player names, by device.
    public var players: [String: String]
    public var status: String
    /// A sentence saying how it ended (or stands).
    public var result: String
    /// Events recorded in the game's conversation.
    public var events: Int
    public var firstPosition: Int64
    public var lastPosition: Int64
    public var startedAt: String
    public var endedAt: String
}

/// Every game in the log, from one ``FullReplay`` pass: the summaries of the games,
/// and which recordings and how many events each conversation has.
public struct GameCatalog {
    /// Every game, in order of first appearance.
    public private(set) var games: [GameSummary] = []
    /// The recordings (streams) of each conversation.
    public private(set) var streams: [ConversationID: Set<UUID>] = [:]
    /// Events in each conversation.
    public private(set) var eventCounts: [ConversationID: Int] = [:]
    /// The extension kind of each conversation.
    public private(set) var kinds: [ConversationID: String] = [:]
    /// What the pass did.
    public private(set) var statistics = FullReplay.Statistics()
    public var mostOpenConversations: Int { statistics.mostOpenConversations }
    public var refoldedConversations: Int { statistics.refoldedConversations }

    /// Folds the whole log once.
    /// - Parameters:
    ///   - verify: check the hash chain while reading (as `scan` does).
    ///   - progress: called now and then with the events read so far.
    public init(store: EventStore, verify: Bool = true, progress: ((Int) -> Void)? = nil) throws {
        var games: [GameSummary] = [], streams: [ConversationID: Set<UUID>] = [:]
        var eventCounts: [ConversationID: Int] = [:], kinds: [ConversationID: String] = [:]
        statistics = try FullReplay.run(store: store, verify: verify, progress: progress) { done in
            let conversation = done.state.conversation
            streams[conversation] = done.streams
            eventCounts[conversation] = done.events
            kinds[conversation] = done.state.kind
            games += Self.summaries(of: done.state, events: done.events, span: done.span)
        }
        self.games = games.sorted { $0.firstPosition < $1.firstPosition }
        self.streams = streams
        self.eventCounts = eventCounts
        self.kinds = kinds
    }

    /// The games of one folded conversation.
    public static func summaries(of state: ConversationState, events: Int, span: (first: Int64, last: Int64)) -> [GameSummary] {
        var players: [String: String] = [:]
        for view in state.orderedDevices {
            if let local = view.localParticipant, let name = view.names[local.uuid.uuidString] {
                players[view.device.name] = name
            }
        }
        return state.orderedGames.map { game in
            GameSummary(
                id: game.session.uuid.uuidString.lowercased(), kind: game.kind,
                conversation: state.conversation.uuid.uuidString.lowercased(),
                devices: state.orderedDevices.map(\.device.name), players: players,
                status: game.status.rawValue, result: result(game, players: players),
                events: events, firstPosition: game.firstPosition, lastPosition: game.lastPosition,
                startedAt: Timestamp(microsecondsSince1970: span.first).description,
                endedAt: Timestamp(microsecondsSince1970: span.last).description)
        }
    }

    static func result(_ game: GameView, players: [String: String]) -> String {
        func name(_ device: DeviceID?) -> String { device.map { players[$0.name] ?? $0.name } ?? "?" }
        if let board = game.battleship {
            switch game.status {
            case .placing: return "\(name(board.placer)) is placing ships"
            case .inProgress: return "\(name(board.placer)) hid ships; \(board.hits.count) hit, \(board.misses.count) missed"
            case .won:
                return "\(name(board.guesser)) destroyed all the ships (\(board.misses.count) missed)"
            case .complete where board.hits.count >= Battleship.totalShipCount:
                return "\(name(board.guesser)) destroyed all the ships (\(board.misses.count) missed)"
            default: return "\(name(board.guesser)) lost: 3 misses, \(board.hits.count) hit"
            }
        }
        if let board = game.tictactoe {
            switch game.status {
            case .won: return "X (\(name(board.x))) won"
            case .lost: return "O (\(name(board.o))) won"
            case .draw: return "a draw"
            default: return "in progress, \(board.cells.filter { $0 != 0 }.count) marks"
            }
        }
        return game.status.rawValue
    }
}
