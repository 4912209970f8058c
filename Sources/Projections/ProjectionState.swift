import Foundation
import GameKit
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

    /// The device owner's name, as the device shows it.
    public var ownerName: String? {
        guard let local = localParticipant?.uuid else { return nil }
        // A device knows two or three names: its keys compared with the id in place cost
        // less than the key string a lookup needs (keys are ASCII, so bytes equal is
        // String-equal). A recording may list any number: past a few, the lookup.
        guard names.count <= 8 else { return names[local.hyphenatedString] }
        for (key, name) in names where local.isSpelled(by: key) { return name }
        return nil
    }

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
public enum GameStatus: String, Hashable, Codable, Sendable, CaseIterable {
    /// Its first message waits in an input field, not sent yet.
    case staged
    case inProgress
    /// Over: won, lost or drawn, as the game's plug-in reads the board.
    case finished
    /// Its only message was deleted from the input field, or replaced there, unsent.
    case abandoned

    /// The status as people read it ("in progress"); the raw value is for scripts (`--json`).
    public var words: String { self == .inProgress ? "in progress" : rawValue }

    /// The words for a status as `--json` and game summaries write it; text that names
    /// no status stays as it is.
    public static func words(_ raw: String) -> String { GameStatus(rawValue: raw)?.words ?? raw }
}

/// One game: the messages of one session, and the board its plug-in folds them into.
public struct GameView: Hashable, Codable, Sendable {
    public var session: SessionID
    public var kind: String
    public var status: GameStatus
    /// The winner's name once finished (nil for a draw).
    public var winner: String?
    /// Messages sent or received in this session, oldest first.
    public var messages: [MessageID] = []
    public var board: AnyBoard
    /// The steps (1-based, in the conversation) of the game's first and latest events.
    public var firstStep: Int
    public var lastStep: Int
    public var firstPosition: Int64
    public var lastPosition: Int64
    /// Microseconds since 1970 of the game's first and latest events.
    public var startedAt: Int64
    public var endedAt: Int64
    /// How an abandoned game's only message left the input field.
    public var abandonment: Abandonment?
    /// The game's events so far, as ``GameMembership`` counts them (an activation's
    /// events join when it ends): what `games` lists and `log --game` shows.
    public var events = 0

    public enum Abandonment: String, Hashable, Codable, Sendable {
        /// The user deleted it.
        case deleted
        /// The extension put another message in its place.
        case replaced
    }
}

/// Everything projections know about one conversation at one step: the replay unit.
public struct ConversationState: Hashable, Codable, Sendable {
    /// The version of the projection code. Bump it whenever `apply` changes, so stored
    /// snapshots of the old code are ignored and rebuilt.
    public static let projectionVersion = 5

    public var conversation: ConversationID
    /// The games whose boards this state folds.
    public var registry: GameRegistry
    public var kind: String = ""
    public var devices: [DeviceID: DeviceView] = [:]
    public var games: [SessionID: GameView] = [:]
    /// Game sessions in order of appearance.
    public var gameOrder: [SessionID] = []
    /// Which session each message belongs to.
    public var sessionOfMessage: [MessageID: SessionID] = [:]
    /// Which device each recording (stream) is on.
    public var deviceOfStream: [String: DeviceID] = [:]
    /// The owners of the devices whose recordings have started, by name.
    public var recordedPlayers: Set<String> = []
    /// Everyone in the conversation, by name, as the recordings list them.
    public var participants: Set<String> = []
    /// The owners whose recordings the whole log holds, when the folder knows it up
    /// front (an audit does); else ``recordedPlayers`` so far stands for it.
    public var knownRecordedPlayers: Set<String>?
    /// Messages seen sent or arrived on any device so far.
    public var seenMessages: Set<MessageID> = []
    /// Messages seen sent so far (a second send of one is the user's Try Again).
    public var sentMessages: Set<MessageID> = []
    /// Which events belong to which game, and the activations still under way.
    public var membership = GameMembership()
    /// Events applied so far.
    public var step = 0
    public var position: Int64 = 0
    public var recordedAt: Int64 = 0

    public init(conversation: ConversationID, games: GameRegistry) {
        self.conversation = conversation
        registry = games
    }

    /// The plug-in of this conversation's extension, if the registry has it.
    public var plugin: (any GamePlugin)? { registry.plugin(for: kind) }

    public var orderedGames: [GameView] { gameOrder.compactMap { games[$0] } }
    /// Participants whose own device's recording this log does not hold, by name.
    public var missingRecordings: [String] { participants.subtracting(recordedPlayers).sorted() }
    public var orderedDevices: [DeviceView] { devices.values.sorted { $0.device < $1.device } }
}
