import EventStore
import Foundation
import Crypto
import GRDB
import Testing
import TestSupport

/// Issue 11's flow as a user types it: phones write their own logs, an auditor
/// gets their keys out of band, merges the exports and verifies against the keys.
@Suite(.serialized) struct SignedLogsCLITests {
    @Test func devicesLogsMergeAndVerifyAgainstTheirKeysAndAnEditedLineIsRefused() throws {
        let folder = try Folder()
        let simulate = try gamelog(["simulate", "--per-device", "phones", "--games", "6", "--seed", "3", "--clock", "fixed"],
                                   in: folder.url)
        #expect(simulate.status == 0, "\(simulate.stderr)")
        for device in ["A", "B"] {
            #expect(FileManager.default.fileExists(atPath: folder.path("phones/\(device).sqlite")))
            let keys = try gamelog(["keys", "--json", "--db", "phones/\(device).sqlite"], in: folder.url)
            #expect(keys.status == 0 && keys.stdout.contains("\"device\":\"\(device)\""), "\(keys.stdout)")
            try keys.stdout.write(to: folder.url.appending(path: "\(device).keys.json"), atomically: true, encoding: .utf8)
            let export = try gamelog(["export", "--db", "phones/\(device).sqlite"], in: folder.url)
            #expect(export.status == 0)
            #expect(export.stdout.contains("\"streamHash\":") && export.stdout.contains("{\"head\":"))
            try export.stdout.write(to: folder.url.appending(path: "\(device).jsonl"), atomically: true, encoding: .utf8)
        }
        let imported = try gamelog(["import", "--db", "all.sqlite", "A.jsonl", "B.jsonl"], in: folder.url)
        #expect(imported.status == 0, "\(imported.stderr)")
        let verify = try gamelog(["verify", "--db", "all.sqlite", "--trust", "A.keys.json", "--trust", "B.keys.json"], in: folder.url)
        #expect(verify.status == 0, "\(verify.stdout)")
        #expect(verify.stdout.contains("checked against the trusted keys"))

        // One device's key given as the other's: the signatures no longer vouch.
        let swapped = try gamelog(["verify", "--db", "all.sqlite", "--trust", "A.keys.json"], in: folder.url)
        #expect(swapped.status == 1 && swapped.stdout.contains("untrustedKey"), "\(swapped.stdout)")

        // An export line edited by hand: refused with its line number; nothing stored.
        var lines = try String(contentsOf: folder.url.appending(path: "A.jsonl"), encoding: .utf8).split(separator: "\n").map(String.init)
        let index = try #require(lines.firstIndex { $0.contains("Ship_Location=") })
        lines[index] = lines[index].replacingOccurrences(of: "Ship_Location=", with: "Ship_Location=1")
        try lines.joined(separator: "\n").write(to: folder.url.appending(path: "edited.jsonl"), atomically: true, encoding: .utf8)
        let refused = try gamelog(["import", "--db", "edited.sqlite", "edited.jsonl"], in: folder.url)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("edited.jsonl:\(index + 1) ") && refused.stderr.contains("Nothing was imported"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("edited.sqlite")))
    }
}

