import Foundation
import GameKit
import MessagesModel

/// Seeds 000-002's `MessagesViewController` with its child view controllers
/// (start, ship location, ship destroy), each reduced to a ``Screen``.
public final class BattleshipExtension: MessagesAppViewController {
    public static let kind = "battleship"
    public override var kind: String { Self.kind }

    /// The child view controller currently installed.
    public enum Child: Hashable, Sendable {
        case none
        case start
        case placement(Battleship.Placement)
        case destroy(Battleship.Hunt, selected: Message)
        /// The selected message's game is already complete.
        case alreadyFinished(alertShown: Bool)
        /// The selected message's URL could not be decoded (the seed would crash).
        case unreadable(String)
    }

    public private(set) var child: Child = .none

    public override func willBecomeActive(with conversation: Conversation) {
        configureChild(for: presentationStyle, with: conversation)
    }

    public override func willTransition(to style: PresentationStyle) {
        guard let conversation = activeConversation else { return }
        configureChild(for: style, with: conversation)
    }

    /// The seed's `configureChildViewController(for:with:)`.
    private func configureChild(for style: PresentationStyle, with conversation: Conversation) {
        switch style {
        case .compact:
            child = .start
        case .expanded:
            if let message = conversation.selectedMessage, let url = message.url {
                do {
                    let model = try Battleship.GameModel(url: url)
                    child = model.isComplete
                        ? .alreadyFinished(alertShown: true)
                        : .destroy(Battleship.Hunt(model: model), selected: message)
                } catch {
                    child = .unreadable(error.description)
                }
            } else {
                child = .placement(Battleship.Placement())
            }
        case .transcript:
            child = .none
        }
    }

    public override func handle(_ touch: Touch) {
        guard let host else { return }
        switch (child, touch) {
        case (.start, .button("Start game")):
            host.requestPresentationStyle(.expanded)
        case (.placement(let placement), .cell(let cell)):
            child = .placement(placement.tapping(cell))
        case (.placement(let placement), .button("Finished")) where placement.canFinish:
            finishPlacement(placement, host: host)
        case (.destroy(let hunt, let selected), .cell(let cell)):
            let next = hunt.tapping(cell)
            child = .destroy(next, selected: selected)
            if let outcome = next.outcome { finishHunt(next, outcome: outcome, selected: selected, host: host) }
        case (.alreadyFinished(true), .dismissAlert):
            child = .alreadyFinished(alertShown: false)
        default:
            break // A touch on nothing interactive.
        }
    }

    /// `completedShipLocationSelection:`.
    private func finishPlacement(_ placement: Battleship.Placement, host: any ExtensionHost) {
        guard let conversation = host.activeConversation else { return }
        let model = Battleship.GameModel(shipLocations: placement.ships, isComplete: false)
        // The snapshot is taken after the board is reset, so it hides the ships.
        let image = MessageImage(kind: "battleship-board", cells: Array(repeating: "empty", count: Battleship.cellCount))
        let caption = Battleship.placedCaption(conversation.localParticipantIdentifier.uuid.uuidString)
        insertMessage(caption: caption, model: model, session: host.makeSession(), image: image, host: host)
        host.dismiss()
    }

    private func finishHunt(_ hunt: Battleship.Hunt, outcome: Battleship.Outcome, selected: Message, host: any ExtensionHost) {
        guard let conversation = host.activeConversation else { return }
        var model = hunt.model
        model.isComplete = true
        let local = conversation.localParticipantIdentifier.uuid.uuidString
        let caption = outcome == .won ? Battleship.wonCaption(local) : Battleship.lostCaption(local)
        let image = MessageImage(kind: "battleship-board", cells: hunt.cells)
        // The seed inserts only into the selected message's session.
        if let session = selected.session {
            insertMessage(caption: caption, model: model, session: session, image: image, host: host)
        }
        host.dismiss()
    }

    /// The seed's `insertMessageWith(caption:_:_:_:in:)`.
    private func insertMessage(caption: String, model: Battleship.GameModel, session: SessionID,
                               image: MessageImage, host: any ExtensionHost) {
        var message = host.makeMessage(session: session)
        message.layout = .template(TemplateLayout(caption: caption, image: image))
        message.url = model.encode()
        host.insert(message, completion: nil)
    }

    public override var screen: Screen {
        switch child {
        case .none:
            return .blank
        case .start:
            return Screen(name: "start", labels: ["Battleship"], buttons: [.init("Start game")])
        case .placement(let placement):
            return Screen(name: "shipPlacement",
                          labels: ["Ships to Place: \(placement.shipsLeftToPosition)"],
                          cells: (0..<Battleship.cellCount).map { placement.ships.contains($0) ? "ship" : "empty" },
                          buttons: [.init("Finished", isEnabled: placement.canFinish)])
        case .destroy(let hunt, _):
            return Screen(name: "shipDestroy",
                          labels: ["Hit: \(hunt.hits.count)/\(Battleship.totalShipCount)",
                                   "Lives: \(hunt.livesLeft)/\(Battleship.incorrectAttemptsAllowed)"],
                          cells: hunt.cells)
        case .alreadyFinished(let alertShown):
            return Screen(name: "shipDestroy",
                          alert: alertShown ? Screen.Alert(title: "Game Complete!", message: "The game's already finished!") : nil)
        case .unreadable(let reason):
            return Screen(name: "unreadable", labels: ["This game message cannot be read: \(reason)"])
        }
    }
}
