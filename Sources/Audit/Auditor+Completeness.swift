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
    static func unlistedFindings(_ store: any SignedLogReader, conversation: ConversationID, streams: Set<UUID>) throws -> [Finding] {
        var listed: Set<Int64> = []
        try store.scan(EventQuery(streams: streams), verify: false) { listed.insert($0.position) }
        guard let first = listed.min() else { return [] }
        let game = conversation.uuid.uuidString.lowercased()
        var findings: [Finding] = []
        // The other recordings met on the way, with where each was first met: which
        // conversation each records is read from its first event once the pass is over
        // (one read a recording, outside the pass's transaction).
        var others: [UUID: (position: Int64, first: StoredEvent?)] = [:]
        let problems = try store.passByPosition(from: first) { event in
            if streams.contains(event.stream) {
                if !listed.contains(event.position) {
                    findings.append(Finding(.error, .integrity, position: event.position, game: game, rule: "index-lists-every-event",
                                            expected: "every event of the game's recordings listed by the log's index",
                                            found: "the event at position \(event.position) (recording \(event.stream.uuidString.prefix(8).lowercased()), version \(event.streamVersion)) is not listed by the index: the game's own reads do not see it"))
                }
            } else if others[event.stream] == nil {
                // Its first event met here is kept: no index is needed to read it again.
                others[event.stream] = (event.position, event.first)
            }
        }
        var decoder = StreamDecoder(store: store)
        for (stream, met) in others.sorted(by: { $0.value.position < $1.value.position }) {
            let position = met.position
            // A recording names its conversation in its first event, `recording.started`;
            // one that began before the game is found through the index, which must list it.
            guard let start = try met.first ?? store.firstEvent(ofStream: stream) else {
                findings.append(Finding(.error, .integrity, position: position, game: game, rule: "index-lists-every-event",
                                        expected: "every recording's first event listed by the log's index",
                                        found: "recording \(stream.uuidString.prefix(8).lowercased()) (met at position \(position)) began before this game, and the index does not list its first event"))
                continue
            }
            let tags = decoder.catalogTags(stream: stream, type: start.type, typeVersion: start.typeVersion, payload: start.payload)
            guard tags.contains(where: { $0.kind == .conversation && $0.id == conversation.uuid }) else { continue }
            findings.append(Finding(.error, .catalog, position: position, game: game, rule: "catalog-lists-every-recording",
                                    expected: "every recording of the conversation listed by the catalog",
                                    found: "recording \(stream.uuidString.prefix(8).lowercased()) belongs to this conversation (its first event says so; met at position \(position)), and the catalog does not list it: the game's own reads do not see it"))
        }
        return findings + problems.map { problem in
            Finding(.error, .integrity, position: problem.position, game: game, rule: rule(problem),
                    expected: "an untouched event", found: problem.description)
        }
    }
}
