/// `MSMessagesAppPresentationStyle`.
public enum PresentationStyle: Int, Codable, Sendable, CaseIterable, CustomStringConvertible {
    /// Opened from the app drawer, keyboard-sized.
    case compact = 0
    /// Most of the screen. Opening by tapping a message lands here.
    case expanded = 1
    /// A live bubble in the transcript (iOS 11). Cannot be requested.
    case transcript = 2

    public var description: String {
        switch self {
        case .compact: return "compact"
        case .expanded: return "expanded"
        case .transcript: return "transcript"
        }
    }
}
