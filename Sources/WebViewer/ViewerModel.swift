import RecordedEvents
import Audit
import EventStore
import Foundation
import GameKit
import MessagesModel
import Projections
import Replay
import Rerun

/// What the viewer knows of one log, opened read-only: the game index (read once),
/// the game list, recently opened games, and audit findings. Every read goes through
/// one lock: SQLite connections and replayers are not shared between threads.
public final class ViewerModel: @unchecked Sendable {
    public let path: String
    public let games: GameRegistry
    private let lock = NSLock()
    private let store: EventStore
    private let index: GameIndex
    private let origins: [UUID: ForkOrigin]
    private var catalog: [GameSummary]?
    private var replayers: [ConversationID: Replayer] = [:]
    private var recent: [ConversationID] = []
    private var findings: [ConversationID: [Finding]] = [:]
    /// Set once the whole log's audit (run in the background) is done.
    private var audited: [String: [Finding]]?
    /// Audits a shared store keeps (`verify --workers`), by conversation.
    private var stored: [ConversationID: StoredAudit] = [:]

    /// One conversation's audit as `verify --workers` stored it in a shared store.
    public struct StoredAudit: Sendable {
        /// Its findings: every check of the conversation (the re-run included), without
        /// the signatures, which the viewer checks itself.
        public var findings: [Finding]
        /// The store's revision it was checked at.
        public var revision: Int64

        public init(findings: [Finding], revision: Int64) {
            self.findings = findings
            self.revision = revision
        }
    }