/// Issue 12's fork as a user types it.
@Suite(.serialized) struct ForkCLITests {
    @Test func aTicTacToeForkAtStepTenWithAnotherMoveVerifiesRerunsAndShowsItsOrigin() throws {
        let folder = try Folder()
        #expect(try gamelog(["demo", "--fixed-clock"], in: folder.url).status == 0)
        let games = try gamelog(["games", "--json"], in: folder.url)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(games.stdout.utf8)) as? [[String: Any]])
        let tictactoe = try #require(list.first { $0["kind"] as? String == "tictactoe" }?["id"] as? String)
        let before = try Data(contentsOf: folder.url.appending(path: "gamelog.sqlite"))
        // At step 10 Alice has the board open and has not moved: she takes a corner instead of the centre.
        let moves = ["A touch cell 0", "A send", "B open", "B deliver", "B tap-latest", "B touch cell 4", "B send",
                     "A deliver", "A tap-latest", "A touch cell 1", "A send", "B deliver", "B tap-latest", "B touch cell 8", "B send",
                     "A deliver", "A tap-latest", "A touch cell 2", "A send", "B deliver", "B tap-latest", "B dismiss"]
        try moves.joined(separator: "\n").write(to: folder.url.appending(path: "moves.txt"), atomically: true, encoding: .utf8)
        let fork = try gamelog(["fork", String(tictactoe.prefix(8)), "--at", "10", "--into", "fork.sqlite", "--input", "moves.txt"],
                               in: folder.url)
        #expect(fork.status == 0, "\(fork.stderr)")
        #expect(try Data(contentsOf: folder.url.appending(path: "gamelog.sqlite")) == before) // the source is only read
        #expect(try gamelog(["verify", "--db", "fork.sqlite"], in: folder.url).status == 0)
        let rerun = try gamelog(["rerun", "--db", "fork.sqlite"], in: folder.url)
        #expect(rerun.status == 0 && rerun.stdout.contains("0 diverged"), "\(rerun.stdout)")
        let forked = try gamelog(["games", "--db", "fork.sqlite"], in: folder.url)
        #expect(forked.stdout.contains("fork of \(tictactoe.prefix(8)) at step 10") && forked.stdout.contains("X (Alice) won"), "\(forked.stdout)")
        let id = try #require(forked.stdout.split(separator: "\n").dropFirst().first?.split(separator: " ").first.map(String.init)) // under the header
        let state = try gamelog(["replay", id, "--db", "fork.sqlite", "--step", "12"], in: folder.url)
        #expect(state.stdout.contains("fork of \(tictactoe.prefix(8)) at its step 10") && state.stdout.contains("this step is the branch"),
                "\(state.stdout)")
        // The corner move is the branch's: the source's first move was the centre.
        let final = try gamelog(["state", id, "--db", "fork.sqlite"], in: folder.url)
        #expect(final.stdout.contains(" X │ X │ X"))
        // The source under any other name: itself, a symbolic link, a hard link, a path through `..`.
        try FileManager.default.createSymbolicLink(atPath: folder.path("link.sqlite"), withDestinationPath: folder.path("gamelog.sqlite"))
        try FileManager.default.linkItem(atPath: folder.path("gamelog.sqlite"), toPath: folder.path("hard.sqlite"))
        try FileManager.default.createDirectory(atPath: folder.path("sub"), withIntermediateDirectories: true)
        let source = try Data(contentsOf: URL(fileURLWithPath: folder.path("gamelog.sqlite")))
        var refused = 0
        for target in ["gamelog.sqlite", "link.sqlite", "hard.sqlite", "sub/../gamelog.sqlite", "./sub/../link.sqlite"] {
            let bad = try gamelog(["fork", String(tictactoe.prefix(8)), "--at", "10", "--into", target], in: folder.url)
            #expect(bad.status != 0 && bad.stderr.contains("never writes its source"), "\(target): \(bad.stderr)")
            refused += 1
        }
        #expect(refused == 5)
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.path("gamelog.sqlite"))) == source)
    }
}

/// The tamper corpus as an auditor meets it: `gamelog verify --json` on each log with one
/// injected fault names that fault at its position and exits 1; the clean log passes.
@Suite(.serialized) struct TamperCorpusCLITests {
    @Test func verifyReportsEveryInjectedFaultAtItsPosition() throws {
        let folder = try Folder()
        // The hostile network: phones' clocks minutes apart, lost and doubled messages; each
        // fault is still found, and nothing the network did is called one.
        let simulate = try gamelog(["simulate", "--games", "12", "--seed", "77", "--clock", "fixed", "--noise", "0.2",
                                    "--network", "hostile", "--db", "clean.sqlite"], in: folder.url)
        #expect(simulate.status == 0, "\(simulate.stderr)")
        #expect(try gamelog(["verify", "--db", "clean.sqlite"], in: folder.url).status == 0)
        let clean = try EventStore(path: folder.path("clean.sqlite"), access: .readOnly)
        var checked = 0
        for fault in TamperKit.Fault.allCases {
            let tampered = try TamperKit.make(fault, from: clean, to: folder.path("\(fault.rawValue).sqlite"))
            let run = try gamelog(["verify", "--json", "--db", "\(fault.rawValue).sqlite"], in: folder.url)
            #expect(run.status == 1, "\(fault.rawValue): exit \(run.status)")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            let findings = try #require(report["findings"] as? [[String: Any]])
            let hit = findings.first { ($0["position"] as? Int).map(Int64.init) == tampered.position && $0["check"] as? String == tampered.check }
            #expect(hit != nil, "\(fault.rawValue) not reported at \(tampered.position): \(findings.prefix(3))")
            checked += 1
        }
        #expect(checked == TamperKit.Fault.allCases.count && checked > 0)
    }
}

