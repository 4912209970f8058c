import StoredEvents
import EventStore
import Foundation
import GRDB
import RecordedEvents
import Recorder
import Testing
import TestSupport

/// Runs the real `gamelog` binary in a child process.
struct Run {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Where the built `gamelog` binary is.
func gamelogPath(_ name: String = "gamelog") throws -> String {
    let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appending(path: name)
    let candidates = [binary] + [Bundle.main.bundleURL.deletingLastPathComponent().appending(path: name)]
    guard let executable = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: binary.path])
    }
    return executable.path
}

/// Runs gamelog in `folder`; the device keys it makes go to `folder/keys`, never the user's own folder.
func gamelog(_ arguments: [String], in folder: URL, binary: String = "gamelog") throws -> Run {
    let result = try ChildProcess.run(try gamelogPath(binary), arguments, in: folder.path,
                                      environment: ["GAMELOG_KEYS": folder.appending(path: "keys").path])
    return Run(status: result.status, stdout: result.stdout, stderr: result.stderr)
}

final class Folder {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appending(path: "gamelog-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func path(_ name: String) -> String { url.appending(path: name).path }
}

@Suite(.serialized) struct CLITests {
    @Test func demoRecordsBothGamesIntoTheDefaultDatabase() throws {
        let folder = try Folder()
        let run = try gamelog(["demo"], in: folder.url)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("Bob destroyed all the ships!"))
        #expect(run.stdout.contains("X (Alice) won"))
        #expect(run.stdout.contains("hash chain intact"))
        let path = folder.path("gamelog.sqlite")
        let check = try DatabaseQueue(path: path).read { try String.fetchOne($0, sql: "PRAGMA integrity_check") }
        #expect(check == "ok")
        let store = try EventStore(path: path, access: .readOnly)
        #expect(try store.count().events > 100)
        #expect(try store.verifyIntegrity().isSound)
    }

    /// Issue 24, item 6: the demo said 54 events, `games` 35, and `log --game` listed
    /// another number; now the demo, `games` and `log --game` give each game one number,
    /// and the conversation's (the steps of `state`) is called the conversation's.
    @Test func aGamesEventsAreOneNumberInTheDemoGamesAndLog() throws {
        let folder = try Folder()
        let demo = try gamelog(["demo", "--fixed-clock"], in: folder.url)
        #expect(demo.status == 0, "\(demo.stderr)")
        let list = try #require(try JSONSerialization.jsonObject(with: Data(try gamelog(["games", "--json"], in: folder.url).stdout.utf8)) as? [[String: Any]])
        #expect(list.count == 2)
        for game in list {
            let id = try #require(game["id"] as? String), events = try #require(game["events"] as? Int)
            let log = try gamelog(["log", "--game", String(id.prefix(8)), "--json"], in: folder.url)
            #expect(log.status == 0, "\(log.stderr)")
            #expect(log.stdout.split(separator: "\n").count == events, "\(id): games says \(events)")
            #expect(demo.stdout.contains("\(events) of them game \(id.prefix(8))'s (`gamelog log --game`)"), "\(demo.stdout)")
            let state = try gamelog(["state", String(id.prefix(8))], in: folder.url)
            let steps = try #require(state.stdout.firstMatch(of: /step (\d+)\/(\d+)/).map { Int($0.output.2)! })
            #expect(demo.stdout.contains("\(steps) events recorded in the conversation"), "\(demo.stdout)")
            #expect(steps > events)
            // Statuses in words for people (issue 22's "statuses show as inProgress").
            let middle = try gamelog(["state", String(id.prefix(8)), "--at", "30"], in: folder.url)
            #expect(middle.stdout.contains("· in progress") && !middle.stdout.contains("inProgress"), "\(middle.stdout.prefix(300))")
        }
    }

    @Test func simulateIsReproducibleWithAFixedClock() throws {
        let folder = try Folder()
        for name in ["a.sqlite", "b.sqlite"] {
            let run = try gamelog(["simulate", "--games", "6", "--seed", "4", "--clock", "fixed", "--db", name], in: folder.url)
            #expect(run.status == 0, "\(run.stderr)")
        }
        let a = try EventStore(path: folder.path("a.sqlite"), access: .readOnly)
        let b = try EventStore(path: folder.path("b.sqlite"), access: .readOnly)
        #expect(try a.headHash() == (try b.headHash()))
        #expect(try a.count().events > 50)
    }

