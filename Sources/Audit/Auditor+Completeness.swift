import EventStore
import Foundation
import MessagesModel
import RecordedEvents
import StoredEvents

extension Auditor {
    /// One game's events are found through the log's index (the catalog and the block
    /// index), which is derived and unsigned: a forger can remove the rows of a
    /// recording's last blocks, or of a later recording of the conversation, and the
    /// game's own reads no longer see those events. So one game's audit also reads the log
    /// by position from the game's first event to its end, re-deriving every block index
    /// row there, and names each event of the game's recordings the index does not list
    /// and each recording that names the game's conversation or one of its games without
    /// being listed. Its cost is the log from the game's first event on.
    static func unlistedFindings(_ store: EventStore, conversation: ConversationID, streams: Set<UUID>) throws -> [Finding] {
        var listed: Set<Int64> = []
        try store.scan(EventQuery(streams: streams), verify: false) { listed.insert($0.position) }
        guard let first = listed.min() else { return [] }
        let game = conversation.uuid.uuidString.lowercased()
        var findings: [Finding] = []
        var decoder = StreamDecoder(store: store)
        var sessions: Set<UUID> = []
        // Recordings outside the game that name its conversation (at once) or a game (kept
        // until the game's own sessions are known), with the position that names it.
        var named: [UUID: Int64] = [:], naming: [(stream: UUID, session: UUID, position: Int64)] = []
        let problems = try store.verifyIndexes(from: first) { event in
            let inGame = streams.contains(event.stream)
            if inGame, !listed.contains(event.position) {
                findings.append(Finding(.error, .integrity, position: event.position, game: game, rule: "index-lists-every-event",
                                        expected: "every event of the game's recordings listed by the log's index",
                                        found: "the event at position \(event.position) (recording \(event.stream.uuidString.prefix(8).lowercased()), version \(event.streamVersion)) is not listed by the index: the game's own reads do not see it"))
            }
            guard RecordedEvent.cataloguedTypes.contains(event.type), inGame || named[event.stream] == nil else { return }
            for tag in decoder.catalogTags(stream: event.stream, type: event.type, typeVersion: event.typeVersion, payload: event.payload) {
                if inGame {
                    if tag.kind == .game { sessions.insert(tag.id) }
                } else if tag.kind == .conversation, tag.id == conversation.uuid {
                    named[event.stream] = event.position
                } else if tag.kind == .game {
                    naming.append((event.stream, tag.id, event.position))
                }
            }
        }
        for (stream, session, position) in naming where sessions.contains(session) && named[stream] == nil { named[stream] = position }
        for (stream, position) in named.sorted(by: { $0.value < $1.value }) {
            findings.append(Finding(.error, .catalog, position: position, game: game, rule: "catalog-lists-every-recording",
                                    expected: "every recording of the conversation listed by the catalog",
                                    found: "recording \(stream.uuidString.prefix(8).lowercased()) belongs to this conversation (its event at position \(position) says so), and the catalog does not list it: the game's own reads do not see it"))
        }
        return findings + problems.map { problem in
            Finding(.error, .integrity, position: problem.position, game: game, rule: rule(problem),
                    expected: "an untouched event", found: problem.description)
        }
    }
}
