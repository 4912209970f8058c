import GameKit
import MessagesHost
import MessagesModel

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
        // The seed's didReceive path can show a new, empty board with the game's message
        // still selected: a player who sees it goes back to the game rather than start another.
        if let screen = screen(host, mover), screen.name == "board", screen.cells != state.cellNames {
            return (mover, .act(.collapse))
        }
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
