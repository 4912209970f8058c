import MessagesModel

/// A game played through a message extension, as one object: its extension, the
/// reducer that folds its messages into a board, what each player may see, how it
/// is drawn, which rules an auditor checks, and how a simulated player plays it.
/// In the spirit of boardgame.io's game object.
///
/// Everything here is pure except ``makeExtension()``, which makes the stateful
/// extension the simulated host drives. gamelog works with games only through this
/// protocol and a ``GameRegistry``: add a type that conforms, register it, and
/// `simulate`, `state`, `replay`, `verify` and `games` handle it.
public protocol GamePlugin: Sendable {
    /// The board the reducer builds from the game's messages.
    associatedtype Board: GameBoard

    /// The extension kind its recordings carry (`InstanceInfo.kind`), e.g. `battleship`.
    var kind: String { get }
    /// The name people read, e.g. `Battleship`.
    var title: String { get }
    /// How many cells a board row has, for drawing boards and screens (0 for none).
    var boardColumns: Int { get }

    /// A fresh instance of the game's message extension.
    func makeExtension() -> any MessagesAppExtension

    /// Whether a message carries this game's state. Only such messages start games.
    func isGameMessage(_ message: Message) -> Bool

    /// The board before any message.
    func newBoard() -> Board

    /// The reducer: folds one event of this game's session into its board. Every
    /// device that saw a message reports it, so the same message may come more than
    /// once (staged and sent on one device, arrived on another): a reducer must
    /// give the same board whichever device's copies it sees, and in a log of one
    /// device only, as much as that device knew.
    func reduce(_ board: inout Board, _ event: GameEvent)

    /// Where the game stands on this board.
    func progress(of board: Board) -> GameProgress

    /// The board as `player` may see it (nil: a device whose owner is unknown). A
    /// hidden-information game removes what that player has not earned.
    func playerView(of board: Board, for player: String?) -> Board

    /// A message as its viewer may see it on any surface (a transcript, a callback's
    /// argument, an insert, an export): `sight` says who looks, from which side, and
    /// the game as that viewer's device knows it. A hidden-information game removes
    /// what the viewer has not earned, from every field that carries it. By default
    /// every field that carries one of ``secrets(of:hiddenFrom:)`` is left out (the
    /// URL, the summary, the accessibility label, the layout), and the rest shown: a
    /// game that declares its secrets never shows them, even before it writes a view.
    func playerView(of message: Message, in sight: MessageSight<Board>) -> Message

    /// Text that must appear nowhere `player` can read while the game stands as
    /// `board` (Battleship: the URL items of ships not hit yet): what the player views
    /// hide, spelled as messages carry it. By default none.
    func secrets(of board: Board, hiddenFrom player: String?) -> [String]

    /// The board drawn as cells, with lines of status under it.
    func picture(of board: Board) -> BoardPicture

    /// One sentence on how the game ended or stands, players named.
    func result(of board: Board) -> String

    /// A fresh legality checker for one conversation of this game.
    func makeChecker() -> any LegalityChecker

    /// The names of the rules its checker reports (for `bisect` to accept).
    var ruleNames: [String] { get }

    /// A player that moves the game toward its end in a simulated world.
    func makeStrategy(players: [DeviceID], conversation: ConversationID) -> any GameStrategy

    /// Rules about the board that must hold after every event (`verify` checks
    /// them; `bisect` finds where one first fails).
    var invariants: [BoardInvariant<Board>] { get }

    /// The files the extension expects on each device (URL and size in bytes), for a
    /// simulated world to provide before play: stickers, attachments.
    func files(on device: DeviceID) -> [String: Int]

    /// What else the simulated Messages checks of some of those files (unreadable, a
    /// sticker's pixel size), so a world can hold files Messages refuses.
    func fileAttributes(on device: DeviceID) -> [String: FileAttributes]

    /// How many people may play in one conversation: two for a duel; a game that a
    /// group can play says so, and simulated worlds then also seat three or four.
    var players: ClosedRange<Int> { get }
}

