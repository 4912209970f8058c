import EventStore
import Foundation
import GameKit
import MessagesModel
import Projections
import StoredEvents
import RecordedEvents
import Replay
import Rerun

/// A rule about the projected state that must hold at every step; users add their own.
public protocol Invariant: Sendable {
    /// A short name, e.g. `lives-never-negative`.
    var name: String { get }
    /// Nil if the rule holds after `event`, else what is wrong.
    func violation(in state: ConversationState, after event: ReplayEvent) -> String?
}

/// Runs every check over a log: integrity, lifecycle, game legality (each game's
/// plug-in's rules and board invariants), cross-device consistency, and any
/// invariants.
public struct Auditor: Sendable {
    /// The games whose rules are checked.
    public var games: GameRegistry
    public var invariants: [any Invariant]
    /// Whether to re-run every recording against the extensions' current code (the
    /// check "outputs match the extension's code"); off for speed.
    public var rerunsExtensions = true
    /// Whether the log may hold part of a device's signed history (an import of `export
    /// --game`): leaves the log holds only as subtree hashes are then warnings that name
    /// what is not covered, instead of errors.
    public var acceptsPartialLog = false
    /// The witnesses' keys and how many must have cosigned each device's newest head; nil
    /// checks the cosignatures present against the keys they name.
    public var witnessPolicy: WitnessPolicy?
    /// Cosigned heads from elsewhere (a heads file, a collector): their cosignatures are
    /// checked and count toward ``witnessPolicy``.
    public var cosignedElsewhere: [CosignedHead] = []

    public init(games: GameRegistry, invariants: [any Invariant] = Auditor.builtInInvariants) {
        self.games = games
        self.invariants = invariants
    }

    public static let builtInInvariants: [any Invariant] = [OneStagedItemPerDevice()]

    /// - Parameters:
    ///   - game: an id prefix to audit one game's conversation only.
    ///   - progress: called with (events checked, total).
    public func audit(_ store: any SignedLogReader, game: String? = nil, trusting trusted: [String: [UInt8]]? = nil,
                      progress: ((Int, Int) -> Void)? = nil) throws -> [Finding] {
        try report(store, game: game, trusting: trusted, progress: progress).findings
    }

    /// What ``audit(_:game:trusting:progress:)`` found, with the signatures' report.
    public struct Report: Sendable {
        public var findings: [Finding]
        /// The keys found and whether they were trusted; nil when one game was audited.
        public var proofs: ProofReport?
        /// Which witness cosigned which device's heads, up to which size.
        public var witnesses: WitnessSightings = [:]

        public init(findings: [Finding], proofs: ProofReport?) {
            self.findings = findings
            self.proofs = proofs
        }
    }

    /// Every check, and what the signature check read.
    /// - Parameter trusted: device name → Ed25519 public key the auditor trusts; nil
    ///   checks signatures against the keys found in the log itself.
    /// - Parameter known: signed heads known from elsewhere; the log must reach them (the rollback defence).
    ///
    /// Any ``SignedLogReader`` is audited by the same checks: a SQLite file, or a shared
    /// store read as it is in PostgreSQL.
    /// Conversations a lane reads at a time: enough that a shared store answers few
    /// statements, few enough that the lanes share the last ones out evenly.
    static let conversationsPerRead = 8

