import EventStore
import Foundation
import GRDB
import GameKit
import Games
import MessagesModel
import Projections
import Recorder
import Replay
import Simulation
import Testing
import TestSupport

/// The guesser's view on every command that shows a device's view: at every step of random
/// Battleship games, `state --as B`, `diff --as B`, `log --as B` (JSON and text) and
/// `export --device B --redact` show none of the ships B has not hit before the game is over.
@Suite(.serialized) struct SecretSurfaceCLITests {
    @Test func noCommandShowsTheGuesserAnUnhitShipBeforeTheEnd() throws {
        let folder = try Folder()
        let path = folder.path("secrets.sqlite")
        try recordGames("battleship", count: 2, at: path, seed: 31, noise: 0.1)
        let store = try EventStore(path: path, access: .readOnly)
        let index = try GameIndex(store: store)
        var secretsAt: [Int64: [String]] = [:] // by position: what B must not see once that event happened
        var plan: [(game: String, step: Int, secrets: [String])] = []
        for (game, conversation) in try index.games() {
            let replayer = try Replayer(store: store, conversation: conversation, streams: try index.streams(of: conversation), games: .standard)
            // B's view steps through B's own events: step n is B's n-th event.
            let bob = replayer.seen(by: .device("B"))
            for step in 1...bob.stepCount {
                let moment = bob.step(step, in: replayer)
                let truth = try replayer.state(at: moment)
                let secrets = truth.games[game].flatMap { truth.plugin?.secrets(of: $0.board, hiddenFrom: "Bob") } ?? []
                guard !secrets.isEmpty else { continue }
                plan.append((game.uuid.uuidString, step, secrets))
                secretsAt[bob.events[step - 1].position] = secrets
            }
        }
        #expect(plan.count > 15, "\(plan.count)")
        let db = ["--db", "secrets.sqlite"]
        var checked = 0
        for (game, step, secrets) in plan {
            let state = try gamelog(["state", game, "--at", String(step), "--as", "B", "--json"] + db, in: folder.url)
            let diff = try gamelog(["diff", game, String(step - 1), String(step), "--as", "B"] + db, in: folder.url)
            #expect(state.status == 0 && diff.status == 0, "\(state.stderr)\(diff.stderr)")
            for secret in secrets {
                #expect(!state.stdout.contains(secret), "state at \(step) as B shows \(secret)")
                #expect(!diff.stdout.contains(secret), "diff to \(step) as B shows \(secret)")
            }
            checked += 1
        }
        // The log as B, line by line: each line holds no secret of its moment.
        for format in [["--json"], []] {
            let log = try gamelog(["log", "--as", "B"] + format + db, in: folder.url)
            #expect(log.status == 0, "\(log.stderr)")
            var lines = 0
            for line in log.stdout.split(separator: "\n") {
                let position = format.isEmpty ? Int64(line.prefix(7).trimmingCharacters(in: .whitespaces))
                    : line.firstMatch(of: /"position":(\d+)/).flatMap { Int64($0.output.1) }
                guard let position, let secrets = secretsAt[position] else { continue }
                lines += 1
                for secret in secrets { #expect(!line.contains(secret), "log as B at \(position): \(line)") }
            }
            #expect(lines > 10, "\(format)")
            // Another device's events are not there at all, not even counted.
            #expect(!log.stdout.contains("acted") && !log.stdout.contains(#""hidden""#))
        }
        // B's redacted export: a log of what B's player may see.
        let export = try gamelog(["export", "--device", "B", "--redact"] + db, in: folder.url)
        #expect(export.status == 0)
        var exported = 0
        for line in export.stdout.split(separator: "\n") where line.contains("Ship_Location") {
            exported += 1
            #expect(line.contains("Is_Complete=1"), "B's redacted export shows a placement: \(line.prefix(400))")
        }
        #expect(exported > 0) // the final result message, which carries every ship, is there
        let full = try gamelog(["export", "--device", "B"] + db, in: folder.url)
        #expect(full.stdout.contains("Is_Complete=0"), "B's full export is the phone's log, the placement included")
        #expect(checked == plan.count)
    }
}

/// A conversation whose extension holds no game (the sticker browser) is named by `games`,
/// with ids that open it, rather than "No games recorded" alone.
@Suite struct NoGameConversationsCLITests {
    @Test func stickerConversationsAreListedWithIdsThatOpenThem() throws {
        let folder = try Folder()
        #expect(try gamelog(["simulate", "--game", "stickers", "--games", "3", "--db", "s.sqlite"], in: folder.url).status == 0)
        let games = try gamelog(["games", "--db", "s.sqlite"], in: folder.url)
        #expect(games.status == 0 && games.stdout.contains("hold no game") && games.stdout.contains("of stickers"), "\(games.stdout)")
        let id = try #require(games.stdout.firstMatch(of: /\(([0-9a-f]{8})/).map { String($0.output.1) })
        let state = try gamelog(["state", id, "--db", "s.sqlite"], in: folder.url)
        #expect(state.status == 0 && state.stdout.contains("device A"), "\(state.stdout)\(state.stderr)")
    }
}

/// One damaged event hides nothing else: `log --game` lists the game past it, `state`
/// shows every step (a step before the damage cleanly; one after it with a warning
/// naming the damage, exit 1).
@Suite struct DamagedGameCLITests {
    @Test func aDamagedEventIsNamedAndEveryOtherStepStillShows() throws {
        let folder = try Folder()
        #expect(try gamelog(["demo", "--fixed-clock"], in: folder.url).status == 0)
        let games = try gamelog(["games", "--json"], in: folder.url)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(games.stdout.utf8)) as? [[String: Any]])
        let game = try #require(list.first { $0["kind"] as? String == "tictactoe" })
        let id = String(try #require(game["id"] as? String).prefix(8))
        let first = try #require(game["firstPosition"] as? Int)
        let damagedAt = first + 20
        try BlockSurgery.garble(folder.path("gamelog.sqlite"), position: Int64(damagedAt))
        let log = try gamelog(["log", "--game", id], in: folder.url)
        #expect(log.status == 1 && log.stdout.contains("damaged") && log.stdout.split(separator: "\n").count > 40, "\(log.stdout.suffix(500))\(log.stderr)")
        let before = try gamelog(["state", id, "--at", "2"], in: folder.url)
        #expect(before.status == 0 && before.stderr.isEmpty, "\(before.stderr)")
        let after = try gamelog(["state", id], in: folder.url)
        #expect(after.status == 1 && after.stdout.contains("Tic-tac-toe") && after.stderr.contains("position \(damagedAt)"), "\(after.stderr)")
    }
}
