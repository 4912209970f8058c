import EventStore
import GameRules
import MessagesHost
import MessagesModel
import Recorder
import SeedExtensions

/// The games the simulator plays.
public enum GameKind: String, CaseIterable, Sendable, Codable {
    case battleship
    case tictactoe

    var extensionKind: String {
        switch self {
        case .battleship: return BattleshipExtension.kind
        case .tictactoe: return TicTacToeExtension.kind
        }
    }
}

/// How a simulated game went.
public struct GameReport: Sendable {
    public var kind: GameKind
    public var conversation: ConversationID
    /// Every step taken, with its device, in order.
    public var steps: [(device: DeviceID, step: PlayerStep)]
    /// False if the step budget ran out first.
    public var finished: Bool
    /// A sentence saying who won, as the placer's or first player's device shows it.
    public var outcome: String
    /// The final transcript of each device, captions resolved.
    public var transcripts: [DeviceID: [String]]
    /// The final board, as text, of the last game message.
    public var board: [String]
    public var eventsWritten: Int
}

/// Plays games between simulated devices and records them.
///
/// Each game runs in its own simulated world (devices A "Alice" and B "Bob", a game
/// conversation and a second conversation to switch to), seeded from the
/// simulator's seed and the game's number, so the same seed replays the same games.
public final class Simulator {
    public let recorder: Recorder
    private let seed: UInt64
    private var gameNumber: UInt64 = 0
    /// Chance of a noise step (dismiss, switch away, cancel, re-tap, ...) per step.
    public var noise: Double
    /// Steps after which a game is abandoned.
    public var stepBudget = 600
    /// Write after every step (each step acknowledged) rather than once per game.
    public var flushEveryStep = false
    /// Callbacks the hosts of every game so far delivered, by kind: what the recorder
    /// must have recorded.
    public private(set) var deliveredCallbacks: [Callback: Int] = [:]
    /// The simulated Messages of the last game played, as it ended.
    public private(set) var lastHost: MessagesHost?
    /// Called after each step that was carried out, e.g. to narrate the game.
    public var didStep: ((DeviceID, PlayerStep, MessagesHost) -> Void)?

    public init(recorder: Recorder, seed: UInt64, noise: Double = 0.15) {
        self.recorder = recorder
        self.seed = seed
        self.noise = noise
    }

    /// Plays one game; randomness is drawn from the seed.
    @discardableResult
    public func play(_ kind: GameKind) throws -> GameReport {
        var (rng, host, game) = try makeWorld(kind)
        let other = try host.startConversation(kind: kind.extensionKind, between: ["A", "B"])
        var strategy: any GameStrategy = kind == .battleship
            ? BattleshipStrategy(placer: "A", guesser: "B", conversation: game)
            : TicTacToeStrategy(first: "A", second: "B", conversation: game)
        let writtenBefore = recorder.writtenEvents
        var steps: [(DeviceID, PlayerStep)] = []
        var finished = false
        while steps.count < stepBudget {
            let step: (DeviceID, PlayerStep)
            if Double(rng.next() % 10_000) / 10_000 < noise, let noisy = noiseStep(host, game: game, other: other, &rng) {
                step = noisy
            } else if let progress = strategy.next(host, &rng) {
                step = progress
            } else {
                finished = true
                break
            }
            if host.run(step.1, on: step.0) {
                steps.append(step)
                didStep?(step.0, step.1, host)
                if flushEveryStep { try recorder.flush() }
            }
        }
        try recorder.flush()
        let written = recorder.writtenEvents - writtenBefore
        return report(kind, host, game, steps, finished, written)
    }

    /// Plays a fixed script of steps in a fresh world; steps that are impossible are
    /// skipped and not counted.
    @discardableResult
    public func play(_ kind: GameKind, script: (ConversationID) -> [(DeviceID, PlayerStep)]) throws -> GameReport {
        let (_, host, game) = try makeWorld(kind)
        let writtenBefore = recorder.writtenEvents
        var steps: [(DeviceID, PlayerStep)] = []
        for (device, step) in script(game) where host.run(step, on: device) {
            steps.append((device, step))
            didStep?(device, step, host)
            if flushEveryStep { try recorder.flush() }
        }
        try recorder.flush()
        let written = recorder.writtenEvents - writtenBefore
        return report(kind, host, game, steps, true, written)
    }

    /// A fresh world for the next game: its own generator, host, devices A (Alice) and
    /// B (Bob), and the game's conversation.
    private func makeWorld(_ kind: GameKind) throws -> (SeededGenerator, MessagesHost, ConversationID) {
        gameNumber += 1
        var rng = SeededGenerator(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ gameNumber)
        let host = recorder.makeHost(seed: rng.next()) { SeedExtensions.make(kind: $0.kind) }
        host.addDevice("A", owner: "Alice")
        host.addDevice("B", owner: "Bob")
        return (rng, host, try host.startConversation(kind: kind.extensionKind, between: ["A", "B"]))
    }

    /// A step that is legal but does not advance the game: the things real users do.
    private func noiseStep(_ host: MessagesHost, game: ConversationID, other: ConversationID,
                           _ rng: inout SeededGenerator) -> (DeviceID, PlayerStep)? {
        let device: DeviceID = rng.next() % 2 == 0 ? "A" : "B"
        var options: [PlayerStep] = [.act(.openConversation(other)), .act(.openConversation(game)), .act(.leaveMessages)]
        if rng.next() % 20 == 0 { options.append(.act(.quitMessages)) }
        if host.pendingDeliveries.contains(where: { $0.to == device }) { options.append(.deliver) }
        if let current = host.currentConversation(of: device), host.staged(on: device, in: current) != nil {
            options.append(.act(.deleteStaged))
        }
        if let active = host.activeInstance(on: device) {
            options += [.act(.dismissExtension), .act(.expand), .act(.collapse),
                        .act(.touch(.cell(Int(rng.next() % 9))))]
            if let selected = active.selectedMessage, active.style != .expanded {
                options.append(.act(.tapMessage(selected.id))) // re-tap: fires nothing
            }
        } else if host.currentConversation(of: device) != nil {
            options.append(.act(.openExtension))
        }
        return (device, options.randomElement(using: &rng)!)
    }

    private func report(_ kind: GameKind, _ host: MessagesHost, _ game: ConversationID,
                        _ steps: [(DeviceID, PlayerStep)], _ finished: Bool, _ written: Int) -> GameReport {
        deliveredCallbacks.merge(host.deliveredCallbacks, uniquingKeysWith: +)
        lastHost = host
        var transcripts: [DeviceID: [String]] = [:]
        for device in host.deviceIDs {
            transcripts[device] = host.transcript(on: device, in: game).map { describe($0, on: device, host) }
        }
        let last = host.latestMessage(on: "A", in: game)
        var outcome = "unfinished"
        var board: [String] = []
        switch kind {
        case .battleship:
            if let last, let model = last.url.flatMap({ try? Battleship.GameModel(url: $0) }) {
                board = last.layout?.template.image?.cells ?? []
                outcome = model.isComplete ? host.display(last.caption ?? "", on: "A") : "ships placed, not yet hunted"
            }
        case .tictactoe:
            if let last, let state = try? TicTacToe.GameState(url: last.url) {
                board = state.cellNames
                outcome = state.winner == TicTacToe.x ? "X (Alice) won"
                    : state.winner == TicTacToe.o ? "O (Bob) won" : state.isDraw ? "a draw" : "in progress"
            }
        }
        return GameReport(kind: kind, conversation: game, steps: steps, finished: finished, outcome: outcome,
                          transcripts: transcripts, board: board, eventsWritten: written)
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
