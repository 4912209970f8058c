import Foundation
import EventStore
import GameKit
import MessagesHost
import MessagesModel
import Projections
import RecordedEvents
import Recorder

/// How a simulated game went.
public struct GameReport: Sendable {
    /// The extension kind played.
    public var kind: String
    public var conversation: ConversationID
    /// Every step taken, with its device, in order.
    public var steps: [(device: DeviceID, step: PlayerStep)]
    /// False if the step budget ran out first.
    public var finished: Bool
    /// A sentence saying how the game ended, as the first device's transcript shows it.
    public var outcome: String
    /// The winner's name once finished (nil for a draw or an unfinished game).
    public var winner: String?
    /// Whether the last game message shows a finished game.
    public var isOver: Bool
    /// The final transcript of each device, captions resolved.
    public var transcripts: [DeviceID: [String]]
    /// Every game of the conversation as the recorded log shows it (the projections'
    /// fold of what was recorded): the one the players set out to play, and any a stray
    /// tap started or a lost selection stranded beside it.
    public var games: [GameOutcomeReport] = []
    /// The final board's cells, as the log shows the game.
    public var board: [String]
    /// Cells per row of `board`.
    public var boardColumns: Int
    public var eventsWritten: Int
    /// True when an earlier run with the same seed had recorded this game: nothing was written.
    public var alreadyRecorded = false
}

/// One game of a simulated conversation, as the recorded log shows it.
public struct GameOutcomeReport: Hashable, Sendable {
    public var session: SessionID
    public var status: GameStatus
    /// The winner's name once finished (nil for a draw).
    public var winner: String?
    /// The game's result sentence, players named.
    public var result: String
    /// The game's events, as `games` counts them and `log --game` lists them.
    public var events: Int
}

/// Plays games between simulated devices and records them.
///
/// Each game runs in its own simulated world (devices A "Alice" and B "Bob", joined by
/// C "Carol" and D "Dave" for a game a group can play, a game
/// conversation and a second conversation to switch to), seeded from the
/// simulator's seed and the game's number, so the same seed replays the same games.
public final class Simulator {
    public let recorder: Recorder
    /// The games it can play.
    public let games: GameRegistry
    private let seed: UInt64
    private var gameNumber: UInt64 = 0
    /// Chance of a noise step (dismiss, switch away, cancel, re-tap, ...) per step.
    public var noise: Double
    /// Steps after which a game is abandoned.
    public var stepBudget = 600
    /// Ticks in a row in which the game could not move on although nothing was on its
    /// way (its next message lost) after which the players give up on it. Ticks spent
    /// waiting for a message in flight or a phone without signal do not count: people
    /// wait for those, up to ``waitBudget`` ticks a game.
    public var patience = 60
    /// Ticks a game may spend in all, waiting included, before it is abandoned.
    public var waitBudget = 4_000
    /// How the network between the devices treats messages, and how far their clocks are off.
    public var network: NetworkProfile = .ideal { didSet { skewClocks() } }

    /// Each device's clock, drawn once from the seed for the profile's limits.
    private func skewClocks() {
        var rng = SeededGenerator(seed: seed ^ 0x636C_6F63_6B73)
        let offset = network.clockOffsetSeconds * 1_000_000, drift = network.clockDriftPPM
        for (device, _) in devices + groupDevices {
            guard offset > 0 || drift > 0 else {
                recorder.clockSkew[device] = nil
                continue
            }
            recorder.clockSkew[device] = .init(offsetMicroseconds: Int64(rng.next() % UInt64(2 * offset + 1)) - offset,
                                               driftPPM: Int64(rng.next() % UInt64(2 * drift + 1)) - drift)
        }
    }
    /// What the network did in every game so far, by kind.
    public private(set) var networkEvents: [NetworkEvent: Int] = [:]
    /// How often each behaviour of the model occurred in every game so far.
    public private(set) var coverage = Coverage()
    /// Write after every step (each step acknowledged) rather than once per game.
    public var flushEveryStep = false
    /// Callbacks the hosts of every game so far delivered, by kind: what the recorder
    /// must have recorded.
    public private(set) var deliveredCallbacks: [Callback: Int] = [:]
    /// The simulated Messages of the last game played, as it ended.
    public private(set) var lastHost: MessagesHost?
    /// Called after each step that was carried out, e.g. to narrate the game.
    public var didStep: ((DeviceID, PlayerStep, MessagesHost) -> Void)?

    /// The conversations being played, folded from the events as they are recorded.
    private var folded: [ConversationID: ConversationState] = [:]
    private var recordedSteps: Int64 = 0