/// A log written by the previous version (schema 5, version 1 payloads, no catalog;
/// Tests/Fixtures/v1-log): today's gamelog reads it without a migration and says what
/// the previous version said, byte for byte, leaving the file as it was; once migrated,
/// new compact events join the old ones in one log that verifies.
@Suite(.serialized) struct PreviousVersionLogTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Fixtures/v1-log")

    func sha256(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    func fixture(_ name: String) throws -> String {
        try String(contentsOf: Self.fixture.appending(path: name), encoding: .utf8)
    }

    @Test func itReadsReplaysVerifiesAndExportsAsThePreviousVersionDid() throws {
        let folder = try Folder()
        try FileManager.default.copyItem(at: Self.fixture.appending(path: "log.sqlite"), to: folder.url.appending(path: "old.sqlite"))
        let before = try Data(contentsOf: folder.url.appending(path: "old.sqlite"))
        // One deliberate difference (issue 24, item 6): a game's `events` is now its own
        // events, as `log --game` lists them (it was the span from its first message to its
        // last), and `state` shows that count per game. Everything else is byte for byte,
        // and each count is held to `log --game` on this very log.
        func withoutGameEventCounts(_ text: String) -> String { text.replacing(/"events": ?\d+,/, with: "") }
        let games = try gamelog(["games", "--json", "--db", "old.sqlite"], in: folder.url)
        let expectedGames = try fixture("games.json")
        #expect(games.status == 0 && withoutGameEventCounts(games.stdout) == withoutGameEventCounts(expectedGames), "\(games.stderr)")
        let list = try #require(try JSONSerialization.jsonObject(with: Data(games.stdout.utf8)) as? [[String: Any]])
        let first = try #require(list.first?["id"] as? String)
        #expect(list.count == 4)
        for game in list {
            let id = try #require(game["id"] as? String), events = try #require(game["events"] as? Int)
            let listed = try gamelog(["log", "--game", id, "--json", "--db", "old.sqlite"], in: folder.url)
            #expect(listed.status == 0 && listed.stdout.split(separator: "\n").count == events, "\(id): \(events)")
        }
        let state = try gamelog(["state", first, "--json", "--db", "old.sqlite"], in: folder.url)
        let expectedState = try fixture("state.json")
        #expect(state.status == 0 && withoutGameEventCounts(state.stdout) == expectedState)
        #expect(state.stdout.contains("\"events\":\(try #require(list.first?["events"] as? Int)),"))
        let export = try gamelog(["export", "--db", "old.sqlite"], in: folder.url)
        let exportHash = try fixture("export.sha256")
        #expect(export.status == 0 && sha256(export.stdout) + "\n" == exportHash)
        let log = try gamelog(["log", "--json", "--db", "old.sqlite"], in: folder.url)
        let logHash = try fixture("log-json.sha256")
        #expect(log.status == 0 && sha256(log.stdout) + "\n" == logHash)
        let verify = try gamelog(["verify", "--db", "old.sqlite"], in: folder.url)
        #expect(verify.status == 0 && verify.stdout.contains("ok: 596 events checked"), "\(verify.stdout)")
        #expect(try gamelog(["rerun", "--db", "old.sqlite"], in: folder.url).status == 0)
        let info = try gamelog(["info", "--db", "old.sqlite"], in: folder.url)
        #expect(info.stdout.contains("game catalog:   none (a log from before the catalog"), "\(info.stdout)")
        #expect(info.stdout.contains("storage:        596 as rows (written before blocks; `gamelog migrate` moves them into blocks)"), "\(info.stdout)")
        #expect(try Data(contentsOf: folder.url.appending(path: "old.sqlite")) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted() == ["old.sqlite"])

        // Migrated, it takes new (compact) events beside its old ones.
        let migrate = try gamelog(["migrate", "--db", "old.sqlite"], in: folder.url)
        #expect(migrate.status == 0 && migrate.stdout.contains("filled the game catalog"), "\(migrate.stdout)")
        // Its events moved into blocks: no row left, and the same log, byte for byte, to
        // everything that reads it.
        #expect(migrate.stdout.contains("moved 596 events into blocks; the file went from"), "\(migrate.stdout)")
        #expect(try Data(contentsOf: folder.url.appending(path: "old.sqlite")).count < before.count)
        #expect(try EventStore(path: folder.path("old.sqlite"), access: .readOnly).storedAsRows() == 0)
        let exportAfter = try gamelog(["export", "--db", "old.sqlite"], in: folder.url)
        #expect(exportAfter.status == 0 && sha256(exportAfter.stdout) + "\n" == exportHash)
        let logAfter = try gamelog(["log", "--json", "--db", "old.sqlite"], in: folder.url)
        #expect(logAfter.status == 0 && sha256(logAfter.stdout) + "\n" == logHash)
        let verifyAfter = try gamelog(["verify", "--db", "old.sqlite"], in: folder.url)
        #expect(verifyAfter.status == 0 && verifyAfter.stdout.contains("ok: 596 events checked"), "\(verifyAfter.stdout)")
        #expect(try gamelog(["migrate", "--db", "old.sqlite"], in: folder.url).stdout.contains("moved") == false)
        let filled = try gamelog(["info", "--db", "old.sqlite"], in: folder.url)
        #expect(filled.stdout.contains("game catalog:   complete, 4 games"), "\(filled.stdout)")
        #expect(filled.stdout.contains("storage:        596 events in 10 blocks\n"), "\(filled.stdout)")
        let infoJSON = try gamelog(["info", "--json", "--db", "old.sqlite"], in: folder.url)
        #expect(infoJSON.stdout.contains(#""rowEvents":0"#) && infoJSON.stdout.contains(#""blockEvents":596"#), "\(infoJSON.stdout)")
        // A catalog that stops short is named as such, with the way to fill it.
        let copyPath = folder.path("short.sqlite")
        try FileManager.default.copyItem(atPath: folder.path("old.sqlite"), toPath: copyPath)
        try DatabaseQueue(path: copyPath).write { try $0.execute(sql: "UPDATE catalog_coverage SET through = 100") }
        let short = try gamelog(["info", "--db", "short.sqlite"], in: folder.url)
        #expect(short.stdout.contains("covers positions 1-100 of 596 (commands scan; `gamelog index` fills the rest)"), "\(short.stdout)")
        #expect(try gamelog(["index", "--db", "short.sqlite"], in: folder.url).status == 0)
        #expect(try gamelog(["info", "--db", "short.sqlite"], in: folder.url).stdout.contains("complete, 4 games"))
        let more = try gamelog(["simulate", "--games", "3", "--seed", "9", "--clock", "fixed", "--db", "old.sqlite"], in: folder.url)
        #expect(more.status == 0, "\(more.stderr)")
        var counts: [Int: Int] = [:]
        try EventStore(path: folder.path("old.sqlite"), access: .readOnly).scan { counts[$0.typeVersion, default: 0] += 1 }
        let versions = counts.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        #expect(versions.count == 2 && versions.allSatisfy { $0.1 > 100 }, "\(versions)")
        #expect(try gamelog(["verify", "--db", "old.sqlite"], in: folder.url).status == 0)
        let mixed = try gamelog(["games", "--all", "--json", "--db", "old.sqlite"], in: folder.url)
        let all = try #require(try JSONSerialization.jsonObject(with: Data(mixed.stdout.utf8)) as? [[String: Any]])
        #expect(all.count > 4 && all.prefix(4).map { $0["id"] as? String } == list.map { $0["id"] as? String })
        // Exported and imported elsewhere, both kinds of payload arrive and verify.
        let again = try gamelog(["export", "--db", "old.sqlite"], in: folder.url)
        try again.stdout.write(to: folder.url.appending(path: "all.jsonl"), atomically: true, encoding: .utf8)
        #expect(try gamelog(["import", "--db", "copy.sqlite", "all.jsonl"], in: folder.url).status == 0)
        #expect(try gamelog(["verify", "--db", "copy.sqlite"], in: folder.url).status == 0)
        let copied = try gamelog(["games", "--all", "--json", "--db", "copy.sqlite"], in: folder.url)
        let copiedGames = try #require(try JSONSerialization.jsonObject(with: Data(copied.stdout.utf8)) as? [[String: Any]])
        // The same games, ended the same way (an import orders events by time, so positions may differ).
        func outline(_ games: [[String: Any]]) -> [String] {
            games.map { "\($0["id"] ?? "") \($0["kind"] ?? "") \($0["status"] ?? "") \($0["result"] ?? "") \($0["events"] ?? "")" }.sorted()
        }
        #expect(outline(copiedGames) == outline(all))
    }
}

