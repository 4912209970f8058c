import Simulation
import EventStore
import Foundation
import GameKit
import MessagesHost
import MessagesModel
import Projections
import RecordedEvents
import Recorder
import Replay

/// Why a fork could not be made or played on.
public enum ForkError: Error, Hashable, Sendable, CustomStringConvertible {
    case stepOutOfRange(Int, count: Int)
    case unknownGame(kind: String)
    /// The re-enactment could not do what the recording did at this position.
    case notReenactable(position: Int64, detail: String)
    case impossibleStep(device: String, step: String, detail: String)

    public var description: String {
        switch self {
        case .stepOutOfRange(let step, let count): return "step \(step) is outside 0...\(count) for this game"
        case .unknownGame(let kind): return "no registered game plays extension kind '\(kind)'"
        case .notReenactable(let position, let detail):
            return "the recording cannot be re-enacted at position \(position): \(detail)"
        case .impossibleStep(let device, let step, let detail): return "device \(device) cannot \(step) now: \(detail)"
        }
    }
}

/// A recorded game re-enacted up to a step in a fresh simulated world, recorded into
/// another log, ready to play on with new inputs: lichess's "branch from here" for
/// message extensions.
///
/// The re-enactment replays, in the order they happened, the users' inputs and the
/// arrivals the recordings hold; the extensions and the host produce everything
/// else again. Identifiers are new (the world is new), so messages are matched by
/// their place in each device's transcript. A resign the game's recordings do not
/// explain (the device switched to another conversation, which they do not hold) is
/// re-enacted as leaving Messages.
public final class GameFork {
    public let host: MessagesHost
    public let recorder: Recorder
    /// The fork's conversation.
    public let conversation: ConversationID
    /// Where it came from; recorded in the fork's log.
    public private(set) var origin: ForkOrigin
    private let store: EventStore

    /// Re-enacts `source`'s conversation up to `step` into `store`.
    /// - Parameters:
    ///   - game: the id the user gave (kept as the origin's name).
    ///   - seed: the new world's seed (identifiers).
    ///   - keys: each device's signing key in the new world (see ``Recorder``).
    public init(source replayer: Replayer, sourceStore: any EventLogReader, game: String, at step: Int, into store: EventStore,
                seed: UInt64, keys: ((DeviceID) -> DeviceKey?)? = nil, clock: any RecordingClock = SystemClock()) throws {
        guard (0...replayer.stepCount).contains(step) else { throw ForkError.stepOutOfRange(step, count: replayer.stepCount) }
        let infos = replayer.events.compactMap { e -> InstanceInfo? in
            if case .recordingStarted(let info) = e.event { return info }
            return nil
        }
        guard let kind = infos.first?.kind else { throw ForkError.notReenactable(position: 0, detail: "the game has no recording") }
        guard let plugin = replayer.games.plugin(for: kind) else { throw ForkError.unknownGame(kind: kind) }
        self.store = store
        recorder = Recorder(store: store, clock: clock, seed: seed, keys: keys)
        let games = replayer.games
        host = recorder.makeHost(seed: seed) { info in games.plugin(for: info.kind)?.makeExtension() ?? plugin.makeExtension() }
        var devices: [DeviceID] = []
        for info in infos where !devices.contains(info.device) {
            devices.append(info.device)
            host.addDevice(info.device, owner: info.names[info.localParticipant] ?? info.device.name)
        }
        for device in devices { host.files[device, default: [:]].merge(plugin.files(on: device)) { $1 } }
        for device in devices { host.fileAttributes[device, default: [:]].merge(plugin.fileAttributes(on: device)) { $1 } }
        conversation = try host.startConversation(kind: kind, between: devices)
        origin = ForkOrigin(conversation: conversation.uuid, sourceGame: game, sourceConversation: replayer.conversation.uuid,
                            sourceStep: step, sourceHead: try sourceStore.headHash(), branchStep: 0, createdAt: Timestamp(Date()))
        try reenact(replayer, upTo: step)
        try recorder.flush()
        let reenacted = try store.events(EventQuery(streams: try GameIndex(store: store).streams(of: conversation))).count
        origin.branchStep = reenacted
        try store.recordFork(origin)
    }

    private func reenact(_ replayer: Replayer, upTo step: Int) throws {
        var others: [ConversationID: ConversationID] = [:]
        for index in 0..<step {
            let e = replayer.events[index]
            guard let device = e.device else { continue }
            switch e.event {
            case .input(let action, _):
                let mapped: UserAction
                switch action {
                case .openConversation(let original):
                    if original == replayer.conversation {
                        mapped = .openConversation(conversation)
                    } else {
                        let other = try others[original] ?? host.startConversation(kind: host.conversationKind(conversation) ?? "",
                                                                                   between: host.deviceIDs)
                        others[original] = other
                        mapped = .openConversation(other)
                    }
                case .tapMessage(let id): mapped = .tapMessage(try counterpart(of: id, on: device, before: index, replayer, e))
                case .viewLiveMessage(let id): mapped = .viewLiveMessage(try counterpart(of: id, on: device, before: index, replayer, e))
                default: mapped = action
                }
                do {
                    try host.perform(mapped, on: device)
                } catch {
                    // The original did it; a re-enactment that cannot is no fork of it.
                    throw ForkError.notReenactable(position: e.position, detail: "device \(device) could not \(action): \(error)")
                }
            case .transcript(.arrived, _):
                do {
                    try host.deliverNext(to: device)
                } catch {
                    throw ForkError.notReenactable(position: e.position, detail: "no message was on its way to device \(device)")
                }
            case .callback(let record, _) where record.callback == .willResignActive:
                if let instance = host.instance(on: device, in: conversation), instance.isActive,
                   host.currentConversation(of: device) == conversation {
                    try host.perform(.leaveMessages, on: device)
                }
            default:
                break
            }
        }
    }