    public func report(_ store: any SignedLogReader, game: String? = nil, trusting trusted: [String: [UInt8]]? = nil, known: [TreeHead] = [],
                       progress: ((Int, Int) -> Void)? = nil) throws -> Report {
        // SQLite's own check first: a broken index can hide rows from every query. It reads
        // the whole file, so one game's audit (which must cost the same in any log) leaves
        // it, like the whole-log chain, to the full `verify`.
        let structure = Self.structureFindings(try game == nil ? store.structuralProblems() : [])
        // For progress only: the last position costs nothing to read, a count reads every row.
        let total = Int(try store.lastPosition())
        // Which conversations to check. On a damaged log this may fail; the integrity
        // findings then say why, so the failure only surfaces for a sound log.
        let plan: Result<(conversations: [ConversationID], streams: [ConversationID: Set<UUID>]), Error>
        do {
            let index = try GameIndex(store: store)
            if let game {
                let conversation = try index.resolve(game).conversation
                plan = .success(([conversation], [conversation: try index.streams(of: conversation)]))
            } else {
                let conversations = try index.conversations().sorted { $0.uuid.precedes($1.uuid) }
                plan = .success((conversations, try index.allStreams()))
            }
        } catch {
            plan = .failure(error)
        }
        let (ordered, streams) = (try? plan.get()) ?? ([], [:])

        // 1. Integrity of the whole log (a game's events are only as good as the
        // chain), and 2-4. every check per conversation, in the order things happened.
        // All run side by side: lane 0 checks the chain, then joins the others, which
        // take conversations one at a time, each lane on its own read-only connection.
        // The conversation loads skip the chain check that lane 0 does for all; their
        // findings count only if the chain holds.
        let shared = AuditLanes(total: total, conversations: ordered.count, progress: progress)
        let auditor = self
        let lanes = max(2, min(4, ProcessInfo.processInfo.activeProcessorCount))
        let readers = LaneReaders(try (0..<lanes).map { _ in try store.anotherReader() })
        DispatchQueue.concurrentPerform(iterations: lanes) { lane in
            do {
                let reader = readers.readers[lane]
                if lane == 0 {
                    if game == nil {
                        shared.finishIntegrity(try reader.verifyIntegrity { done, _ in shared.integrityProgress(Int(done)) })
                    } else {
                        // One game: its recordings' chains, each against its stored head.
                        shared.finishIntegrity(try reader.verifyIntegrity(ofStreams: ordered.reduce(into: Set()) { $0.formUnion(streams[$1] ?? []) }))
                    }
                }
                while let next = shared.nextConversations(upTo: Self.conversationsPerRead) {
                    // A few conversations' events in one read (on a shared store, a statement
                    // or two per conversation was most of the lanes' wait and of its work).
                    let eventsOf = try Replayer.load(from: reader, conversations: ordered[next].reduce(into: [:]) { $0[$1] = streams[$1] ?? [] },
                                                     verify: false)
                    for conversation in ordered[next] {
                        let events = eventsOf[conversation] ?? []
                        // The re-run reads the events this lane already holds (a second pass over
                        // every conversation cost a shared store most of its audit).
                        let reruns = auditor.rerunsExtensions ? Self.findings(Rerunner(games: auditor.games).rerun(recordingsOf: events)) : []
                        shared.add(auditor.check(conversation, events) + reruns, events: events.count)
                    }
                    shared.add(try auditor.summaryFindings(reader, eventsOf: eventsOf, streams: streams), events: 0)
                }
            } catch {
                shared.fail(error, inIntegrity: lane == 0 && !shared.integrityIsDone)
            }
        }
        let integrity = try shared.integrity()
        if !integrity.isSound {
            var conversationOf: [UUID: ConversationID] = [:]
            for (conversation, streams) in streams { for stream in streams { conversationOf[stream] = conversation } }
            return Report(findings: structure + Self.integrityFindings(integrity, store: store, conversationOf: conversationOf), proofs: nil)
        }
        let index = try plan.get()
        var findings = try shared.findings() + structure
        // The signatures: the whole log's trees, or those of the game's recordings.
        var conversationOf: [UUID: ConversationID] = [:]
        for (conversation, streams) in index.streams { for stream in streams { conversationOf[stream] = conversation } }
        let gameStreams = index.conversations.reduce(into: Set<UUID>()) { $0.formUnion(index.streams[$1] ?? []) }
        // The whole log's catalog check reads on a reader of its own while the signatures
        // are checked: one after the other, they were a tail of seconds on one core.
        let catalog = try game == nil ? AuditThread(reader: store.anotherReader()) { reader in
            try self.catalogFindings(reader)
        } : nil
        let (proofs, signatureFindings) = try Self.signatures(store, streams: game == nil ? nil : gameStreams, trusting: trusted,
                                                              known: known, partial: acceptsPartialLog, conversationOf: conversationOf)
        findings += signatureFindings
        // The cosignatures, and the witness policy over the devices checked.
        let checked = try store.deviceTrees().filter { tree in
            game == nil || proofs.deviceOfStream.values.contains(tree.owner.device) && proofs.keys.contains { $0.publicKey == tree.owner.publicKey }
        }
        let (witnessFindings, sightings) = try witnessFindings(store, trees: checked)
        findings += witnessFindings
        if game != nil, let conversation = index.conversations.first {
            findings += try Self.unlistedFindings(store, conversation: conversation, streams: gameStreams)
        }
        findings += try snapshotFindings(store, conversations: index.conversations, streams: index.streams)
        findings += try catalog?.result().get() ?? []
        // Lanes finish in any order: a total order keeps the report the same run to run.
        var report = Report(findings: Self.ordered(findings), proofs: proofs)
        report.witnesses = sightings
        return report
    }

