import GameRules
import MessagesHost
import MessagesModel

/// Decides the next step that moves a game toward its end, from the host's state
/// alone, so it copes with whatever noise happened before.
protocol GameStrategy {
    /// The next step, or nil once the game is over and every device has seen it.
    mutating func next(_ host: MessagesHost, _ rng: inout SeededGenerator) -> (DeviceID, PlayerStep)?
}

/// Shared moves: get a device into the conversation with its extension showing.
extension GameStrategy {
    func openConversation(_ host: MessagesHost, _ device: DeviceID, _ conversation: ConversationID) -> (DeviceID, PlayerStep)? {
        host.currentConversation(of: device) == conversation ? nil : (device, .act(.openConversation(conversation)))
    }

    func pendingDelivery(_ host: MessagesHost) -> (DeviceID, PlayerStep)? {
        host.pendingDeliveries.first.map { ($0.to, .deliver) }
    }

    func stagedSend(_ host: MessagesHost, _ devices: [DeviceID], _ conversation: ConversationID) -> (DeviceID, PlayerStep)? {
        for device in devices where host.staged(on: device, in: conversation) != nil {
            return openConversation(host, device, conversation) ?? (device, .act(.tapSend))
        }
        return nil
    }

    /// Tap `message` unless the extension already shows it expanded.
    func show(_ host: MessagesHost, _ device: DeviceID, _ conversation: ConversationID, _ message: Message) -> (DeviceID, PlayerStep)? {
        if let step = openConversation(host, device, conversation) { return step }
        guard let active = host.activeInstance(on: device), active.selectedMessage?.id == message.id else {
            if host.activeInstance(on: device)?.style == .expanded { return (device, .act(.collapse)) }
            return (device, .act(.tapMessage(message.id)))
        }
        if active.style == .compact { return (device, .act(.expand)) }
        return nil
    }
}

/// Battleship: A places two ships and sends; B hunts until won or lost and sends;
/// A opens the result and sees the "already finished" alert.
struct BattleshipStrategy: GameStrategy {
    let placer: DeviceID
    let guesser: DeviceID
    let conversation: ConversationID
    private var resultViewed = false

    init(placer: DeviceID, guesser: DeviceID, conversation: ConversationID) {
        self.placer = placer
        self.guesser = guesser
        self.conversation = conversation
    }

    private func model(_ message: Message) -> Battleship.GameModel? {
        message.url.flatMap { try? Battleship.GameModel(url: $0) }
    }

    mutating func next(_ host: MessagesHost, _ rng: inout SeededGenerator) -> (DeviceID, PlayerStep)? {
        if let step = stagedSend(host, [placer, guesser], conversation) { return step }
        if let step = pendingDelivery(host) { return step }
        let placerLatest = host.latestMessage(on: placer, in: conversation)
        let guesserLatest = host.latestMessage(on: guesser, in: conversation)

        if let result = placerLatest, let m = model(result), m.isComplete {
            // The placer sees the outcome: the alert, then dismisses.
            if resultViewed {
                if let active = host.activeInstance(on: placer) {
                    if active.extension.screen.alert != nil { return (placer, .act(.touch(.dismissAlert))) }
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
            let screen = host.activeInstance(on: guesser)!.extension.screen
            let untried = screen.cells.indices.filter { screen.cells[$0] == "empty" }
            guard let cell = untried.randomElement(using: &rng) else { return (guesser, .act(.dismissExtension)) }
            return (guesser, .act(.touch(.cell(cell))))
        }
        // Nothing sent yet: the placer sets up a game.
        if let step = openConversation(host, placer, conversation) { return step }
        guard let active = host.activeInstance(on: placer) else { return (placer, .act(.openExtension)) }
        let screen = active.extension.screen
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

/// Tic-tac-toe: X (the first device) opens from the drawer, expands and moves; then
/// players alternate by tapping the latest message, until a win or a draw, which the
/// other player then looks at.
struct TicTacToeStrategy: GameStrategy {
    let first: DeviceID
    let second: DeviceID
    let conversation: ConversationID
    private var finalViewed = false

    init(first: DeviceID, second: DeviceID, conversation: ConversationID) {
        self.first = first
        self.second = second
        self.conversation = conversation
    }

    mutating func next(_ host: MessagesHost, _ rng: inout SeededGenerator) -> (DeviceID, PlayerStep)? {
        if let step = stagedSend(host, [first, second], conversation) { return step }
        if let step = pendingDelivery(host) { return step }
        // The newest message: both devices agree once nothing is pending.
        guard let latest = host.latestMessage(on: first, in: conversation) ?? host.latestMessage(on: second, in: conversation),
              let state = try? TicTacToe.GameState(url: latest.url) else {
            return openingMove(host, &rng)
        }
        let sentByFirst = host.transcript(on: first, in: conversation).last { $0.message?.id == latest.id }?.isOutgoing == true
        let mover = sentByFirst ? second : first
        if state.winner != 0 || state.isDraw {
            if finalViewed {
                return host.activeInstance(on: mover) != nil ? (mover, .act(.dismissExtension)) : nil
            }
            if let step = show(host, mover, conversation, latest) { return step }
            finalViewed = true
            return (mover, .act(.dismissExtension))
        }
        if let step = show(host, mover, conversation, latest) { return step }
        return move(host, mover, &rng)
    }

    private func openingMove(_ host: MessagesHost, _ rng: inout SeededGenerator) -> (DeviceID, PlayerStep)? {
        if let step = openConversation(host, first, conversation) { return step }
        guard let active = host.activeInstance(on: first) else { return (first, .act(.openExtension)) }
        if active.style == .compact { return (first, .act(.expand)) }
        return move(host, first, &rng)
    }

    private func move(_ host: MessagesHost, _ device: DeviceID, _ rng: inout SeededGenerator) -> (DeviceID, PlayerStep)? {
        guard let screen = host.activeInstance(on: device)?.extension.screen, screen.name == "board" else {
            return (device, .act(.dismissExtension))
        }
        let empty = screen.cells.indices.filter { screen.cells[$0] == "empty" }
        guard let cell = empty.randomElement(using: &rng) else { return (device, .act(.dismissExtension)) }
        return (device, .act(.touch(.cell(cell))))
    }
}
