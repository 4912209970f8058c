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

/// Every game in the log, from one pass over it in position order that folds each
/// conversation while its events go by and keeps only the summaries of the finished
/// ones: memory holds the conversations in progress at one point of the log, not
/// the log.
///
/// A conversation is finished at its last event, known up front from each stream's
/// last position (``EventStore/streamHeads()``). A conversation whose events are not
/// in time order in the log (logs merged from devices one after the other) is folded
/// again afterwards in time order, as ``Replayer`` does, so both always agree.
public struct GameCatalog {
    /// Every game, in order of first appearance.
    public private(set) var games: [GameSummary] = []
    /// The recordings (streams) of each conversation.
    public private(set) var streams: [ConversationID: Set<UUID>] = [:]
    /// Events in each conversation.
    public private(set) var eventCounts: [ConversationID: Int] = [:]
    /// The extension kind of each conversation.
    public private(set) var kinds: [ConversationID: String] = [:]
    /// The most conversations held in memory at once during the pass.
    public private(set) var mostOpenConversations = 0
    /// Conversations folded a second time, in time order, after the pass.
    public private(set) var refoldedConversations = 0

    /// A conversation being folded.
    private final class Open {
        var state: ConversationState
        var count = 0
        var first: Int64
        var last: Int64
        var lastKey: (recordedAt: Int64, position: Int64) = (.min, 0)
        var inTimeOrder = true
        init(_ conversation: ConversationID, at time: Int64) {
            state = ConversationState(conversation: conversation)
            first = time
            last = time
        }
    }

    /// Folds the whole log once.
    /// - Parameters:
    ///   - verify: check the hash chain while reading (as `scan` does).
    ///   - progress: called now and then with the events read so far.
    public init(store: EventStore, verify: Bool = true, progress: ((Int) -> Void)? = nil) throws {
        var conversationOfStream: [UUID: ConversationID] = [:]
        var lastPosition: [ConversationID: Int64] = [:]
        for head in try store.streamHeads() where head.first.type == "recording.started" {
            guard case .recordingStarted(let info)? = try? RecordedEvent.decode(
                type: head.first.type, typeVersion: head.first.typeVersion, payload: head.first.payload) else {
                throw ReplayError.undecodableEvent(position: head.first.position, detail: "a recording.started payload")
            }
            conversationOfStream[head.first.stream] = info.conversation
            streams[info.conversation, default: []].insert(head.first.stream)
            lastPosition[info.conversation] = max(lastPosition[info.conversation] ?? 0, head.lastPosition)
        }

        var open: [ConversationID: Open] = [:]
        var later: [ConversationID] = []
        var read = 0
        try store.scan(verify: verify) { stored in
            read += 1
            if read % 16_384 == 0 { progress?(read) }
            // Streams that are not recordings hold no game.
            guard let conversation = conversationOfStream[stored.stream] else { return }
            let event: RecordedEvent
            do {
                event = try RecordedEvent.decode(type: stored.type, typeVersion: stored.typeVersion, payload: stored.payload)
            } catch {
                throw ReplayError.undecodableEvent(position: stored.position, detail: String(describing: error))
            }
            let time = stored.recordedAt.microsecondsSince1970
            let entry: Open
            if let existing = open[conversation] {
                entry = existing
            } else {
                entry = Open(conversation, at: time)
                open[conversation] = entry
                mostOpenConversations = max(mostOpenConversations, open.count)
            }
            if (time, stored.position) < entry.lastKey { entry.inTimeOrder = false }
            entry.lastKey = (time, stored.position)
            entry.state.apply(ReplayEvent(position: stored.position, recordedAt: time, stream: stored.stream, event: event))
            entry.count += 1
            entry.first = min(entry.first, time)
            entry.last = max(entry.last, time)
            if stored.position >= lastPosition[conversation] ?? .max {
                open[conversation] = nil
                if entry.inTimeOrder { close(entry) } else { later.append(conversation) }
            }
        }
        progress?(read)
        // Conversations whose last event never came by (a cut-off log) end here.
        for (_, entry) in open.sorted(by: { $0.value.state.position < $1.value.state.position }) {
            if entry.inTimeOrder { close(entry) } else { later.append(entry.state.conversation) }
        }
        for conversation in later {
            let events = try Replayer.load(from: store, streams: streams[conversation] ?? [])
            let entry = Open(conversation, at: events.first?.recordedAt ?? 0)
            for event in events { entry.state.apply(event) }
            entry.count = events.count
            entry.last = events.last?.recordedAt ?? 0
            close(entry)
            refoldedConversations += 1
        }
        games.sort { $0.firstPosition < $1.firstPosition }
    }

    private mutating func close(_ entry: Open) {
        let conversation = entry.state.conversation
        eventCounts[conversation] = entry.count
        kinds[conversation] = entry.state.kind
        games += Self.summaries(of: entry.state, events: entry.count, span: (entry.first, entry.last))
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