    /// What re-runs found, as findings: a divergence is an error; a recording of an
    /// extension no registered game carries could not be checked.
    public static func findings(_ results: [RerunResult]) -> [Finding] {
        results.compactMap { result in
            switch result.outcome {
            case .diverged:
                let d = result.divergence!
                return Finding(.error, .rerun, position: d.position, game: result.conversation?.uuidString,
                               device: result.device, rule: "outputs-match-the-extension",
                               expected: d.recorded.map { "the recorded \($0)" } ?? "no further output",
                               found: d.now.map { "the code now produces \($0)" } ?? "the code now produces nothing there")
            case .skipped:
                return Finding(.notCheckable, .rerun, position: nil, game: result.conversation?.uuidString,
                               device: result.device, rule: "outputs-match-the-extension",
                               expected: "an extension of kind \(result.kind)", found: "none registered: not re-run")
            case .matched:
                return nil
            }
        }
    }

    /// The devices' signatures as findings: the whole log's trees (`streams` nil) or
    /// those of some recordings (one game's), each problem named by its conversation;
    /// and every signed recording in the tree of the device that made it. The same
    /// check serves `verify`, `verify GAME` and the viewer.
    public static func signatures(_ store: any SignedLogReader, streams: Set<UUID>?, trusting trusted: [String: [UInt8]]? = nil,
                                  known: [TreeHead] = [], partial: Bool = false,
                                  conversationOf: [UUID: ConversationID]) throws -> (ProofReport, [Finding]) {
        let proofs = try streams.map { try store.verifyProofs(ofStreams: $0, trusting: trusted, known: known, partial: partial) }
            ?? store.verifyProofs(trusting: trusted, known: known, partial: partial)
        var findings = proofs.problems.map { problem in
            Finding(problem.isError ? .error : .warning, .signature, position: problem.position,
                    game: problem.stream.flatMap { conversationOf[$0] }?.uuid.uuidString.lowercased(), device: problem.device,
                    rule: problem.kind.rawValue, expected: "events as their device signed them", found: problem.detail)
        }
        findings += try deviceFindings(store, proofs: proofs, streams: streams, conversationOf: conversationOf)
        return (proofs, findings)
    }

    /// Each signed recording must be in the tree of the device it says it was made on:
    /// a device's key signs what that device recorded, never another's recordings.
    static func deviceFindings(_ store: any SignedLogReader, proofs: ProofReport, streams: Set<UUID>?,
                        conversationOf: [UUID: ConversationID]) throws -> [Finding] {
        var findings: [Finding] = []
        func check(_ first: StoredEvent) {
            let stream = first.stream
            guard let signer = proofs.deviceOfStream[stream],
                  case .recordingStarted(let info)? = try? RecordedEvent.decode(type: first.type, typeVersion: first.typeVersion,
                                                                                 payload: first.payload),
                  info.device.name != signer else { return }
            findings.append(Finding(.error, .signature, position: first.position,
                                    game: conversationOf[stream]?.uuid.uuidString.lowercased(), device: info.device.name,
                                    rule: "signedByItsOwnDevice", expected: "recording \(stream.uuidString.prefix(8).lowercased()) signed by device \(SafeText.line(info.device.name)), which made it",
                                    found: "it is in device \(SafeText.line(signer))'s tree, signed with that device's key"))
        }
        if let streams {
            // One game's recordings: their first events, one lookup each.
            for stream in streams.sorted(by: { $0.precedes($1) }) {
                if let first = try store.firstEvent(ofStream: stream) { check(first) }
            }
        } else {
            try store.scanStreamHeads { check($0.first) }
        }
        return findings
    }

