import MessagesModel

/// Whose eyes a state is seen through.
public enum Perspective: Hashable, Sendable, CustomStringConvertible {
    /// Everything, as an auditor with every device's log sees it.
    case auditor
    /// Only what this device could show.
    case device(DeviceID)

    /// Parses `auditor` or a device name.
    public init(_ text: String) {
        self = text.lowercased() == "auditor" ? .auditor : .device(DeviceID(text))
    }

    public var description: String {
        switch self {
        case .auditor: return "auditor"
        case .device(let d): return "device \(d)"
        }
    }
}

extension ConversationState {
    /// The state as `perspective` sees it. A device sees its own transcript and UI
    /// only; a Battleship guesser never sees ships it has not hit, and message URLs
    /// (which carry the ships) are hidden from devices that did not send them,
    /// as the seed's images hide them.
    public func seen(as perspective: Perspective) -> ConversationState {
        guard case .device(let device) = perspective else { return self }
        var out = self
        out.devices = devices.filter { $0.key == device }
        for (session, game) in games {
            guard var board = game.battleship, board.placer != device else { continue }
            board.ships = board.ships.filter { board.hits.contains($0) }
            out.games[session]?.battleship = board
        }
        if var view = out.devices[device] {
            for index in view.transcript.indices {
                guard !view.transcript[index].bubble.isOutgoing,
                      case .item(.message(var message)) = view.transcript[index].bubble.content,
                      kind == "battleship" else { continue }
                message.url = nil
                view.transcript[index].bubble.content = .item(.message(message))
            }
            out.devices[device] = view
        }
        return out
    }
}
