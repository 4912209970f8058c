import EventStore
import Foundation
import GameKit
import MessagesModel
import Projections

/// Conversations' games as a store keeps them (``StoredSummaries``): what a page of games
/// reads instead of folding every event of its conversations, when the store's row is
/// current and this code's own.
extension GameCatalog {
    /// What a stored row holds: the auditor's summaries of a conversation's games (without
    /// a fork's origin, which the page reads from the store's forks) and its outline.
    package struct StoredBody: Codable, Equatable {
        var steps: Int
        var devices: [DeviceID]
        var games: [GameSummary]
    }

    /// The format this code stores and reads summaries in: the body's layout, the
    /// projections' version and the games registered (kind and title), since a summary
    /// names a game's title and its result as the game's code words it. A row in another
    /// format is not read (`gamelog index` writes it again).
    public static func summaryFormat(games registry: GameRegistry) -> String {
        "gamelog-summaries 1; projection \(ConversationState.projectionVersion); games "
            + registry.plugins.map { "\($0.kind)=\($0.title)" }.sorted().joined(separator: ",")
    }

    /// The games and outline a fold of `events` (a conversation's, in replay order) gives,
    /// as the auditor sees them.
    package static func folded(_ conversation: ConversationID, events: [ReplayEvent], games registry: GameRegistry) -> StoredBody {
        // A replayer's fold to its last step, without the snapshots it keeps on the way
        // (each one a copy of the state that the next steps then copy again).
        var state = ConversationState(conversation: conversation, games: registry)
        for event in events { _ = state.apply(event) }
        return StoredBody(steps: events.count, devices: Set(events.compactMap(\.device)).sorted(),
                          games: summaries(of: state.playerView(for: .auditor)))
    }

    static func encode(_ body: StoredBody) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array(try encoder.encode(body))
    }

    /// A stored row's body, if it decodes and speaks of `conversation` alone.
    static func decode(_ stored: StoredSummaries, of conversation: ConversationID) -> StoredBody? {
        guard let body = try? JSONDecoder().decode(StoredBody.self, from: Data(stored.body)) else { return nil }
        let id = conversation.uuid.uuidString.lowercased()
        guard body.steps >= 0, body.games.allSatisfy({ $0.conversation == id && $0.forkedFrom == nil }) else { return nil }
        return body
    }

    /// The stored summaries of those of `conversations` whose row is in this code's format
    /// and current: every recording the catalog gives the conversation (`streamsOf`) stands
    /// at the version and head the row was folded from, and no other. Any other row is as
    /// good as none (the conversation is folded from its events).
    package static func currentStoredSummaries(_ store: any EventLogReader, conversations: [ConversationID],
                                       streamsOf: [ConversationID: Set<UUID>], games registry: GameRegistry) throws -> [ConversationID: StoredBody] {
        guard !conversations.isEmpty, let signed = store as? SignedLogReader else { return [:] }
        let stored = try store.storedSummaries(conversations: Set(conversations.map(\.uuid)), format: summaryFormat(games: registry))
        guard !stored.isEmpty else { return [:] }
        let rows = try signed.recordingRows(stored.keys.reduce(into: Set<UUID>()) { $0.formUnion(streamsOf[ConversationID($1)] ?? []) })
        var current: [ConversationID: StoredBody] = [:]
        for conversation in conversations {
            guard let row = stored[conversation.uuid], let streams = streamsOf[conversation], !streams.isEmpty,
                  Set(row.recordings.keys) == streams,
                  row.isCurrent(rows.filter { streams.contains($0.key) }),
                  let body = decode(row, of: conversation) else { continue }
            current[conversation] = body
        }
        return current
    }

    /// Folds `conversations` as the store holds them and returns their rows to store.
    ///
    /// The recordings' rows are read first and the events after: events appended in
    /// between are left out (each recording's first `version` events are folded), so a
    /// row never claims more than it folded. A conversation whose events fall short of its
    /// rows (damage; `verify` names it) gets no row.
    public static func summariesToStore(_ store: any SignedLogReader, conversations streamsOf: [ConversationID: Set<UUID>],
                                        games registry: GameRegistry) throws -> [StoredSummaries] {
        let rows = try store.recordingRows(streamsOf.values.reduce(into: Set<UUID>()) { $0.formUnion($1) })
        // Damaged events are left out, so their conversations fall short below and get no row.
        let eventsOf = try Replayer.load(from: store, conversations: streamsOf, skippingDamaged: { _ in })
        let format = summaryFormat(games: registry)
        var out: [StoredSummaries] = []
        for (conversation, streams) in streamsOf where !streams.isEmpty {
            var recordings: [UUID: StoredSummaries.Recording] = [:]
            for stream in streams {
                guard let row = rows[stream], let head = row.head, row.version >= 1 else { break }
                recordings[stream] = StoredSummaries.Recording(version: row.version, head: head)
            }
            guard recordings.count == streams.count else { continue }
            // Each recording's first `version` events by position (its versions count up
            // from 1 in position order); later ones were appended after its row was read.
            let all = eventsOf[conversation] ?? []
            var positionsOf: [UUID: [Int64]] = [:]
            for event in all { positionsOf[event.stream, default: []].append(event.position) }
            var last: [UUID: Int64] = [:]
            for (stream, recording) in recordings {
                let positions = (positionsOf[stream] ?? []).sorted()
                if positions.count >= recording.version { last[stream] = positions[Int(recording.version) - 1] }
            }
            guard last.count == recordings.count else { continue }
            let events = all.filter { $0.position <= last[$0.stream] ?? 0 }
            let body = folded(conversation, events: events, games: registry)
            out.append(StoredSummaries(conversation: conversation.uuid, format: format, recordings: recordings, body: try encode(body)))
        }
        return out
    }
}