    /// The catalog against the events: readers go straight to the recordings it names,
    /// so a row added, moved or dropped could show one game's events as another's. An
    /// incomplete catalog is not used by readers and not judged.
    func catalogFindings(_ store: any SignedLogReader) throws -> [Finding] {
        guard try store.catalogIsComplete() else { return [] }
        struct Key: Hashable { var tag: EventTag; var stream: UUID }
        var expected: [Key: Int64] = [:]
        var decoder = StreamDecoder(store: store)
        // The events and the catalog are read in two transactions; a writer appending
        // meanwhile adds both in one, so both are compared up to the log's end as it was
        // when the check began (an append's rows past it are not a finding).
        let through = try store.lastPosition()
        guard through > 0 else { return [] }
        try store.scan(EventQuery(positions: 1...through, types: RecordedEvent.cataloguedTypes), verify: false) { event in
            for tag in decoder.catalogTags(stream: event.stream, type: event.type, typeVersion: event.typeVersion, payload: event.payload) {
                let key = Key(tag: tag, stream: event.stream)
                expected[key] = min(expected[key] ?? .max, event.position)
            }
        }
        var findings: [Finding] = []
        func finding(_ position: Int64, _ entry: Key, _ found: String) -> Finding {
            Finding(.error, .catalog, position: position, game: entry.tag.kind == .game ? entry.tag.id.uuidString.lowercased() : nil,
                    rule: "catalog-matches-events", expected: "the catalog rows the events give", found: found)
        }
        let what = { (key: Key) in "\(key.tag.kind == .game ? "game" : "conversation") \(key.tag.id.uuidString.lowercased()) in recording \(key.stream.uuidString.lowercased())" }
        for entry in try store.allCatalogEntries() where entry.position <= through {
            let key = Key(tag: entry.tag, stream: entry.stream)
            switch expected.removeValue(forKey: key) {
            case nil: findings.append(finding(entry.position, key, "a row naming \(what(key)), which none of its events names"))
            case let position? where position != entry.position:
                findings.append(finding(position, key, "a row naming \(what(key)) first at position \(entry.position), not \(position)"))
            default: break
            }
        }
        for (key, position) in expected {
            findings.append(finding(position, key, "no row for \(what(key)), which its event names"))
        }
        return findings
    }

    /// Every stored snapshot of the running projection version, re-derived from the
    /// events: one that differs (or does not decode) could show a state that never was.
    func snapshotFindings(_ store: any EventLogReader, conversations: [ConversationID],
                          streams: [ConversationID: Set<UUID>]) throws -> [Finding] {
        var findings: [Finding] = []
        let decoder = JSONDecoder(games: games)
        for conversation in conversations {
            let stored = try store.snapshots(conversation: conversation.uuid, projectionVersion: ConversationState.projectionVersion)
            // Snapshots are a SQLite log's cache: a store that keeps none has none to count.
            let rows = try (store as? EventStore)?.snapshotRowCount(conversation: conversation.uuid,
                                                                     projectionVersion: ConversationState.projectionVersion) ?? stored.count
            if rows > stored.count {
                findings.append(Finding(.warning, .snapshot, position: nil, game: conversation.uuid.uuidString, rule: "snapshot-matches-events",
                                        expected: "snapshots that inflate to at most \(EventStore.maximumSnapshotSize) bytes",
                                        found: "\(rows - stored.count) that do not (never used; `gamelog index` writes them again)"))
            }
            guard !stored.isEmpty else { continue }
            let replayer = try Replayer(store: store, conversation: conversation, streams: streams[conversation] ?? [],
                                        verify: false, games: games)
            for snapshot in stored {
                var problem: String?
                if snapshot.step > replayer.stepCount {
                    problem = "a snapshot of step \(snapshot.step), past the conversation's \(replayer.stepCount) events"
                } else if let state = try? decoder.decode(ConversationState.self, from: Data(snapshot.state)) {
                    if state != (try replayer.state(at: snapshot.step)) {
                        problem = "a snapshot of step \(snapshot.step) that differs from the state its events give"
                    }
                } else {
                    problem = "a snapshot of step \(snapshot.step) that does not decode"
                }
                if let problem {
                    findings.append(Finding(.error, .snapshot, position: min(snapshot.position, replayer.events.last?.position ?? 0),
                                            game: conversation.uuid.uuidString, rule: "snapshot-matches-events",
                                            expected: "the state the events give", found: problem))
                }
            }
        }
        return findings
    }

