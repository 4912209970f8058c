import MessagesModel
import ArgumentParser
import EventStore
import Foundation
import Games
import Projections
import Replay

struct Index: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index",
        abstract: "Fill the game catalog of an older log, and store projection snapshots.",
        discussion: """
            A log written by this version keeps its catalog as it grows, so commands about one game read only that \
            game. A log written before the catalog existed is scanned instead; `index` fills its catalog once (it \
            resumes if interrupted). Snapshots of other projection versions are dropped and rebuilt. Snapshots are a \
            cache: a snapshot whose event no longer matches the log is never used.
            """)

    @OptionGroup var options: GlobalOptions
    @Option(help: "Steps between snapshots.") var every: Int = 32

    func validate() throws {
        guard every >= 1 else { throw ValidationError("--every must be at least 1, not \(every).") }
    }

    func run() throws {
        let store = try options.openExistingForWriting()
        let started = Date()
        if !(try store.catalogIsComplete()) {
            let filling = ProgressBar(total: Int(try store.count().lastPosition), label: "events catalogued")
            let read = try GameIndex.fillCatalog(store) { done, _ in filling.update(Int(done)) }
            filling.finish()
            print("catalogued the games (\(read) events read) in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
        }
        let index = try GameIndex(store: store)
        let conversations = try index.allStreams()
        let progress = ProgressBar(total: conversations.count, label: "games")
        var written = 0, done = 0
        for (conversation, streams) in conversations {
            let replayer = try Replayer(store: store, conversation: conversation, streams: streams,
                                        snapshotInterval: every, useStoredSnapshots: false, games: GamelogCLI.games)
            let snapshots = try replayer.snapshotsToStore()
            try store.replaceSnapshots(conversation: conversation.uuid, with: snapshots)
            written += snapshots.count
            done += 1
            progress.update(done)
        }
        progress.finish()
        print("stored \(written) snapshots (every \(every) steps, projection version \(ConversationState.projectionVersion)) for the \(conversations.count) conversations recorded (\(try index.games().count) games) in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }
}
