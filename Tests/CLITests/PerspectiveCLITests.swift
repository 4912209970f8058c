import EventStore
import GRDB
import Foundation
import Testing
import TestSupport

/// Perspectives and plug-in games through the real binary, as a user types them.
@Suite(.serialized) struct PerspectiveCLITests {
    func demoGames(_ folder: Folder) throws -> [[String: Any]] {
        let demo = try gamelog(["demo", "--fixed-clock"], in: folder.url)
        #expect(demo.status == 0, "\(demo.stderr)")
        let games = try gamelog(["games", "--json"], in: folder.url)
        return try #require(try JSONSerialization.jsonObject(with: Data(games.stdout.utf8)) as? [[String: Any]])
    }

    /// Every step of the demo's Battleship game before Bob receives the placement,
    /// seen as B, names none of Alice's taps or ship cells; B's steps are B's own events,
    /// so not even how many events Alice's phone recorded shows.
    @Test func asBobTheDemoShowsNothingOfAlicesPlacementBeforeItArrives() throws {
        let folder = try Folder()
        let games = try demoGames(folder)
        let battleship = try #require(games.first { $0["kind"] as? String == "battleship" }?["id"] as? String)
        var step = 0, hidden = 0
        while true {
            let run = try gamelog(["state", battleship, "--at", "\(step)", "--as", "B"], in: folder.url)
            #expect(run.status == 0, "\(run.stderr)")
            if run.stdout.contains("↓ received") { break }
            for leak in ["touch", "cell", "■", "ship", "Ship", "placer", "Alice"] {
                #expect(!run.stdout.contains(leak), "step \(step) as B shows '\(leak)':\n\(run.stdout)")
            }
            #expect(!run.stdout.contains("acted"), "step \(step) as B:\n\(run.stdout)")
            if run.stdout.contains("device B") { hidden += 1 }
            step += 1
            guard step < 200 else { Issue.record("B never received the placement"); return }
        }
        #expect(hidden >= 1)
        // B's last step is B's last event: fewer steps than the whole conversation has.
        let total = { (arguments: [String]) throws -> Int? in
            let run = try gamelog(["state", battleship] + arguments, in: folder.url)
            return run.stdout.firstMatch(of: /step (\d+)\/(\d+)/).flatMap { Int($0.output.2) }
        }
        let bobs = try #require(try total(["--as", "B"])), everyone = try #require(try total([]))
        #expect(bobs < everyone && bobs > 5, "\(bobs) of \(everyone)")
        // As the auditor the same steps show Alice's taps.
        let auditor = try gamelog(["state", battleship, "--at", "12"], in: folder.url)
        #expect(auditor.stdout.contains("input.touch"))
    }

    @Test func asTakesOnlyTheConversationsDevices() throws {
        let folder = try Folder()
        let games = try demoGames(folder)
        let id = try #require(games.first?["id"] as? String)
        for command in [["state", id, "--as", "Z"], ["diff", id, "1", "2", "--as", "Z"], ["replay", id, "--as", "Z"],
                        ["log", "--game", id, "--as", "Z"]] {
            let run = try gamelog(command, in: folder.url)
            #expect(run.status != 0, "\(command)")
            #expect(run.stderr.contains("'Z' is not a device") && run.stderr.contains("A, B, or auditor"), "\(command): \(run.stderr)")
        }
        let lower = try gamelog(["state", id, "--as", "b"], in: folder.url)
        #expect(lower.status == 0 && lower.stdout.contains("seen as device B"))
        // games as a device: what its own log shows, as it knew it.
        let asBob = try gamelog(["games", "--as", "B", "--json"], in: folder.url)
        let bobs = try #require(try JSONSerialization.jsonObject(with: Data(asBob.stdout.utf8)) as? [[String: Any]])
        #expect(bobs.count == 2 && bobs.allSatisfy { $0["devices"] as? [String] == ["B"] && $0["players"] as? [String: String] == ["B": "Bob"] })
        let refused = try gamelog(["games", "--as", "Z"], in: folder.url)
        #expect(refused.status != 0 && refused.stderr.contains("A, B, or auditor"))
    }

