import RecordedEvents
import GameKit
import MessagesModel

/// Whose eyes a state is seen through.
public enum Perspective: Hashable, Sendable, CustomStringConvertible {
    /// Everything, as an auditor with every device's log sees it.
    case auditor
    /// Only what this device showed or received.
    case device(DeviceID)

    /// `auditor` or one of `devices` (by name, any case).
    public init(_ text: String, devices: [DeviceID]) throws(PerspectiveError) {
        if text.lowercased() == "auditor" { self = .auditor; return }
        guard let device = devices.first(where: { $0.name == text }) ?? devices.first(where: { $0.name.lowercased() == text.lowercased() })
        else { throw .unknownDevice(text, devices: devices) }
        self = .device(device)
    }

    public var description: String {
        switch self {
        case .auditor: return "auditor"
        case .device(let d): return "device \(d)"
        }
    }

    /// Whether an event belongs to what this perspective sees: the auditor sees every
    /// event, a device only those its own recordings hold.
    public func sees(_ event: ReplayEvent) -> Bool {
        guard case .device(let device) = self else { return true }
        return event.device == device
    }
}

/// A perspective that names no device of the conversation.
public enum PerspectiveError: Error, Hashable, Sendable, CustomStringConvertible {
    case unknownDevice(String, devices: [DeviceID])

    public var description: String {
        switch self {
        case .unknownDevice(let name, let devices):
            return "'\(name)' is not a device here; the devices are \(devices.map(\.name).joined(separator: ", ")), or auditor"
        }
    }
}

extension ReplayEvent {
    /// The device whose recording holds this event.
    public var device: DeviceID? {
        if case .recordingStarted(let info) = event { return info.device }
        return event.context?.device
    }
}

extension ConversationState {
    /// The state folded from `events` as `perspective` sees them: a device's view
    /// is folded from that device's own events only, so it cannot hold what the
    /// device never saw, then each game's plug-in hides what the device's owner may
    /// not see (a Battleship guesser never sees ships it has not hit).
    @inlinable
    public static func folding(_ conversation: ConversationID, _ events: some Sequence<ReplayEvent>, games: GameRegistry,
                               as perspective: Perspective) -> ConversationState {
        var state = ConversationState(conversation: conversation, games: games)
        for e in events where perspective.sees(e) { state.apply(e) }
        return state.playerView(for: perspective)
    }

    /// Applies each game's player view for a state folded from a device's own events.
    public func playerView(for perspective: Perspective) -> ConversationState {
        guard case .device(let device) = perspective else { return self }
        var out = self
        out.devices = devices.filter { $0.key == device }
        let player = devices[device]?.ownerName
        guard let plugin else { return out }
        for session in gameOrder {
            guard let game = games[session] else { continue }
            out.games[session]?.board = plugin.playerView(of: game.board, for: player)
        }
        if var view = out.devices[device] {
            for index in view.transcript.indices {
                guard case .item(.message(let message)) = view.transcript[index].bubble.content else { continue }
                let direction: MessageDirection = view.transcript[index].bubble.isOutgoing ? .outgoing : .incoming
                view.transcript[index].bubble.content = .item(.message(
                    plugin.playerView(of: message, board: board(of: message), viewer: player, direction: direction)))
            }
            if case .message(let message)? = view.staged {
                view.staged = .message(plugin.playerView(of: message, board: board(of: message), viewer: player, direction: .staged))
            }
            out.devices[device] = view
        }
        return out
    }

    /// The board of the game `message` belongs to, as this state knows it (a new
    /// board when it knows none).
    public func board(of message: Message) -> AnyBoard {
        let session = sessionOfMessage[message.id] ?? message.session
        return session.flatMap { games[$0]?.board } ?? plugin?.makeBoard() ?? AnyBoard(kind: kind, UnregisteredBoard())
    }

    /// `event` as `perspective` may see it: for a device, every message it carries (a
    /// callback's argument and selection, an insert or send, a transcript change) as
    /// the game's player view shows it to the device's owner, with the game as this
    /// state knows it. The auditor sees the event unchanged.
    public func view(of event: RecordedEvent, as perspective: Perspective) -> RecordedEvent {
        guard case .device(let device) = perspective, let plugin else { return event }
        let player = devices[device]?.ownerName
        let local = devices[device]?.localParticipant
        return event.mappingMessages { message, place in
            let direction: MessageDirection
            switch place {
            case .inserted: direction = .staged
            case .sentByExtension, .transcriptSent, .callbackArgument(.didStartSending), .callbackArgument(.didCancelSending): direction = .outgoing
            case .transcriptArrived, .callbackArgument(.didReceive): direction = .incoming
            case .callbackArgument, .selection:
                direction = local != nil && message.senderParticipantIdentifier == local ? .outgoing : .incoming
            }
            return plugin.playerView(of: message, board: board(of: message), viewer: player, direction: direction)
        }
    }
}
