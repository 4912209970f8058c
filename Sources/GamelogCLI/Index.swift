import MessagesModel
import ArgumentParser
import Collector
import EventStore
import Foundation
import Games
import Projections
import Replay
import SharedStore

struct Index: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index",
        abstract: "Fill the game catalog of an older log, and store projection snapshots (a shared store: game summaries).",
        discussion: """
            A log written by this version keeps its catalog as it grows, so commands about one game read only that \
            game. A log written before the catalog existed is scanned instead; `index` fills its catalog once (it \
            resumes if interrupted). Snapshots of other projection versions are dropped and rebuilt. Snapshots are a \
            cache: a snapshot whose event no longer matches the log is never used.

            On a shared store (--db postgres://...), `index` stores each conversation's game summaries, which a page \
            of games (`games`, the viewer) reads instead of folding the conversation's events. Only summaries that \
            are missing or behind their recordings are folded again; collectors keep them current as they store \
            uploads. A summary is a cache too: one whose recordings have moved on is never used, and `verify` folds \
            every conversation again and names a summary that differs.
            """)

    @OptionGroup var options: GlobalOptions
    @Option(help: "Steps between snapshots.") var every: Int = 32

    func validate() throws {
        guard every >= 1 else { throw ValidationError("--every must be at least 1, not \(every).") }
    }

    func run() async throws {
        if let shared = try options.sharedStore() {
            return try await summarise(shared)
        }
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

    /// A shared store's game summaries, folded where they are not current.
    private func summarise(_ shared: SharedStore) async throws {
        let started = Date()
        let outcome = try await Self.storeSummaries(in: shared)
        var line = "stored the game summaries of \(outcome.written) conversations (\(outcome.current) were current) in \(shared.location)"
        if outcome.skipped > 0 { line += "; \(outcome.skipped) whose events fall short of their recordings got none (`gamelog verify` names the damage)" }
        print(line + " in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
    }

    /// Folds and stores the game summaries of the conversations that hold any of `streams`
    /// (of every conversation when nil) that are not current, on every core, with a
    /// progress bar: `index` and `import` into a shared store.
    static func storeSummaries(in shared: SharedStore, ofStreams streams: Set<UUID>? = nil) async throws -> GameSummaryWriter.Outcome {
        let progress = ProgressBar(total: 0, label: "conversations summarised")
        defer { progress.finish() }
        let writer = GameSummaryWriter(store: shared, games: GamelogCLI.games)
        let lanes = max(1, min(4, ProcessInfo.processInfo.activeProcessorCount))
        let report: @Sendable (Int, Int) -> Void = { done, total in progress.update(done, total: total) }
        if let streams { return try await writer.refresh(streams: streams, lanes: lanes, progress: report) }
        return try await writer.refreshAll(lanes: lanes, progress: report)
    }
}