    /// The fork's message at the place `id` held in the device's transcript.
    private func counterpart(of id: MessageID, on device: DeviceID, before index: Int, _ replayer: Replayer,
                             _ e: ReplayEvent) throws -> MessageID {
        let state = try replayer.state(at: index, as: .device(device))
        let original = state.devices[device]?.transcript.map(\.bubble) ?? []
        let now = host.transcript(on: device, in: conversation)
        guard let place = original.firstIndex(where: { $0.message?.id == id }), place < now.count, let mapped = now[place].message?.id
        else {
            throw ForkError.notReenactable(position: e.position, detail: "message \(id) has no counterpart in device \(device)'s transcript")
        }
        return mapped
    }

    /// Plays one new step on the fork, recorded.
    public func play(_ step: PlayerStep, on device: DeviceID) throws {
        guard host.deviceIDs.contains(device) else {
            throw ForkError.impossibleStep(device: device.name, step: step.description,
                                           detail: "the devices are \(host.deviceIDs.map(\.name).joined(separator: ", "))")
        }
        // A touch the extension's screen does not offer is no move a person could make:
        // refused, not recorded (a touch on cell 42 of a 3x3 board played "1 new step").
        if case .act(.touch(let touch)) = step {
            guard let screen = host.shownExtension(on: device)?.screen else {
                throw ForkError.impossibleStep(device: device.name, step: step.description, detail: "no extension is shown on it (`\(device.name) open-extension` opens it)")
            }
            switch touch {
            case .cell(let n) where !screen.cells.indices.contains(n):
                throw ForkError.impossibleStep(device: device.name, step: step.description, detail: screen.cells.isEmpty
                    ? "its screen (\(screen.name)) shows no board" : "its board has cells 0 to \(screen.cells.count - 1)")
            case .button(let title) where !screen.buttons.contains(where: { $0.title == title && $0.isEnabled }):
                let offered = screen.buttons.filter(\.isEnabled).map(\.title)
                throw ForkError.impossibleStep(device: device.name, step: step.description, detail: offered.isEmpty
                    ? "its screen (\(screen.name)) has no button to touch" : "its screen offers \(offered.joined(separator: ", "))")
            case .dismissAlert where screen.alert == nil:
                throw ForkError.impossibleStep(device: device.name, step: step.description, detail: "no alert is shown")
            default:
                break
            }
        }
        do {
            switch step {
            case .act(let action): try host.perform(action, on: device)
            case .tapLatestMessage:
                guard let message = host.latestMessage(on: device, in: conversation) else {
                    throw ForkError.impossibleStep(device: device.name, step: step.description, detail: "its transcript holds no message")
                }
                try host.perform(.tapMessage(message.id), on: device)
            case .deliver: try host.deliverNext(to: device)
            case .wait: host.tick()
            }
        } catch let error as ForkError {
            throw error
        } catch {
            throw ForkError.impossibleStep(device: device.name, step: step.description, detail: "\(error)")
        }
        try recorder.flush()
    }

    /// Parses a step as a script line gives it: `B touch cell 4`, `A send`, `B deliver`,
    /// `A tap-latest`, `A open`, `A open-extension`, `B expand`, `B collapse`, `A dismiss`,
    /// `A delete`, `A touch button Start game`, `A touch alert`, `A touch sticker 1`,
    /// `A leave`, `A quit`.
    public func parse(_ line: String) -> (DeviceID, PlayerStep)? {
        let words = line.split(separator: " ").map(String.init)
        guard words.count >= 2 else { return nil }
        let device = DeviceID(words[0])
        let rest = Array(words.dropFirst())
        let step: PlayerStep
        switch rest[0] {
        case "send": step = .act(.tapSend)
        case "deliver": step = .deliver
        case "tap-latest": step = .tapLatestMessage
        case "open": step = .act(.openConversation(conversation))
        case "open-extension": step = .act(.openExtension)
        case "expand": step = .act(.expand)
        case "collapse": step = .act(.collapse)
        case "dismiss": step = .act(.dismissExtension)
        case "delete": step = .act(.deleteStaged)
        case "leave": step = .act(.leaveMessages)
        case "quit": step = .act(.quitMessages)
        case "touch" where rest.count >= 2:
            switch rest[1] {
            case "cell": guard rest.count == 3, let n = Int(rest[2]) else { return nil }; step = .act(.touch(.cell(n)))
            case "sticker": guard rest.count == 3, let n = Int(rest[2]) else { return nil }; step = .act(.touch(.sticker(n)))
            case "alert": step = .act(.touch(.dismissAlert))
            case "button" where rest.count >= 3: step = .act(.touch(.button(rest[2...].joined(separator: " "))))
            default: return nil
            }
        default: return nil
        }
        return (device, step)
    }
}
