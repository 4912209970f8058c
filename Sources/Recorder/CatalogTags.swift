import EventStore
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

    /// The catalog tags of a stored payload; none for a type the catalog does not read
    /// or a payload that does not decode (`verify` reports those on its own).
    public static func catalogTags(type: String, typeVersion: Int, payload: [UInt8]) -> [EventTag] {
        guard cataloguedTypes.contains(type),
              let event = try? decode(type: type, typeVersion: typeVersion, payload: payload) else { return [] }
        return event.catalogTags
    }
}
