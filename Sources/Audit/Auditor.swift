import EventStore
import Foundation
import MessagesModel
import Projections
import RecordedEvents
import Replay

/// A rule about the projected state that must hold at every step; users add their own.
public protocol Invariant: Sendable {
    /// A short name, e.g. `lives-never-negative`.
    var name: String { get }
    /// Nil if the rule holds after `event`, else what is wrong.
    func violation(in state: ConversationState, after event: ReplayEvent) -> String?
}

/// Runs every check over a log: integrity, lifecycle, game legality, cross-device
/// consistency, and any invariants.
public struct Auditor {
    public var invariants: [any Invariant]

    public init(invariants: [any Invariant] = Auditor.builtInInvariants) {
        self.invariants = invariants
    }

    public static let builtInInvariants: [any Invariant] = [LivesNeverNegative(), OneStagedItemPerDevice()]

    /// - Parameters:
    ///   - game: an id prefix to audit one game's conversation only.
    ///   - progress: called with (events checked, total).
    public func audit(_ store: EventStore, game: String? = nil, progress: ((Int, Int) -> Void)? = nil) throws -> [Finding] {
        var findings: [Finding] = []
        let total = Int(try store.count().events)
        // 1. Integrity of the whole log: a game's events are only as good as the chain.
        let integrity = try store.verifyIntegrity { done, _ in progress?(Int(done) / 2, total) }
        for problem in integrity.problems {
            findings.append(Finding(.error, .integrity, position: problem.position, rule: Self.rule(problem),
                                    expected: "an untouched event", found: problem.description))
        }
        guard integrity.isSound else { return findings }
        // 2-4. Per conversation, in the order things happened.
        let index = try GameIndex(store: store)
        var conversations = index.conversations
        if let game { conversations = [try index.resolve(game).conversation] }
        var done = 0
        for conversation in conversations.sorted(by: { $0.uuid.uuidString < $1.uuid.uuidString }) {
            let events = try Replayer.load(from: store, streams: index.streams[conversation] ?? [])
            findings += check(conversation, events)
            done += events.count
            progress?(total / 2 + done / 2, total)
        }
        return findings.sorted { ($0.position ?? .max, $0.rule) < ($1.position ?? .max, $1.rule) }
    }

    /// Every check on one conversation's events, in time order.
    /// - Parameter complete: false for a prefix of the events (as bisect checks): what
    ///   only the end of a log can tell (unfinished pairs, undelivered messages) is skipped.
    public func check(_ conversation: ConversationID, _ events: [ReplayEvent], complete: Bool = true) -> [Finding] {
        var lifecycle = LifecycleChecker(), games = GameChecker(), consistency = ConsistencyChecker()
        var state = ConversationState(conversation: conversation)
        var findings: [Finding] = []
        // Lifecycle is per recording, in log order within each.
        for e in events.sorted(by: { $0.position < $1.position }) { lifecycle.check(e) }
        for e in events {
            games.check(e)
            consistency.check(e)
            state.apply(e)
            for invariant in invariants {
                if let problem = invariant.violation(in: state, after: e) {
                    findings.append(Finding(.error, .invariant, position: e.position, device: e.event.context?.device.name,
                                            rule: invariant.name, expected: "the invariant to hold", found: problem))
                }
            }
        }
        if complete {
            lifecycle.finish()
            consistency.finish()
        }
        return lifecycle.findings + games.findings + consistency.findings + findings
    }

    static func rule(_ problem: EventStoreError) -> String {
        switch problem {
        case .missingEvent: return "gapless-positions"
        case .hashMismatch: return "hash-chain"
        case .streamVersionGap: return "gapless-stream-versions"
        case .corruptPayload, .unknownCodec, .unknownDictionary: return "payload-decodes"
        case .outOfOrder: return "positions-in-order"
        default: return "integrity"
        }
    }
}

/// Battleship lives never go below zero.
public struct LivesNeverNegative: Invariant {
    public var name: String { "lives-never-negative" }
    public init() {}
    public func violation(in state: ConversationState, after event: ReplayEvent) -> String? {
        for game in state.orderedGames {
            if let board = game.battleship, board.livesLeft < 0 { return "\(board.livesLeft) lives in game \(game.session)" }
        }
        return nil
    }
}

/// A staged message is always this device's own.
public struct OneStagedItemPerDevice: Invariant {
    public var name: String { "staged-message-is-own" }
    public init() {}
    public func violation(in state: ConversationState, after event: ReplayEvent) -> String? {
        for view in state.orderedDevices {
            if case .message(let message)? = view.staged, let local = view.localParticipant,
               message.senderParticipantIdentifier != local {
                return "device \(view.device) stages a message from someone else"
            }
        }
        return nil
    }
}

/// The first step of a conversation at which a named check or invariant fails.
public struct BisectResult: Sendable {
    /// 1-based step whose event first breaks the rule.
    public var step: Int
    public var finding: Finding
}

extension Auditor {
    /// Names `bisect` accepts: the check families and every invariant's name.
    public var checkNames: [String] { ["integrity", "lifecycle", "legality", "consistency"] + invariants.map(\.name) }

    /// Binary search for the first step whose prefix breaks `name` (a check family, a
    /// rule, or an invariant). A broken rule stays broken, so the search is sound.
    public func bisect(_ conversation: ConversationID, _ events: [ReplayEvent], rule name: String) -> BisectResult? {
        func failing(_ count: Int) -> Finding? {
            check(conversation, Array(events.prefix(count)), complete: false).first {
                $0.severity == .error && ($0.check.rawValue == name || $0.rule == name)
            }
        }
        guard failing(events.count) != nil else { return nil }
        var low = 0, high = events.count // failing(high) holds, failing(low) does not
        while high - low > 1 {
            let middle = (low + high) / 2
            if failing(middle) != nil { high = middle } else { low = middle }
        }
        return BisectResult(step: high, finding: failing(high)!)
    }
}
