import GameKit
import MessagesModel

/// Seed 003's `MessagesViewController` with `GameBoardVC` (expanded) and
/// `CollapsedVC` (compact, an empty placeholder).
public final class TicTacToeExtension: MessagesAppViewController {
    public static let kind = "tictactoe"
    public override var kind: String { Self.kind }

    public enum Child: Hashable, Sendable {
        case none
        case placeholder
        case board(TicTacToe.GameState, moveMade: Bool)
        case unreadable(String)
    }

    public private(set) var child: Child = .none

    public override func willBecomeActive(with conversation: Conversation) {
        present(for: conversation, style: presentationStyle)
    }

    public override func willTransition(to style: PresentationStyle) {
        // The seed removes its children during the transition.
        child = .none
    }

    public override func didTransition(to style: PresentationStyle) {
        guard let conversation = activeConversation else { return }
        present(for: conversation, style: style)
    }

    public override func didReceive(_ message: Message, conversation: Conversation) {
        requestPresentationStyle(.expanded)
    }

    /// The seed's `presentViewController(for:with:)`.
    private func present(for conversation: Conversation, style: PresentationStyle) {
        switch style {
        case .compact, .transcript:
            child = .placeholder
        case .expanded:
            do {
                child = .board(try TicTacToe.GameState(url: conversation.selectedMessage?.url), moveMade: false)
            } catch {
                child = .unreadable(error.description)
            }
        }
    }

    public override func handle(_ touch: Touch) {
        guard let host, case .board(let state, let moveMade) = child, case .cell(let cell) = touch else { return }
        // One move per opening, on an empty cell, while nobody has won.
        guard !moveMade, let next = state.placing(at: cell) else { return }
        child = .board(next, moveMade: true)
        let session = host.activeConversation?.selectedMessage?.session ?? host.makeSession()
        var message = host.makeMessage(session: session)
        message.url = next.encode(mover: state.player)
        message.layout = .template(TemplateLayout(caption: next.caption,
                                                  image: MessageImage(kind: "tictactoe-board", cells: next.cellNames)))
        // Seed 003 inserts with `localizedChangeDescription: nil`.
        host.insert(message, localizedChangeDescription: nil, completion: nil)
        host.dismiss()
    }

    public override var screen: Screen {
        switch child {
        case .none:
            return .blank
        case .placeholder:
            return Screen(name: "placeholder")
        case .board(let state, _):
            let status: String
            if state.winner != 0 {
                status = "Game Over: \(state.winner == TicTacToe.x ? "X" : "O") won"
            } else if state.isDraw {
                status = "Game Over: draw"
            } else {
                status = "\(state.player == TicTacToe.x ? "X" : "O") to move"
            }
            return Screen(name: "board", labels: [status], cells: state.cellNames)
        case .unreadable(let reason):
            return Screen(name: "unreadable", labels: ["This game message cannot be read: \(reason)"])
        }
    }
}