    /// Opens the log read-only: nothing is written to it or beside it.
    public init(path: String, games: GameRegistry) throws {
        self.path = path
        self.games = games
        store = try EventStore(path: path, access: .readOnly)
        index = try GameIndex(store: store)
        origins = try store.forkOrigins()
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Every game, folded once and kept. A damaged event is left out (and counted in
    /// ``damagedEvents``) instead of hiding every game, as `gamelog games` does.
    public func summaries() throws -> [GameSummary] {
        try locked {
            if let catalog { return catalog }
            var damaged = 0
            let made = try GameCatalog(store: store, games: games, skippingDamaged: { _ in damaged += 1 }).games
            catalog = made
            damagedEvents = damaged
            return made
        }
    }

    /// Events the game list had to leave out because they cannot be read (known once the list was folded whole).
    public private(set) var damagedEvents = 0

    /// A page of the game list, without folding the whole log when its catalog is complete.
    /// A page holding a damaged game falls back to the whole list, which leaves the damage out.
    public func page(offset: Int, limit: Int) throws -> GamePage {
        let fast: GamePage? = try locked {
            if let catalog {
                return GamePage(games: Array(catalog.dropFirst(offset).prefix(limit)), total: catalog.count, offset: offset)
            }
            do {
                return try GameCatalog.page(store: store, games: games, offset: offset, limit: limit)
            } catch is EventStoreError {
                return nil
            } catch is ReplayError {
                return nil
            }
        }
        if let fast { return fast }
        let all = try summaries()
        return GamePage(games: Array(all.dropFirst(offset).prefix(limit)), total: all.count, offset: offset)
    }

    /// The games of one conversation, as its replayer folds them.
    public func summaries(of conversation: ConversationID) throws -> [GameSummary] {
        let replayer = try replayer(conversation)
        let state = try replayer.state(at: replayer.stepCount)
        return GameCatalog.summaries(of: state, origin: origins[conversation.uuid])
    }

    /// The kinds of game this viewer knows.
    public var kinds: [String] { games.kinds }

    /// The conversation (and game) an id names.
    public func resolve(_ id: String) throws -> (conversation: ConversationID, game: SessionID?) {
        try locked { try index.resolve(id) }
    }

    /// A conversation's replayer; the last 16 opened are kept.
    public func replayer(_ conversation: ConversationID) throws -> Replayer {
        try locked {
            if let known = replayers[conversation] {
                recent.removeAll { $0 == conversation }
                recent.append(conversation)
                return known
            }
            // A damaged event is left out and named on the page, not a page that fails.
            let made = try Replayer(store: store, conversation: conversation, streams: try index.streams(of: conversation),
                                    skippingDamaged: true, games: games)
            replayers[conversation] = made
            recent.append(conversation)
            if recent.count > 16 { replayers[recent.removeFirst()] = nil }
            return made
        }
    }

    /// Every device of a conversation (whatever the view), in order: their colours in the page.
    public func devicesOf(_ conversation: ConversationID) -> [DeviceID] {
        (try? replayer(conversation).devices) ?? []
    }

    /// The steps `perspective` steps through: the conversation's, or a device's own
    /// events alone (numbered as its own steps, so nothing of the others shows).
    public func view(_ conversation: ConversationID, as perspective: Perspective) throws -> Replayer {
        let replayer = try replayer(conversation)
        return locked { replayer.seen(by: perspective) }
    }

    /// Each step of `range` (of the perspective's own steps) with the states around it, in one pass.
    public func forEachStep(_ conversation: ConversationID, in range: ClosedRange<Int>, as perspective: Perspective,
                            _ body: (Int, ConversationState, ConversationState, RecordedEvent) throws -> Void) throws {
        let replayer = try view(conversation, as: perspective)
        try locked { try replayer.forEachStep(in: range, as: perspective, body) }
    }

    /// The state at a step (of the perspective's own steps) as a perspective sees it.
    /// Replayers cache folds, so this runs under the lock too.
    public func state(_ conversation: ConversationID, at step: Int, as perspective: Perspective) throws -> ConversationState {
        let replayer = try view(conversation, as: perspective)
        return try locked { try replayer.state(at: step, as: perspective) }
    }

    /// The event of a step (of the perspective's own steps) as the perspective may see it.
    public func viewedEvent(_ conversation: ConversationID, at step: Int, as perspective: Perspective) throws -> RecordedEvent? {
        let replayer = try view(conversation, as: perspective)
        return locked { replayer.viewedEvent(at: step, as: perspective) }
    }

    /// The audit findings of one conversation (every check, the re-run included).
    public func findings(_ conversation: ConversationID) throws -> [Finding] {
        if let known = locked({ findings[conversation] }) { return known }
        if let kept = locked({ stored[conversation] }) {
            // Stored by `verify --workers`: only the signatures are checked here.
            let streams = try locked { try index.streams(of: conversation) }
            let found = Auditor.ordered(kept.findings + (try signatureFindings(conversation, streams: streams)))
            locked { findings[conversation] = found }
            return found
        }
        let replayer = try replayer(conversation)
        // The game's own checks and its re-run, from the events already read: the whole
        // log's chain is the background audit's, so opening a game costs the same in a big log.
        // The game's signatures too: each of its devices' trees, as `verify GAME` checks them.
        let signatures = try signatureFindings(conversation, streams: Set(replayer.events.map(\.stream)))
        let found = locked {
            Auditor(games: games).check(conversation, replayer.events)
                + Auditor.findings(Rerunner(games: games).rerun(recordingsOf: replayer.events))
        } + signatures
        locked { findings[conversation] = found }
        return found
    }

    /// The signatures of a conversation's recordings: each of its devices' trees, as `verify GAME` checks them.
    private func signatureFindings(_ conversation: ConversationID, streams: Set<UUID>) throws -> [Finding] {
        try locked {
            try Auditor.signatures(store, streams: streams, conversationOf: Dictionary(uniqueKeysWithValues: streams.map { ($0, conversation) })).1
        }
    }

    /// Where a fork came from.
    public func origin(_ conversation: ConversationID) -> ForkOrigin? { origins[conversation.uuid] }

    /// The audit status of each game once the background audit is done, by game id.
    public var auditStatus: [String: [Finding]]? { locked { audited } }

    /// The stored audit a game's findings come from, if any.
    public func storedAudit(_ conversation: ConversationID) -> StoredAudit? { locked { stored[conversation] } }

    /// Shows the audits a shared store keeps instead of checking those games again. When
    /// they cover every conversation, the game list's audit column comes from them and
    /// returns true (no background audit is needed); else it returns false.
    @discardableResult
    public func useStoredAudits(_ audits: [ConversationID: StoredAudit]) throws -> Bool {
        let conversations = try locked { try index.conversations() }
        let covered = conversations.allSatisfy { audits[$0] != nil }
        locked {
            stored = audits
            findings = [:]
            if covered {
                var byGame: [String: [Finding]] = [:]
                for (conversation, audit) in audits {
                    for finding in audit.findings { byGame[(finding.game ?? conversation.uuid.uuidString).lowercased(), default: []].append(finding) }
                }
                audited = byGame
            }
        }
        return covered
    }

    /// Audits the whole log once, on a connection of its own, then keeps each game's findings.
    public func auditInBackground() {
        let path = self.path, games = self.games
        let thread = Thread { [weak self] in
            guard let reader = try? EventStore(path: path, access: .readOnly),
                  let found = try? Auditor(games: games).audit(reader) else { return }
            var byGame: [String: [Finding]] = [:]
            for finding in found { byGame[(finding.game ?? "").lowercased(), default: []].append(finding) }
            self?.locked { self?.audited = byGame }
        }
        thread.start()
    }
}