extension GamePlugin {
    public func playerView(of message: Message, in sight: MessageSight<Board>) -> Message {
        let hidden = secrets(of: sight.board, hiddenFrom: sight.viewer).filter { !$0.isEmpty }
        guard !hidden.isEmpty else { return message }
        func carries(_ text: String?) -> Bool { text.map { text in hidden.contains { text.contains($0) } } ?? false }
        var view = message
        if carries(view.url) { view.url = nil }
        if carries(view.summaryText) { view.summaryText = nil }
        if carries(view.accessibilityLabel) { view.accessibilityLabel = nil }
        if let layout = view.layout {
            let template = layout.template
            if [template.caption, template.subcaption, template.trailingCaption, template.trailingSubcaption, template.imageTitle,
                template.imageSubtitle, template.mediaFileURL].contains(where: carries) {
                view.layout = nil
            }
        }
        return view
    }

    @available(*, unavailable, renamed: "playerView(of:in:)",
               message: "a message's view takes its context (who looks, from which side, the game as their device knows it): implement playerView(of:in:), or declare secrets(of:hiddenFrom:) and the default view hides them")
    public func playerView(of message: Message, for player: String?) -> Message { message }
    public var invariants: [BoardInvariant<Board>] { [] }
    public func secrets(of board: Board, hiddenFrom player: String?) -> [String] { [] }
    public var ruleNames: [String] { [] }
    public func files(on device: DeviceID) -> [String: Int] { [:] }
    public func fileAttributes(on device: DeviceID) -> [String: FileAttributes] { [:] }
    public var players: ClosedRange<Int> { 2...2 }
}

/// Who looks at a message, from which side, knowing what of the game.
public struct MessageSight<Board: GameBoard>: Sendable {
    /// The game as the viewer's device knows it (its own events folded; nil-named
    /// players when it has not learned them).
    public var board: Board
    /// The viewer's name (nil: unknown, to be shown the least).
    public var viewer: String?
    /// Whether the viewer staged, sent or received the message.
    public var direction: MessageDirection

    public init(board: Board, viewer: String?, direction: MessageDirection) {
        self.board = board
        self.viewer = viewer
        self.direction = direction
    }
}

/// Which side of a message a viewer is on.
public enum MessageDirection: String, Hashable, Codable, Sendable {
    /// The viewer's own extension put it in the input field (not sent yet).
    case staged
    /// The viewer sent it.
    case outgoing
    /// It came from someone else.
    case incoming
}

/// A named rule about a game's board.
public struct BoardInvariant<Board: GameBoard>: Sendable {
    /// A short name, e.g. `lives-never-negative`.
    public var name: String
    /// Nil if the rule holds on `board`, else what is wrong.
    public var violation: @Sendable (Board) -> String?

    public init(_ name: String, violation: @escaping @Sendable (Board) -> String?) {
        self.name = name
        self.violation = violation
    }
}

/// What a game's board must be: a value that can be stored in snapshots.
public protocol GameBoard: Hashable, Codable, Sendable {}

/// Where a game stands, as its plug-in sees the board.
public enum GameProgress: Hashable, Sendable {
    case inProgress
    /// Over: `winner` names the player who won (nil for a draw or no winner).
    case finished(winner: String?)
}

/// A board drawn for people: cell names row by row (`empty`, `ship`, `hit`, `x`, ...)
/// and status lines.
public struct BoardPicture: Hashable, Codable, Sendable {
    /// Every cell's name, row by row: the words the text and HTML boards draw
    /// (`empty`, `ship`, `hit`, `miss`, `x`, `o`, `red`, `yellow`, or a game's own).
    public var cells: [String]
    /// Cells per row (0 for a game with no board).
    public var columns: Int
    /// Lines of status under the board, e.g. "Hit: 1/2".
    public var lines: [String]

    public init(cells: [String], columns: Int, lines: [String] = []) {
        self.cells = cells
        self.columns = columns
        self.lines = lines
    }

    /// A cell name as one character for a text grid.
    public static func symbol(_ cell: String) -> String {
        switch cell {
        case "empty": return " "
        case "ship": return "■"
        case "hit", "x": return "X"
        case "miss": return "o"
        case "o": return "O"
        default: return cell.first.map { String($0).uppercased() } ?? "?"
        }
    }

    /// The grid as text lines.
    public static func grid(_ cells: [String], columns: Int, indent: String = "    ") -> [String] {
        guard columns > 0, !cells.isEmpty, cells.count % columns == 0 else { return [] }
        let rows = cells.count / columns
        var lines: [String] = []
        for row in 0..<rows {
            let marks = (0..<columns).map { symbol(cells[row * columns + $0]) }
            lines.append(indent + " " + marks.joined(separator: " │ "))
            if row < rows - 1 { lines.append(indent + Array(repeating: "───", count: columns).joined(separator: "┼")) }
        }
        return lines
    }
}

