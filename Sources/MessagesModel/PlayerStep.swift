/// One thing a player (or the network) does on a device.
public enum PlayerStep: Hashable, Sendable, CustomStringConvertible {
    /// A user action, carried out as is.
    case act(UserAction)
    /// Tap the newest message of the extension in the open conversation.
    case tapLatestMessage
    /// Deliver the oldest message waiting for this device.
    case deliver
    /// Wait for what is on its way: nothing is done, and the world's time moves on (a
    /// person who sent a game waits for the answer rather than start another).
    case wait

    public var description: String {
        switch self {
        case .act(let action): return action.description
        case .tapLatestMessage: return "tap the latest message"
        case .deliver: return "a message arrives"
        case .wait: return "waits"
        }
    }
}

/// Messages as the people using it see it, on every device: what a simulated player
/// may read to decide its next step. The simulated host is one; a game's players never
/// need more, so game modules need no host.
public protocol MessagesWorld: AnyObject {
    /// The conversation open on the device, if any.
    func currentConversation(of device: DeviceID) -> ConversationID?
    /// The device's transcript of a conversation, oldest first.
    func transcript(on device: DeviceID, in conversation: ConversationID) -> [Bubble]
    /// What waits in the device's input field in a conversation.
    func staged(on device: DeviceID, in conversation: ConversationID) -> Item?
    /// Devices with a message on its way to them, in the order the messages will arrive.
    var devicesAwaitingDelivery: [DeviceID] { get }
    /// The device's extension while it shows in the open conversation.
    func shownExtension(on device: DeviceID) -> ShownExtension?
}

/// An extension as its user sees it: how it is presented, the message selected, its screen.
public struct ShownExtension: Hashable, Sendable {
    public var style: PresentationStyle
    public var selectedMessage: Message?
    public var screen: Screen

    public init(style: PresentationStyle, selectedMessage: Message?, screen: Screen) {
        self.style = style
        self.selectedMessage = selectedMessage
        self.screen = screen
    }
}

extension MessagesWorld {
    /// The newest extension message in `device`'s transcript of `conversation`.
    public func latestMessage(on device: DeviceID, in conversation: ConversationID) -> Message? {
        transcript(on: device, in: conversation).last { $0.message != nil }?.message
    }
}
