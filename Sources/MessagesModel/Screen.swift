/// What an extension shows, reduced to what a player can read and tap: the model of
/// one screen (a view controller in the seeds).
public struct Screen: Hashable, Codable, Sendable {
    /// Which screen, e.g. `start`, `shipPlacement`, `shipDestroy`, `board`, `placeholder`.
    public var name: String
    /// The texts shown, in reading order.
    public var labels: [String]
    /// Board cells row by row (`empty`, `ship`, `hit`, `miss`, `x`, `o`); empty when
    /// there is no board or it is hidden.
    public var cells: [String]
    public var buttons: [Button]
    public var alert: Alert?

    public init(name: String, labels: [String] = [], cells: [String] = [], buttons: [Button] = [], alert: Alert? = nil) {
        self.name = name
        self.labels = labels
        self.cells = cells
        self.buttons = buttons
        self.alert = alert
    }

    /// Shown while no child view controller is installed.
    public static let blank = Screen(name: "blank")

    public struct Button: Hashable, Codable, Sendable {
        public var title: String
        public var isEnabled: Bool
        public init(_ title: String, isEnabled: Bool = true) {
            self.title = title
            self.isEnabled = isEnabled
        }
    }

    public struct Alert: Hashable, Codable, Sendable {
        public var title: String
        public var message: String
        public init(title: String, message: String) {
            self.title = title
            self.message = message
        }
    }
}

/// A touch inside the extension's UI.
public enum Touch: Hashable, Codable, Sendable, CustomStringConvertible {
    /// A board cell, 0...8.
    case cell(Int)
    /// A button, by its title.
    case button(String)
    /// A sticker in a sticker browser, by index.
    case sticker(Int)
    /// The alert's OK button.
    case dismissAlert

    public var description: String {
        switch self {
        case .cell(let n): return "cell \(n)"
        case .button(let title): return "button \"\(title)\""
        case .sticker(let n): return "sticker \(n)"
        case .dismissAlert: return "alert OK"
        }
    }
}
