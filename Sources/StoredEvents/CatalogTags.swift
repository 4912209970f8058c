import EventLog
import Foundation
import MessagesModel
import RecordedEvents

extension EventTag.Kind {
    /// A conversation: each recording names the one it records, in its first event.
    public static let conversation = Self(rawValue: 1)
    /// A game: a message session that was inserted, sent or received.
    public static let game = Self(rawValue: 2)
}

extension RecordedEvent {
    /// The event types that name conversations or games: the only ones the catalog reads.
    public static let cataloguedTypes: Set<String> = [
        TypeName.recordingStarted, TypeName.insert, TypeName.action("send"), TypeName.transcriptSent, TypeName.transcriptArrived,
    ]

    /// What this event names for the catalog: the conversation a recording starts in,
    /// the game of a message inserted, sent or received.
    public var catalogTags: [EventTag] {
        let message: Message?
        switch self {
        case .recordingStarted(let info): return [EventTag(kind: .conversation, id: info.conversation.uuid)]
        case .action(let record, _):
            switch record.action {
            case .insert(let m), .send(let m): message = m
            default: message = nil
            }
        case .transcript(.sent(let item), _), .transcript(.arrived(let item, _), _): message = item.message
        default: message = nil
        }
        guard let session = message?.session else { return [] }
        return [EventTag(kind: .game, id: session.uuid)]
    }
}

extension StreamDecoder {
    /// A decoder that looks up, in `store`, the start of each recording it meets first
    /// in the middle (one read through the stream index, then remembered).
    /// - Parameter startsElsewhere: where to look first, for events not stored yet (an import's lines).
    public init(store: any EventLogReader, startsElsewhere: ((UUID) -> Payload?)? = nil) {
        self.init(firstEventOf: { stream in
            startsElsewhere?(stream)
                ?? (try? store.firstEvent(ofStream: stream))?.map { ($0.type, $0.typeVersion, $0.payload) }
        })
    }

    /// The catalog tags of one stored event of `stream`: see ``RecordedEvent/catalogTags``.
    public mutating func catalogTags(stream: UUID, type: String, typeVersion: Int, payload: [UInt8]) -> [EventTag] {
        guard RecordedEvent.cataloguedTypes.contains(type),
              let event = try? decode(stream: stream, type: type, typeVersion: typeVersion, payload: payload) else { return [] }
        return event.catalogTags
    }
}
