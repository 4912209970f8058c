import Foundation
import MessagesModel

/// Where and in what state an event happened: the extension instance's device and
/// conversation, its presentation style, whether it was active, and the selected
/// message.
public struct EventContext: Hashable, Codable, Sendable {
    public var device: DeviceID
    public var conversation: ConversationID
    public var style: PresentationStyle
    public var isActive: Bool
    public var selectedMessage: MessageID?

    public init(device: DeviceID, conversation: ConversationID, style: PresentationStyle, isActive: Bool,
                selectedMessage: MessageID?) {
        self.device = device
        self.conversation = conversation
        self.style = style
        self.isActive = isActive
        self.selectedMessage = selectedMessage
    }
}

/// A lifecycle callback as the extension received it.
public struct CallbackRecord: Hashable, Codable, Sendable {
    public var callback: Callback
    /// The conversation passed to the callback, for those that take one.
    public var conversation: Conversation?
    /// The message passed to select, receive, send and cancel callbacks.
    public var message: Message?
    /// The style passed to transition callbacks.
    public var style: PresentationStyle?
    /// `contentSizeThatFits(_:)`: the largest size Messages offered.
    public var availableSize: ContentSize?
    /// `contentSizeThatFits(_:)`: the size the extension answered.
    public var contentSize: ContentSize?

    public init(callback: Callback, conversation: Conversation? = nil, message: Message? = nil, style: PresentationStyle? = nil,
                availableSize: ContentSize? = nil, contentSize: ContentSize? = nil) {
        self.callback = callback
        self.conversation = conversation
        self.message = message
        self.style = style
        self.availableSize = availableSize
        self.contentSize = contentSize
    }
}

/// Something the extension asked of Messages.
public enum ExtensionAction: Hashable, Codable, Sendable {
    case insert(Message)
    case insertText(String)
    case insertSticker(Sticker)
    case insertAttachment(fileURL: String, alternateFilename: String?)
    case send(Message)
    case sendText(String)
    case sendSticker(Sticker)
    case sendAttachment(fileURL: String, alternateFilename: String?)
    case requestPresentationStyle(PresentationStyle)
    case dismiss

    /// The event type suffix, e.g. `insert`.
    public var name: String {
        switch self {
        case .insert: return "insert"
        case .insertText: return "insertText"
        case .insertSticker: return "insertSticker"
        case .insertAttachment: return "insertAttachment"
        case .send: return "send"
        case .sendText: return "sendText"
        case .sendSticker: return "sendSticker"
        case .sendAttachment: return "sendAttachment"
        case .requestPresentationStyle: return "requestPresentationStyle"
        case .dismiss: return "dismiss"
        }
    }
}

extension ExtensionAction {
    /// The action a delivery of `item` records: `insertText` for text staged, `send` for
    /// a message sent, and so on.
    public init(_ item: Item, _ delivery: Delivery) {
        switch (item, delivery) {
        case (.message(let m), .send): self = .send(m)
        case (.message(let m), _): self = .insert(m)
        case (.text(let t), .send): self = .sendText(t)
        case (.text(let t), _): self = .insertText(t)
        case (.sticker(let s), .send): self = .sendSticker(s)
        case (.sticker(let s), _): self = .insertSticker(s)
        case (.attachment(let url, let name), .send): self = .sendAttachment(fileURL: url, alternateFilename: name)
        case (.attachment(let url, let name), _): self = .insertAttachment(fileURL: url, alternateFilename: name)
        }
    }
}

/// An action and what came of it.
public struct ActionRecord: Hashable, Codable, Sendable {
    public var action: ExtensionAction
    /// The error passed to the completion handler, if any.
    public var error: MessagesError?
    /// Rules the accepted URL still breaks (e.g. no scheme), as sentences.
    public var warnings: [String]
    /// Set when the extension called `insert(_:localizedChangeDescription:)`, with the
    /// description it gave (seed 003 gives none); nil for every other call.
    public var changeDescription: ChangeDescription?

    public init(action: ExtensionAction, error: MessagesError? = nil, warnings: [String] = [],
                changeDescription: ChangeDescription? = nil) {
        self.action = action
        self.error = error
        self.warnings = warnings
        self.changeDescription = changeDescription
    }
}

/// The `localizedChangeDescription` an insert was given: present (even with no text)
/// only when the extension used that variant, so a plain insert's payload is unchanged.
public struct ChangeDescription: Hashable, Codable, Sendable {
    public var text: String?
    public init(_ text: String?) { self.text = text }