    /// The two devices that play, and their owners' names.
    public let devices: [(device: DeviceID, owner: String)]
    /// The devices that join the two for a game a group can play
    /// (``GamePlugin/players``): C (Carol) and D (Dave) unless set. How many join is
    /// drawn per game from the seed, apart from the game's own randomness, so the
    /// games of two players replay as before.
    public var groupDevices: [(device: DeviceID, owner: String)] = [("C", "Carol"), ("D", "Dave")] {
        didSet { skewClocks() }
    }
    /// The devices of the game being played.
    private var seated: [DeviceID] = []

    /// - Parameter devices: the two players' devices and owners (A, Alice and B, Bob
    ///   unless given): phones of their own need names of their own in a shared store.
    public init(recorder: Recorder, games: GameRegistry, seed: UInt64, noise: Double = 0.15,
                devices: [(device: DeviceID, owner: String)] = [("A", "Alice"), ("B", "Bob")]) {
        precondition(devices.count == 2 && devices[0].device != devices[1].device, "a game is played on two devices")
        self.devices = devices
        self.recorder = recorder
        self.games = games
        self.seed = seed
        self.noise = noise
        recorder.onRecord = { [weak self] event, stream in self?.fold(event, stream: stream) }
    }

    private func fold(_ event: RecordedEvent, stream: UUID) {
        guard let conversation = event.conversation else { return }
        recordedSteps += 1
        if folded[conversation] == nil, case .recordingStarted(let info) = event {
            coverage.count(conversationOf: info.remoteParticipants.count + 1)
        }
        var state = folded[conversation] ?? ConversationState(conversation: conversation, games: games)
        coverage.count(event, before: event.context.flatMap { state.devices[$0.device] }, kind: state.kind)
        state.apply(ReplayEvent(position: recordedSteps, recordedAt: recordedSteps, stream: stream, event: event))
        folded[conversation] = state
    }

    /// Plays one game of an extension kind; randomness is drawn from the seed.
    /// - Throws: ``SimulationError/unknownGame(_:known:)`` for a kind the registry lacks.
    @discardableResult
    public func play(_ kind: String) throws -> GameReport {
        let plugin = try self.plugin(kind)
        var (rng, host, game) = try makeWorld(plugin)
        let players = seated
        let other = try host.startConversation(kind: kind, between: players)
        var strategy = plugin.makeStrategy(players: players, conversation: game)
        let writtenBefore = recorder.writtenEvents
        var steps: [(DeviceID, PlayerStep)] = []
        var finished = false
        var followUp: (DeviceID, PlayerStep)?
        var stalled = 0, ticks = 0
        while steps.count < stepBudget && stalled < patience && ticks < waitBudget {
            ticks += 1
            // One tick of the world's time a step: messages come due, signal comes and goes.
            host.tick()
            var advancing = false
            let step: (DeviceID, PlayerStep)
            if let next = followUp {
                step = next
                followUp = nil
            } else if Double(rng.next() % 10_000) / 10_000 < noise,
                      let noisy = noiseStep(host, game: game, other: other, followUp: &followUp, &rng) {
                step = noisy
            } else if let retry = tryAgainStep(host, game: game, &rng) {
                step = retry
                advancing = true
            } else if let progress = strategy.next(host, &rng) {
                step = progress
                advancing = true
            } else {
                finished = true
                break
            }
            if host.run(step.1, on: step.0) {
                steps.append(step)
                didStep?(step.0, step.1, host)
                if flushEveryStep { try recorder.flush() }
                if advancing { stalled = 0 }
            } else if advancing && !host.hasTrafficUnderway {
                stalled += 1
            }
        }
        settle(host)
        // Re-running a seed replays its games exactly: one already stored adds nothing.
        let alreadyRecorded = try !flushEveryStep && recorder.discardIfAlreadyRecorded()
        try recorder.flush()
        let written = recorder.writtenEvents - writtenBefore
        var report = report(plugin, host, game, steps, finished, written)
        report.alreadyRecorded = alreadyRecorded
        return report
    }

    /// A player whose send failed sees the red "!" in the transcript, sooner or later, and
    /// taps Try Again (MESSAGES' error bubble): otherwise the game waits for a message that
    /// never left. Getting there takes what a person does: back to the conversation, the
    /// extension out of the way.
    private func tryAgainStep(_ host: MessagesHost, game: ConversationID, _ rng: inout SeededGenerator) -> (DeviceID, PlayerStep)? {
        for device in seated {
            guard let failed = host.transcript(on: device, in: game).last(where: { $0.isOutgoing && $0.message?.error != nil })?.message,
                  rng.next() % 3 == 0 else { continue }
            if host.currentConversation(of: device) != game { return (device, .act(.openConversation(game))) }
            if host.shownExtension(on: device)?.style == .expanded { return (device, .act(.collapse)) }
            return (device, .act(.tryAgain(failed.id)))
        }
        return nil
    }

