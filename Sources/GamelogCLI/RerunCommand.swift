import ArgumentParser
import EventStore
import Foundation
import Projections
import Games
import MessagesModel
import Replay
import Rerun
import SharedStore

struct RerunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rerun",
        abstract: "Re-run recorded extensions against the current code and report where their outputs differ.",
        discussion: """
            Each recording's extension is started afresh and fed, in recorded order, what the host \
            gave it: callbacks with their conversation, message and style, the user's touches, the \
            identifiers it was handed. Every action and screen it produces is compared with the \
            recording. Exit status 1 if any recording diverges; recordings of extensions this \
            gamelog does not carry are listed as skipped, not passed.
            """)

    @OptionGroup var options: GlobalOptions
    @Argument(help: "Only this game (or conversation): an id or a unique prefix.") var game: String?
    @Option(help: "Only the recordings of this device.") var device: String?
    @Flag(help: "Print JSON.") var json = false
    @Option(help: ArgumentHelp("Split a shared store's re-run among N processes here (and any that join it): each claims games in turn.", valueName: "N"))
    var workers: Int?
    @Option(help: ArgumentHelp("Help with a re-run a `rerun --workers` started (on this or another machine).", valueName: "RUN"))
    var join: String?

    func validate() throws {
        if let workers, !(1...64).contains(workers) { throw ValidationError("--workers must be in 1...64, not \(workers).") }
        if workers != nil && game != nil { throw ValidationError("--workers splits a whole-log re-run; one game is re-run in one process (drop GAME or --workers).") }
        if join != nil && (workers != nil || game != nil || device != nil) {
            throw ValidationError("--join re-runs the games of a run as the run was started; it takes only --db (the same store).")
        }
    }

    func run() throws {
        try reportingErrors {
            if let join {
                guard let shared = try options.sharedStore() else { throw ValidationError("--join helps a shared store's re-run: pass its --db postgres://... URL.") }
                let run = try SharedAudit.run(join, kind: .rerun, in: shared)
                let checked = try SharedAudit.join(run, shared: shared, copy: try options.localCopy(of: shared))
                print("re-ran \(checked) games of run \(run.id.uuidString.lowercased())")
                return
            }
            let started = Date()
            var results: [RerunResult]
            if let workers {
                guard let shared = try options.sharedStore() else {
                    throw ValidationError("--workers splits a shared store's re-run among processes: pass --db postgres://...")
                }
                let copy = try options.localCopy(of: shared)
                let stored = try SharedAudit.coordinate(.rerun, reruns: true, workers: workers, options: options, shared: shared, copy: copy) {}
                // One order, whichever process re-ran what (as one process orders them).
                results = try SharedAudit.decode(stored, as: RerunResult.self)
                    .sorted { ($0.divergence?.position ?? 0, $0.stream.uuidString) < ($1.divergence?.position ?? 0, $1.stream.uuidString) }
            } else {
                let store = try options.openForReading()
                var only: Set<ConversationID>?
                if let game { only = [try GameIndex(store: store).resolve(game).conversation] }
                let progress = ProgressBar(total: Int(try store.lastPosition()), label: "events")
                results = try Rerunner(games: GamelogCLI.games).rerun(store: store, conversations: only) { done, _ in progress.update(done) }
                progress.finish()
            }
            if let device { results = results.filter { $0.device.lowercased() == device.lowercased() } }
            let seconds = Date().timeIntervalSince(started)
            let diverged = results.filter { $0.outcome == .diverged }
            let skipped = results.filter { $0.outcome == .skipped }
            let events = results.reduce(0) { $0 + $1.events }
            if json {
                print(try JSONStyle.text(encoding: results))
            } else {
                for result in diverged {
                    let d = result.divergence!
                    print("diverged: device \(result.device)'s \(result.kind) recording \(result.stream.uuidString.prefix(8).lowercased()) at position \(d.position)")
                    print("  recorded: \(d.recorded ?? "nothing")")
                    print("  now:      \(d.now ?? "nothing")")
                    for line in d.diff.prefix(12) { print("    \(line)") }
                }
                for result in skipped {
                    print("skipped: device \(result.device)'s \(result.kind) recording \(result.stream.uuidString.prefix(8).lowercased()): no extension of that kind here")
                }
                let rate = Int(Double(events) / max(seconds, 0.001))
                print("\(results.count - diverged.count - skipped.count) recordings matched, \(diverged.count) diverged, \(skipped.count) skipped (\(events) events, \(rate) events/s)")
            }
            if !diverged.isEmpty { throw ExitCode(1) }
        }
    }
}