    /// The store's current summaries of these conversations (``StoredSummaries``, which a
    /// page of games shows instead of folding) against a fold of the events read: one that
    /// differs would list a game as it never was. A store that keeps none costs nothing.
    func summaryFindings(_ store: any EventLogReader, eventsOf: [ConversationID: [ReplayEvent]],
                         streams: [ConversationID: Set<UUID>]) throws -> [Finding] {
        try summaryFindingsOf(store, eventsOf: eventsOf, streams: streams).values.flatMap { $0 }
    }

    /// ``summaryFindings(_:eventsOf:streams:)`` by conversation (only those with a finding).
    func summaryFindingsOf(_ store: any EventLogReader, eventsOf: [ConversationID: [ReplayEvent]],
                           streams: [ConversationID: Set<UUID>]) throws -> [ConversationID: [Finding]] {
        let stored = try GameCatalog.currentStoredSummaries(store, conversations: Array(eventsOf.keys), streamsOf: streams, games: games)
        var findings: [ConversationID: [Finding]] = [:]
        for (conversation, body) in stored {
            let events = eventsOf[conversation] ?? []
            if body != GameCatalog.folded(conversation, events: events, games: games) {
                findings[conversation, default: []].append(Finding(
                    .error, .snapshot, position: events.last?.position, game: conversation.uuid.uuidString,
                    rule: "summary-matches-events", expected: "the store's summary of the conversation's games to be what its events give",
                    found: "a summary that differs from them (a page of games would list it; `gamelog index` writes it again)"))
            }
        }
        return findings
    }

    /// Every check on one conversation's events, in time order.
    /// - Parameter complete: false for a prefix of the events (as bisect checks): what
    ///   only the end of a log can tell (unfinished pairs, undelivered messages) is skipped.
    public func check(_ conversation: ConversationID, _ events: [ReplayEvent], complete: Bool = true) -> [Finding] {
        var lifecycle = LifecycleChecker(), consistency = ConsistencyChecker()
        var legality: (any LegalityChecker)?
        var state = ConversationState(conversation: conversation, games: games)
        // Whose recordings this log holds, known before the first event is judged.
        state.knownRecordedPlayers = Set(events.compactMap { e -> String? in
            if case .recordingStarted(let info) = e.event { return info.names[info.localParticipant] }
            return nil
        })
        var legalityFindings: [Finding] = [], invariantFindings: [Finding] = [], designFindings: [Finding] = []
        var leaksSeen: Set<[String]> = []
        // Lifecycle is per recording, in log order within each.
        for e in events.sorted(by: { $0.position < $1.position }) { lifecycle.check(e) }
        for e in events {
            consistency.check(e)
            let told = state.apply(e)
            if legality == nil, let plugin = state.plugin { legality = plugin.makeChecker() }
            for event in told {
                for broken in legality?.check(event) ?? [] {
                    let severity: Finding.Severity = broken.missingRecordingOf == nil ? .error : .notCheckable
                    legalityFindings.append(Finding(severity, .legality, position: e.position, game: broken.session?.uuid.uuidString,
                                            device: broken.device?.name, rule: broken.rule,
                                            expected: broken.expected, found: broken.found))
                }
            }
            if let plugin = state.plugin, case .transcript(.arrived(.message(let message), _), let context) = e.event,
               let session = message.session ?? state.sessionOfMessage[message.id], let game = state.games[session] {
                // Once per game and device: the first message that shows it is enough to name the design.
                let viewer = state.devices[context.device]?.ownerName
                // A view that shows what the game itself declares hidden from this player:
                // the player's every surface shows it (an error of the game, named as design).
                if let shown = Self.shownSecret(of: message, game: game, plugin: plugin, viewer: viewer),
                   leaksSeen.insert([session.uuid.uuidString, context.device.name, "view"]).inserted {
                    designFindings.append(Finding(.design, .design, position: e.position, game: session.uuid.uuidString,
                                                  device: context.device.name, rule: "views-hide-the-secrets",
                                                  expected: "\(viewer ?? "its recipient")'s view of the message to hide what the game declares secret from them",
                                                  found: "the view shows \(SafeText.line(String(shown.prefix(80)))): the game's playerView(of:in:) leaves it in (log --as, export --redact and the viewer show it)"))
                }
                if let leak = Self.leak(of: message, game: game, plugin: plugin, viewer: viewer),
                   leaksSeen.insert([session.uuid.uuidString, context.device.name]).inserted {
                    designFindings.append(Finding(.design, .design, position: e.position, game: session.uuid.uuidString,
                                                  device: context.device.name, rule: "messages-carry-only-the-view",
                                                  expected: "the message to carry no more than \(state.devices[context.device]?.ownerName ?? "its recipient")'s view shows",
                                                  found: leak))
                }
            }
            if let plugin = state.plugin {
                for game in state.orderedGames {
                    for (name, problem) in plugin.violations(of: game.board) {
                        invariantFindings.append(Finding(.error, .invariant, position: e.position, game: game.session.uuid.uuidString,
                                                device: e.device?.name, rule: name, expected: "the invariant to hold",
                                                found: problem))
                    }
                }
            }
            for invariant in invariants {
                if let problem = invariant.violation(in: state, after: e) {
                    invariantFindings.append(Finding(.error, .invariant, position: e.position, device: e.event.context?.device.name,
                                            rule: invariant.name, expected: "the invariant to hold", found: problem))
                }
            }
        }
        if complete {
            lifecycle.finish()
            consistency.finish()
        }
        // A game this gamelog does not know: say so, so that "no errors" is never read as
        // "its rules hold".
        if state.plugin == nil, !state.kind.isEmpty {
            legalityFindings.append(Finding(.notCheckable, .legality, position: events.first?.position, game: conversation.uuid.uuidString,
                                            rule: Self.unregisteredRule, expected: "a game registered for kind \(state.kind)",
                                            found: "kind \(state.kind) is not registered in this gamelog: its games' rules, boards and winners were not checked"))
        }
        return lifecycle.findings + legalityFindings + consistency.findings + invariantFindings + designFindings
    }

