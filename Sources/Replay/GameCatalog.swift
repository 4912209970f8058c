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

/// Reads the whole log once and folds every conversation: the catalog of games.
public struct GameCatalog {
    public var conversations: [ConversationID: ConversationState] = [:]
    public var eventCounts: [ConversationID: Int] = [:]
    public var timeSpans: [ConversationID: (first: Int64, last: Int64)] = [:]
    /// Where each conversation's and game's events are.
    public let index: GameIndex
    public var streams: [ConversationID: Set<UUID>] { index.streams }

    /// Finds every conversation from its recordings' first events, then folds each
    /// conversation's events in the order they happened, one conversation at a time.
    /// - Parameter progress: called now and then with the events folded so far.
    public init(store: EventStore, progress: ((Int) -> Void)? = nil) throws {
        index = try GameIndex(store: store)
        var folded = 0
        for conversation in index.conversations {
            let events = try Replayer.load(from: store, streams: streams[conversation] ?? [])
            conversations[conversation] = ConversationState.folding(conversation, events)
            eventCounts[conversation] = events.count
            if let first = events.first, let last = events.last { timeSpans[conversation] = (first.recordedAt, last.recordedAt) }
            folded += events.count
            progress?(folded)
        }
    }

    /// Every game, in order of first appearance.
    public var games: [GameSummary] {
        var out: [GameSummary] = []
        for (conversation, state) in conversations {
            let span = timeSpans[conversation] ?? (0, 0)
            var players: [String: String] = [:]
            for view in state.orderedDevices {
                if let local = view.localParticipant, let name = view.names[local.uuid.uuidString] {
                    players[view.device.name] = name
                }
            }
            for game in state.orderedGames {
                out.append(GameSummary(
                    id: game.session.uuid.uuidString.lowercased(), kind: game.kind,
                    conversation: conversation.uuid.uuidString.lowercased(),
                    devices: state.orderedDevices.map(\.device.name), players: players,
                    status: game.status.rawValue, result: Self.result(game, players: players),
                    events: eventCounts[conversation] ?? 0, firstPosition: game.firstPosition, lastPosition: game.lastPosition,
                    startedAt: Timestamp(microsecondsSince1970: span.first).description,
                    endedAt: Timestamp(microsecondsSince1970: span.last).description))
            }
        }
        return out.sorted { $0.firstPosition < $1.firstPosition }
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

    /// The conversation of the game (or conversation) whose id starts with `prefix`.
    public func resolve(_ prefix: String) throws -> (conversation: ConversationID, game: SessionID?) {
        try index.resolve(prefix)
    }
}
