import MessagesModel

/// A simulated player for a game played by its ``GameRules``: device `i` plays seat
/// `i`. The seat to move taps the newest message (the first opens a new game from the
/// drawer), expands, and enters a random legal move through the extension's screen,
/// as a person would; once the game is over, the player who did not make the last move
/// looks at it. It reads only the host, so it copes with whatever noise came before.
struct RulesPlayer<Rules: GameRules>: GameStrategy {
    let rules: Rules
    let devices: [DeviceID]
    let conversation: ConversationID
    /// The move being entered: the position it is for and its touches.
    private var plan: (state: Rules.State, touches: [Touch])?
    private var finalViewed = false

    init(rules: Rules, devices: [DeviceID], conversation: ConversationID) {
        self.rules = rules
        self.devices = devices
        self.conversation = conversation
    }

    mutating func next(_ host: any MessagesWorld, _ rng: inout SeededGenerator) -> (DeviceID, PlayerStep)? {
        if let step = stagedSend(host, devices, conversation) { return step }
        if let step = pendingDelivery(host) { return step }
        let conversation = self.conversation
        let latest = devices.lazy.compactMap { host.latestMessage(on: $0, in: conversation) }.first
        guard let latest, let state = try? rules.state(from: latest) else { return opening(host, &rng) }
        if rules.outcome(of: state) != nil || rules.seatToMove(in: state) == nil {
            let mover = sender(of: latest, host, among: devices, in: conversation) ?? devices[0]
            let viewer = devices.first { $0 != mover } ?? mover
            if finalViewed { return host.shownExtension(on: viewer) != nil ? (viewer, .act(.dismissExtension)) : nil }
            if let step = show(host, viewer, conversation, latest) { return step }
            finalViewed = true
            return (viewer, .act(.dismissExtension))
        }
        // Seats go to whoever took them with their first move (a stray tap may have given X to
        // the second device): the newest message's sender moves again only if the rules say so.
        let senderDevice = sender(of: latest, host, among: devices, in: conversation)
        let device: DeviceID
        if let senderDevice, let last = rules.lastMover(in: state) {
            device = rules.seatToMove(in: state) == last ? senderDevice : devices.first { $0 != senderDevice } ?? senderDevice
        } else {
            device = devices[rules.seatToMove(in: state)! % devices.count]
        }
        if let step = show(host, device, conversation, latest) { return step }
        return enter(state, on: device, host, &rng)
    }

    private mutating func opening(_ host: any MessagesWorld, _ rng: inout SeededGenerator) -> (DeviceID, PlayerStep)? {
        let first = devices[0]
        if let step = openConversation(host, first, conversation) { return step }
        guard let active = host.shownExtension(on: first) else { return (first, .act(.openExtension)) }
        if active.style != .expanded {
            if let button = active.screen.buttons.first { return (first, .act(.touch(.button(button.title)))) }
            return (first, .act(.expand))
        }
        return enter(rules.setup(), on: first, host, &rng)
    }

    /// The next touch of a random legal move, on the board the device shows.
    private mutating func enter(_ state: Rules.State, on device: DeviceID, _ host: any MessagesWorld,
                                _ rng: inout SeededGenerator) -> (DeviceID, PlayerStep)? {
        guard let screen = screen(host, device), !screen.cells.isEmpty || screen.labels.contains(where: { $0.hasPrefix(RulesExtension<Rules>.entered) }) else {
            return (device, .act(.dismissExtension))
        }
        // A board other than the game's (a new, empty one where the message's was expected):
        // a person goes back to the game's message rather than start another.
        let seat = rules.seatToMove(in: state)
        if !screen.cells.isEmpty, screen.cells != rules.picture(of: rules.view(of: state, forSeat: seat)).cells {
            return (device, .act(.collapse))
        }
        if plan?.state != state {
            guard let move = rules.legalMoves(in: state).randomElement(using: &rng) else { return (device, .act(.dismissExtension)) }
            plan = (state, rules.input(for: move, in: state))
        }
        // An extension of the game's own shows no entry so far: its moves are one touch.
        guard let entered = screen.labels.last(where: { $0.hasPrefix(RulesExtension<Rules>.entered) }) else {
            return plan!.touches.first.map { (device, .act(.touch($0))) } ?? (device, .act(.dismissExtension))
        }
        let touches = plan!.touches
        let typed = String(entered.dropFirst(RulesExtension<Rules>.entered.count))
        func shown(_ count: Int) -> String {
            count == 0 ? "nothing" : touches.prefix(count).map(RulesExtension<Rules>.label).joined(separator: ", ")
        }
        // Something else was entered (a stray tap): start over.
        guard let count = (0..<touches.count).first(where: { shown($0) == typed }) else {
            return (device, .act(.touch(.button(RulesExtension<Rules>.clear))))
        }
        return (device, .act(.touch(touches[count])))
    }
}