    @Test func exportThenImportRebuildsTheLogAndABadFileStoresNothing() throws {
        let folder = try Folder()
        // Phones whose clocks are minutes apart (the hostile network's): the file's order, not
        // its times, is the log's, and the re-imported log is the same log (the same head).
        #expect(try gamelog(["simulate", "--games", "4", "--seed", "9", "--clock", "fixed", "--network", "hostile"], in: folder.url).status == 0)
        let export = try gamelog(["export"], in: folder.url)
        #expect(export.status == 0, "\(export.stderr)")
        try Data(export.stdout.utf8).write(to: folder.url.appending(path: "all.jsonl"))
        let first = try gamelog(["import", "all.jsonl", "--db", "copy.sqlite"], in: folder.url)
        #expect(first.status == 0, "\(first.stderr)")
        let original = try EventStore(path: folder.path("gamelog.sqlite"), access: .readOnly)
        let copy = try EventStore(path: folder.path("copy.sqlite"), access: .readOnly)
        #expect(first.stdout.contains("imported \(try original.count().events) new events (0 already present)"))
        #expect(try copy.headHash() == (try original.headHash()))
        let again = try gamelog(["import", "all.jsonl", "--db", "copy.sqlite"], in: folder.url)
        #expect(again.stdout.contains("imported 0 new events"))
        let reexport = try gamelog(["export", "--db", "copy.sqlite"], in: folder.url)
        #expect(reexport.stdout == export.stdout)
        // The log's order is not its times' order (else this test would show nothing).
        let times = export.stdout.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["recordedAt"] as? Int
        }
        #expect(times.count > 100 && times != times.sorted(), "\(times.count) times")

