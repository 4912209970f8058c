import EventStore
import Foundation
import MessagesModel
import Projections
import Replay
import Rerun

/// A whole-log audit in parts, for processes that share one (`verify --workers`): the
/// part that reads the whole log, done once, and one part per conversation, done by
/// whichever process claims it. Together they find what ``Auditor/report(_:game:trusting:known:progress:)``
/// finds in one process.
extension Auditor {
    /// The checks that read the whole log: SQLite's own structure check, every chain,
    /// every device's signatures and the catalog. If the chain is broken, the report
    /// holds the integrity findings only (nothing else in the log can be believed), and
    /// ``Report/proofs`` is nil.
    public func logFindings(_ store: any SignedLogReader, trusting trusted: [String: [UInt8]]? = nil, known: [TreeHead] = [],
                            progress: ((Int, Int) -> Void)? = nil) throws -> Report {
        let structure = Self.structureFindings(try store.structuralProblems())
        let total = Int(try store.lastPosition())
        // The signatures and the catalog are read while this thread checks the chain, each
        // on a reader of its own (the same moment of the store): one after another the three
        // took three times the longest, while `verify --workers`' other processes checked
        // games. What the signatures and the catalog find counts only if the chain holds.
        let auditor = self
        let signatures = AuditThread(reader: try store.anotherReader()) { reader in
            let index = try GameIndex(store: reader)
            var conversationOf: [UUID: ConversationID] = [:]
            for (conversation, streams) in try index.allStreams() { for stream in streams { conversationOf[stream] = conversation } }
            let (proofs, findings) = try Self.signatures(reader, streams: nil, trusting: trusted, known: known,
                                                         partial: auditor.acceptsPartialLog, conversationOf: conversationOf)
            let (cosignatureFindings, sightings) = try auditor.witnessFindings(reader, trees: try reader.deviceTrees())
            return (proofs: proofs, findings: findings + cosignatureFindings, sightings: sightings)
        }
        let catalog = AuditThread(reader: try store.anotherReader()) { reader in try auditor.catalogFindings(reader) }
        let integrity = try store.verifyIntegrity { done, _ in progress?(Int(done), total) }
        let (signed, catalogued) = (signatures.result(), catalog.result())
        if !integrity.isSound {
            return Report(findings: Self.ordered(structure + Self.integrityFindings(integrity)), proofs: nil)
        }
        let (proofs, signatureFindings, sightings) = try signed.get()
        var report = Report(findings: Self.ordered(structure + signatureFindings + (try catalogued.get())), proofs: proofs)
        report.witnesses = sightings
        return report
    }

    /// The checks of one conversation: lifecycle, game rules, invariants, cross-device
    /// consistency, its stored snapshots and (if ``rerunsExtensions``) its recordings
    /// re-run. They count only if ``logFindings(_:trusting:known:progress:)`` finds the chain sound.
    public func conversationFindings(_ store: any EventLogReader, conversation: ConversationID, streams: Set<UUID>) throws -> [Finding] {
        try conversationFindings(store, conversation: conversation, streams: streams,
                                 events: try Replayer.load(from: store, streams: streams, verify: false))
    }

    /// The checks of one conversation whose events (every event of `streams`, in the order
    /// ``Replayer/load(from:conversations:verify:skippingDamaged:)`` gives them) were read
    /// already: a worker reads the events of the games it claimed in one pass of the store,
    /// not one per game.
    public func conversationFindings(_ store: any EventLogReader, conversation: ConversationID, streams: Set<UUID>,
                                     events: [ReplayEvent]) throws -> [Finding] {
        try conversationFindings(store, streams: [conversation: streams], eventsOf: [conversation: events])[conversation] ?? []
    }

    /// The checks of each of several conversations (the keys of `streams`), their events
    /// read already (`eventsOf`; none where absent), each as
    /// ``conversationFindings(_:conversation:streams:events:)`` gives them: what a
    /// worker's claim of games needs, with the store's summaries of all of them read at once.
    public func conversationFindings(_ store: any EventLogReader, streams: [ConversationID: Set<UUID>],
                                     eventsOf: [ConversationID: [ReplayEvent]]) throws -> [ConversationID: [Finding]] {
        let eventsOf = streams.keys.reduce(into: [ConversationID: [ReplayEvent]]()) { $0[$1] = eventsOf[$1] ?? [] }
        let summaries = try summaryFindingsOf(store, eventsOf: eventsOf, streams: streams)
        var findingsOf: [ConversationID: [Finding]] = [:]
        for (conversation, events) in eventsOf {
            var findings = check(conversation, events)
            findings += try snapshotFindings(store, conversations: [conversation], streams: [conversation: streams[conversation] ?? []])
            findings += summaries[conversation] ?? []
            if rerunsExtensions {
                // From the events read above, not read again.
                findings += Self.findings(Rerunner(games: games).rerun(recordingsOf: events))
            }
            findingsOf[conversation] = Self.ordered(findings)
        }
        return findingsOf
    }

    /// SQLite's structure check's problems, as findings.
    static func structureFindings(_ problems: [String]) -> [Finding] {
        problems.map { Finding(.error, .integrity, position: nil, rule: "sqlite-integrity-check", expected: "a sound database file", found: $0) }
    }

    /// A broken chain's problems, as findings.
    /// - Parameters:
    ///   - store, conversationOf: where given, each finding names the game (conversation)
    ///     of the event at fault, read as it is stored (its recording, or the recording the
    ///     problem names); the first 1,000 are looked up.
    static func integrityFindings(_ integrity: IntegrityReport, store: (any EventLogReader)? = nil,
                                  conversationOf: [UUID: ConversationID] = [:]) -> [Finding] {
        integrity.problems.enumerated().map { index, problem in
            var stream: UUID?
            if case .streamVersionGap(_, let named, _, _) = problem { stream = named }
            if stream == nil, index < 1_000, let store, !conversationOf.isEmpty, let position = problem.position, position > 0 {
                stream = (try? store.event(at: position, verify: false))??.stream
            }
            return Finding(.error, .integrity, position: problem.position,
                           game: stream.flatMap { conversationOf[$0] }?.uuid.uuidString.lowercased(), rule: rule(problem),
                           expected: "an untouched event", found: problem.description)
        }
    }

    /// Findings in the one order every report uses, whichever process or lane found them.
    public static func ordered(_ findings: [Finding]) -> [Finding] {
        findings.sorted {
            ($0.position ?? .max, $0.rule, $0.game ?? "", $0.device ?? "", $0.expected, $0.found)
                < ($1.position ?? .max, $1.rule, $1.game ?? "", $1.device ?? "", $1.expected, $1.found)
        }
    }
}
