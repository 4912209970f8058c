import MessagesModel
import EventStore
import ArgumentParser
import Foundation
import Games
import Projections
import Replay

struct GamesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "games",
        abstract: "List every game: kind, players, status, result, events, time span, and whose recordings the log holds.")

    @OptionGroup var options: GlobalOptions
    @Option(name: .customLong("as"), help: "Whose view: a device (only the games its own log shows, as it knew them), or auditor.")
    var perspective: String = "auditor"
    @Option(help: "Which page of the list, from 1.") var page: Int = 1
    @Option(name: .customLong("per-page"), help: "Games on a page.") var perPage: Int = 50
    @Flag(help: "List every game (folds the whole log).") var all = false
    @Flag(help: "Print JSON.") var json = false
    @Flag(name: .customLong("from-events"), help: ArgumentHelp(
        "Fold every listed game from its events, even where a shared store keeps a current summary of it (`gamelog index`, collectors).",
        discussion: "A summary is a cache that nothing signs: `verify` folds every game again and names one that differs."))
    var fromEvents = false

    func validate() throws {
        guard page >= 1 else { throw ValidationError("--page counts from 1, not \(page).") }
        guard perPage >= 1 else { throw ValidationError("--per-page must be at least 1, not \(perPage).") }
    }

    /// Threads a page is folded on: this command is alone on the machine's cores.
    static let lanes = min(2, ProcessInfo.processInfo.activeProcessorCount)

    func run() async throws {
        let store = try await options.openReader()
        var damaged: [Error] = []
        // The devices are listed (a scan of the recordings) only to check a device's name.
        let seenAs = try parsePerspective(perspective, devices: perspective == "auditor" ? [] : try recordedDevices(store))
        var listed: GamePage?
        if !all {
            do {
                listed = try GameCatalog.page(store: store, games: GamelogCLI.games, offset: (page - 1) * perPage, limit: perPage, as: seenAs,
                                              lanes: Self.lanes, storedSummaries: !fromEvents)
            } catch let error as EventStoreError where error.position != nil {
                // A damaged event in the page: the whole fold below goes on past it and reports it.
                listed = nil
            }
        }
        if listed == nil, !(store is EventStore) {
            // A shared store, page after page of its catalog as it is (damaged events left
            // out and counted): nothing copied.
            if all {
                let every = try GameCatalog.everyGame(store: store, games: GamelogCLI.games, as: seenAs, lanes: Self.lanes,
                                                      storedSummaries: !fromEvents, skippingDamaged: { damaged.append($0) })
                listed = GamePage(games: every, total: every.count, offset: 0)
            } else {
                listed = try GameCatalog.page(store: store, games: GamelogCLI.games, offset: (page - 1) * perPage, limit: perPage, as: seenAs,
                                              lanes: Self.lanes, storedSummaries: !fromEvents, skippingDamaged: { damaged.append($0) })
            }
        }
        if listed == nil, let store = store as? EventStore {
            // The whole log folded once.
            let progress = ProgressBar(total: Int(try store.count().events), label: "events")
            let every = try GameCatalog(store: store, games: GamelogCLI.games, progress: { progress.update($0) },
                                        skippingDamaged: { damaged.append($0) }, as: seenAs).games
            progress.finish()
            let offset = all ? 0 : (page - 1) * perPage
            listed = GamePage(games: all ? every : Array(every.dropFirst(offset).prefix(perPage)), total: every.count, offset: offset)
        }
        let (games, total, offset) = (listed!.games, listed!.total, listed!.offset)
        // Where the list goes on: said on standard error under JSON, so that the document stays one value.
        let more = offset + perPage < total && !all
            ? "games \(offset + 1)-\(min(offset + perPage, total)) of \(total); `--page \(page + 1)` for the next \(min(perPage, total - offset - perPage)), `--all` for every game"
            : nil
        defer {
            if !damaged.isEmpty {
                Terminal.standardError("\(damaged.count) damaged events were left out of these games (the first: \(damaged[0])). `gamelog verify` names them all; `gamelog export --skip-damaged` salvages the rest.")
            }
        }
        if json {
            print(try JSONStyle.text(encoding: games))
            if let more { Terminal.standardError(more) }
            if !damaged.isEmpty { throw ExitCode.failure }
            return
        }
        if games.isEmpty { print(total == 0 ? "No games recorded in \(store.location)." : "No games on page \(page): there are \(total) games, \(perPage) a page.") }
        // Column names over the rows (the widths the rows use); scripts read --json.
        if !games.isEmpty {
            let columns: [String] = ["game".rightPad(8), "  ", "kind".rightPad(11), " ", "players".rightPad(18), " ", "status".rightPad(11), " ",
                                     "events".leftPad(6), "  ", "played (UTC)".rightPad(30), "  result"]
            print(columns.joined())
        }
        for game in games {
            let players = game.players.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            var missing = game.missingRecordings.isEmpty || seenAs != .auditor ? ""
                : "  (no recording from \(game.missingRecordings.joined(separator: ", ")))"
            if let origin = game.forkedFrom { missing += "  (fork of \(origin.sourceGame) at step \(origin.sourceStep))" }
            print("\(game.id.prefix(8))  \(game.kind.rightPad(11)) \(players.rightPad(18)) \(GameStatus.words(game.status).rightPad(11)) \(String(game.events).leftPad(6))  \(Self.span(game.startedAt, game.endedAt).rightPad(30))  \(game.result)\(missing)")
        }
        if let more { print(more) }
        if more == nil, seenAs == .auditor { try listConversationsWithoutGames(store) }
        if !damaged.isEmpty { throw ExitCode.failure }
    }

    /// A game's time span to the second, the end's date left out when it is the start's
    /// ("2026-11-23 18:01:08 … 18:04:51"); `--json` has the microseconds.
    static func span(_ started: String, _ ended: String) -> String {
        func parts(_ time: String) -> (date: Substring, time: Substring) {
            let halves = time.split(separator: "T", maxSplits: 1)
            guard halves.count == 2 else { return (Substring(time), "") }
            return (halves[0], halves[1].prefix(8))
        }
        let (startDate, startTime) = parts(started), (endDate, endTime) = parts(ended)
        let span = "\(startDate) \(startTime) … " + (endDate == startDate ? "\(endTime)" : "\(endDate) \(endTime)")
        // Times are the phones' own: a later event stamped earlier is their clocks disagreeing.
        return ended < started ? span + " (clock skew)" : span
    }

    /// Conversations whose extension holds no game (a sticker browser), so they are not
    /// missed: by kind, with an id to open one.
    private func listConversationsWithoutGames(_ store: any EventLogReader) throws {
        let index = try GameIndex(store: store)
        let withGames = Set(try index.games().map(\.conversation))
        // Their kinds, from their recordings' first events, read together: one conversation
        // at a time cost a store read over the network a few statements each.
        let streamsOf = try index.allStreams().filter { !withGames.contains($0.key) }
        let started = try recordings(store, streams: streamsOf.values.reduce(into: Set<UUID>()) { $0.formUnion($1) })
        var byKind: [String: [ConversationID]] = [:]
        for conversation in try index.conversations() where !withGames.contains(conversation) {
            let kind = streamsOf[conversation]?.lazy.compactMap { started[$0]?.kind }.first ?? "unknown"
            byKind[kind, default: []].append(conversation)
        }
        guard !byKind.isEmpty else { return }
        let count = byKind.values.reduce(0) { $0 + $1.count }
        let kinds = byKind.sorted { $0.key < $1.key }.map { kind, conversations in
            "\(conversations.count) of \(SafeText.line(kind)) (\(conversations.prefix(3).map { String($0.uuid.uuidString.prefix(8)).lowercased() }.joined(separator: ", "))\(conversations.count > 3 ? ", …" : ""))"
        }
        print("\(count) conversation\(count == 1 ? "" : "s") hold\(count == 1 ? "s" : "") no game: \(kinds.joined(separator: "; ")). `gamelog state ID` or `gamelog log --game ID` shows one.")
    }
}
