import MessagesModel

/// The board of a game played by its ``GameRules``: the furthest position seen, and
/// who sits where.
public struct RulesBoard<State: Hashable & Codable & Sendable>: GameBoard {
    /// The furthest position sent in the game.
    public var state: State
    /// Each seat's player, by name, once they have moved (nil before).
    public var players: [String?]
    /// The furthest position a device's own extension made, sent or not: its player
    /// has seen it on the screen, even if the message is then deleted.
    public var made: State?
    /// The seat that made ``made`` and its player, who takes that seat once it is sent.
    public var maker: Maker?

    /// A player and the seat their move not sent yet takes.
    public struct Maker: Hashable, Codable, Sendable {
        /// The seat, an index into ``GameRules/seats``.
        public var seat: Int
        /// The player's name.
        public var player: String
    }

    /// The board at `state` with `seats` empty seats.
    public init(state: State, seats: Int) {
        self.state = state
        self.players = Array(repeating: nil, count: seats)
    }

    /// The seat `player` holds (or is taking with a move not sent yet), if known.
    public func seat(of player: String?) -> Int? {
        guard let player else { return nil }
        return players.firstIndex { $0 == player } ?? maker.flatMap { $0.player == player && players[$0.seat] == nil ? $0.seat : nil }
    }
}

/// A ``GamePlugin`` made from a game's ``GameRules``: everything gamelog needs of a
/// game (extension, reducer, views, legality checks, simulated player) from the rules
/// alone.
public struct RulesGame<Rules: GameRules>: GamePlugin {
    /// The game's rules, which every part of the plug-in is derived from.
    public let rules: Rules
    private let makeCustomExtension: (@Sendable () -> any MessagesAppExtension)?

    /// - Parameter makeExtension: an extension of the game's own instead of
    ///   ``RulesExtension`` (a shipped build whose recordings must keep re-running);
    ///   it must send what ``GameRules/face(of:)`` says and take the moves of
    ///   ``GameRules/input(for:in:)`` on a screen that draws ``GameRules/picture(of:)``.
    public init(_ rules: Rules, extension makeExtension: (@Sendable () -> any MessagesAppExtension)? = nil) {
        self.rules = rules
        makeCustomExtension = makeExtension
    }

    public var kind: String { rules.kind }
    public var title: String { rules.title }
    public var boardColumns: Int { rules.boardColumns }

    public func makeExtension() -> any MessagesAppExtension { makeCustomExtension?() ?? RulesExtension(rules) }

    public func isGameMessage(_ message: Message) -> Bool {
        message.url != nil && (try? rules.state(from: message)) != nil
    }

    public func newBoard() -> RulesBoard<Rules.State> { RulesBoard(state: rules.setup(), seats: rules.seats.count) }

    public func reduce(_ board: inout RulesBoard<Rules.State>, _ event: GameEvent) {
        // A move counts once sent; a staged one may still be deleted. Copies seen late never undo a later move.
        guard case .message(let seen) = event, let state = try? rules.state(from: seen.message) else { return }
        if seen.route == .staged {
            if rules.moveCount(in: state) > board.made.map(rules.moveCount(in:)) ?? -1 {
                board.made = state
                if let seat = rules.lastMover(in: state), let sender = seen.sender { board.maker = RulesBoard.Maker(seat: seat, player: sender) }
            }
            return
        }
        guard rules.moveCount(in: state) >= rules.moveCount(in: board.state) else { return }
        board.state = state
        if let seat = rules.lastMover(in: state), board.players.indices.contains(seat), board.players[seat] == nil,
           let sender = seen.sender, !board.players.contains(sender) {
            board.players[seat] = sender
        }
    }

    public func progress(of board: RulesBoard<Rules.State>) -> GameProgress {
        switch rules.outcome(of: board.state) {
        case .won(let seat)?: return .finished(winner: name(of: seat, board))
        case .draw?: return .finished(winner: nil)
        case nil: return .inProgress
        }
    }

    public func playerView(of board: RulesBoard<Rules.State>, for player: String?) -> RulesBoard<Rules.State> {
        var view = board
        view.state = rules.view(of: board.state, forSeat: board.seat(of: player))
        return view
    }

    /// The message rebuilt from the position as the viewer's seat may see it: every field
    /// the rules write (URL, captions, image, summary) carries only the view.
    public func playerView(of message: Message, in sight: MessageSight<RulesBoard<Rules.State>>) -> Message {
        guard let state = try? rules.state(from: message) else { return message }
        var seat = sight.board.seat(of: sight.viewer)
        // The sender of a message has moved in it, whether or not the board knows them yet.
        if seat == nil, sight.direction != .incoming { seat = rules.lastMover(in: state) }
        let view = rules.view(of: state, forSeat: seat)
        return view == state ? message : rules.face(of: view).applied(to: message)
    }