/// Keys and heads as a user types them.
@Suite(.serialized) struct KeysAndHeadsCLITests {
    @Test func keysNewWritesAKeyOnlyItsOwnerReadsAndNeverOverwritesIt() throws {
        let folder = try Folder()
        let made = try gamelog(["keys", "new", "--device", "A", "--out", "A.key", "--json"], in: folder.url)
        #expect(made.status == 0, "\(made.stderr)")
        let mode = try FileManager.default.attributesOfItem(atPath: folder.path("A.key"))[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let entry = try #require((try JSONSerialization.jsonObject(with: Data(made.stdout.utf8)) as? [[String: Any]])?.first)
        #expect(entry["device"] as? String == "A" && (entry["publicKey"] as? String)?.count == 64)
        let again = try gamelog(["keys", "new", "--device", "A", "--out", "A.key"], in: folder.url)
        #expect(again.status != 0 && again.stderr.contains("never overwritten"))
        let bad = try gamelog(["keys", "new", "--device", "A\u{1B}[2K", "--out", "B.key"], in: folder.url)
        #expect(bad.status != 0 && bad.stderr.contains("control characters"))
        // The keys folder a recording uses: the key made there signs the log.
        #expect(try gamelog(["keys", "new", "--device", "B", "--keys", "mine"], in: folder.url).status == 0)
        #expect(try gamelog(["simulate", "--games", "1", "--keys", "mine", "--db", "log.sqlite"], in: folder.url).status == 0)
        let keys = try gamelog(["keys", "--json", "--db", "log.sqlite"], in: folder.url).stdout
        let minted = try KeyFile.read(folder.path("mine/B.key"))
        #expect(keys.contains(minted.publicKey.map { String(format: "%02x", $0) }.joined()))
        // Never in the log's own folder.
        let beside = try gamelog(["simulate", "--games", "1", "--keys", ".", "--db", "log.sqlite"], in: folder.url)
        #expect(beside.status != 0 && beside.stderr.contains("the log's own folder"))
    }

    @Test func verifyWithKnownHeadsCatchesARollbackAndTrustCatchesStrippedSignatures() throws {
        let folder = try Folder()
        #expect(try gamelog(["simulate", "--games", "2", "--seed", "4", "--db", "phone.sqlite"], in: folder.url).status == 0)
        try FileManager.default.copyItem(atPath: folder.path("phone.sqlite"), toPath: folder.path("backup.sqlite"))
        #expect(try gamelog(["simulate", "--games", "4", "--seed", "4", "--db", "phone.sqlite"], in: folder.url).status == 0)
        let heads = try gamelog(["heads", "--json", "--db", "phone.sqlite"], in: folder.url)
        #expect(heads.status == 0 && heads.stdout.contains("\"note\":\"gamelog/A/"))
        try heads.stdout.write(to: folder.url.appending(path: "heads.json"), atomically: true, encoding: .utf8)
        let keys = try gamelog(["keys", "--json", "--db", "phone.sqlite"], in: folder.url)
        try keys.stdout.write(to: folder.url.appending(path: "keys.json"), atomically: true, encoding: .utf8)
        // The phone reaches its heads; the backup is behind them.
        #expect(try gamelog(["verify", "--no-rerun", "--db", "phone.sqlite", "--trust", "keys.json", "--heads", "heads.json"], in: folder.url).status == 0)
        let alone = try gamelog(["verify", "--no-rerun", "--db", "backup.sqlite", "--trust", "keys.json"], in: folder.url)
        #expect(alone.status == 0, "\(alone.stdout)")
        let behind = try gamelog(["verify", "--no-rerun", "--db", "backup.sqlite", "--trust", "keys.json", "--heads", "heads.json"], in: folder.url)
        #expect(behind.status == 1 && behind.stdout.contains("rolledBack"), "\(behind.stdout)")
        // Every head deleted: under --trust an error; without it a warning, after a line saying whose keys were used.
        try DatabaseQueue(path: folder.path("backup.sqlite")).writeWithoutTransaction { try $0.execute(sql: "DELETE FROM tree_heads") }
        let stripped = try gamelog(["verify", "--no-rerun", "--db", "backup.sqlite", "--trust", "keys.json"], in: folder.url)
        #expect(stripped.status == 1 && stripped.stdout.contains("unsignedTail"))
        let loose = try gamelog(["verify", "--no-rerun", "--db", "backup.sqlite"], in: folder.url)
        #expect(loose.status == 0 && loose.stdout.hasPrefix("note: no --trust given"), "\(loose.stdout)")
        // An export stripped of its heads imports, and says its events are unsigned.
        let export = try gamelog(["export", "--db", "phone.sqlite"], in: folder.url).stdout
        let stripped2 = export.split(separator: "\n").filter { !$0.hasPrefix(#"{"head":"#) }.joined(separator: "\n")
        try stripped2.write(to: folder.url.appending(path: "stripped.jsonl"), atomically: true, encoding: .utf8)
        let imported = try gamelog(["import", "--db", "stripped.sqlite", "stripped.jsonl"], in: folder.url)
        #expect(imported.status == 0 && imported.stderr.contains("carry no signature"), "\(imported.stderr)")
    }
}

/// Issue 36, item 4: a trust file carries what the auditor knows of a key.
@Suite(.serialized) struct TrustFileCLITests {
    @Test func aTrustFileNamingATestKeyIsRefused() throws {
        let folder = try Folder()
        #expect(try gamelog(["demo", "--fixed-clock", "--insecure-test-keys"], in: folder.url).status == 0)
        let keys = try gamelog(["keys", "--json"], in: folder.url)
        #expect(keys.status == 0 && keys.stdout.contains("\"testKey\":true"), "\(keys.stdout)")
        try keys.stdout.write(to: folder.url.appending(path: "keys.json"), atomically: true, encoding: .utf8)
        let marked = try gamelog(["verify", "--trust", "keys.json"], in: folder.url)
        #expect(marked.status != 0 && marked.stderr.contains("as a test key"), "\(marked.stderr)")
        // The mark taken out of the file: the key is still one anyone can compute.
        let stripped = keys.stdout.replacingOccurrences(of: "\"testKey\":true", with: "\"testKey\":false")
        try stripped.write(to: folder.url.appending(path: "stripped.json"), atomically: true, encoding: .utf8)
        let unmarked = try gamelog(["verify", "--trust", "stripped.json"], in: folder.url)
        #expect(unmarked.status != 0 && unmarked.stderr.contains("is a test key"), "\(unmarked.stderr)")
    }
}

/// Issue 41, item 13: a collector that is not there is said at once.
@Suite struct RefusedCollectorCLITests {
    @Test func aCollectorThatIsDownIsSaidAtOnce() throws {
        let folder = try Folder()
        #expect(try gamelog(["demo", "--fixed-clock", "--insecure-test-keys"], in: folder.url).status == 0)
        #expect(try gamelog(["keys", "new", "--device", "A", "--out", "A.key"], in: folder.url).status == 0)
        var checked = 0
        for arguments in [["push", "--to", "http://127.0.0.1:9"], ["verify", "--no-rerun", "--heads", "http://127.0.0.1:9"],
                          ["keys", "enroll", "--to", "http://127.0.0.1:9", "--device", "A", "--public-key", "A.key", "--admin-token", "A.key"]] {
            let started = Date()
            let run = try ChildProcess.run(try gamelogPath(), arguments, in: folder.url.path, environment: ["GAMELOG_KEYS": folder.path("keys")], atMost: 30)
            #expect(run.status != 0)
            #expect(Date().timeIntervalSince(started) < 20, "\(arguments[0]) waited \(Date().timeIntervalSince(started)) s")
            #expect(run.stderr.contains("connection refused"), "\(arguments[0]): \(run.stderr)")
            checked += 1
        }
        #expect(checked == 3)
    }
}

/// Issue 41, item 16: a fork refuses a move the game's screen does not offer, and a
/// missing script says why.
@Suite(.serialized) struct ForkRefusalCLITests {
    @Test func aTouchTheScreenDoesNotOfferIsRefusedAndAMissingScriptIsNamed() throws {
        let folder = try Folder()
        #expect(try gamelog(["demo", "--fixed-clock"], in: folder.url).status == 0)
        let games = try gamelog(["games", "--json"], in: folder.url)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(games.stdout.utf8)) as? [[String: Any]])
        let tictactoe = String(try #require(list.first { $0["kind"] as? String == "tictactoe" }?["id"] as? String).prefix(8))
        try "A touch cell 42\n".write(to: folder.url.appending(path: "bad.txt"), atomically: true, encoding: .utf8)
        let refused = try gamelog(["fork", tictactoe, "--at", "10", "--into", "bad.sqlite", "--input", "bad.txt"], in: folder.url)
        #expect(refused.status != 0 && refused.stderr.contains("bad.txt:1") && refused.stderr.contains("cells 0 to 8"), "\(refused.stderr)")
        try "A touch button Launch rockets\n".write(to: folder.url.appending(path: "button.txt"), atomically: true, encoding: .utf8)
        let button = try gamelog(["fork", tictactoe, "--at", "10", "--into", "button.sqlite", "--input", "button.txt"], in: folder.url)
        #expect(button.status != 0 && button.stderr.contains("button.txt:1"), "\(button.stderr)")
        let missing = try gamelog(["fork", tictactoe, "--at", "10", "--into", "missing.sqlite", "--input", "nowhere.txt"], in: folder.url)
        #expect(missing.status != 0 && missing.stderr.contains("nowhere.txt") && missing.stderr.contains("No such file"), "\(missing.stderr)")
    }
}

/// Issue 41, item 15: the frictions a new user met in help and errors.
@Suite struct HelpAndErrorsCLITests {
    @Test func helpErrorsAndCountsReadAsAPersonExpects() throws {
        let folder = try Folder()
        let version = try gamelog(["--version"], in: folder.url)
        #expect(version.status == 0 && version.stdout.range(of: #"^\d+\.\d+\.\d+\n$"#, options: .regularExpression) != nil, "\(version.stdout)")
        // One default for --db, not two.
        let help = try gamelog(["info", "--help"], in: folder.url)
        #expect(help.stdout.components(separatedBy: "default:").count == 2, "\(help.stdout)")
        // A negative seed is named as such, not as a missing value.
        let seed = try gamelog(["simulate", "--seed", "-5", "--games", "1"], in: folder.url)
        #expect(seed.status != 0 && seed.stderr.contains("--seed -5: a negative number"), "\(seed.stderr)")
        // A 100,000-character id is not repeated in full.
        #expect(try gamelog(["demo", "--fixed-clock"], in: folder.url).status == 0)
        let long = try gamelog(["state", String(repeating: "a", count: 100_000)], in: folder.url)
        #expect(long.status != 0 && long.stderr.utf8.count < 2_000 && long.stderr.contains("(100"), "\(long.stderr.prefix(500))")
        // Counts agree with their nouns; known heads reached are said.
        let heads = try gamelog(["heads", "--json"], in: folder.url)
        try heads.stdout.write(toFile: folder.path("h.json"), atomically: true, encoding: .utf8)
        let verify = try gamelog(["verify", "--no-rerun", "--heads", "h.json"], in: folder.url)
        #expect(verify.status == 0 && verify.stdout.contains("heads: the log reaches 2 known heads"), "\(verify.stdout)")
        #expect(!verify.stdout.contains("1 warnings") && !verify.stdout.contains(" 1 errors"))
        let played = try gamelog(["simulate", "--games", "1", "--seed", "9", "--db", "one.sqlite"], in: folder.url)
        #expect(played.stdout.contains("Played 1 game "), "\(played.stdout)")
    }
}