    /// What an arriving message carries beyond the recipient's player view, as a
    /// sentence; nil when it carries nothing more.
    static func leak(of message: Message, game: GameView, plugin: any GamePlugin, viewer: String?) -> String? {
        let view = plugin.playerView(of: message, board: game.board, viewer: viewer, direction: .incoming)
        guard view != message else { return nil }
        var parts: [String] = []
        if view.url != message.url { parts.append("its URL \(SafeText.line(String((message.url ?? "").prefix(200)))) (the view shows \(view.url.map { SafeText.line(String($0.prefix(200))) } ?? "none"))") }
        if view.layout != message.layout { parts.append("its layout") }
        if view.summaryText != message.summaryText { parts.append("its summary") }
        if view.accessibilityLabel != message.accessibilityLabel { parts.append("its accessibility label") }
        return "a modified client on this device could read " + (parts.isEmpty ? "fields the view hides" : parts.joined(separator: ", "))
    }

    /// A secret the game declares hidden from `viewer` that the viewer's view of `message` still shows.
    static func shownSecret(of message: Message, game: GameView, plugin: any GamePlugin, viewer: String?) -> String? {
        let secrets = plugin.secrets(of: game.board, hiddenFrom: viewer).filter { !$0.isEmpty }
        guard !secrets.isEmpty else { return nil }
        let view = plugin.playerView(of: message, board: game.board, viewer: viewer, direction: .incoming)
        let template = view.layout?.template
        let shown = [view.url, view.summaryText, view.accessibilityLabel, template?.caption, template?.subcaption, template?.trailingCaption,
                     template?.trailingSubcaption, template?.imageTitle, template?.imageSubtitle, template?.mediaFileURL].compactMap { $0 }
        return secrets.first { secret in shown.contains { $0.contains(secret) } }
    }

    /// The rule of the finding that says a conversation's game kind is not registered.
    public static let unregisteredRule = "kind-registered"

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
    public var checkNames: [String] {
        ["integrity", "lifecycle", "legality", "consistency"] + invariants.map(\.name) + games.invariantNames
    }

