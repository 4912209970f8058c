import MessagesModel
import ArgumentParser
import EventStore
import Foundation
import Games
import Projections
import Replay

struct Index: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Store projection snapshots so that replay can seek without folding from the start.",
        discussion: "Snapshots of other projection versions are dropped and rebuilt. They are a cache: a snapshot whose event no longer matches the log is never used.")

    @OptionGroup var options: GlobalOptions
    @Option(help: "Steps between snapshots.") var every: Int = 32

    func validate() throws {
        guard every >= 1 else { throw ValidationError("--every must be at least 1, not \(every).") }
    }

    func run() throws {
        try reportingErrors {
            let store = try options.openExistingForWriting()
            let index = try GameIndex(store: store)
            let progress = ProgressBar(total: index.streams.count, label: "games")
            var written = 0, done = 0
            let started = Date()
            for (conversation, streams) in index.streams {
                let replayer = try Replayer(store: store, conversation: conversation, streams: streams,
                                            snapshotInterval: every, useStoredSnapshots: false, games: .standard)
                let snapshots = try replayer.snapshotsToStore()
                try store.replaceSnapshots(conversation: conversation.uuid, with: snapshots)
                written += snapshots.count
                done += 1
                progress.update(done)
            }
            progress.finish()
            print("stored \(written) snapshots (every \(every) steps, projection version \(ConversationState.projectionVersion)) for the \(index.streams.count) conversations recorded (\(Set(index.sessions.keys).count) games sent) in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
        }
    }
}
