import MessagesModel

/// A user action that cannot happen in the current state (so it is not performed).
public enum HostError: Error, Hashable, Sendable, CustomStringConvertible {
    case unknownDevice(DeviceID)
    case unknownConversation(ConversationID)
    case notAParticipant(DeviceID, ConversationID)
    case noConversationOpen(DeviceID)
    case messageNotInTranscript(MessageID)
    case extensionNotActive(DeviceID)
    case nothingStaged(DeviceID)
    case noSuchDelivery
    case transcriptHidden(DeviceID)
    case nothingToTryAgain(MessageID)

    public var description: String {
        switch self {
        case .unknownDevice(let d): return "there is no device \(d)"
        case .unknownConversation(let c): return "there is no conversation \(c)"
        case .notAParticipant(let d, let c): return "device \(d) is not in conversation \(c)"
        case .noConversationOpen(let d): return "device \(d) has no conversation open"
        case .messageNotInTranscript(let m): return "message \(m) is not a tappable message in this transcript"
        case .extensionNotActive(let d): return "the extension is not running on device \(d)"
        case .nothingStaged(let d): return "the input field of device \(d) is empty"
        case .noSuchDelivery: return "no message is waiting for delivery"
        case .transcriptHidden(let d): return "the expanded extension on device \(d) covers the transcript; collapse or dismiss it first"
        case .nothingToTryAgain(let m): return "message \(m) is not a failed send in this transcript (only those offer Try Again)"
        }
    }
}
