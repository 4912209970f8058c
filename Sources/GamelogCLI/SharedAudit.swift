import ArgumentParser
import Audit
import Collector
import EventStore
import Foundation
import MessagesModel
import Projections
import Replay
import Rerun
import SharedStore

/// The options of a whole-log check a shared store's processes share (`verify`, `rerun`).
struct SharedAuditOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Split a shared store's whole-log check among N processes here, this one among them (and any that join it): this one first checks what reads the whole log, the others claim games in turn, then this one too; each game's result is stored.", valueName: "N"))
    var workers: Int?
    @Option(help: ArgumentHelp("Help with a run that `--workers` started (on this or another machine): check its games until none is left.", valueName: "RUN"))
    var join: String?
    @Option(help: ArgumentHelp("With --join: games checked at once, each claim on a connection of its own (default: this machine's cores, at most 8).", valueName: "K"))
    var lanes: Int?

    /// Checks the options against the command's own: `restricted` says which of those narrow the check.
    func validate(game: String?, restricted: Bool) throws {
        if let workers, !(1...64).contains(workers) { throw ValidationError("--workers must be in 1...64, not \(workers).") }
        if workers != nil && game != nil { throw ValidationError("--workers splits a whole-log check; one game is checked in one process (drop GAME or --workers).") }
        if join != nil && (workers != nil || game != nil || restricted) {
            throw ValidationError("--join checks the games of a run as the run was started; it takes only --db (the same store) and --lanes.")
        }
        if let lanes {
            guard join != nil else { throw ValidationError("--lanes says how many games a --join checks at once; pass it with --join RUN.") }
            guard (1...64).contains(lanes) else { throw ValidationError("--lanes must be in 1...64, not \(lanes).") }
        }
    }

    /// With `--join`, checks the run's games and says how many; false without it.
    func joinIfAsked(_ kind: SharedStore.AuditKind, options: GlobalOptions) async throws -> Bool {
        guard let join else { return false }
        guard let shared = try options.sharedStore() else { throw ValidationError("--join helps a shared store's check: pass its --db postgres://... URL.") }
        let run = try await SharedAudit.run(join, kind: kind, in: shared)
        let checked = try await SharedAudit.join(run, shared: shared, lanes: lanes ?? SharedAudit.lanes(sharingWith: 1))
        print("checked \(checked) games of run \(run.id.uuidString.lowercased())")
        return true
    }

    /// The shared store `--workers` splits the check of; nil without `--workers`.
    func sharedStore(_ options: GlobalOptions) throws -> SharedStore? {
        guard workers != nil else { return nil }
        guard let shared = try options.sharedStore() else {
            throw ValidationError("--workers splits a shared store's check among processes: pass --db postgres://...; a SQLite log is checked on every core already.")
        }
        return shared
    }
}

/// `verify --workers N`, `rerun --workers N` and `--join RUN`: a shared store's audit
/// split among processes, here and on any machine that can reach the store.
enum SharedAudit {
    /// Who checked a game: this host and process, and the lane after the first.
    static func workerName(process: Int32 = getpid(), lane: Int = 0) -> String {
        "\(ProcessInfo.processInfo.hostName):\(process)" + (lane == 0 ? "" : "/\(lane + 1)")
    }

    /// Games a process checks at once when `processes` of them share this machine: its
    /// share of the cores, at least one, at most 8 (each lane holds a connection).
    static func lanes(sharingWith processes: Int) -> Int {
        max(1, min(8, ProcessInfo.processInfo.activeProcessorCount / max(1, processes)))
    }