    /// The game is over for its players, not for the network: phones regain their signal
    /// sooner or later, and what is on its way arrives. Without this, every message still
    /// in flight when a game ended was missing from the log as if the network had lost it
    /// (`verify` warned 863 times in 500 games where the network lost 34).
    private func settle(_ host: MessagesHost) {
        for device in host.deviceIDs where !host.isOnline(device) { host.setOnline(device, true) }
        // A delivery the host cannot carry out (it never happens; bounded all the same) ends it.
        var idle = 0
        while host.hasTrafficUnderway && idle < 64 {
            var delivered = false
            while let device = host.devicesAwaitingDelivery.first, host.run(.deliver, on: device) {
                didStep?(device, .deliver, host)
                delivered = true
            }
            idle = delivered ? 0 : idle + 1
            host.advanceClock()
        }
    }

    /// The kind of the `number`th game of a mixed run: every registered game in turn.
    public func mixedKind(_ number: Int) -> String { games.kinds[number % games.kinds.count] }

    private func plugin(_ kind: String) throws(SimulationError) -> any GamePlugin {
        guard let plugin = games.plugin(for: kind) else { throw .unknownGame(kind, known: games.kinds) }
        return plugin
    }

    /// Plays a fixed script of steps in a fresh world, one tick of time a step; steps
    /// that are impossible are skipped and not counted.
    @discardableResult
    public func play(_ kind: String, script: (ConversationID) -> [(DeviceID, PlayerStep)]) throws -> GameReport {
        let plugin = try self.plugin(kind)
        let (_, host, game) = try makeWorld(plugin)
        let writtenBefore = recorder.writtenEvents
        var steps: [(DeviceID, PlayerStep)] = []
        // Each step is a tick of the world's time, as in free play: on a network that
        // delays messages, a script that asks again for a delivery gets it once it is due.
        for (device, step) in script(game) where { host.tick(); return host.run(step, on: device) }() {
            steps.append((device, step))
            didStep?(device, step, host)
            if flushEveryStep { try recorder.flush() }
        }
        try recorder.flush()
        let written = recorder.writtenEvents - writtenBefore
        return report(plugin, host, game, steps, true, written)
    }

    /// A fresh world for the next game: its own generator, host, devices A (Alice) and
    /// B (Bob), and the game's conversation.
    private func makeWorld(_ plugin: any GamePlugin) throws -> (SeededGenerator, MessagesHost, ConversationID) {
        gameNumber += 1
        folded = [:]
        var rng = SeededGenerator(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ gameNumber)
        var seats = devices
        let extra = groupDevices.filter { joining in !devices.contains { $0.device == joining.device } }
        if plugin.players.upperBound > 2, !extra.isEmpty {
            var draw = SeededGenerator(seed: (seed ^ 0x6772_6F75_7073) &* 0x9E37_79B9_7F4A_7C15 &+ gameNumber)
            let most = min(plugin.players.upperBound, 2 + extra.count), least = max(plugin.players.lowerBound, 2)
            let count = least + Int(draw.next() % UInt64(most - least + 1))
            seats += extra.prefix(count - 2)
        }
        seated = seats.map(\.device)
        let games = self.games
        let host = recorder.makeHost(seed: rng.next()) { info in
            games.plugin(for: info.kind)?.makeExtension() ?? plugin.makeExtension()
        }
        host.network = network
        for (device, owner) in seats { host.addDevice(device, owner: owner) }
        for device in host.deviceIDs { host.files[device, default: [:]].merge(plugin.files(on: device)) { $1 } }
        for device in host.deviceIDs { host.fileAttributes[device, default: [:]].merge(plugin.fileAttributes(on: device)) { $1 } }
        return (rng, host, try host.startConversation(kind: plugin.kind, between: seated))
    }

