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
    public var streams: [ConversationID: Set<UUID>] = [:]

    /// - Parameter progress: called now and then with the events read so far.
    public init(store: EventStore, progress: ((Int) -> Void)? = nil) throws {
        var conversationOfStream: [UUID: ConversationID] = [:]
        var read = 0
        try store.scan { stored in
            read += 1
            if read % 20_000 == 0 { progress?(read) }
            let event: RecordedEvent
            do {
                event = try RecordedEvent.decode(type: stored.type, typeVersion: stored.typeVersion, payload: stored.payload)
            } catch {
                throw ReplayError.undecodableEvent(position: stored.position, detail: String(describing: error))
            }
            if case .recordingStarted(let info) = event { conversationOfStream[stored.stream] = info.conversation }
            guard let conversation = conversationOfStream[stored.stream] else { return }
            var state = conversations[conversation] ?? ConversationState(conversation: conversation)
            state.apply(ReplayEvent(position: stored.position, recordedAt: stored.recordedAt.microsecondsSince1970,
                                    stream: stored.stream, event: event))
            conversations[conversation] = state
            eventCounts[conversation, default: 0] += 1
            let t = stored.recordedAt.microsecondsSince1970
            timeSpans[conversation] = (timeSpans[conversation]?.first ?? t, t)
            streams[conversation, default: []].insert(stored.stream)
        }
        progress?(read)
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
        let needle = prefix.lowercased()
        var matches: [(ConversationID, SessionID?)] = []
        for (conversation, state) in conversations {
            if conversation.uuid.uuidString.lowercased().hasPrefix(needle) { matches.append((conversation, nil)) }
            for session in state.gameOrder where session.uuid.uuidString.lowercased().hasPrefix(needle) {
                matches.append((conversation, session))
            }
        }
        guard !needle.isEmpty, let first = matches.first else { throw ReplayError.noSuchGame(prefix) }
        let conversationsMatched = Set(matches.map(\.0))
        guard conversationsMatched.count == 1 else {
            throw ReplayError.ambiguousGame(prefix, candidates: matches.map { ($0.1?.uuid ?? $0.0.uuid).uuidString.lowercased() })
        }
        return (first.0, matches.first { $0.1 != nil }?.1)
    }
}