    public func secrets(of board: RulesBoard<Rules.State>, hiddenFrom player: String?) -> [String] {
        // What the player's own extension showed them counts as seen.
        let furthest = board.made.map { rules.moveCount(in: $0) > rules.moveCount(in: board.state) ? $0 : board.state } ?? board.state
        return rules.secrets(of: furthest, hiddenFromSeat: board.seat(of: player))
    }

    public func picture(of board: RulesBoard<Rules.State>) -> BoardPicture {
        var picture = rules.picture(of: board.state)
        picture.columns = rules.boardColumns
        return picture
    }

    public func result(of board: RulesBoard<Rules.State>) -> String {
        rules.result(of: board.state, players: board.players)
    }

    public func makeChecker() -> any LegalityChecker { RulesChecker(rules: rules) }

    public var ruleNames: [String] { RulesChecker<Rules>.ruleNames }

    public func makeStrategy(players: [DeviceID], conversation: ConversationID) -> any GameStrategy {
        RulesPlayer(rules: rules, devices: players, conversation: conversation)
    }

    private func name(of seat: Int, _ board: RulesBoard<Rules.State>) -> String {
        (board.players.indices.contains(seat) ? board.players[seat] : nil) ?? rules.seats[seat]
    }
}

/// The rules as an auditor checks them, per session, from each message the first time
/// the log shows it: it reads as a position, a legal move of the seat to move leads to
/// it from the previous one, its sender plays that seat and no other, nothing follows
/// the end, and what it shows matches what it holds.
struct RulesChecker<Rules: GameRules>: LegalityChecker {
    static var ruleNames: [String] { ["message-reads", "legal-move", "turn-order", "no-move-after-end", "message-matches-position"] }

    let rules: Rules
    private var games: [SessionID: RulesBoard<Rules.State>] = [:]

    init(rules: Rules) { self.rules = rules }

    mutating func check(_ event: GameEvent) -> [RuleBreak] {
        guard case .message(let seen) = event, seen.route != .staged, seen.isAuthoritative,
              let session = seen.message.session else { return [] }
        var breaks: [RuleBreak] = []
        func fail(_ rule: String, expected: String, found: String) {
            breaks.append(RuleBreak(rule: rule, expected: expected, found: found, session: session, device: seen.device))
        }
        let state: Rules.State
        do {
            state = try rules.state(from: seen.message)
        } catch {
            fail("message-reads", expected: "a \(rules.title) position", found: error.description)
            return breaks
        }
        var game = games[session] ?? RulesBoard(state: rules.setup(), seats: rules.seats.count)
        defer { games[session] = game }
        let previous = game.state
        let mover = rules.seatToMove(in: previous)
        if rules.outcome(of: previous) != nil || mover == nil {
            fail("no-move-after-end", expected: "no move after the game ended", found: "another message")
        } else if let mover {
            let legal = rules.legalMoves(in: previous).contains { move in (try? rules.play(move, in: previous)) == state }
            if !legal {
                let after = rules.moveCount(in: state), before = rules.moveCount(in: previous)
                fail("legal-move", expected: "one legal move of \(rules.seats[mover]) after move \(before)",
                     found: after == before + 1 ? "a position no legal move reaches" : "a position after \(after) moves")
            }
            if let sender = seen.sender {
                let held = game.seat(of: sender)
                if let held, held != mover {
                    fail("turn-order", expected: "\(rules.seats[mover]) to move", found: "\(sender), who plays \(rules.seats[held]), moved")
                } else if held == nil, let other = game.players[mover] {
                    fail("turn-order", expected: "\(other) to move as \(rules.seats[mover])", found: "\(sender) moved")
                } else if held == nil {
                    game.players[mover] = sender
                }
            }
        }
        let expected = rules.face(of: state), found = MessageFace(of: seen.message)
        if expected != found {
            fail("message-matches-position", expected: describe(expected, differingFrom: found), found: describe(found, differingFrom: expected))
        }
        game.state = state
        return breaks
    }

    /// The fields of `face` that differ from `other`, as text.
    private func describe(_ face: MessageFace, differingFrom other: MessageFace) -> String {
        var parts: [String] = []
        if face.caption != other.caption { parts.append("caption \"\(face.caption ?? "")\"") }
        if face.subcaption != other.subcaption { parts.append("subcaption \"\(face.subcaption ?? "")\"") }
        if face.image != other.image { parts.append("image \(face.image?.cells ?? [])") }
        if face.summaryText != other.summaryText { parts.append("summary \"\(face.summaryText ?? "")\"") }
        if face.url != other.url { parts.append("URL \(face.url)") }
        return parts.joined(separator: ", ")
    }
}
