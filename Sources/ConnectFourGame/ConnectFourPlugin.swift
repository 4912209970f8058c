import GameKit
import MessagesHost
import MessagesModel

/// A Connect Four game's board: the furthest position sent or received.
public struct ConnectFourBoard: GameBoard {
    public var state = ConnectFour.GameState()
    /// The players of red (the first mover) and yellow, by name.
    public var red: String?
    public var yellow: String?

    public init() {}
}

/// Connect Four as a gamelog plug-in.
public struct ConnectFourPlugin: GamePlugin {
    public init() {}

    public var kind: String { ConnectFourExtension.kind }
    public var title: String { "Connect Four" }
    public var boardColumns: Int { ConnectFour.columns }

    public func makeExtension() -> any MessagesAppExtension { ConnectFourExtension() }

    public func isGameMessage(_ message: Message) -> Bool {
        message.url.map { (try? ConnectFour.GameState(url: $0)) != nil } ?? false
    }

    public func newBoard() -> ConnectFourBoard { ConnectFourBoard() }

    public func reduce(_ board: inout ConnectFourBoard, _ event: GameEvent) {
        guard case .message(let seen) = event, seen.route != .staged, let url = seen.message.url,
              let state = try? ConnectFour.GameState(url: url), state.moves.count >= board.state.moves.count else { return }
        board.state = state
        switch state.lastMover {
        case .red?: board.red = board.red ?? seen.sender
        case .yellow?: board.yellow = board.yellow ?? seen.sender
        case nil: break
        }
    }

    public func progress(of board: ConnectFourBoard) -> GameProgress {
        switch board.state.winner {
        case .red?: return .finished(winner: board.red ?? "Red")
        case .yellow?: return .finished(winner: board.yellow ?? "Yellow")
        case nil: return board.state.isDraw ? .finished(winner: nil) : .inProgress
        }
    }

    public func playerView(of board: ConnectFourBoard, for player: String?) -> ConnectFourBoard { board }

    public func picture(of board: ConnectFourBoard) -> BoardPicture {
        BoardPicture(cells: board.state.cellNames, columns: ConnectFour.columns, lines: [board.state.caption])
    }

    public func result(of board: ConnectFourBoard) -> String {
        switch board.state.winner {
        case .red?: return "Red (\(board.red ?? "?")) won in \(board.state.moves.count) moves"
        case .yellow?: return "Yellow (\(board.yellow ?? "?")) won in \(board.state.moves.count) moves"
        case nil: return board.state.isDraw ? "a draw" : "in progress, \(board.state.moves.count) moves"
        }
    }

    public func makeChecker() -> any LegalityChecker { ConnectFourChecker() }

    public var ruleNames: [String] {
        ["connectfour-url-decodes", "no-move-after-win", "one-move-per-message", "caption-matches-grid"]
    }

    public func makeStrategy(players: [DeviceID], conversation: ConversationID) -> any GameStrategy {
        ConnectFourStrategy(players: players, conversation: conversation)
    }
}

/// Connect Four's rules per session: each message adds exactly one move to the
/// previous one (so players alternate and discs only fall), its caption says the
/// state, and nothing follows a win.
struct ConnectFourChecker: LegalityChecker {
    private var games: [SessionID: ConnectFour.GameState] = [:]

    mutating func check(_ event: GameEvent) -> [RuleBreak] {
        guard case .message(let seen) = event, seen.route != .staged, seen.isAuthoritative,
              let session = seen.message.session else { return [] }
        var breaks: [RuleBreak] = []
        func fail(_ rule: String, expected: String, found: String) {
            breaks.append(RuleBreak(rule: rule, expected: expected, found: found, session: session, device: seen.device))
        }
        let state: ConnectFour.GameState
        do {
            state = try ConnectFour.GameState(url: seen.message.url ?? "")
        } catch {
            fail("connectfour-url-decodes", expected: "a valid Connect Four URL", found: error.description)
            return breaks
        }
        let previous = games[session] ?? ConnectFour.GameState()
        if previous.winner != nil {
            fail("no-move-after-win", expected: "no move after \(previous.winner!.name) won", found: "another message")
        } else if state.moves.count != previous.moves.count + 1 || Array(state.moves.prefix(previous.moves.count)) != previous.moves {
            fail("one-move-per-message", expected: "the moves \(previous.moves) and one more", found: "the moves \(state.moves)")
        }
        if seen.message.caption != state.caption {
            fail("caption-matches-grid", expected: "\"\(state.caption)\"", found: "\"\(seen.message.caption ?? "")\"")
        }
        games[session] = state
        return breaks
    }
}

/// Red opens from the drawer and plays; then players alternate by tapping the latest
/// message, preferring a winning column, until a win or a full grid, which the other
/// player then looks at.
struct ConnectFourStrategy: GameStrategy {
    let players: [DeviceID]
    let conversation: ConversationID
    private var finalViewed = false

    init(players: [DeviceID], conversation: ConversationID) {
        self.players = players
        self.conversation = conversation
    }

    mutating func next(_ host: MessagesHost, _ rng: inout SeededGenerator) -> (DeviceID, PlayerStep)? {
        if let step = stagedSend(host, players, conversation) { return step }
        if let step = pendingDelivery(host) { return step }
        let first = players[0], second = players[1]
        guard let latest = host.latestMessage(on: first, in: conversation) ?? host.latestMessage(on: second, in: conversation),
              let url = latest.url, let state = try? ConnectFour.GameState(url: url) else {
            if let step = openConversation(host, first, conversation) { return step }
            guard let active = host.activeInstance(on: first) else { return (first, .act(.openExtension)) }
            if active.style == .compact { return (first, .act(.touch(.button("New game")))) }
            return move(host, first, ConnectFour.GameState(), &rng)
        }
        let mover = sender(of: latest, host, among: players, in: conversation) == first ? second : first
        if state.winner != nil || state.isDraw {
            if finalViewed { return host.activeInstance(on: mover) != nil ? (mover, .act(.dismissExtension)) : nil }
            if let step = show(host, mover, conversation, latest) { return step }
            finalViewed = true
            return (mover, .act(.dismissExtension))
        }
        if let step = show(host, mover, conversation, latest) { return step }
        return move(host, mover, state, &rng)
    }

    private func move(_ host: MessagesHost, _ device: DeviceID, _ state: ConnectFour.GameState,
                      _ rng: inout SeededGenerator) -> (DeviceID, PlayerStep)? {
        guard screen(host, device)?.name == "grid" else { return (device, .act(.dismissExtension)) }
        let open = (0..<ConnectFour.columns).filter(state.isOpen)
        let winning = open.first { state.dropping(in: $0)?.winner != nil }
        guard let column = winning ?? open.randomElement(using: &rng) else { return (device, .act(.dismissExtension)) }
        return (device, .act(.touch(.cell(column))))
    }
}