    /// Every rule name a finding can carry: integrity, lifecycle and consistency
    /// rules, and each registered game's.
    public var ruleNames: [String] {
        var names = ["gapless-positions", "hash-chain", "gapless-stream-versions", "payload-decodes", "positions-in-order",
                     "didBecomeActive-after-willBecomeActive", "didResignActive-after-willResignActive",
                     "didSelect-follows-willSelect", "didTransition-follows-willTransition", "none-in-transcript-style",
                     "only-in-transcript-style",
                     "unfinished-callback-pair", "willBecomeActive-when-inactive", "willResignActive-when-active",
                     "no-duplicates", "received-unchanged", "received-was-sent", "delivered", "send-failed", "sent-is-inserted",
                     "sqlite-integrity-check", "snapshot-matches-events", "outputs-match-the-extension"]
        names += Callback.allCases.flatMap { ["\($0.rawValue)-only-while-active", "\($0.rawValue)-for-a-staged-message"] }
        return names + games.plugins.flatMap(\.ruleNames)
    }

    /// Whether `name` is a check, a rule or an invariant that ``bisect(_:_:rule:)`` can look for.
    public func isRule(_ name: String) -> Bool { checkNames.contains(name) || ruleNames.contains(name) }

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

/// What the audit lanes share: the integrity report, the next conversation to
/// check, findings, errors, and progress, which is reported under the lock so the
/// caller's callback never runs twice at once.
private final class AuditLanes: @unchecked Sendable {
    private let lock = NSLock()
    private let total: Int
    private let conversationCount: Int
    private let progress: ((Int, Int) -> Void)?
    private var report: IntegrityReport?
    private var integrityFailure: Error?
    private var nextIndex = 0
    private var found: [Finding] = []
    private var integrityDone = 0, conversationEventsDone = 0
    private var failure: Error?

    init(total: Int, conversations: Int, progress: ((Int, Int) -> Void)?) {
        self.total = total
        conversationCount = conversations
        self.progress = progress
    }

    var integrityIsDone: Bool { lock.withLock { report != nil } }

    func integrityProgress(_ done: Int) {
        lock.withLock {
            integrityDone = done
            progress?(integrityDone / 2 + conversationEventsDone / 2, total)
        }
    }

    func finishIntegrity(_ report: IntegrityReport) {
        lock.withLock {
            self.report = report
            integrityDone = total
            progress?(integrityDone / 2 + conversationEventsDone / 2, total)
        }
    }

    /// The indices of the next conversations to check, at most `count`; nil when all are
    /// taken or a lane failed.
    func nextConversations(upTo count: Int) -> Range<Int>? {
        lock.withLock {
            guard failure == nil, integrityFailure == nil, nextIndex < conversationCount else { return nil }
            let taken = nextIndex..<min(conversationCount, nextIndex + count)
            nextIndex = taken.upperBound
            return taken
        }
    }

    func add(_ findings: [Finding], events: Int) {
        lock.withLock {
            found += findings
            conversationEventsDone += events
            progress?(integrityDone / 2 + conversationEventsDone / 2, total)
        }
    }

    func fail(_ error: Error, inIntegrity: Bool) {
        lock.withLock {
            if inIntegrity {
                integrityFailure = error
            } else if failure == nil {
                failure = error
            }
        }
    }

    /// The chain check's report, or the error that stopped it.
    func integrity() throws -> IntegrityReport {
        try lock.withLock {
            if let integrityFailure { throw integrityFailure }
            guard let report else { throw failure ?? CancellationError() }
            return report
        }
    }

    func findings() throws -> [Finding] {
        try lock.withLock {
            if let failure { throw failure }
            return found
        }
    }
}

/// A check that reads on a reader of its own, on a thread of its own, while the caller
/// goes on; ``result()`` waits for it. The reader is used by that thread alone.
final class AuditThread<T>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var outcome: Result<T, Error>?
    private let reader: any SignedLogReader
    private let body: (any SignedLogReader) throws -> T

    init(reader: any SignedLogReader, _ body: @escaping (any SignedLogReader) throws -> T) {
        self.reader = reader
        self.body = body
        let thread = Thread { [self] in
            outcome = Result { try self.body(self.reader) }
            done.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Waits for the check, once.
    func result() -> Result<T, Error> {
        done.wait()
        return outcome!
    }
}

/// One reader per lane, each used by its lane's thread alone (a reader is used from one
/// thread at a time, which is all the sending needs).
private struct LaneReaders: @unchecked Sendable {
    let readers: [any SignedLogReader]
    init(_ readers: [any SignedLogReader]) { self.readers = readers }
}
