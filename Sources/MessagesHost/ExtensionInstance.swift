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

    public func deliver(_ item: Item, _ delivery: Delivery, completion: ((MessagesError?) -> Void)?) {
        // The host acts whether or not there is a completion (so not
        // `completion?(host.stage(...))`, which would skip it).
        let error = delivery == .send ? host.sendDirectly(item, by: self) : host.stage(item, by: self)
        completion?(error)
    }
}
