import ArgumentParser
import Audit
import Collector
import EventStore
import Foundation
import Games
import MessagesModel
import Presentation
import Projections
import Replay
import SharedStore

struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Audit the log: integrity, Messages lifecycle, game legality and cross-device consistency.",
        discussion: """
            Each finding names the event position, game, device, the rule broken, and what was \
            expected versus found. Exits 1 if any finding is an error (warnings, such as a \
            message not yet delivered, do not fail), 2 if there is none but some games' rules \
            could not be checked (a game kind this gamelog does not register), unless \
            --allow-unchecked. A log from some devices only is checked \
            as far as it can be: rules that need a missing device's recording are reported \
            as "not checkable", never as errors.
            """)

    @OptionGroup var options: GlobalOptions
    @Argument(help: "Only this game (or conversation): an id or a unique prefix.") var game: String?
    @Option(help: "A keys file (`gamelog keys --json` of a log you trust, or {\"A\": \"hex key\"}): signatures must be by these keys. Repeat it for one file per device.")
    var trust: [String] = []
    @Option(help: ArgumentHelp("A heads file (`gamelog heads --json` kept from earlier, or the other phone's), or a collector's URL (its GET /v1/heads; a reader token from $GAMELOG_READER_TOKEN): the log must reach these heads, with the same roots. Repeatable.", valueName: "HEADS.json|URL"))
    var heads: [String] = []
    @Option(name: .customLong("witness-key"), help: ArgumentHelp("A witness's key in the signed-note verifier key form (<name>+<key ID>+<base64>, as the collector's start line prints it): every cosignature in its name, in the log or a heads file, must be made with it. Repeatable.", valueName: "KEY"))
    var witnessKeys: [String] = []
    @Option(help: ArgumentHelp("How many of the --witness-key witnesses must have cosigned each device's newest head.", valueName: "K"))
    var witnesses: Int = 0
    @Flag(help: "Skip re-running the recordings against the extensions' code (faster).") var noRerun = false
    @Flag(help: "Exit 0 even when some games' rules could not be checked (their kind is not registered in this gamelog); by default that is exit 2, \"incomplete\".")
    var allowUnchecked = false
    @Flag(help: "Accept a log that holds part of a device's signed history (an import of `export --game`): the leaves it holds only as subtree hashes are listed as not covered, instead of failing the check.")
    var partial = false
    @Flag(help: "Print one JSON document, also when the file cannot be opened.") var json = false
    @OptionGroup var sharing: SharedAuditOptions

    func validate() throws {
        try sharing.validate(game: game, restricted: !trust.isEmpty || !heads.isEmpty || !witnessKeys.isEmpty)
        guard witnesses >= 0, witnesses <= witnessKeys.count else {
            throw ValidationError("--witnesses \(witnesses): give at least that many --witness-key (\(witnessKeys.count) given).")
        }
        for key in witnessKeys {
            do { _ = try WitnessKey(verifierKey: key) } catch { throw ValidationError("--witness-key \(SafeText.line(key)): \(error).") }
        }
    }

    func run() async throws {
        guard json else { return try await check() }
        do {
            try await check()
        } catch let error as ExitCode {
            throw error
        } catch {
            // Scripts get JSON whatever happened.
            print(try CommandDocuments.text(CommandDocuments.Failure(error: String(describing: error), hint: hint(for: error) ?? "")))
            throw ExitCode.failure
        }
    }

    private func check() async throws {
        if try await sharing.joinIfAsked(.verify, options: options) { return }
        do {
            let trusted = try trust.isEmpty ? nil : readTrustedKeys(trust)
            let cosigned = try await readCosignedHeads(heads)
            var known = cosigned.map(\.head)
            let shared = try sharing.sharedStore(options)
            // A shared store is checked as it is in PostgreSQL at one moment, nothing copied
            // (an upload stored meanwhile is wholly in or wholly out of what is read).
            let native = try options.nativeReader(snapshot: true)
            if shared != nil, native == nil {
                throw CommandFailure("--workers reads the store as it is, and its catalog does not cover every event; run `gamelog verify` without --workers")
            }
            let store: any SignedLogReader
            if let native { store = native } else { store = try await options.openForReading(fresh: game == nil) }
            // One game is checked at the cost of that game: its events, its devices.
            let opened = try game.map { try OpenedGame(store: store, id: $0) }
            // A collector holds every device's heads, and a phone's log holds its own
            // device's: heads from a collector count for the devices whose trees the log
            // holds, and the others are named.
            if heads.contains(where: { $0.hasPrefix("http://") || $0.hasPrefix("https://") }) {
                let held = Set(try store.deviceTrees().map(\.owner.publicKey))
                let others = known.filter { !held.contains($0.publicKey) }
                if !others.isEmpty {
                    Terminal.standardError("note: the collector also holds heads of \(others.map { SafeText.line($0.device) }.sorted().joined(separator: ", ")), whose events this log holds none of; if it should hold them, they were removed")
                    known.removeAll { !held.contains($0.publicKey) }
                }
            }
            let total = try opened.map(\.replayer.stepCount) ?? Int(store.count().events)
            let progress = ProgressBar(total: total, label: "events")
            let started = Date()
            var auditor = Auditor(games: GamelogCLI.games)
            auditor.rerunsExtensions = !noRerun
            auditor.acceptsPartialLog = partial
            auditor.cosignedElsewhere = cosigned
            if !witnessKeys.isEmpty {
                auditor.witnessPolicy = WitnessPolicy(keys: try witnessKeys.map { try WitnessKey(verifierKey: $0) }, required: witnesses)
            }
            let report: Auditor.Report
            if let shared, let native, let workers = sharing.workers {
                // This process checks what reads the whole log while it and the workers take
                // the games (the progress shown is the games').
                let wholeLog = NSLockedValue<Auditor.Report?>(nil)
                let results = try await SharedAudit.coordinate(.verify, reruns: !noRerun, workers: workers, options: options, shared: shared,
                                                               reader: native) { [auditor, trusted, known] in
                    let report = try auditor.logFindings(native, trusting: trusted, known: known)
                    wholeLog.withLock { $0 = report }
                }
                guard let whole = wholeLog.withLock({ $0 }) else { throw CommandFailure("the whole-log checks did not run") }
                // A broken chain voids what was checked per game, as in one process.
                report = whole.proofs == nil ? whole
                    : Auditor.Report(findings: Auditor.ordered(whole.findings + (try SharedAudit.decode(results, as: Finding.self))), proofs: whole.proofs)
            } else {
                report = try auditor.report(store, game: game, trusting: trusted, known: known) { done, _ in progress.update(done) }
            }
            let findings = report.findings
            progress.finish()
            let seconds = Date().timeIntervalSince(started)
            let errors = findings.filter { $0.severity == .error }
            let unchecked = findings.filter { $0.severity == .notCheckable }
            let design = findings.filter { $0.severity == .design }
            let warnings = findings.count - errors.count - unchecked.count - design.count
            let devices = try opened.map { $0.replayer.devices.map(\.name) } ?? recordedDevices(store).map(\.name)
            // A game whose rules no registered game checks is not "ok": its moves were not judged.
            let unregistered = findings.filter { $0.rule == Auditor.unregisteredRule }
            let incomplete = !unregistered.isEmpty && !allowUnchecked
            if json {
                let keys = report.proofs?.keys.map(CommandDocuments.Key.init)
                let document = Report(events: total, ok: errors.isEmpty && !incomplete, incomplete: incomplete, seconds: seconds,
                                      recordedDevices: devices, notCheckable: unchecked.count, keys: keys ?? [], keysTrusted: trusted != nil,
                                      findings: findings)
                print(try JSONStyle.text(encoding: document))
            } else {
                if let proofs = report.proofs, !proofs.trusted {
                    print("note: no --trust given, so the signatures are checked against the keys the log itself holds, which whoever wrote the file chose; pass --trust KEYS.json (keys you got from the devices)")
                }
                // Design findings say the same of every game of a kind: one line per rule, the first as the example.
                let listed = findings.filter { $0.severity != .design }
                for finding in listed.prefix(100) { print(finding.description) }
                if listed.count > 100 { print("… and \(listed.count - 100) more (use --json for all)") }
                for (_, same) in Dictionary(grouping: design, by: \.rule).sorted(by: { $0.key < $1.key }) {
                    print(same[0].description + (same.count > 1 ? " (and in \(counted(Set(same.compactMap(\.game)).count - 1, "other game")); --json lists each)" : ""))
                }
                let signers = Set((report.proofs?.keys ?? []).map(\.publicKey))
                let used = known.filter { signers.contains($0.publicKey) }
                if !used.isEmpty, !findings.contains(where: { ["rolledBack", "forkedHistory"].contains($0.rule) && $0.severity == .error }) {
                    let reached = used.map { "\(SafeText.line($0.device)) at \($0.size)" }.sorted().joined(separator: ", ")
                    print("heads: the log reaches \(counted(used.count, "known head")) with the same roots (\(reached))")
                }
                let rate = Int(Double(total) / max(seconds, 0.001))
                if let proofs = report.proofs {
                    let signers = proofs.keys.map { key in
                        let what = key.heads > 0 ? "\(key.heads) heads, \(key.treeSize) events" : "\(key.checkpoints) checkpoints of the older kind"
                        return "\(SafeText.line(key.device)) (key \(hex(key.publicKey).prefix(12))…, \(what)\(key.isTestKey ? ", a test key" : ""))"
                    }
                    print(signers.isEmpty ? "signatures: none; the log's events are unsigned"
                          : "signatures: \(signers.joined(separator: ", ")); "
                            + (proofs.trusted ? "checked against the trusted keys" : "keys taken from the log itself (pass --trust KEYS.json to check them against keys you trust)"))
                }
                if !report.witnesses.isEmpty || !witnessKeys.isEmpty {
                    let names = Set(report.witnesses.keys).union(try witnessKeys.map { try WitnessKey(verifierKey: $0).name }).sorted()
                    print("witnesses: " + names.map { name in
                        let seen = (report.witnesses[name] ?? [:]).sorted { $0.key < $1.key }.map { "\(SafeText.line($0.key)) at \($0.value) events" }
                        return "\(SafeText.line(name)) cosigned " + (seen.isEmpty ? "nothing here" : seen.joined(separator: ", "))
                    }.joined(separator: "; ") + (witnesses > 0 ? " (\(witnesses) of \(witnessKeys.count) required for each device's newest head)" : ""))
                }
                if findings.contains(where: { $0.rule == ProofProblem.Kind.absentLeaves.rawValue && $0.severity == .error }) {
                    print("hint: if this log is meant to hold part of the devices' history (an import of `gamelog export --game`), `verify --partial` accepts it and lists what it does not cover")
                }
                print("recordings from device\(devices.count == 1 ? "" : "s") \(devices.joined(separator: ", "))"
                      + (unchecked.isEmpty ? "" : "; \(unchecked.count) checks could not be made from this log (the \"not checkable\" lines say why)"))
                let unknownKinds = Set(unregistered.compactMap { $0.expected.split(separator: " ").last.map(String.init) }).sorted()
                if !unregistered.isEmpty {
                    print("the game rules of \(unregistered.count) conversation\(unregistered.count == 1 ? "" : "s") were not checked: kind\(unknownKinds.count == 1 ? "" : "s") \(unknownKinds.joined(separator: ", ")) \(unknownKinds.count == 1 ? "is" : "are") not registered in this gamelog (a gamelog built with GamelogCLI and those games checks them)")
                }
                if !design.isEmpty {
                    let kinds = Set(design.compactMap(\.game)).count
                    print("design: in \(kinds) game\(kinds == 1 ? "" : "s"), messages carry to a device what its player's view hides (the \"design\" lines say what); not an error of this log, but a modified client could read it")
                }
                if errors.isEmpty && incomplete {
                    print("incomplete: \(total) events, no errors in what could be checked, and the rules of \(unregistered.count) conversation\(unregistered.count == 1 ? " were" : "s were") not checked (exit 2; `--allow-unchecked` accepts that, or check them with a gamelog that registers their games)")
                } else if errors.isEmpty {
                    let scope = unregistered.isEmpty ? "" : " in what could be checked"
                    print("ok: \(total) events checked, no errors\(scope)\(warnings == 0 ? "" : ", " + counted(warnings, "warning")) (\(rate) events/s)")
                } else {
                    print("\(counted(errors.count, "error")), \(counted(warnings, "warning")) in \(total) events")
                }
            }
            if !errors.isEmpty { throw ExitCode(1) }
            if incomplete { throw ExitCode(2) }
        }
    }

    struct Report: Encodable {
        var events: Int
        var ok: Bool
        /// Some games' rules were not checked (exit 2).
        var incomplete: Bool
        var seconds: Double
        var recordedDevices: [String]
        var notCheckable: Int
        var keys: [CommandDocuments.Key]
        var keysTrusted: Bool
        var findings: [Finding]
    }
}