        // A cut line: the error names file and line, and no database is created.
        var lines = export.stdout.split(separator: "\n").map(String.init)
        lines[2] = String(lines[2].prefix(40))
        try Data(lines.joined(separator: "\n").utf8).write(to: folder.url.appending(path: "cut.jsonl"))
        let cut = try gamelog(["import", "cut.jsonl", "--db", "new.sqlite"], in: folder.url)
        #expect(cut.status != 0)
        #expect(cut.stderr.contains("cut.jsonl:3 is not an exported event"), "\(cut.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("new.sqlite")))
        // Standard input, as `-`.
        let piped = try ChildProcess.run("/bin/sh", ["-c", "\"$0\" import - --db piped.sqlite < all.jsonl", try gamelogPath()],
                                         in: folder.url.path)
        #expect(piped.status == 0, "\(piped.stderr)")
        let pipedStore = try EventStore(path: folder.path("piped.sqlite"), access: .readOnly)
        #expect(try pipedStore.headHash() == (try original.headHash()))
        let directory = try gamelog(["import", "."], in: folder.url)
        #expect(directory.status != 0)
        #expect(directory.stderr.contains("it is a folder"), "\(directory.stderr)")
        let missing = try gamelog(["import", "nowhere.jsonl"], in: folder.url)
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("cannot read nowhere.jsonl"), "\(missing.stderr)")
    }

    @Test func gamesListsAPageAtATimeAndSaysWhereTheListGoesOn() throws {
        let folder = try Folder()
        #expect(try gamelog(["simulate", "--games", "9", "--seed", "4", "--clock", "fixed"], in: folder.url).status == 0)
        let every = try gamelog(["games", "--all", "--json"], in: folder.url)
        let all = try #require(try JSONSerialization.jsonObject(with: Data(every.stdout.utf8)) as? [[String: Any]])
        #expect(all.count >= 5, "\(all.count)")
        let first = try gamelog(["games", "--per-page", "2"], in: folder.url)
        let lines = first.stdout.split(separator: "\n")
        #expect(first.status == 0 && lines.count == 4 && lines[0].hasPrefix("game "), "\(first.stdout)") // header, 2 games, note
        #expect(lines.last == "games 1-2 of \(all.count); `--page 2` for the next 2, `--all` for every game")
        // A row fits a wide terminal: the span to the second, the end's date only when it differs.
        let row = String(lines[1])
        #expect(row.count <= 130 && row.contains(" … ") && !row.contains("Z …"), "\(row.count): \(row)")
        // Pages put together are the whole list; JSON stays one document, the note goes to standard error.
        var paged: [String] = []
        var page = 1
        while paged.count < all.count && page < 10 {
            let run = try gamelog(["games", "--per-page", "2", "--page", String(page), "--json"], in: folder.url)
            let games = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])
            #expect(!games.isEmpty && games.count <= 2)
            #expect(run.stderr.contains("of \(all.count)") == (page * 2 < all.count), "\(run.stderr)")
            paged += games.compactMap { $0["id"] as? String }
            page += 1
        }
        #expect(Set(paged) == Set(all.compactMap { $0["id"] as? String }) && paged.count == all.count)
        let past = try gamelog(["games", "--page", "40"], in: folder.url)
        #expect(past.status == 0 && past.stdout.contains("No games on page 40: there are \(all.count) games, 50 a page."))
        let zero = try gamelog(["games", "--page", "0"], in: folder.url)
        #expect(zero.status != 0 && zero.stderr.contains("--page counts from 1"))
    }

    @Test func logAndVerifySpeakJSON() throws {
        let folder = try Folder()
        _ = try gamelog(["simulate", "--games", "2", "--db", "x.sqlite"], in: folder.url)
        let log = try gamelog(["log", "--db", "x.sqlite", "--json", "--kind", "callback", "--device", "B"], in: folder.url)
        #expect(log.status == 0)
        let lines = log.stdout.split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect((object["type"] as? String)?.hasPrefix("callback.") == true)
            #expect(((object["payload"] as? [String: Any])?["context"] as? [String: Any])?["device"] as? String == "B")
        }
        let verify = try gamelog(["verify", "--db", "x.sqlite", "--json"], in: folder.url)
        #expect(verify.status == 0)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any])
        #expect(report["ok"] as? Bool == true)
    }

    @Test func verifyNamesTheTamperedPositionAndFails() throws {
        let folder = try Folder()
        _ = try gamelog(["simulate", "--games", "2", "--db", "x.sqlite"], in: folder.url)
        try BlockSurgery.flipPayloadByte(folder.path("x.sqlite"), position: 30)
        let run = try gamelog(["verify", "--db", "x.sqlite"], in: folder.url)
        #expect(run.status == 1)
        #expect(run.stdout.contains("position 30"))
    }

    @Test func badFilesGetAPlainErrorAndStayUnchanged() throws {
        let folder = try Folder()
        let junk = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try junk.write(to: folder.url.appending(path: "junk.sqlite"))
        for command in [["log"], ["verify"], ["simulate", "--games", "1"], ["demo"]] {
            let run = try gamelog(command + ["--db", "junk.sqlite"], in: folder.url)
            #expect(run.status != 0)
            #expect(run.stderr.hasPrefix("error: "))
            #expect(run.stderr.contains("is not an SQLite database"))
            #expect(run.stderr.split(separator: "\n").count <= 2)
        }
        #expect(try Data(contentsOf: folder.url.appending(path: "junk.sqlite")) == junk)

        let missing = try gamelog(["log", "--db", "nowhere.sqlite"], in: folder.url)
        #expect(missing.status != 0 && missing.stderr.contains("no gamelog database at nowhere.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: folder.path("nowhere.sqlite")))
    }

    @Test func newerSchemaIsRefusedWithTheWayOut() throws {
        let folder = try Folder()
        _ = try gamelog(["simulate", "--games", "1", "--db", "x.sqlite"], in: folder.url)
        try DatabaseQueue(path: folder.path("x.sqlite")).writeWithoutTransaction {
            try $0.execute(sql: "PRAGMA user_version = 99; PRAGMA wal_checkpoint(TRUNCATE)")
        }
        let before = try Data(contentsOf: folder.url.appending(path: "x.sqlite"))
        let run = try gamelog(["simulate", "--games", "1", "--db", "x.sqlite"], in: folder.url)
        #expect(run.status != 0)
        #expect(run.stderr.contains("schema version 99") && run.stderr.contains("Upgrade gamelog"))
        #expect(try Data(contentsOf: folder.url.appending(path: "x.sqlite")) == before)
    }

    @Test func wrongArgumentsAreExplained() throws {
        let folder = try Folder()
        let run = try gamelog(["simulate", "--games", "0"], in: folder.url)
        #expect(run.status != 0)
        #expect(run.stderr.contains("--games must be at least 1"))
        let time = try gamelog(["log", "--since", "yesterday"], in: folder.url)
        #expect(time.status != 0)
    }
}

@Suite struct FormatDocumentTests {
    /// The schema appendix of docs/FORMAT.md is a new file's schema, statement by statement.
    @Test func theFormatsSchemaAppendixIsANewFilesSchema() throws {
        let folder = try Folder()
        let path = folder.path("new.sqlite")
        _ = try EventStore(path: path)
        let made = try DatabaseQueue(path: path).read { db in
            try String.fetchAll(db, sql: "SELECT sql || ';' FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")
        }.joined(separator: "\n")
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let document = try String(contentsOf: root.appending(path: "docs/FORMAT.md"), encoding: .utf8)
        let appendix = try #require(document.components(separatedBy: "## Appendix: the schema of a current file").last)
        let block = try #require(appendix.components(separatedBy: "```sql\n").dropFirst().first?.components(separatedBy: "\n```").first)
        #expect(made.count > 1_000)
        #expect(block == made, "docs/FORMAT.md's appendix differs from a new file's schema")
    }