    @Test func aThirdGameIsSimulatedListedAndVerified() throws {
        let folder = try Folder()
        let run = try gamelog(["simulate", "--game", "connectfour", "--games", "4", "--seed", "2", "--db", "c4.sqlite"], in: folder.url)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("connectfour:"))
        let games = try gamelog(["games", "--db", "c4.sqlite", "--json"], in: folder.url)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(games.stdout.utf8)) as? [[String: Any]])
        #expect(list.count >= 4)
        #expect(list.allSatisfy { $0["title"] as? String == "Connect Four" })
        let id = try #require(list.first?["id"] as? String)
        let state = try gamelog(["state", id, "--db", "c4.sqlite"], in: folder.url)
        #expect(state.stdout.contains("Connect Four"))
        #expect(state.stdout.split(separator: "\n").filter { $0.contains("│") }.count >= 6) // a 7 x 6 grid
        let verify = try gamelog(["verify", "--db", "c4.sqlite"], in: folder.url)
        #expect(verify.status == 0, "\(verify.stdout)")
        let unknown = try gamelog(["simulate", "--game", "chess"], in: folder.url)
        #expect(unknown.status != 0 && unknown.stderr.contains("battleship, tictactoe, connectfour, stickers"))
    }

    /// One phone's export, imported alone, verifies clean and says whose recording is missing.
    @Test func oneDevicesLogStandsAlone() throws {
        let folder = try Folder()
        _ = try demoGames(folder)
        let export = try gamelog(["export", "--device", "A", "--db", "gamelog.sqlite"], in: folder.url)
        try export.stdout.write(to: folder.url.appending(path: "a.jsonl"), atomically: true, encoding: .utf8)
        let imported = try gamelog(["import", "--db", "a.sqlite", "a.jsonl"], in: folder.url)
        #expect(imported.status == 0, "\(imported.stderr)")
        let verify = try gamelog(["verify", "--db", "a.sqlite"], in: folder.url)
        #expect(verify.status == 0, "\(verify.stdout)")
        #expect(verify.stdout.contains("not checkable") && verify.stdout.contains("Bob's recording is missing"))
        #expect(verify.stdout.contains("recordings from device A"))
        let games = try gamelog(["games", "--db", "a.sqlite", "--json"], in: folder.url)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(games.stdout.utf8)) as? [[String: Any]])
        #expect(list.count == 2)
        #expect(list.allSatisfy { $0["status"] as? String == "finished" && $0["missingRecordings"] as? [String] == ["Bob"] })
    }
}

/// Reading never writes: not the file, and nothing beside it.
@Suite struct ReadOnlyCLITests {
    @Test func readingCommandsLeaveTheFolderAsItWas() throws {
        let folder = try Folder()
        #expect(try gamelog(["demo", "--fixed-clock"], in: folder.url).status == 0)
        // Copy the database alone into a folder of its own, as one would receive it.
        let inbox = folder.url.appending(path: "inbox")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: folder.url.appending(path: "gamelog.sqlite"), to: inbox.appending(path: "log.sqlite"))
        let before = try Data(contentsOf: inbox.appending(path: "log.sqlite"))
        let games = try gamelog(["games", "--json", "--db", "log.sqlite"], in: inbox)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(games.stdout.utf8)) as? [[String: Any]])
        let id = try #require(list.first?["id"] as? String)
        let commands: [[String]] = [["games"], ["log"], ["state", id], ["diff", id, "1", "5"], ["replay", id, "--step", "3"],
                                    ["verify"], ["rerun"], ["keys"], ["info"], ["export"], ["bisect", id, "--invariant", "legality"]]
        for command in commands {
            let run = try gamelog(command + ["--db", "log.sqlite"], in: inbox)
            #expect(run.status == 0, "\(command): \(run.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: inbox.path) == ["log.sqlite"], "\(command) left files")
        }
        #expect(try Data(contentsOf: inbox.appending(path: "log.sqlite")) == before)
        // A file this gamelog refuses is left alone too.
        try DatabaseQueue(path: inbox.appending(path: "log.sqlite").path).writeWithoutTransaction { try $0.execute(sql: "PRAGMA user_version = 99") }
        let refused = try gamelog(["games", "--db", "log.sqlite"], in: inbox)
        #expect(refused.status != 0 && refused.stderr.contains("newer"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: inbox.path) == ["log.sqlite"])
    }
}

/// What a person reads: whole type names, names for identifiers, whole player names.
@Suite struct OutputCLITests {
    @Test func logAndGamesPrintWholeNamesAndPeople() throws {
        let folder = try Folder()
        #expect(try gamelog(["demo", "--fixed-clock"], in: folder.url).status == 0)
        let log = try gamelog(["log"], in: folder.url)
        #expect(log.stdout.contains("action.requestPresentationStyle "))
        #expect(log.stdout.contains("Alice placed their ships!"))
        #expect(!log.stdout.contains("$"), "captions keep a $<uuid> mention")
        // The type name as shown is the value --kind takes.
        let kind = try gamelog(["log", "--kind", "action.requestPresentationStyle"], in: folder.url)
        #expect(kind.status == 0 && kind.stdout.contains("action.requestPresentationStyle"))
        let export = try gamelog(["export", "--redact"], in: folder.url)
        try export.stdout.write(to: folder.url.appending(path: "r.jsonl"), atomically: true, encoding: .utf8)
        #expect(try gamelog(["import", "--db", "r.sqlite", "r.jsonl"], in: folder.url).status == 0)
        let games = try gamelog(["games", "--db", "r.sqlite"], in: folder.url)
        #expect(games.stdout.contains("A=Player 1 B=Player 2"), "\(games.stdout)")
    }
}

