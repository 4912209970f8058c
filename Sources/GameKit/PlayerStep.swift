import MessagesHost
import MessagesModel

/// One thing a player (or the network) does on a device.
public enum PlayerStep: Hashable, Sendable, CustomStringConvertible {
    /// A user action, carried out as is.
    case act(UserAction)
    /// Tap the newest message of the extension in the open conversation.
    case tapLatestMessage
    /// Deliver the oldest message waiting for this device.
    case deliver

    public var description: String {
        switch self {
        case .act(let action): return action.description
        case .tapLatestMessage: return "tap the latest message"
        case .deliver: return "a message arrives"
        }
    }
}

extension MessagesHost {
    /// The newest extension message in `device`'s transcript of `conversation`.
    public func latestMessage(on device: DeviceID, in conversation: ConversationID) -> Message? {
        transcript(on: device, in: conversation).last { $0.message != nil }?.message
    }

    /// Carries out a step; returns false (and does nothing) if it is not possible now.
    @discardableResult
    public func run(_ step: PlayerStep, on device: DeviceID) -> Bool {
        do {
            switch step {
            case .act(let action):
                try perform(action, on: device)
            case .tapLatestMessage:
                guard let conversation = currentConversation(of: device),
                      let message = latestMessage(on: device, in: conversation) else { return false }
                try perform(.tapMessage(message.id), on: device)
            case .deliver:
                try deliverNext(to: device)
            }
            return true
        } catch {
            return false
        }
    }
}