/// One event that concerns a game, as a device's recording saw it.
public enum GameEvent: Hashable, Sendable {
    /// A game message staged, sent or arrived on a device.
    case message(GameMessage)
    /// The extension on a device showed a screen while a game message was selected.
    case screen(ScreenSighting)
    /// The user touched the extension on a device.
    case touch(TouchSighting)
}

/// A game message on one device.
public struct GameMessage: Hashable, Sendable {
    public enum Route: String, Hashable, Sendable {
        /// The device's extension put it in the input field.
        case staged
        /// The device's user sent it.
        case sent
        /// It arrived on the device from another.
        case arrived
    }

    /// The message as that device held it.
    public var message: Message
    /// How it came to be on the device.
    public var route: Route
    /// The device whose recording saw it.
    public var device: DeviceID
    /// Who made the message, by name as that device shows them (nil if unknown).
    public var sender: String?
    /// The owner of the device that saw it, by name: the sender for a staged or
    /// sent message, a recipient for an arrived one.
    public var viewer: String?
    /// Whether the sender's own device recorded in this log: false in a log that
    /// holds only other devices' recordings.
    public var senderRecorded: Bool
    /// True the first time this log shows the message sent or arrived anywhere.
    public var isFirstSighting: Bool

    /// The copy a legality checker judges, once per message: the sender's own when
    /// its recording is in the log, else the first arrival. Phones' clocks differ, so
    /// in a merged log an arrival may sort before its send: time order alone would
    /// judge the receiver's copy against the sender's taps.
    public var isAuthoritative: Bool { (route == .sent && !isResend) || (route == .arrived && !senderRecorded && isFirstSighting) }
    /// A send of a message this device sent before (the user's Try Again after a failed
    /// send): the same move again, judged once, at its first send.
    public var isResend: Bool

    public init(message: Message, route: Route, device: DeviceID, sender: String?, viewer: String?, senderRecorded: Bool,
                isFirstSighting: Bool, isResend: Bool = false) {
        self.isResend = isResend
        self.message = message
        self.route = route
        self.device = device
        self.sender = sender
        self.viewer = viewer
        self.senderRecorded = senderRecorded
        self.isFirstSighting = isFirstSighting
    }
}

/// A screen the extension showed on a device.
public struct ScreenSighting: Hashable, Sendable {
    /// What the extension showed.
    public var screen: Screen
    /// The device it showed on.
    public var device: DeviceID
    /// The device owner's name.
    public var player: String?
    /// The message selected when it was shown.
    public var selectedMessage: MessageID?

    public init(screen: Screen, device: DeviceID, player: String?, selectedMessage: MessageID?) {
        self.screen = screen
        self.device = device
        self.player = player
        self.selectedMessage = selectedMessage
    }
}

/// A touch on the extension's UI on a device.
public struct TouchSighting: Hashable, Sendable {
    /// Where the user touched.
    public var touch: Touch
    /// The device touched.
    public var device: DeviceID
    /// The device owner's name (nil when the log does not say).
    public var player: String?

    public init(touch: Touch, device: DeviceID, player: String?) {
        self.touch = touch
        self.device = device
        self.player = player
    }
}

/// A board for extensions that hold no game, such as a sticker browser.
public struct NoBoard: GameBoard {
    public init() {}
}

/// A message extension that holds no game (a sticker browser, a tour of the API): its
/// recordings replay, audit and re-run like a game's, with nothing to fold or check.
/// Such a plug-in gives its kind, title, extension and simulated player; the rest is here.
public protocol BoardlessPlugin: GamePlugin where Board == NoBoard {}

extension BoardlessPlugin {
    public var boardColumns: Int { 0 }
    public func isGameMessage(_ message: Message) -> Bool { false }
    public func newBoard() -> NoBoard { NoBoard() }
    public func reduce(_ board: inout NoBoard, _ event: GameEvent) {}
    public func progress(of board: NoBoard) -> GameProgress { .inProgress }
    public func playerView(of board: NoBoard, for player: String?) -> NoBoard { board }
    public func picture(of board: NoBoard) -> BoardPicture { BoardPicture(cells: [], columns: 0) }
    public func result(of board: NoBoard) -> String { "no game" }
    public func makeChecker() -> any LegalityChecker { NoRules() }
}