/// One damaged event does not hide the rest of a log.
@Suite struct DamagedEventCLITests {
    @Test func readingCommandsGoOnPastADamagedEventAndExportCanSalvage() throws {
        let folder = try Folder()
        #expect(try gamelog(["demo", "--fixed-clock"], in: folder.url).status == 0)
        let total = try EventStore(path: folder.path("gamelog.sqlite"), access: .readOnly).count().events
        try BlockSurgery.alter(folder.path("gamelog.sqlite"), position: 50) { $0.payload = [UInt8](repeating: 0, count: $0.payload.count) }
        let games = try gamelog(["games"], in: folder.url)
        #expect(games.status == 1)
        #expect(games.stdout.split(separator: "\n").count == 3, "a header, and both games are still listed: \(games.stdout)")
        #expect(games.stderr.contains("1 damaged events") && games.stderr.contains("position 50"))
        let log = try gamelog(["log"], in: folder.url)
        #expect(log.status == 1)
        #expect(log.stdout.split(separator: "\n").count == Int(total), "every event has its line")
        #expect(log.stdout.contains("50  damaged: "))
        let plain = try gamelog(["export"], in: folder.url)
        #expect(plain.status != 0 && plain.stderr.contains("--skip-damaged"))
        let salvage = try gamelog(["export", "--skip-damaged"], in: folder.url)
        #expect(salvage.status == 0)
        #expect(salvage.stdout.split(separator: "\n").filter { !$0.hasPrefix(#"{"head""#) && !$0.hasPrefix(#"{"tree""#) }.count == Int(total) - 1)
        #expect(salvage.stderr.contains("left out 1 damaged events (positions 50)"))
    }
}

/// One JSON style for every --json (README, "JSON output").
@Suite struct JSONStyleCLITests {
    @Test func everyJSONOutputHasTheOneStyle() throws {
        let folder = try Folder()
        #expect(try gamelog(["demo", "--fixed-clock"], in: folder.url).status == 0)
        let games = try gamelog(["games", "--json"], in: folder.url)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(games.stdout.utf8)) as? [[String: Any]])
        let id = try #require(list.first?["id"] as? String)
        let uppercaseUUID = try Regex("[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}")
        var outputs = 0
        for command in [["games", "--json"], ["state", id, "--json"], ["diff", id, "10", "30", "--json"], ["log", "--json", "--limit", "40"],
                        ["verify", "--json"], ["rerun", "--json"], ["bisect", id, "--invariant", "legality", "--json"],
                        ["replay", id, "--step", "20", "--json"]] {
            let run = try gamelog(command, in: folder.url)
            #expect(run.status == 0, "\(command): \(run.stderr)")
            #expect(!run.stdout.contains("\"_0\""), "\(command) prints Swift's _0 keys")
            #expect(run.stdout.firstMatch(of: uppercaseUUID) == nil, "\(command) prints an upper-case UUID")
            outputs += 1
        }
        #expect(outputs == 8)
        let state = try gamelog(["state", id, "--json", "--at", "20"], in: folder.url)
        #expect(state.stdout.contains("\"style\":\"expanded\"") || state.stdout.contains("\"style\":\"compact\""))
        let diff = try gamelog(["diff", id, "19", "20", "--json"], in: folder.url)
        #expect(!diff.stdout.contains("\"false\"") && !diff.stdout.contains("\"true\""), "\(diff.stdout)")
    }
}

