import MessagesModel

/// One running copy of an extension and the host-side state Messages keeps for it.
/// It is also the ``ExtensionHost`` the extension acts through.
public final class ExtensionInstance: ExtensionHost {
    public let info: InstanceInfo
    public let `extension`: any MessagesAppExtension
    unowned let host: MessagesHost

    public internal(set) var isActive = false
    public internal(set) var style: PresentationStyle
    public internal(set) var selectedMessage: Message?
    /// The host's action counter at the last touch, for iOS 11's send rules.
    var lastTouch: Int?

    init(info: InstanceInfo, extension ext: any MessagesAppExtension, host: MessagesHost) {
        self.info = info
        self.extension = ext
        self.host = host
        self.style = info.liveMessage == nil ? .compact : .transcript
    }

    var conversationValue: Conversation {
        Conversation(id: info.conversation, localParticipantIdentifier: info.localParticipant,
                     remoteParticipantIdentifiers: info.remoteParticipants, selectedMessage: selectedMessage)
    }

    // MARK: ExtensionHost

    public var presentationStyle: PresentationStyle { style }
    public var activeConversation: Conversation? { isActive ? conversationValue : nil }

    public func makeSession() -> SessionID { SessionID(host.ids.uuid()) }

    public func makeMessage(session: SessionID?) -> Message {
        Message(id: MessageID(host.ids.uuid()), session: session)
    }

    public func requestPresentationStyle(_ requested: PresentationStyle) {
        // The host decides: transcript style cannot be requested or left.
        guard isActive, requested != .transcript, style != .transcript, requested != style else { return }
        host.enqueue { [self] in
            guard isActive, style != requested else { return }
            host.transition(self, to: requested)
        }
    }

    public func dismiss() {
        guard style != .transcript, isActive else { return }
        host.enqueue { [self] in
            guard isActive else { return }
            host.resign(self)
        }
    }

    public func insert(_ message: Message, completion: ((MessagesError?) -> Void)?) {
        complete(completion, with: host.stage(.message(message), by: self))
    }

    public func insert(_ message: Message, localizedChangeDescription: String?, completion: ((MessagesError?) -> Void)?) {
        // The description is for VoiceOver; Messages stages the message as insert does.
        insert(message, completion: completion)
    }

    public func insertText(_ text: String, completion: ((MessagesError?) -> Void)?) {
        complete(completion, with: host.stage(.text(text), by: self))
    }

    public func insertSticker(_ sticker: Sticker, completion: ((MessagesError?) -> Void)?) {
        complete(completion, with: host.stage(.sticker(sticker), by: self))
    }

    public func insertAttachment(_ fileURL: String, alternateFilename: String?, completion: ((MessagesError?) -> Void)?) {
        complete(completion, with: host.stage(.attachment(fileURL: fileURL, alternateFilename: alternateFilename), by: self))
    }

    public func send(_ message: Message, completion: ((MessagesError?) -> Void)?) {
        complete(completion, with: host.sendDirectly(.message(message), by: self))
    }

    public func sendText(_ text: String, completion: ((MessagesError?) -> Void)?) {
        complete(completion, with: host.sendDirectly(.text(text), by: self))
    }

    public func sendSticker(_ sticker: Sticker, completion: ((MessagesError?) -> Void)?) {
        complete(completion, with: host.sendDirectly(.sticker(sticker), by: self))
    }

    public func sendAttachment(_ fileURL: String, alternateFilename: String?, completion: ((MessagesError?) -> Void)?) {
        complete(completion, with: host.sendDirectly(.attachment(fileURL: fileURL, alternateFilename: alternateFilename), by: self))
    }

    /// Hands the host's answer to the extension's completion. The host acts whether or
    /// not there is a completion (so not `completion?(host.stage(...))`, which would skip it).
    private func complete(_ completion: ((MessagesError?) -> Void)?, with error: MessagesError?) {
        completion?(error)
    }
}
