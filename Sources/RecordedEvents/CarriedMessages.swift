import MessagesModel

/// Where in an event a message is carried.
public enum MessagePlace: Hashable, Sendable {
    /// The message a callback was handed (select, receive, send, cancel).
    case callbackArgument(Callback)
    /// The conversation's selected message, as a callback was handed it.
    case selection
    /// What the extension put in the input field.
    case inserted
    /// What the extension sent itself (iOS 11 `send`).
    case sentByExtension
    /// What the user sent: now at the bottom of the device's transcript.
    case transcriptSent
    /// What arrived from another device.
    case transcriptArrived
}

extension RecordedEvent {
    /// Calls `body` with every message the event carries, with where, building nothing:
    /// the projections ask it of every event they fold. It names the places
    /// ``mappingMessages(_:)`` maps, in the same order (a test holds the two together).
    public func forEachCarriedMessage(_ body: (Message, MessagePlace) -> Void) {
        switch self {
        case .callback(let record, _):
            if let message = record.message { body(message, .callbackArgument(record.callback)) }
            if let selected = record.conversation?.selectedMessage { body(selected, .selection) }
        case .action(let record, _):
            switch record.action {
            case .insert(let message): body(message, .inserted)
            case .send(let message): body(message, .sentByExtension)
            default: break
            }
        case .transcript(.sent(.message(let message)), _): body(message, .transcriptSent)
        case .transcript(.arrived(.message(let message), _), _): body(message, .transcriptArrived)
        case .recordingStarted, .recordingEnded, .input, .transcript, .screen: break
        }
    }

    /// The event with every message it carries replaced by `transform`'s answer (a
    /// player's view of each, say); events that carry none come back unchanged.
    public func mappingMessages(_ transform: (Message, MessagePlace) -> Message) -> RecordedEvent {
        switch self {
        case .callback(var record, let context):
            if let message = record.message { record.message = transform(message, .callbackArgument(record.callback)) }
            if let selected = record.conversation?.selectedMessage { record.conversation?.selectedMessage = transform(selected, .selection) }
            return .callback(record, context)
        case .action(var record, let context):
            switch record.action {
            case .insert(let message): record.action = .insert(transform(message, .inserted))
            case .send(let message): record.action = .send(transform(message, .sentByExtension))
            default: return self
            }
            return .action(record, context)
        case .transcript(.sent(.message(let message)), let context):
            return .transcript(.sent(.message(transform(message, .transcriptSent))), context)
        case .transcript(.arrived(.message(let message), let sender), let context):
            return .transcript(.arrived(.message(transform(message, .transcriptArrived)), sender: sender), context)
        case .recordingStarted, .recordingEnded, .input, .transcript, .screen:
            return self
        }
    }
}