    /// The description a delivery carries, if it was an insert with one.
    public init?(_ delivery: Delivery) {
        guard case .insertDescribing(let text) = delivery else { return nil }
        self.text = text
    }
}

/// Everything gamelog records: one case per kind of event. Each is stored with
/// type `<category>.<name>` (e.g. `callback.didReceive`) and a JSON payload with
/// sorted keys (see docs/FORMAT.md).
public indirect enum RecordedEvent: Hashable, Sendable {
    /// A recording (one extension instance) begins. Always version 1 of its stream.
    case recordingStarted(InstanceInfo)
    /// The instance ended (Messages quit on its device).
    case recordingEnded(EventContext)
    /// The user did something in Messages or in the extension's UI.
    case input(UserAction, EventContext)
    case callback(CallbackRecord, EventContext)
    case action(ActionRecord, EventContext)
    /// The device's transcript changed without a callback (a send, an arrival).
    case transcript(TranscriptChange, EventContext)
    /// The extension's UI changed to this screen.
    case screen(Screen, EventContext)

    /// Stored type names that readers look for by name.
    public enum TypeName {
        public static let recordingStarted = "recording.started"
        public static let recordingEnded = "recording.ended"
        public static let transcriptSent = "transcript.sent"
        public static let transcriptArrived = "transcript.arrived"
        public static let screen = "ui.screen"
        /// `callback.<name>`, e.g. `callback.didReceive`.
        public static func callback(_ callback: Callback) -> String { "callback." + callback.rawValue }
        /// `action.<name>`, e.g. `action.insert`.
        public static func action(_ name: String) -> String { "action." + name }
        public static let insert = "action.insert"
    }

    /// The stored event type.
    public var type: String {
        switch self {
        case .recordingStarted: return TypeName.recordingStarted
        case .recordingEnded: return TypeName.recordingEnded
        case .input(let action, _): return "input." + action.kindName
        case .callback(let record, _): return TypeName.callback(record.callback)
        case .action(let record, _): return TypeName.action(record.action.name)
        case .transcript(.sent, _): return TypeName.transcriptSent
        case .transcript(.arrived, _): return TypeName.transcriptArrived
        case .screen: return TypeName.screen
        }
    }

    /// Whether ``type`` is `category.name` (its UTF-8 bytes), without spelling it: asked
    /// of every event decoded, where comparing `Substring`s took the generic path.
    func hasType(category: UnsafeBufferPointer<UInt8>, name: UnsafeBufferPointer<UInt8>) -> Bool {
        func equal(_ part: UnsafeBufferPointer<UInt8>, _ word: String) -> Bool { CanonicalReader.same(part, word) }
        switch self {
        case .recordingStarted: return equal(category, "recording") && equal(name, "started")
        case .recordingEnded: return equal(category, "recording") && equal(name, "ended")
        case .input(let action, _): return equal(category, "input") && equal(name, action.kindName)
        case .callback(let record, _): return equal(category, "callback") && equal(name, record.callback.rawValue)
        case .action(let record, _): return equal(category, "action") && equal(name, record.action.name)
        case .transcript(.sent, _): return equal(category, "transcript") && equal(name, "sent")
        case .transcript(.arrived, _): return equal(category, "transcript") && equal(name, "arrived")
        case .screen: return equal(category, "ui") && equal(name, "screen")
        }
    }

    /// The newest payload layout version this build reads: 2, the compact layout
    /// (``CompactPayload``). Version 1 payloads are read through its upcaster, forever.
    public static let currentTypeVersion = 2

    /// The conversation the event happened in.
    public var conversation: ConversationID? {
        if case .recordingStarted(let info) = self { return info.conversation }
        return context?.conversation
    }

    public var context: EventContext? {
        switch self {
        case .recordingStarted: return nil
        case .recordingEnded(let c), .input(_, let c), .callback(_, let c), .action(_, let c),
             .transcript(_, let c), .screen(_, let c):
            return c
        }
    }
}

extension UserAction {
    /// The event type suffix, e.g. `tapMessage`.
    public var kindName: String {
        switch self {
        case .openConversation: return "openConversation"
        case .leaveMessages: return "leaveMessages"
        case .quitMessages: return "quitMessages"
        case .openExtension: return "openExtension"
        case .tapMessage: return "tapMessage"
        case .viewLiveMessage: return "viewLiveMessage"
        case .touch: return "touch"
        case .expand: return "expand"
        case .collapse: return "collapse"
        case .tapSend: return "tapSend"
        case .deleteStaged: return "deleteStaged"
        case .dismissExtension: return "dismissExtension"
        case .tryAgain: return "tryAgain"
        }
    }
}