    /// docs/FORMAT.md is followed by tools/decode_log.py, which knows nothing of our
    /// code: it must decode every event and reach the same head hash.
    @Test func aPythonReaderOfTheFormatAgreesWithTheStore() throws {
        let folder = try Folder()
        let run = try gamelog(["simulate", "--games", "4", "--seed", "9", "--db", "x.sqlite"], in: folder.url)
        #expect(run.status == 0)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let python = try ChildProcess.run("python3", [root.appending(path: "tools/decode_log.py").path, folder.path("x.sqlite")])
        #expect(python.status == 0, "\(python.termination): \(python.stderr)")
        let summary = try #require(python.stdout.split(separator: "\n").last)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(summary.utf8)) as? [String: Any])
        let store = try EventStore(path: folder.path("x.sqlite"), access: .readOnly)
        #expect(object["head"] as? String == (try store.headHash()).map { String(format: "%02x", $0) }.joined())
        #expect(object["events"] as? Int == Int(try store.count().events))
        #expect((object["problems"] as? [Any])?.isEmpty == true)
        // It checked the devices' signed tree heads too, from FORMAT.md alone.
        #expect(object["heads"] as? Int == (try store.deviceTrees().reduce(0) { $0 + $1.heads.count }))
        #expect((object["heads"] as? Int ?? 0) > 0)

        // Compact payloads expanded by the document's rules alone are what gamelog reads.
        let events = try ChildProcess.run("python3", [root.appending(path: "tools/decode_log.py").path, folder.path("x.sqlite"), "--events"])
        var fromPython: [Int: NSDictionary] = [:]
        for line in events.stdout.split(separator: "\n").dropLast() {
            let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            fromPython[try #require(event["position"] as? Int)] = try #require(event["payload"] as? NSDictionary)
        }
        var decoder = StreamDecoder(store: store)
        var compared = 0, compact = 0
        try store.scan { stored in
            let v1 = try decoder.v1Payload(stream: stored.stream, type: stored.type, typeVersion: stored.typeVersion, payload: stored.payload)
            let ours = try #require(try JSONSerialization.jsonObject(with: Data(v1)) as? NSDictionary)
            #expect(fromPython[Int(stored.position)] == ours, "position \(stored.position)")
            compared += 1
            if stored.typeVersion == 2 { compact += 1 }
        }
        #expect(compared == fromPython.count && compact > compared / 2, "\(compact) compact of \(compared)")
    }
}

/// The interactive replayer in a real terminal: tmux runs it, send-keys types,
/// capture-pane reads the screen.
@Suite(.serialized) struct InteractiveReplayTests {
    /// Runs a tmux client and returns what it printed. (ChildProcess writes output to
    /// files: the tmux server that the first call starts would hold a pipe open.)
    func tmux(_ arguments: [String]) throws -> String {
        try ChildProcess.run("tmux", arguments, atMost: 30).stdout
    }

