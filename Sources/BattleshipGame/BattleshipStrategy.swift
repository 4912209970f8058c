import GameKit
import MessagesModel

/// Battleship: A places two ships and sends; B hunts until won or lost and sends;
/// A opens the result and sees the "already finished" alert.
struct BattleshipStrategy: GameStrategy {
    let placer: DeviceID
    let guesser: DeviceID
    let conversation: ConversationID
    private var resultViewed = false
    /// Ticks the placer has waited for its game to come back.
    private var waited = 0
    /// The game the placer stopped waiting for.
    private var gaveUpOn: MessageID?
    /// How long (in ticks) the placer waits for an answer before setting up another game:
    /// long enough for a phone that lost its signal to come back (on the phone network it
    /// does with a chance of 1% a tick). A game lost on the network outlasts the
    /// simulator's own patience first and stays in progress, as it would for people.
    static let patience = 200

    init(placer: DeviceID, guesser: DeviceID, conversation: ConversationID) {
        self.placer = placer
        self.guesser = guesser
        self.conversation = conversation
    }

    private func model(_ message: Message) -> Battleship.GameModel? {
        message.url.flatMap { try? Battleship.GameModel(url: $0) }
    }

    mutating func next(_ host: any MessagesWorld, _ rng: inout SeededGenerator) -> (DeviceID, PlayerStep)? {
        if let step = stagedSend(host, [placer, guesser], conversation) { return step }
        if let step = pendingDelivery(host) { return step }
        let placerLatest = host.latestMessage(on: placer, in: conversation)
        let guesserLatest = host.latestMessage(on: guesser, in: conversation)

        if let result = placerLatest, let m = model(result), m.isComplete {
            // The placer sees the outcome: the alert, then dismisses.
            if resultViewed {
                if let active = host.shownExtension(on: placer) {
                    if active.screen.alert != nil { return (placer, .act(.touch(.dismissAlert))) }
                    return (placer, .act(.dismissExtension))
                }
                return nil
            }
            if let step = show(host, placer, conversation, result) { return step }
            resultViewed = true
            return (placer, .act(.touch(.dismissAlert)))
        }
        if let placement = guesserLatest, let m = model(placement), !m.isComplete {
            if let step = show(host, guesser, conversation, placement) { return step }
            let screen = host.shownExtension(on: guesser)!.screen
            let untried = screen.cells.indices.filter { screen.cells[$0] == "empty" }
            guard let cell = untried.randomElement(using: &rng) else { return (guesser, .act(.dismissExtension)) }
            return (guesser, .act(.touch(.cell(cell))))
        }
        // A game the placer sent is on its way, or its answer is: the placer waits for it,
        // as people do, and after a while gives up and sets up another.
        if let sent = placerLatest, let m = model(sent), !m.isComplete,
           sent.id != gaveUpOn,
           host.transcript(on: placer, in: conversation).last(where: { $0.message?.id == sent.id })?.isOutgoing == true {
            if waited < Self.patience {
                waited += 1
                return (placer, .wait)
            }
            gaveUpOn = sent.id
        }
        waited = 0
        // Nothing sent yet (or given up on): the placer sets up a game.
        if let step = openConversation(host, placer, conversation) { return step }
        guard let active = host.shownExtension(on: placer) else { return (placer, .act(.openExtension)) }
        let screen = active.screen
        switch screen.name {
        case "start":
            return (placer, .act(.touch(.button("Start game"))))
        case "shipPlacement":
            if screen.buttons.first?.isEnabled == true { return (placer, .act(.touch(.button("Finished")))) }
            let empty = screen.cells.indices.filter { screen.cells[$0] == "empty" }
            return (placer, .act(.touch(.cell(empty.randomElement(using: &rng)!))))
        default:
            // Showing an old message: go back to a fresh start.
            return (placer, .act(.dismissExtension))
        }
    }
}
