import MessagesModel

/// A simulated player: decides the next step that moves a game toward its end, from
/// what the people using Messages see alone, so it copes with whatever noise happened before.
public protocol GameStrategy {
    /// The next step, or nil once the game is over and every device has seen it.
    mutating func next(_ host: any MessagesWorld, _ rng: inout SeededGenerator) -> (DeviceID, PlayerStep)?
}

/// What ``GameStrategy/roundTurn(_:players:conversation:turns:rounds:)`` found.
public enum RoundTurn {
    /// Take this step first (nil: the game is over and every device has left it).
    case step((DeviceID, PlayerStep)?)
    /// It is this device's turn.
    case turn(DeviceID)
}

/// Moves every strategy needs: getting a device into the conversation with its
/// extension showing, sending what is staged, delivering what is on its way.
extension GameStrategy {
    /// Switch `device` to the game's conversation, unless it is there already.
    public func openConversation(_ host: any MessagesWorld, _ device: DeviceID, _ conversation: ConversationID) -> (DeviceID, PlayerStep)? {
        host.currentConversation(of: device) == conversation ? nil : (device, .act(.openConversation(conversation)))
    }

    /// Deliver the next message due, if any: players wait for their messages.
    public func pendingDelivery(_ host: any MessagesWorld) -> (DeviceID, PlayerStep)? {
        host.devicesAwaitingDelivery.first.map { ($0, .deliver) }
    }

    /// Where a game played in rounds (each player in turn, `rounds` times) stands: a step
    /// that comes before any turn (a delivery due, the player switching to the game's
    /// conversation; after the last round, a device leaving the extension, nil once every
    /// one has), or the device whose turn it is, in the game's conversation.
    public func roundTurn(_ host: any MessagesWorld, players: [DeviceID], conversation: ConversationID,
                          turns: Int, rounds: Int) -> RoundTurn {
        if let step = pendingDelivery(host) { return .step(step) }
        guard turns < rounds * players.count else {
            return .step(players.first { host.shownExtension(on: $0) != nil }.map { ($0, .act(.dismissExtension)) })
        }
        let device = players[turns % players.count]
        if let step = openConversation(host, device, conversation) { return .step(step) }
        return .turn(device)
    }

    /// Send what a device's extension staged in the game's conversation, if any.
    public func stagedSend(_ host: any MessagesWorld, _ devices: [DeviceID], _ conversation: ConversationID) -> (DeviceID, PlayerStep)? {
        for device in devices where host.staged(on: device, in: conversation) != nil {
            return openConversation(host, device, conversation) ?? (device, .act(.tapSend))
        }
        return nil
    }

    /// Tap `message` unless the extension already shows it expanded.
    public func show(_ host: any MessagesWorld, _ device: DeviceID, _ conversation: ConversationID, _ message: Message) -> (DeviceID, PlayerStep)? {
        if let step = openConversation(host, device, conversation) { return step }
        guard let active = host.shownExtension(on: device), active.selectedMessage?.id == message.id else {
            if host.shownExtension(on: device)?.style == .expanded { return (device, .act(.collapse)) }
            return (device, .act(.tapMessage(message.id)))
        }
        if active.style == .compact { return (device, .act(.expand)) }
        return nil
    }

    /// The screen of the device's active extension, if any.
    public func screen(_ host: any MessagesWorld, _ device: DeviceID) -> Screen? {
        host.shownExtension(on: device)?.screen
    }

    /// Which of two devices sent `message`, as the first device's transcript says.
    public func sender(of message: Message, _ host: any MessagesWorld, among devices: [DeviceID], in conversation: ConversationID) -> DeviceID? {
        devices.first { device in
            host.transcript(on: device, in: conversation).last { $0.message?.id == message.id }?.isOutgoing == true
        }
    }
}