    /// A folder with the demo's log, and its games as `games --json` lists them.
    func demo() throws -> (Folder, [[String: Any]]) {
        let folder = try Folder()
        #expect(try gamelog(["demo", "--fixed-clock"], in: folder.url).status == 0)
        let games = try gamelog(["games", "--json"], in: folder.url)
        return (folder, try #require(try JSONSerialization.jsonObject(with: Data(games.stdout.utf8)) as? [[String: Any]]))
    }

    /// Starts `gamelog replay GAME` in a tmux session of the given size; the caller kills it.
    func startReplay(_ game: String, in folder: Folder, columns: Int, rows: Int) throws -> String {
        let session = "gamelog-test-\(UUID().uuidString.prefix(8))"
        _ = try tmux(["new-session", "-d", "-s", session, "-x", String(columns), "-y", String(rows),
                      "cd \(folder.url.path) && \(try gamelogPath()) replay \(game.prefix(8)); echo REPLAY-EXITED; sleep 30"])
        return session
    }

    func screen(_ session: String, until text: String) throws -> String {
        var last = ""
        for _ in 0..<100 {
            last = try tmux(["capture-pane", "-p", "-t", session])
            if last.contains(text) { return last }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return last
    }

    /// Issue 41, item 12: Ctrl-C leaves the terminal as it was (echo, line editing), as `less` does.
    @Test func ctrlCLeavesTheTerminalAsItWas() throws {
        let (folder, list) = try demo()
        let game = try #require(list.first?["id"] as? String)
        let session = "gamelog-test-\(UUID().uuidString.prefix(8))"
        _ = try tmux(["new-session", "-d", "-s", session, "-x", "120", "-y", "50",
                      "trap '' INT; cd \(folder.url.path) && \(try gamelogPath()) replay \(game.prefix(8)); stty -a | tr ' ;' '\\n\\n' | grep -E '^-?(echo|icanon)$' | tr '\\n' ' '; echo AFTER-REPLAY; sleep 30"])
        defer { _ = try? tmux(["kill-session", "-t", session]) }
        #expect(try screen(session, until: "step 0/").contains("step 0/"))
        _ = try tmux(["send-keys", "-t", session, "?"])
        #expect(try screen(session, until: "q quit").contains("q quit"))
        _ = try tmux(["send-keys", "-t", session, "C-c"])
        let after = try screen(session, until: "AFTER-REPLAY")
        #expect(after.contains("echo icanon AFTER-REPLAY") || after.contains("icanon echo AFTER-REPLAY"), "\(after)")
    }

    @Test func stepsJumpsDiffsAndQuitsInATerminal() throws {
        let (folder, list) = try demo()
        let session = try startReplay(try #require(list.first?["id"] as? String), in: folder, columns: 120, rows: 50)
        defer { _ = try? tmux(["kill-session", "-t", session]) }

        var text = try screen(session, until: "step 0/")
        #expect(text.contains("step 0/"))
        #expect(text.contains("←→ step"))  // the help line is always there

        _ = try tmux(["send-keys", "-t", session, "n"])
        text = try screen(session, until: "step 1/")
        #expect(text.contains("step 1/") && text.contains("recording.started"))

        _ = try tmux(["send-keys", "-t", session, "g"])
        _ = try screen(session, until: "go to step")
        _ = try tmux(["send-keys", "-t", session, "30", "Enter"])
        text = try screen(session, until: "step 30/")
        #expect(text.contains("step 30/"))
        #expect(text.contains("←→ step"))

        _ = try tmux(["send-keys", "-t", session, "m"])
        text = try screen(session, until: "transcript.")
        #expect(text.contains("transcript."))

        _ = try tmux(["send-keys", "-t", session, "d"])
        text = try screen(session, until: "changes from step")
        #expect(text.contains("changes from step"))

        _ = try tmux(["send-keys", "-t", session, "Left"])
        text = try screen(session, until: "changes from step")

        // v switches whose view: each device, then the auditor again.
        _ = try tmux(["send-keys", "-t", session, "v"])
        text = try screen(session, until: "seen as device A")
        #expect(text.contains("seen as device A") && !text.contains("device B (Bob)"))
        _ = try tmux(["send-keys", "-t", session, "v"])
        text = try screen(session, until: "seen as device B")
        #expect(text.contains("seen as device B") && !text.contains("device A (Alice)"))
        _ = try tmux(["send-keys", "-t", session, "v"])
        text = try screen(session, until: "seen as auditor")
        #expect(text.contains("seen as auditor"))
        _ = try tmux(["send-keys", "-t", session, "q"])
        text = try screen(session, until: "REPLAY-EXITED")
        #expect(text.contains("REPLAY-EXITED"))
    }

    /// On a terminal too short for the state, ↓ scrolls to what did not fit (the second
    /// device), page down goes further, and the key bar fits 80 columns whole.
    @Test func aTallStateScrollsAndTheKeyBarFitsEightyColumns() throws {
        let (folder, list) = try demo()
        let session = try startReplay(try #require(list.first?["id"] as? String), in: folder, columns: 80, rows: 16)
        defer { _ = try? tmux(["kill-session", "-t", session]) }
        _ = try screen(session, until: "step 0/")
        _ = try tmux(["send-keys", "-t", session, "g"])
        _ = try screen(session, until: "go to step")
        _ = try tmux(["send-keys", "-t", session, "30", "Enter"])
        var text = try screen(session, until: "step 30/")
        #expect(text.contains("f fork"), "the whole key bar at 80 columns:\n\(text)")
        #expect(text.contains("(↑↓ scroll)") && !text.contains("device B (Bob)"), "\(text)")
        for _ in 0..<40 { _ = try tmux(["send-keys", "-t", session, "Down"]) }
        text = try screen(session, until: "device B (Bob)")
        #expect(text.contains("device B (Bob)"), "scrolled down:\n\(text)")
        #expect(text.contains("step 30/"), "the header stays")
        _ = try tmux(["send-keys", "-t", session, "PPage"])
        text = try screen(session, until: "lines 1-")
        #expect(text.contains("lines 1-"), "page up goes back to the top:\n\(text)")
        _ = try tmux(["send-keys", "-t", session, "q"])
    }
}

extension InteractiveReplayTests {
    /// A small terminal keeps the way out and the diff; a resize redraws at once;
    /// a bad time says why; Esc cancels a prompt.
    @Test func smallAndResizedTerminalsBadTimesAndEscape() throws {
        let (folder, list) = try demo()
        let session = try startReplay(try #require(list.first?["id"] as? String), in: folder, columns: 60, rows: 15)
        defer { _ = try? tmux(["kill-session", "-t", session]) }

        var text = try screen(session, until: "step 0/")
        #expect(text.contains("q quit"))
        _ = try tmux(["send-keys", "-t", session, "g"])
        _ = try screen(session, until: "go to step")
        _ = try tmux(["send-keys", "-t", session, "30", "Enter"])
        _ = try screen(session, until: "step 30/")
        _ = try tmux(["send-keys", "-t", session, "d"])
        text = try screen(session, until: "changes from step 29")
        #expect(text.contains("changes from step 29"), "\(text)")
        #expect(text.contains("q quit"))

        _ = try tmux(["send-keys", "-t", session, "t"])
        _ = try screen(session, until: "go to time")
        _ = try tmux(["send-keys", "-t", session, "yesterday", "Enter"])
        text = try screen(session, until: "is not a time")
        #expect(text.contains("'yesterday' is not a time"))

        _ = try tmux(["send-keys", "-t", session, "g"])
        _ = try screen(session, until: "go to step")
        _ = try tmux(["send-keys", "-t", session, "Escape"])
        Thread.sleep(forTimeInterval: 0.5)
        text = try tmux(["capture-pane", "-p", "-t", session])
        #expect(!text.contains("go to step") && !text.contains("not a step"), "\(text)")
        #expect(text.contains("step 30/"))

        // A bigger window is filled without a key press.
        _ = try tmux(["resize-window", "-t", session, "-x", "120", "-y", "50"])
        text = try screen(session, until: "device B (Bob)")
        #expect(text.contains("device B (Bob)"))
        _ = try tmux(["send-keys", "-t", session, "q"])
        #expect(try screen(session, until: "REPLAY-EXITED").contains("REPLAY-EXITED"))
    }

    /// Issue 12's fork without leaving the replayer: `f` at step 10 of the Tic-tac-toe
    /// game, new moves typed one a line, and the branch on screen, marked as a fork.
    @Test func forkingInsideTheReplayerPlaysTypedStepsAndShowsTheBranch() throws {
        let (folder, list) = try demo()
        let game = try #require(list.first { $0["kind"] as? String == "tictactoe" }?["id"] as? String)
        let before = try Data(contentsOf: folder.url.appending(path: "gamelog.sqlite"))
        let session = try startReplay(game, in: folder, columns: 140, rows: 50)
        defer { _ = try? tmux(["kill-session", "-t", session]) }
        _ = try screen(session, until: "step 0/")
        _ = try tmux(["send-keys", "-t", session, "g"])
        _ = try screen(session, until: "go to step")
        _ = try tmux(["send-keys", "-t", session, "10", "Enter"])
        _ = try screen(session, until: "step 10/")

        _ = try tmux(["send-keys", "-t", session, "f"])
        _ = try screen(session, until: "fork at step 10 into")
        _ = try tmux(["send-keys", "-t", session, "branch.sqlite", "Enter"])
        _ = try screen(session, until: "step 1 of the branch")
        // Alice takes a corner instead of the centre; one line is not a step, and says so.
        let moves = ["A touch cell 0", "A send", "B open", "B deliver", "B tap-latest", "B touch cell 4", "B sned", "B send"]
        for (index, move) in moves.enumerated() {
            _ = try tmux(["send-keys", "-t", session, move, "Enter"])
            if move == "B sned" {
                #expect(try screen(session, until: "'B sned' is not a step").contains("'B sned' is not a step"))
            } else {
                _ = try screen(session, until: "step \(moves.prefix(index + 1).filter { $0 != "B sned" }.count + 1) of the branch")
            }
        }
        _ = try tmux(["send-keys", "-t", session, "Enter"])
        let text = try screen(session, until: "now replaying the branch")
        #expect(text.contains("forked into branch.sqlite with 7 new steps"), "\(text)")
        #expect(text.contains("fork of"), "the branch names its origin: \(text)")
        _ = try tmux(["send-keys", "-t", session, "q"])
        #expect(try screen(session, until: "REPLAY-EXITED").contains("REPLAY-EXITED"))

        // The branch is a log of its own that verifies; the source is as it was.
        let verify = try gamelog(["verify", "--db", "branch.sqlite"], in: folder.url)
        #expect(verify.status == 0, "\(verify.stdout)")
        #expect(try Data(contentsOf: folder.url.appending(path: "gamelog.sqlite")) == before)
    }
}

@Suite struct MigrateTests {
    @Test func aDamagedLogIsNotMovedIntoBlocksAndTheErrorSaysWhy() throws {
        let folder = try Folder()
        _ = try gamelog(["simulate", "--games", "1", "--db", "new.sqlite"], in: folder.url)
        // Its events as rows, one of them damaged.
        _ = try OlderSchema.rowsCopy(of: try EventStore(path: folder.path("new.sqlite"), access: .readOnly), to: folder.path("rows.sqlite"))
        try DatabaseQueue(path: folder.path("rows.sqlite")).writeWithoutTransaction { db in
            try db.execute(sql: "UPDATE events SET codec = 0, dictionary_id = NULL, payload = CAST('garbage' AS BLOB), raw_size = 7 WHERE position = 5")
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
        let before = try Data(contentsOf: folder.url.appending(path: "rows.sqlite"))
        let run = try gamelog(["migrate", "--db", "rows.sqlite"], in: folder.url)
        #expect(run.status != 0)
        #expect(run.stderr.contains("does not verify") && run.stderr.contains("left as they are") && run.stderr.contains("gamelog verify"),
                "\(run.stderr)")
        #expect(try Data(contentsOf: folder.url.appending(path: "rows.sqlite")) == before)
    }

    @Test func anOlderSchemaIsReadAfterTheMigrateTheErrorNames() throws {
        let folder = try Folder()
        _ = try gamelog(["simulate", "--games", "1", "--db", "new.sqlite"], in: folder.url)
        // Its events as rows, rolled back to schema 2, as a database from before snapshots.
        _ = try OlderSchema.rowsCopy(of: try EventStore(path: folder.path("new.sqlite"), access: .readOnly), to: folder.path("old.sqlite"))
        try OlderSchema.rollBack(folder.path("old.sqlite"), to: 2)
        let refused = try gamelog(["log", "--db", "old.sqlite"], in: folder.url)
        #expect(refused.status != 0 && refused.stderr.contains("gamelog migrate"))
        let migrated = try gamelog(["migrate", "--db", "old.sqlite"], in: folder.url)
        #expect(migrated.status == 0, "\(migrated.stderr)")
        #expect(migrated.stdout.contains("schema version \(Schema.currentVersion)"))
        // The catalog, derived from the events, is filled by the migration.
        #expect(migrated.stdout.contains("filled the game catalog"), "\(migrated.stdout)")
        #expect(try EventStore(path: folder.path("old.sqlite"), access: .readOnly).catalogIsComplete())
        let log = try gamelog(["log", "--db", "old.sqlite", "--limit", "3"], in: folder.url)
        #expect(log.status == 0 && log.stdout.split(separator: "\n").count == 3)
        let missing = try gamelog(["migrate", "--db", "nowhere.sqlite"], in: folder.url)
        #expect(missing.status != 0 && !FileManager.default.fileExists(atPath: folder.path("nowhere.sqlite")))
    }
}

/// What a new user trips on (issue 24's list): each refused clearly, or answered as asked.
@Suite struct NewUserCLITests {
    @Test func mistypedNamesAreRefusedWithTheWayOut() throws {
        let folder = try Folder()
        #expect(try gamelog(["simulate", "--games", "3", "--seed", "2", "--clock", "fixed"], in: folder.url).status == 0)
        // export --device: any case, and an unknown device is an error, not an empty export.
        let lower = try gamelog(["export", "--device", "a"], in: folder.url)
        #expect(lower.status == 0 && lower.stdout.split(separator: "\n").count > 50)
        let unknown = try gamelog(["export", "--device", "C"], in: folder.url)
        #expect(unknown.status != 0 && unknown.stderr.contains("the devices are A, B") && unknown.stdout.isEmpty)
        // log --kind with a typo names the kinds and the nearest.
        let kind = try gamelog(["log", "--kind", "callbak"], in: folder.url)
        #expect(kind.status != 0 && kind.stderr.contains("did you mean callback?"), "\(kind.stderr)")
        // A mistyped command is named.
        let command = try gamelog(["gmaes"], in: folder.url)
        #expect(command.status != 0 && command.stderr.contains("Did you mean `gamelog games`?"))
        // A negative count is a number refused, not a missing value.
        let negative = try gamelog(["simulate", "--games", "-1"], in: folder.url)
        #expect(negative.status != 0 && negative.stderr.contains("--games must be at least 1, not -1"))
        // A seed replayed in full plays and writes nothing, and says so.
        let again = try gamelog(["simulate", "--games", "3", "--seed", "2", "--clock", "fixed"], in: folder.url)
        #expect(again.status == 0 && again.stdout.contains("All 3 games of seed 2 were already recorded") && !again.stdout.contains("Played"))
    }

    @Test func serveOnAPortInUseSaysSo() throws {
        let folder = try Folder()
        #expect(try gamelog(["simulate", "--games", "1", "--seed", "2"], in: folder.url).status == 0)
        // Hold a port, then ask the viewer for it.
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(socket >= 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) } }
        #expect(listen(socket, 1) == 0)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
        let port = Int(UInt16(bigEndian: address.sin_port))
        #expect(port > 0)
        let run = try gamelog(["serve", "--port", String(port)], in: folder.url)
        #expect(run.status != 0 && run.stderr.contains("port \(port) on 127.0.0.1 is in use by another program"), "\(run.stderr)")
        // A host that is no address: the option and the way out are named, not the socket library's error.
        let nowhere = try gamelog(["serve", "--port", "0", "--host", "256.1.1.1"], in: folder.url)
        #expect(nowhere.status != 0 && nowhere.stderr.contains("--host 256.1.1.1 is no address or name this machine can resolve"), "\(nowhere.stderr)")
        #expect(!nowhere.stderr.contains("SocketAddressError"), "\(nowhere.stderr)")
    }
}

extension NewUserCLITests {
    /// A time as `log` prints it (microseconds) selects exactly from that event on, or up to it.
    @Test func timesReadBackToTheMicrosecond() throws {
        let folder = try Folder()
        // One true clock for both devices (phones' clocks disagree on a real network, and
        // then a time bound cuts the merged log by each device's own clock).
        #expect(try gamelog(["simulate", "--games", "1", "--seed", "4", "--network", "ideal"], in: folder.url).status == 0)
        let lines = try gamelog(["log"], in: folder.url).stdout.split(separator: "\n")
        var checked = 0, submillisecond = 0
        for line in lines.dropFirst(5).prefix(10) {
            let fields = line.split(separator: " ")
            let (position, time) = (String(fields[0]), String(fields[1]))
            #expect(time.count == 27, "\(time)")
            if !time.hasSuffix("000Z") { submillisecond += 1 } // microseconds from a real clock
            let since = try gamelog(["log", "--since", time], in: folder.url).stdout.split(separator: "\n")
            let until = try gamelog(["log", "--until", time], in: folder.url).stdout.split(separator: "\n")
            #expect(since.first?.split(separator: " ").first.map(String.init) == position, "\(time)")
            #expect(until.last?.split(separator: " ").first.map(String.init) == position, "\(time)")
            checked += 1
        }
        #expect(checked == 10 && submillisecond > 0)
    }
}

extension NewUserCLITests {
    /// A second fork into the same file with the same seed is refused plainly, and leaves the file as it was.
    @Test func aSecondForkWithTheSameSeedIsRefusedAndWritesNothing() throws {
        let folder = try Folder()
        #expect(try gamelog(["simulate", "--game", "tictactoe", "--games", "1", "--seed", "4", "--clock", "fixed"], in: folder.url).status == 0)
        let list = try JSONSerialization.jsonObject(with: Data(try gamelog(["games", "--json"], in: folder.url).stdout.utf8)) as? [[String: Any]]
        let id = try #require(list?.first?["id"] as? String)
        #expect(try gamelog(["fork", String(id.prefix(8)), "--at", "10", "--into", "branch.sqlite"], in: folder.url).status == 0)
        let before = try EventStore(path: folder.path("branch.sqlite"), access: .readOnly).count().events
        let again = try gamelog(["fork", String(id.prefix(8)), "--at", "10", "--into", "branch.sqlite"], in: folder.url)
        #expect(again.status != 0 && again.stderr.contains("already holds a fork made with seed 1"), "\(again.stderr)")
        #expect(try EventStore(path: folder.path("branch.sqlite"), access: .readOnly).count().events == before && before > 0)
        let other = try gamelog(["fork", String(id.prefix(8)), "--at", "10", "--into", "branch.sqlite", "--seed", "2"], in: folder.url)
        #expect(other.status == 0, "\(other.stderr)")
    }
}

extension NewUserCLITests {
    /// Help reads as prose: no line-continuation backslash leaks into it.
    @Test func everyCommandsHelpIsCleanText() throws {
        let folder = try Folder()
        var read = 0
        for command in ["demo", "simulate", "games", "log", "state", "diff", "replay", "export", "import", "index", "migrate", "verify",
                        "rerun", "fork", "serve", "keys", "heads", "bisect", "info", "dictionary"] {
            let help = try gamelog([command, "--help"], in: folder.url)
            #expect(help.status == 0 && help.stdout.contains("USAGE"), "\(command)")
            #expect(!help.stdout.contains("\\"), "\(command): \(help.stdout)")
            read += 1
        }
        #expect(read == 20)
    }
}