    /// Starts a run over every game `reader` sees (the store at one moment), worked on by
    /// `count` processes here, this one among them: `count - 1` join it at once, and this
    /// one runs `wholeLog` (the checks that read the whole log) while it claims games too,
    /// until none is left; then it finishes what any of them left (a worker that died
    /// leaves its claimed games to the next claim) and returns every game's result once
    /// `wholeLog` has returned.
    ///
    /// The processes share this machine's cores: each checks ``lanes(sharingWith:)`` games
    /// at once, so `--workers 1` uses every core, as a plain `verify` does, and more
    /// processes here add only what a process costs; another machine's `--join` adds its
    /// own cores.
    static func coordinate(_ kind: SharedStore.AuditKind, reruns: Bool, workers count: Int, options: GlobalOptions,
                           shared: SharedStore, reader: PostgresLogReader,
                           wholeLog: @escaping @Sendable () throws -> Void) async throws -> [SharedStore.AuditTaskResult] {
        let games = try GameIndex(store: reader).conversations().map(\.uuid)
        let revision = try reader.revision()
        let run = try await shared.startAuditRun(kind, revision: revision, reruns: reruns, games: games)
        Terminal.standardError("audit run \(run.id.uuidString.lowercased()): \(games.count) conversations at revision \(revision), \(count == 1 ? "this process alone" : "this process and \(count - 1) more") here; "
                               + "another machine helps with `gamelog \(kind == .verify ? "verify" : "rerun") --db \(shared.location) --join \(run.id.uuidString.lowercased())`")
        let executable = Bundle.main.executablePath ?? CommandLine.arguments[0]
        // Every process here, this one and the workers, checks this many games at once.
        let lanesEach = lanes(sharingWith: count)
        var processes: [(process: Process, errors: URL)] = []
        for _ in 0..<(count - 1) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = [kind == .verify ? "verify" : "rerun", "--db", options.db, "--join", run.id.uuidString.lowercased(),
                                 "--lanes", String(lanesEach)]
            let errors = FileManager.default.temporaryDirectory.appending(path: "gamelog-worker-\(UUID().uuidString).err")
            guard FileManager.default.createFile(atPath: errors.path, contents: nil) else {
                throw CommandFailure("cannot write a worker's error file in \(FileManager.default.temporaryDirectory.path); set TMPDIR to a writable folder")
            }
            process.standardError = try FileHandle(forWritingTo: errors)
            process.standardOutput = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            processes.append((process, errors))
        }
        defer { for (_, errors) in processes { try? FileManager.default.removeItem(at: errors) } }
        // Beside this process's own games, on threads that may block.
        let whole = Task { try await SharedStore.blocking { try wholeLog() } }
        let progress = ProgressBar(total: games.count, label: "games")
        // Counted by the store (other processes' games too), at most four times a second.
        let shown = NSLockedValue(Date.distantPast)
        @Sendable func showProgress() async {
            let due = shown.withLock { last in
                guard Date().timeIntervalSince(last) >= 0.25 else { return false }
                last = Date()
                return true
            }
            if due, let (done, _) = try? await shared.progress(of: run) { progress.update(done) }
        }
        _ = try await join(run, shared: shared, lanes: lanesEach, afterEachClaim: showProgress)
        while processes.contains(where: { $0.process.isRunning }) {
            await showProgress()
            try await Task.sleep(for: .milliseconds(200))
        }
        progress.finish()
        for (process, errors) in processes where process.terminationStatus != 0 {
            let text = String(decoding: (try? Data(contentsOf: errors)) ?? Data(), as: UTF8.self)
            Terminal.standardError("a worker ended with status \(process.terminationStatus): \(SafeText.line(String(text.suffix(500))))")
        }
        // What the workers left (one died, or none could start) is checked here, without
        // waiting for the leases of workers that have ended.
        let ended = processes.flatMap { ended in
            (0..<lanesEach).map { workerName(process: ended.process.processIdentifier, lane: $0) }
        }
        _ = try await join(run, shared: shared, lanes: lanes(sharingWith: 1), reclaimingFrom: ended)
        try await whole.value
        let results = try await shared.results(of: run)
        guard results.count == games.count else {
            throw CommandFailure("audit run \(run.id.uuidString.lowercased()) holds \(results.count) results of \(games.count) games; run it again")
        }
        return results
    }

    /// Games a worker claims at a time, for a run of `games`: few enough that the last
    /// claims share the work out evenly (a 64th of the run, at most 32: about a fifth of a
    /// second of checking), enough that claiming costs little next to checking. A claim
    /// scans the run's open tasks past those already claimed, whose old row versions an
    /// audit's open snapshot keeps: 4 at a time cost 1.2 ms a claim at 2,735 games.
    static func claimSize(ofRunWith games: Int) -> Int { min(32, max(1, games / 64)) }
    /// How long a claim holds: a worker that died is replaced after this.
    static let lease: Duration = .seconds(300)

    /// Claims and checks games of `run` until none is left, reading the store as it is
    /// (it only grows: what the run lists is there); returns how many. No transaction is
    /// open while a game is checked: a claim is a lease.
    /// - Parameter lanes: claims checked at once, each lane reading on a connection of its
    ///   own, off Swift's cooperative threads (checking blocks).
    /// - Parameter reclaimingFrom: workers that ended, whose leases need not be waited for.
    /// - Parameter afterEachClaim: called when a claim of the first lane is checked and stored.
    static func join(_ run: SharedStore.AuditRun, shared: SharedStore, lanes: Int = 1, reclaimingFrom ended: [String] = [],
                     afterEachClaim: @escaping @Sendable () async -> Void = {}) async throws -> Int {
        let revision = try shared.reader().revision()
        guard revision >= run.revision else {
            throw CommandFailure("the store is at revision \(revision), before the run's \(run.revision): it was restored from an older backup; start a new run")
        }
        let claimSize = claimSize(ofRunWith: try await shared.progress(of: run).total)
        return try await withThrowingTaskGroup(of: Int.self) { group in
            for lane in 0..<max(1, lanes) {
                group.addTask {
                    try await SharedStore.blocking {
                        // One lane reports: the caller's progress need not be safe from several threads.
                        // Each lane claims under a name of its own: a worker's claim takes back its own leases.
                        try await checkClaims(of: run, shared: shared, worker: workerName(lane: lane), revision: revision, claimSize: claimSize,
                                              reclaimingFrom: ended, afterEachClaim: lane == 0 ? afterEachClaim : {})
                    }
                }
            }
            return try await group.reduce(0, +)
        }
    }

    /// One lane of ``join(_:shared:lanes:reclaimingFrom:afterEachClaim:)``: claims, checks
    /// and stores until no game is left; returns how many it checked.
    private static func checkClaims(of run: SharedStore.AuditRun, shared: SharedStore, worker: String, revision: Int64, claimSize: Int,
                                    reclaimingFrom ended: [String], afterEachClaim: @Sendable () async -> Void) async throws -> Int {
        let store = shared.reader()
        let index = try GameIndex(store: store)
        var auditor = Auditor(games: GamelogCLI.games)
        auditor.rerunsExtensions = run.reruns
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var checked = 0
        while true {
            let games = try await shared.claimGames(of: run, worker: worker, count: claimSize, lease: lease, reclaimingFrom: ended)
            guard !games.isEmpty else { return checked }
            var outcomes: [(game: UUID, outcome: SharedStore.AuditOutcome)] = []
            // The claimed games' recordings in one read of the catalog, their events in one
            // pass of the store (a statement or two per game was most of a worker's wait).
            let streamsOf = try index.streams(ofConversations: Set(games.map(ConversationID.init)))
            let eventsOf = try Replayer.load(from: store, conversations: streamsOf, verify: run.kind == .rerun)
            // The claim's games checked together (the store's summaries of them read once).
            let claimed = games.reduce(into: [ConversationID: Set<UUID>]()) { $0[ConversationID($1)] = streamsOf[ConversationID($1)] ?? [] }
            let findingsOf = run.kind == .verify ? try auditor.conversationFindings(store, streams: claimed, eventsOf: eventsOf) : [:]
            for game in games {
                let conversation = ConversationID(game)
                let events = eventsOf[conversation] ?? []
                switch run.kind {
                case .verify:
                    let findings = findingsOf[conversation] ?? []
                    outcomes.append((game, .init(result: String(decoding: try encoder.encode(findings), as: UTF8.self),
                                                 errors: findings.filter { $0.severity == .error }.count,
                                                 warnings: findings.filter { $0.severity == .warning }.count, revision: revision)))
                case .rerun:
                    let results = Rerunner(games: GamelogCLI.games).rerun(recordingsOf: events)
                        .sorted(by: RerunResult.inReportOrder)
                    outcomes.append((game, .init(result: String(decoding: try encoder.encode(results), as: UTF8.self),
                                                 errors: results.filter { $0.outcome == .diverged }.count, warnings: 0, revision: revision)))
                }
            }
            try await shared.storeOutcomes(of: run, worker: worker, outcomes)
            checked += games.count
            await afterEachClaim()
        }
    }

    /// The run `id` names, for `--join`.
    static func run(_ id: String, kind: SharedStore.AuditKind, in shared: SharedStore) async throws -> SharedStore.AuditRun {
        guard let uuid = UUID(uuidString: id) else { throw ValidationError("--join takes an audit run's id (a UUID the coordinating command printed), not \(SafeText.line(id)).") }
        guard let run = try await shared.auditRun(uuid) else {
            throw CommandFailure("the store holds no audit run \(uuid.uuidString.lowercased()): `gamelog \(kind.rawValue) --db URL --workers N` starts one and prints its id")
        }
        guard run.kind == kind else {
            throw CommandFailure("audit run \(uuid.uuidString.lowercased()) is a \(run.kind.rawValue) run: join it with `gamelog \(run.kind.rawValue) --join`")
        }
        return run
    }

    /// The findings the runs' games stored, decoded.
    static func decode<T: Decodable>(_ results: [SharedStore.AuditTaskResult], as type: T.Type) throws -> [T] {
        let decoder = JSONDecoder()
        return try results.flatMap { result in
            do { return try decoder.decode([T].self, from: Data(result.result.utf8)) } catch {
                throw CommandFailure("the stored result of game \(result.game.uuidString.lowercased()) (by \(SafeText.line(result.worker))) does not read: \(error)")
            }
        }
    }
}
