import EventStore
import Foundation
import MessagesModel
import RecordedEvents

/// Which recordings make up each conversation, and which games (sessions) each holds,
/// read from the few event types that say so. It finds a game's events without folding
/// the whole log the way ``GameCatalog`` does.
public struct GameIndex {
    /// The recordings (streams) of each conversation.
    public private(set) var streams: [ConversationID: Set<UUID>] = [:]
    /// Conversations in order of their first recording.
    public private(set) var conversations: [ConversationID] = []
    /// The conversation of every session a message was inserted, sent or received in.
    public private(set) var sessions: [SessionID: ConversationID] = [:]
    private let store: EventStore
    private var sawEveryMessage = false

    /// Reads the recordings' first events and the sent messages: every game that was
    /// ever sent. Games only staged (inserted, never sent) are looked up on demand.
    public init(store: EventStore) throws {
        self.store = store
        try store.scan(EventQuery(types: [RecordedEvent.TypeName.recordingStarted])) { stored in
            guard case .recordingStarted(let info)? = try? RecordedEvent.decode(
                type: stored.type, typeVersion: stored.typeVersion, payload: stored.payload) else {
                throw ReplayError.undecodableEvent(position: stored.position, detail: "a recording.started payload")
            }
            if streams[info.conversation] == nil { conversations.append(info.conversation) }
            streams[info.conversation, default: []].insert(stored.stream)
        }
        try indexSessions(types: [RecordedEvent.TypeName.transcriptSent])
    }

    private mutating func indexSessions(types: Set<String>) throws {
        try store.scan(EventQuery(types: types)) { stored in
            let event: RecordedEvent
            do {
                event = try RecordedEvent.decode(type: stored.type, typeVersion: stored.typeVersion, payload: stored.payload)
            } catch {
                throw ReplayError.undecodableEvent(position: stored.position, detail: String(describing: error))
            }
            let message: Message?
            switch event {
            case .action(let record, _): if case .insert(let m) = record.action { message = m } else { message = nil }
            case .transcript(.sent(let item), _), .transcript(.arrived(let item, _), _): message = item.message
            default: message = nil
            }
            if let session = message?.session, let conversation = event.context?.conversation, sessions[session] == nil {
                sessions[session] = conversation
            }
        }
    }

    /// The conversation of the game (or conversation) whose id starts with `prefix`,
    /// and the game's session when the prefix named one.
    public func resolve(_ prefix: String) throws -> (conversation: ConversationID, game: SessionID?) {
        do {
            return try match(prefix)
        } catch ReplayError.noSuchGame where !sawEveryMessage {
            var wider = self
            try wider.indexSessions(types: [RecordedEvent.TypeName.insert, RecordedEvent.TypeName.transcriptArrived])
            wider.sawEveryMessage = true
            return try wider.match(prefix)
        }
    }

    private func match(_ prefix: String) throws -> (conversation: ConversationID, game: SessionID?) {
        let needle = prefix.lowercased()
        guard !needle.isEmpty else { throw ReplayError.noSuchGame(prefix) }
        var matches: [(ConversationID, SessionID?)] = conversations
            .filter { $0.uuid.uuidString.lowercased().hasPrefix(needle) }.map { ($0, nil) }
        matches += sessions.filter { $0.key.uuid.uuidString.lowercased().hasPrefix(needle) }
            .sorted { $0.key.uuid.uuidString < $1.key.uuid.uuidString }.map { ($0.value, $0.key) }
        guard let first = matches.first else { throw ReplayError.noSuchGame(prefix) }
        guard Set(matches.map(\.0)).count == 1 else {
            throw ReplayError.ambiguousGame(prefix, candidates: matches.map { ($0.1?.uuid ?? $0.0.uuid).uuidString.lowercased() })
        }
        return (first.0, matches.first { $0.1 != nil }?.1)
    }
}
