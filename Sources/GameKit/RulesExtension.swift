import MessagesModel

/// The message extension of a game played by its ``GameRules``.
///
/// Compact, it shows the game's title and status with a button that expands it
/// ("New game" when no message of the game is selected, else "Play"). Expanded, it
/// shows the selected message's position (or a new game's) as the local player's
/// seat may see it; when it is that player's turn, touches build a move (the rules'
/// ``GameRules/input(for:in:)``; "Clear" starts over), and a complete legal move is
/// inserted as the next message of the selected message's session, after which the
/// extension dismisses itself. One move per opening. In transcript style it draws
/// the selected message's position.
public final class RulesExtension<Rules: GameRules>: MessagesAppViewController {
    public let rules: Rules
    public override var kind: String { rules.kind }

    enum Child: Hashable {
        case none
        case start(status: String, button: String)
        /// `seat` may move when `canMove`; `entered` are the touches so far.
        case board(Rules.State, seat: Int?, canMove: Bool, entered: [Touch])
        case moved(Rules.State, seat: Int?)
        case bubble(Rules.State?)
        case unreadable(String)
    }

    private var child: Child = .none

    public init(_ rules: Rules) { self.rules = rules }

    public override func willBecomeActive(with conversation: Conversation) {
        present(for: conversation, style: presentationStyle)
    }

    public override func willTransition(to style: PresentationStyle) { child = .none }

    public override func didTransition(to style: PresentationStyle) {
        guard let conversation = activeConversation else { return }
        present(for: conversation, style: style)
    }

    private func present(for conversation: Conversation, style: PresentationStyle) {
        let selected = conversation.selectedMessage
        let state: Rules.State
        do {
            state = try selected.map { message throws(UnreadableMessage) in try rules.state(from: message) } ?? rules.setup()
        } catch {
            child = .unreadable(error.reason)
            return
        }
        switch style {
        case .transcript:
            child = .bubble(selected == nil ? nil : state)
        case .compact:
            child = .start(status: status(state), button: selected == nil ? "New game" : "Play")
        case .expanded:
            let mine = selected?.senderParticipantIdentifier == conversation.localParticipantIdentifier && selected != nil
            // Our own message: the seat that moved in it is ours; we move again only if the rules give that seat the next move.
            let seat = mine ? rules.lastMover(in: state) : rules.seatToMove(in: state)
            child = .board(state, seat: seat, canMove: seat != nil && rules.seatToMove(in: state) == seat, entered: [])
        }
    }

    public override func handle(_ touch: Touch) {
        guard let host else { return }
        switch child {
        case .start:
            if case .button = touch { host.requestPresentationStyle(.expanded) }
        case .board(let state, let seat, true, let entered):
            if touch == .button(RulesExtension.clear) {
                child = .board(state, seat: seat, canMove: true, entered: [])
                return
            }
            let typed = entered + [touch]
            let candidates = rules.legalMoves(in: state).filter { rules.input(for: $0, in: state).starts(with: typed) }
            // A touch no legal move starts with does nothing, as a disabled control.
            guard !candidates.isEmpty else { return }
            guard let move = candidates.first(where: { rules.input(for: $0, in: state) == typed }),
                  let next = try? rules.play(move, in: state) else {
                child = .board(state, seat: seat, canMove: true, entered: typed)
                return
            }
            child = .moved(next, seat: seat)
            let session = host.activeConversation?.selectedMessage?.session ?? host.makeSession()
            let message = rules.face(of: next).applied(to: host.makeMessage(session: session))
            host.insert(message, completion: nil)
            host.dismiss()
        default:
            break
        }
    }

    /// The button that empties what was entered.
    public static var clear: String { "Clear" }
    /// How the label that lists the touches entered so far begins.
    public static var entered: String { "Entered: " }

    public override var screen: Screen {
        switch child {
        case .none:
            return .blank
        case .start(let status, let button):
            return Screen(name: "start", labels: [rules.title, status], buttons: [.init(button)])
        case .board(let state, let seat, let canMove, let entered):
            let picture = rules.picture(of: rules.view(of: state, forSeat: seat))
            var labels = picture.lines
            var buttons: [Screen.Button] = []
            if canMove {
                labels.append(Self.entered + (entered.isEmpty ? "nothing" : entered.map(Self.label).joined(separator: ", ")))
                var titles: [String] = []
                for move in rules.legalMoves(in: state) {
                    for case .button(let title) in rules.input(for: move, in: state) where !titles.contains(title) { titles.append(title) }
                }
                buttons = titles.map { Screen.Button($0) } + [Screen.Button(Self.clear, isEnabled: !entered.isEmpty)]
            } else {
                labels.append(status(state))
            }
            return Screen(name: "board", labels: labels, cells: picture.cells, buttons: buttons)
        case .moved(let state, let seat):
            let picture = rules.picture(of: rules.view(of: state, forSeat: seat))
            return Screen(name: "board", labels: picture.lines + ["Sent"], cells: picture.cells)
        case .bubble(let state):
            guard let state else { return Screen(name: "bubble", labels: [rules.title]) }
            let picture = rules.picture(of: rules.view(of: state, forSeat: nil))
            return Screen(name: "bubble", labels: picture.lines, cells: picture.cells)
        case .unreadable(let reason):
            return Screen(name: "unreadable", labels: ["This game message cannot be read: \(reason)"])
        }
    }

    /// A touch as the screen lists what was entered.
    public static func label(_ touch: Touch) -> String {
        switch touch {
        case .button(let title): return title
        default: return touch.description
        }
    }

    private func status(_ state: Rules.State) -> String {
        switch rules.outcome(of: state) {
        case .won(let seat)?: return "\(rules.seats[seat]) won"
        case .draw?: return "a draw"
        case nil: return rules.seatToMove(in: state).map { "\(rules.seats[$0]) to move" } ?? "over"
        }
    }
}