    /// A step that is legal but does not advance the game: the things real users do.
    /// - Parameter followUp: set to a step that must come next (a change of mind in two steps).
    private func noiseStep(_ host: MessagesHost, game: ConversationID, other: ConversationID,
                           followUp: inout (DeviceID, PlayerStep)?, _ rng: inout SeededGenerator) -> (DeviceID, PlayerStep)? {
        let device = seated[Int(rng.next() % UInt64(seated.count))]
        var options: [PlayerStep] = [.act(.openConversation(other)), .act(.openConversation(game)), .act(.leaveMessages)]
        if rng.next() % 20 == 0 { options.append(.act(.quitMessages)) }
        if host.pendingDeliveries.contains(where: { $0.to == device }) { options.append(.deliver) }
        if let current = host.currentConversation(of: device), host.staged(on: device, in: current) != nil {
            // A change of mind: delete the staged message, while the extension shows
            // (Messages then calls didCancelSending) as often as after it went away.
            if host.activeInstance(on: device) == nil, rng.next() % 2 == 0 {
                followUp = (device, .act(.deleteStaged))
                return (device, .act(.openExtension))
            }
            options += [.act(.deleteStaged), .act(.deleteStaged)]
        }
        if let current = host.currentConversation(of: device),
           let live = host.transcript(on: device, in: current).last(where: { bubble in
               if case .live? = bubble.message?.layout { return true } else { return false }
           })?.message {
            options.append(.act(.viewLiveMessage(live.id))) // a live bubble runs in transcript style
        }
        if let active = host.activeInstance(on: device) {
            options += [.act(.dismissExtension), .act(.expand), .act(.collapse),
                        .act(.touch(.cell(Int(rng.next() % 9))))]
            var switchTo: MessageID?
            if let selected = active.selectedMessage, active.style != .expanded {
                options.append(.act(.tapMessage(selected.id))) // re-tap: fires nothing
                // A look at another message of the extension: the selection switches.
                if let current = host.currentConversation(of: device),
                   let other = host.transcript(on: device, in: current).compactMap(\.message).first(where: { $0.id != selected.id }) {
                    switchTo = other.id
                    options.append(.act(.tapMessage(other.id)))
                }
            }
            // Send while the extension still shows (Messages calls didStartSending).
            if let current = host.currentConversation(of: device), host.staged(on: device, in: current) != nil {
                options.append(.act(.tapSend))
            }
            let chosen = options.randomElement(using: &rng)!
            // Having looked, the user puts the extension away (it now shows the other
            // message, expanded over the transcript); the game goes on from the newest.
            if let switchTo, chosen == .act(.tapMessage(switchTo)) { followUp = (device, .act(.dismissExtension)) }
            return (device, chosen)
        } else if host.currentConversation(of: device) != nil {
            options.append(.act(.openExtension))
        }
        return (device, options.randomElement(using: &rng)!)
    }

    private func report(_ plugin: any GamePlugin, _ host: MessagesHost, _ game: ConversationID,
                        _ steps: [(DeviceID, PlayerStep)], _ finished: Bool, _ written: Int) -> GameReport {
        deliveredCallbacks.merge(host.deliveredCallbacks, uniquingKeysWith: +)
        networkEvents.merge(host.networkEvents, uniquingKeysWith: +)
        coverage.count(network: host.networkEvents)
        lastHost = host
        var transcripts: [DeviceID: [String]] = [:]
        for device in host.deviceIDs {
            transcripts[device] = host.transcript(on: device, in: game).map { describe($0, on: device, host) }
        }
        // What the log shows: the conversation folded from the events recorded, by the projections.
        let state = folded.removeValue(forKey: game)
        let sessions = state?.orderedGames ?? []
        for view in sessions { coverage.count(game: plugin.kind, status: view.status, won: view.winner != nil) }
        let outcomes = sessions.map { view in
            GameOutcomeReport(session: view.session, status: view.status, winner: view.winner,
                              result: plugin.result(of: view.board),
                              events: state?.eventCount(ofGame: view.session) ?? view.events)
        }
        // The game the players played on to the end: the latest one under way (the players
        // follow the newest message, so one a stray tap started may take over).
        let main = sessions.last { $0.status == .finished || $0.status == .inProgress }
        let picture = main.map { plugin.picture(of: $0.board) }
        let outcome: String
        if let main {
            outcome = main.status == .finished || main.status == .inProgress ? plugin.result(of: main.board) : main.status.rawValue
        } else {
            outcome = "no game message"
        }
        var report = GameReport(kind: plugin.kind, conversation: game, steps: steps, finished: finished,
                                outcome: outcome, winner: main?.winner, isOver: main?.status == .finished,
                                transcripts: transcripts, board: picture?.cells ?? [], boardColumns: picture?.columns ?? plugin.boardColumns,
                                eventsWritten: written)
        report.games = outcomes
        return report
    }

    private func describe(_ bubble: Bubble, on device: DeviceID, _ host: MessagesHost) -> String {
        let who = bubble.isOutgoing ? "me" : host.display("$\(bubble.sender.uuid.uuidString)", on: device)
        switch bubble.content {
        case .summary(let text, _):
            return "  (\(host.display(text, on: device)))"
        case .item(.message(let message)):
            return "\(who): [\(host.display(message.caption ?? "message", on: device))]"
        case .item(.text(let text)):
            return "\(who): \(text)"
        case .item(.sticker(let sticker)):
            return "\(who): sticker \(sticker.localizedDescription)"
        case .item(.attachment(let url, let name)):
            return "\(who): attachment \(name ?? url)"
        }
    }
}

/// Why the simulator could not play.
public enum SimulationError: Error, Hashable, Sendable, CustomStringConvertible {
    case unknownGame(String, known: [String])

    public var description: String {
        switch self {
        case .unknownGame(let kind, let known):
            return "no game of kind '\(kind)' is registered; the games are \(known.joined(separator: ", "))"
        }
    }
}
