import Foundation
import GameRules
import MessagesModel
import RecordedEvents

/// One event as projections see it: where it stands in the log and what it says.
public struct ReplayEvent: Hashable, Sendable {
    public var position: Int64
    /// The event's chain hash in the log it came from (empty when unknown).
    public var hash: [UInt8] = []
    /// Microseconds since 1970, UTC.
    public var recordedAt: Int64
    public var stream: UUID
    public var event: RecordedEvent

    public init(position: Int64, recordedAt: Int64, stream: UUID, event: RecordedEvent, hash: [UInt8] = []) {
        self.position = position
        self.hash = hash
        self.recordedAt = recordedAt
        self.stream = stream
        self.event = event
    }
}

/// A bubble of a device's transcript, with whether this device sent or received it.
public struct TranscriptLine: Hashable, Codable, Sendable {
    public var bubble: Bubble
    /// The caption (or text) as this device shows it, names resolved.
    public var shown: String
}

/// What one device shows: its transcript and input field, and the extension's UI.
public struct DeviceView: Hashable, Codable, Sendable {
    public var device: DeviceID
    public var localParticipant: ParticipantID?
    /// Display names this device knows, by its own participant identifiers.
    public var names: [String: String] = [:]
    public var transcript: [TranscriptLine] = []
    /// The item waiting in the input field (a message there is pending).
    public var staged: Item?
    public var isActive = false
    public var style: PresentationStyle = .compact
    public var selectedMessage: MessageID?
    public var screen: Screen = .blank

    public init(device: DeviceID) { self.device = device }

    /// `text` with `$<uuid>` mentions resolved to the names this device shows.
    public func resolve(_ text: String) -> String {
        // Most captions mention nobody; skip building the name table for them.
        guard text.utf8.contains(UInt8(ascii: "$")) else { return text }
        var ids: [ParticipantID: String] = [:]
        for (key, name) in names { if let uuid = UUID(hyphenated: key) { ids[ParticipantID(uuid)] = name } }
        return ParticipantNames.resolve(text, names: ids)
    }
}

/// Where a game stands.
public enum GameStatus: String, Hashable, Codable, Sendable {
    /// Battleship: the placement is in the input field, not sent yet.
    case placing
    case inProgress
    /// Battleship: the guesser found both ships. Tic-tac-toe: X won.
    case won
    /// Battleship: the guesser missed three times. Tic-tac-toe: O won.
    case lost
    case draw
    /// Battleship: the result reached the placer.
    case complete
}

/// A Battleship game's board, as the auditor knows it.
public struct BattleshipBoard: Hashable, Codable, Sendable {
    public var ships: [Int] = []
    public var hits: [Int] = []
    public var misses: [Int] = []
    public var livesLeft: Int { Battleship.incorrectAttemptsAllowed - misses.count }
    /// The device that placed the ships.
    public var placer: DeviceID?
    public var guesser: DeviceID?
}

/// A tic-tac-toe game's board.
public struct TicTacToeBoard: Hashable, Codable, Sendable {
    public var cells: [Int] = Array(repeating: 0, count: 9)
    public var toMove: Int = TicTacToe.x
    public var winner: Int = 0
    public var isDraw = false
    /// The device playing X (the first mover) and O.
    public var x: DeviceID?
    public var o: DeviceID?
}

/// One game: the messages of one session.
public struct GameView: Hashable, Codable, Sendable {
    public var session: SessionID
    public var kind: String
    public var status: GameStatus
    /// Messages sent in this session, oldest first.
    public var messages: [MessageID] = []
    public var battleship: BattleshipBoard?
    public var tictactoe: TicTacToeBoard?
    public var firstPosition: Int64
    public var lastPosition: Int64
}

/// Everything projections know about one conversation at one step: the replay unit.
public struct ConversationState: Hashable, Codable, Sendable {
    /// The version of the projection code. Bump it whenever `apply` changes, so stored
    /// snapshots of the old code are ignored and rebuilt.
    public static let projectionVersion = 1

    public var conversation: ConversationID
    public var kind: String = ""
    public var devices: [DeviceID: DeviceView] = [:]
    public var games: [SessionID: GameView] = [:]
    /// Game sessions in order of appearance.
    public var gameOrder: [SessionID] = []
    /// Which session each message belongs to.
    public var sessionOfMessage: [MessageID: SessionID] = [:]
    /// Which device each recording (stream) is on.
    public var deviceOfStream: [String: DeviceID] = [:]
    /// Events applied so far.
    public var step = 0
    public var position: Int64 = 0
    public var recordedAt: Int64 = 0

    public init(conversation: ConversationID) { self.conversation = conversation }

    public var orderedGames: [GameView] { gameOrder.compactMap { games[$0] } }
    public var orderedDevices: [DeviceView] { devices.values.sorted { $0.device < $1.device } }
}