/// A log's names reach the terminal as text: no escape sequence, bell or carriage
/// return from a log is ever printed.
@Suite struct HostileTextCLITests {
    @Test func namesWithEscapeSequencesArePrintedAsText() throws {
        let folder = try Folder()
        #expect(try gamelog(["simulate", "--games", "2", "--seed", "5", "--clock", "fixed", "--db", "clean.sqlite"], in: folder.url).status == 0)
        try HostileLog.make(from: try EventStore(path: folder.path("clean.sqlite"), access: .readOnly), to: folder.path("hostile.sqlite"))
        let games = try gamelog(["games", "--db", "hostile.sqlite"], in: folder.url)
        #expect(games.status == 0, "\(games.stderr)")
        let id = try #require(games.stdout.split(separator: "\n").dropFirst(2).first?.split(separator: " ").first.map(String.init))
        var checked = 0
        for arguments in [["games"], ["log", "--game", id], ["state", id], ["verify", "--no-rerun"], ["keys"], ["log", "--game", id, "--json"]] {
            let run = try gamelog(arguments + ["--db", "hostile.sqlite"], in: folder.url)
            let output = run.stdout + run.stderr
            #expect(!output.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x0D }, "\(arguments)")
            checked += 1
        }
        #expect(checked == 6)
        // The names are still there to read.
        #expect(games.stdout.contains("Bob\u{FFFD}]0;owned\u{FFFD}\u{FFFD}\u{FFFD}[2K"), "\(games.stdout)")
    }
}

/// A gamelog built from the library with a registry of its own (here Tic-tac-toe alone,
/// `Tests/CustomGamelog`: the three lines a developer's package has) is the whole command,
/// and says what it cannot read: kinds it does not know are listed, named and never
/// counted as checked.
@Suite struct CustomRegistryCLITests {
    @Test func aGamelogWithItsOwnRegistryNamesTheKindsItDoesNotKnow() throws {
        let folder = try Folder()
        #expect(try gamelog(["simulate", "--games", "4", "--seed", "3", "--clock", "fixed", "--db", "mixed.sqlite"], in: folder.url).status == 0)
        let custom = { (arguments: [String]) in try gamelog(arguments + ["--db", "mixed.sqlite"], in: folder.url, binary: "CustomGamelog") }
        let games = try custom(["games", "--json"])
        #expect(games.status == 0, "\(games.stderr)")
        let list = try #require(try JSONSerialization.jsonObject(with: Data(games.stdout.utf8)) as? [[String: Any]])
        #expect(list.count == 3, "\(list.map { $0["kind"] ?? "" })") // battleship, tictactoe, connectfour
        let battleship = try #require(list.first { $0["kind"] as? String == "battleship" })
        #expect((battleship["title"] as? String)?.contains("not registered here") == true)
        #expect((battleship["result"] as? String)?.contains("not registered in this gamelog") == true)
        let tictactoe = try #require(list.first { $0["kind"] as? String == "tictactoe" })
        #expect(tictactoe["status"] as? String == "finished")
        let id = try #require(battleship["id"] as? String)
        let state = try custom(["state", String(id.prefix(8))])
        #expect(state.status == 0 && state.stdout.contains("kind battleship is not registered in this gamelog"))
        // Issue 41, item 4: games whose rules were not checked are not "ok": exit 2, incomplete.
        let verify = try custom(["verify", "--no-rerun"])
        #expect(verify.status == 2, "\(verify.stdout)")
        #expect(verify.stdout.contains("were not checked: kinds battleship, connectfour") && verify.stdout.contains("incomplete:")
                && !verify.stdout.contains("\nok:"), "\(verify.stdout)")
        let json = try custom(["verify", "--no-rerun", "--json"])
        #expect(json.status == 2 && json.stdout.contains("\"incomplete\":true") && json.stdout.contains("\"ok\":false"), "\(json.stdout)")
        let allowed = try custom(["verify", "--no-rerun", "--allow-unchecked"])
        #expect(allowed.status == 0 && allowed.stdout.contains("no errors in what could be checked"), "\(allowed.stdout)")
        let bisect = try custom(["bisect", String(id.prefix(8)), "--invariant", "legality"])
        #expect(bisect.status != 0 && bisect.stderr.contains("cannot be bisected"))
        // Issue 41, item 5: no player's view of an unknown kind can be computed: what its
        // messages carry is left out and the command fails, unless --unredacted.
        for command in [["log", "--as", "B"], ["export", "--device", "B", "--redact"]] {
            let run = try custom(command)
            #expect(run.status == 1 && run.stderr.contains("--unredacted") && run.stderr.contains("battleship"), "\(command): \(run.stderr)")
            #expect(!run.stdout.contains("Ship_Location"), "\(command) showed a placement")
            let whole = try custom(command + ["--unredacted"])
            #expect(whole.status == 0 && whole.stdout.contains("Ship_Location"), "\(command): \(whole.stderr)")
        }
        // The full gamelog reads them all.
        let full = try gamelog(["verify", "--no-rerun", "--db", "mixed.sqlite"], in: folder.url)
        #expect(full.status == 0 && !full.stdout.contains("not registered"))
    }
}
