import ArgumentParser
import EventStore
import Foundation
import Projections
import Games
import MessagesModel
import Replay
import Rerun
import SharedStore

struct RerunCommand: AsyncParsableCommand {
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
    @OptionGroup var sharing: SharedAuditOptions

    func validate() throws {
        try sharing.validate(game: game, restricted: device != nil)
    }

    func run() async throws {
        if try await sharing.joinIfAsked(.rerun, options: options) { return }
        let started = Date()
        var results: [RerunResult]
        if let shared = try sharing.sharedStore(options), let workers = sharing.workers {
            let stored = try await SharedAudit.coordinate(.rerun, reruns: true, workers: workers, options: options, shared: shared,
                                                    reader: shared.snapshotReader()) {}
            // One order, whichever process re-ran what (as one process orders them).
            results = try SharedAudit.decode(stored, as: RerunResult.self)
                .sorted(by: RerunResult.inReportOrder)
        } else {
            let store = try await options.openReader()
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
