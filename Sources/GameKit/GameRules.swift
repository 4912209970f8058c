import MessagesModel

/// A turn-based game's rules, stated once: the setup, whose turn it is, the legal
/// moves and what each does, the end, what each seat may see, and how a position
/// travels in a message. In the spirit of boardgame.io's game object.
///
/// Wrap the rules in a ``RulesGame`` and register it: the message extension, the
/// reducer that rebuilds the board, the auditor's legality checks, the player views
/// on every surface and the simulated player all come from these few functions.
///
///     struct Codebreaker: GameRules { ... }
///     GamelogCLI.main(games: GameRegistry.standard.adding(RulesGame(Codebreaker())))
///
/// Everything here is pure: no host, no clock, no randomness.
public protocol GameRules: Sendable {
    /// The whole position, secrets included: what a message carries.
    associatedtype State: Hashable, Codable, Sendable
    associatedtype Move: Hashable, Sendable

    /// The extension kind its recordings carry, e.g. `codebreaker`.
    var kind: String { get }
    /// The name people read.
    var title: String { get }
    /// The seats, by the order in which they first move (e.g. `code maker`, `code
    /// breaker`). A player takes the seat of their first move.
    var seats: [String] { get }
    /// How many cells a row of ``picture(of:)`` has.
    var boardColumns: Int { get }

    /// The position before any move.
    func setup() -> State
    /// The seat whose move it is (an index into ``seats``); nil once the game is over.
    func seatToMove(in state: State) -> Int?
    /// The seat that made the last move (nil before any).
    func lastMover(in state: State) -> Int?
    /// How many moves led to `state`: a copy with fewer never replaces one with more.
    func moveCount(in state: State) -> Int
    /// Every move the seat to move may make (empty once the game is over). Kept
    /// finite and small enough to try each: the checker and the simulated player do.
    func legalMoves(in state: State) -> [Move]
    /// The position after `move`, or why it is not allowed.
    func play(_ move: Move, in state: State) throws(IllegalMove) -> State
    /// How the game ended; nil while it goes on.
    func outcome(of state: State) -> GameOutcome?
    /// One sentence on how the game ended or stands, players named (by seat, nil before
    /// they moved). By default: "<seat> (<player>) won in N moves", "a draw after N
    /// moves", "in progress, N moves, <seat> to move".
    func result(of state: State, players: [String?]) -> String

    /// The position as `seat` may see it (nil: someone who plays no seat, shown the
    /// least). Hide what that seat has not earned; by default nothing is hidden.
    func view(of state: State, forSeat seat: Int?) -> State
    /// Text that must appear nowhere `seat` can read while the game stands at `state`
    /// (e.g. `code=RGBR`): what ``view(of:forSeat:)`` hides, spelled as messages carry
    /// it. Tests look for it on every surface; by default there is none.
    func secrets(of state: State, hiddenFromSeat seat: Int?) -> [String]

    /// The touches on the extension's screen that make `move`: the game's input.
    func input(for move: Move, in state: State) -> [Touch]
    /// The position drawn: cells row by row and status lines.
    func picture(of state: State) -> BoardPicture

    /// What a message carrying `state` shows and holds.
    func face(of state: State) -> MessageFace
    /// The position a message carries, or why it carries none.
    func state(from message: Message) throws(UnreadableMessage) -> State
}

extension GameRules {
    /// "X (Alice) won in 7 moves", "a draw after 9 moves" or "in progress, 4 moves, O to move".
    public func result(of state: State, players: [String?]) -> String {
        let moves = moveCount(in: state)
        let count = "\(moves) \(moves == 1 ? "move" : "moves")"
        switch outcome(of: state) {
        case .won(let seat)?: return "\(seats[seat]) (\((players.indices.contains(seat) ? players[seat] : nil) ?? "?")) won in \(count)"
        case .draw?: return "a draw after \(count)"
        case nil: return "in progress, \(count)" + (seatToMove(in: state).map { ", \(seats[$0]) to move" } ?? "")
        }
    }

    /// By default every seat sees the whole position (a game of perfect information).
    public func view(of state: State, forSeat seat: Int?) -> State { state }
    /// By default nothing is hidden, so nothing can leak.
    public func secrets(of state: State, hiddenFromSeat seat: Int?) -> [String] { [] }
}

/// Why a move is not allowed.
public struct IllegalMove: Error, Hashable, Sendable, CustomStringConvertible {
    /// A sentence for the player and the auditor, e.g. "column 3 is full".
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// Why a message carries no position of a game.
public struct UnreadableMessage: Error, Hashable, Sendable, CustomStringConvertible {
    /// A sentence naming what is wrong with the message, e.g. "the URL has no 'moves' item".
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// How a game ended.
public enum GameOutcome: Hashable, Sendable {
    /// The seat (an index into ``GameRules/seats``) won.
    case won(seat: Int)
    /// Over with no winner.
    case draw
}

/// What a message shows and holds: its URL and its template layout's fields.
public struct MessageFace: Hashable, Sendable {
    /// The URL that carries the position (the only part a decoder reads back).
    public var url: String
    /// The template layout's caption; `$<uuid>` mentions are resolved to names on each device.
    public var caption: String?
    /// The template layout's subcaption.
    public var subcaption: String?
    /// The picture of the position the bubble shows.
    public var image: MessageImage?
    /// What stays in the transcript once a newer message of the session replaces this one.
    public var summaryText: String?
    /// A live layout (the extension draws the bubble in transcript style), with the
    /// template as its fallback.
    public var isLive: Bool

    public init(url: String, caption: String? = nil, subcaption: String? = nil, image: MessageImage? = nil, summaryText: String? = nil,
                isLive: Bool = false) {
        self.url = url
        self.caption = caption
        self.subcaption = subcaption
        self.image = image
        self.summaryText = summaryText
        self.isLive = isLive
    }

    /// `message` with this face: URL, summary and layout.
    public func applied(to message: Message) -> Message {
        var out = message
        out.url = url
        out.summaryText = summaryText
        let template = TemplateLayout(caption: caption, subcaption: subcaption, image: image)
        out.layout = isLive ? .live(alternate: template) : .template(template)
        return out
    }

    /// The face a message shows, read back.
    public init(of message: Message) {
        let template = message.layout?.template
        var live = false
        if case .live? = message.layout { live = true }
        self.init(url: message.url ?? "", caption: template?.caption, subcaption: template?.subcaption, image: template?.image,
                  summaryText: message.summaryText, isLive: live)
    }
}
