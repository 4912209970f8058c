import GameKit
import MessagesModel

/// The Connect Four message extension: compact shows a "New game" button; expanded
/// shows the grid of the selected message (or a new one). A touch on cell N drops a
/// disc in column N; one move per opening, sent at once with iOS 11's `send` (the
/// touch is the interaction it needs) in the selected message's session (or a new
/// one), as a live bubble that shows the grid in transcript style; then the
/// extension dismisses itself. Should `send` fail, the move is inserted instead.
public final class ConnectFourExtension: MessagesAppViewController {
    public static let kind = "connectfour"
    public override var kind: String { Self.kind }

    enum Child: Hashable {
        case none
        case start
        case grid(ConnectFour.GameState, moveMade: Bool)
        /// A live bubble in the transcript drawing its message's grid.
        case live(ConnectFour.GameState?)
        case unreadable(String)
    }

    private var child: Child = .none

    public override func willBecomeActive(with conversation: Conversation) {
        present(for: conversation, style: presentationStyle)
    }

    public override func didTransition(to style: PresentationStyle) {
        guard let conversation = activeConversation else { return }
        present(for: conversation, style: style)
    }

    /// The live bubble draws the grid across the width offered, 7 columns by 6 rows of
    /// square cells, with a 44-point caption strip below.
    public override func contentSizeThatFits(_ size: ContentSize) -> ContentSize {
        let cell = size.width / ConnectFour.columns
        return ContentSize(width: cell * ConnectFour.columns, height: min(size.height, cell * ConnectFour.rows + 44))
    }

    private func present(for conversation: Conversation, style: PresentationStyle) {
        switch style {
        case .compact: child = .start; return
        case .transcript: child = .live(conversation.selectedMessage.flatMap { $0.url }.flatMap { try? ConnectFour.GameState(url: $0) })
            return
        case .expanded: break
        }
        guard let url = conversation.selectedMessage?.url else {
            child = .grid(ConnectFour.GameState(), moveMade: false)
            return
        }
        do {
            child = .grid(try ConnectFour.GameState(url: url), moveMade: false)
        } catch {
            child = .unreadable(error.description)
        }
    }

    public override func handle(_ touch: Touch) {
        guard let host else { return }
        switch (child, touch) {
        case (.start, .button("New game")):
            host.requestPresentationStyle(.expanded)
        case (.grid(let state, false), .cell(let column)):
            guard let next = state.dropping(in: column) else { return }
            child = .grid(next, moveMade: true)
            let session = host.activeConversation?.selectedMessage?.session ?? host.makeSession()
            var message = host.makeMessage(session: session)
            message.url = next.encode()
            message.summaryText = "\(state.toMove.name) played column \(column + 1)"
            message.layout = .live(alternate: TemplateLayout(caption: next.caption,
                                                             image: MessageImage(kind: "connectfour-grid", cells: next.cellNames)))
            host.send(message) { error in
                if error != nil { host.insert(message, completion: nil) }
            }
            host.dismiss()
        default:
            break
        }
    }

    public override var screen: Screen {
        switch child {
        case .none:
            return .blank
        case .start:
            return Screen(name: "start", labels: ["Connect Four"], buttons: [.init("New game")])
        case .grid(let state, let moveMade):
            return Screen(name: "grid", labels: [moveMade ? "Sent" : state.caption], cells: state.cellNames)
        case .live(let state):
            return Screen(name: "bubble", labels: [state?.caption ?? "Connect Four"], cells: state?.cellNames ?? [])
        case .unreadable(let reason):
            return Screen(name: "unreadable", labels: ["This game message cannot be read: \(reason)"])
        }
    }
}
