import EventStore
import ArgumentParser
import Foundation
import Games
import Projections
import Replay

struct GamesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "games",
        abstract: "List every game: kind, players, status, result, events, time span, and whose recordings the log holds.")

    @OptionGroup var options: GlobalOptions
    @Option(name: .customLong("as"), help: "Whose view: a device (only the games its own log shows, as it knew them), or auditor.")
    var perspective: String = "auditor"
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        try reportingErrors {
            let store = try options.openForReading()
            let progress = ProgressBar(total: Int(try store.count().events), label: "events")
            var damaged: [Error] = []
            let seenAs = try parsePerspective(perspective, devices: try recordedDevices(store))
            let catalog = try GameCatalog(store: store, games: .standard, progress: { progress.update($0) },
                                          skippingDamaged: { damaged.append($0) }, as: seenAs)
            progress.finish()
            defer {
                if !damaged.isEmpty {
                    Terminal.standardError("\(damaged.count) damaged events were left out of these games (the first: \(damaged[0])). `gamelog verify` names them all; `gamelog export --skip-damaged` salvages the rest.")
                }
            }
            let games = catalog.games
            if json {
                print(try JSONStyle.text(encoding: games))
                if !damaged.isEmpty { throw ExitCode.failure }
                return
            }
            if games.isEmpty { print("No games recorded in \(store.path).") }
            for game in games {
                let players = game.players.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
                var missing = game.missingRecordings.isEmpty || seenAs != .auditor ? ""
                    : "  (no recording from \(game.missingRecordings.joined(separator: ", ")))"
                if let origin = game.forkedFrom { missing += "  (fork of \(origin.sourceGame) at step \(origin.sourceStep))" }
                print("\(game.id.prefix(8))  \(game.kind.rightPad(11)) \(players.rightPad(18)) \(game.status.rightPad(10)) \(String(game.events).leftPad(5)) events  \(game.startedAt) … \(game.endedAt)  \(game.result)\(missing)")
            }
            if !damaged.isEmpty { throw ExitCode.failure }
        }
    }
}
