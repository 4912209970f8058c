import EventStore
import Foundation
import GRDB
import MessagesModel
import Testing
import TestSupport

/// The path of a product built beside the tests.
func builtProduct(_ name: String) -> String {
    URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appending(path: name).path
}

/// Starts StressAppender (built beside the tests).
func startAppender(_ arguments: [String]) throws -> ChildProcess {
    try ChildProcess(builtProduct("StressAppender"), arguments)
}

/// The event ids StressAppender gives its `index`-th event with `seed`.
func appenderEventID(seed: UInt64, index: Int) -> UUID {
    var generator = SeededGenerator(seed: seed &* 1_000_003 &+ UInt64(index))
    return generator.uuid()
}

/// (first, last) index pairs of every ACK line, and the number of CONFLICT lines.
func acknowledged(_ output: String) -> (ranges: [ClosedRange<Int>], conflicts: Int) {
    var ranges: [ClosedRange<Int>] = [], conflicts = 0
    for line in output.split(separator: "\n") {
        let parts = line.split(separator: " ")
        if parts.first == "ACK", parts.count == 4, let a = Int(parts[2]), let b = Int(parts[3]) { ranges.append(a...b) }
        if parts.first == "CONFLICT" { conflicts += 1 }
    }
    return (ranges, conflicts)
}

@Suite(.serialized) struct ReliabilityTests {
    @Test func killedAppendersLoseNoAcknowledgedEvent() throws {
        let folder = try Folder()
        let path = folder.path("crash.sqlite")
        var generator = SeededGenerator(seed: 2026)
        var acked = Set<Int>()
        for round in 0..<20 {
            let appender = try startAppender([path, "9", "10000000", "25"])
            Thread.sleep(forTimeInterval: Double(50 + Int(generator.next() % 250)) / 1000)
            appender.send(SIGKILL)
            let result = appender.wait(atMost: 60)
            #expect(result.termination == .signaled(SIGKILL), "round \(round): the appender \(result.termination)")
            for range in acknowledged(result.stdout).ranges { acked.formUnion(range) }

            // The file opens, SQLite finds it sound, the chain holds, and every
            // acknowledged event is there.
            let store = try EventStore(path: path)
            let check = try DatabaseQueue(path: path).read { try String.fetchOne($0, sql: "PRAGMA integrity_check") }
            #expect(check == "ok", "round \(round)")
            #expect(try store.verifyIntegrity().isSound, "round \(round)")
            let stored = Set(try store.events(verify: false).map(\.id))
            let missing = acked.filter { !stored.contains(appenderEventID(seed: 9, index: $0)) }
            #expect(missing.isEmpty, "round \(round): \(missing.count) acknowledged events lost")
        }
        #expect(acked.count > 100)
        // The appender's events are of a kind no registered game plays: their rules are not
        // checked, which verify says with exit 2 unless told that is expected.
        let verify = try gamelog(["verify", "--allow-unchecked", "--db", path], in: folder.url)
        #expect(verify.status == 0, "\(verify.stdout)")
    }

    @Test func fourAppendersOnOneFileStoreEverythingGapless() throws {
        let folder = try Folder()
        let path = folder.path("contended.sqlite")
        _ = try EventStore(path: path) // created before the race
        let shared = UUID()
        let runs = try (1...4).map { n in try startAppender([path, String(100 + n), "10000", "100", shared.uuidString]) }
        var totalAcked = 0, conflicts = 0
        for appender in runs {
            let run = appender.wait(atMost: 900)
            #expect(run.termination == .exited(0), "\(run.termination)")
            #expect(run.stdout.contains("DONE 10000"))
            let result = acknowledged(run.stdout)
            totalAcked += result.ranges.reduce(0) { $0 + $1.count }
            conflicts += result.conflicts
        }
        #expect(totalAcked == 40_000)
        let store = try EventStore(path: path, access: .readOnly)
        let (count, last) = try store.count()
        #expect(count == 40_004 && last == 40_004) // 4 recording starts + 40,000 taps, positions gapless
        let report = try store.verifyIntegrity()
        #expect(report.isSound, "\(report.problems.prefix(3))")
        #expect(try store.streamVersion(shared) == 20_000)
        // Conflicts on the shared stream were reported to their callers and retried.
        #expect(conflicts > 0)
        var seen: Set<String> = [], duplicates = 0, read = 0
        try store.scan(verify: false) { event in
            read += 1
            if !seen.insert("\(event.stream) \(event.streamVersion)").inserted { duplicates += 1 }
        }
        #expect(read > 20_000 && duplicates == 0)
    }
}

/// Issue 41, item 10: two writers that create one new log at once.
@Suite(.serialized) struct TwoCreatorsTests {
    @Test func twoSimulationsCreatingOneFileLeaveOneSoundLog() throws {
        let folder = try Folder()
        var checked = 0
        for attempt in 0..<4 {
            let name = "both-\(attempt).sqlite"
            let one = try ChildProcess(try gamelogPath(), ["simulate", "--db", name, "--games", "4", "--seed", "5", "--insecure-test-keys"],
                                       in: folder.url.path)
            let two = try ChildProcess(try gamelogPath(), ["simulate", "--db", name, "--games", "4", "--seed", "6", "--insecure-test-keys"],
                                       in: folder.url.path)
            let (a, b) = (one.wait(atMost: 300), two.wait(atMost: 300))
            #expect(a.status == 0 && b.status == 0, "\(a.stderr) \(b.stderr)")
            let verify = try gamelog(["verify", "--no-rerun", "--db", name], in: folder.url)
            #expect(verify.status == 0, "\(verify.stdout.suffix(600)) \(verify.stderr)")
            let rows = try DatabaseQueue(path: folder.path(name)).read { db in
                (try Int64.fetchOne(db, sql: "SELECT max(position) FROM events"), try Int64.fetchOne(db, sql: "SELECT min(first_position) FROM event_blocks"))
            }
            #expect(rows.0 == nil, "rows \(String(describing: rows.0)) beside blocks from \(String(describing: rows.1))")
            checked += 1
        }
        #expect(checked == 4)
    }

    /// A file two writers made before this was fixed (`../shared/fixtures`): every reading
    /// command names the damage and exits non-zero, none crashes.
    @Test func aFileWithPositionsStoredTwiceIsDamageForEveryReader() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let fixture = root.deletingLastPathComponent().appending(path: "shared/fixtures/overlapping-rows-and-blocks.sqlite.gz").path
        try #require(FileManager.default.fileExists(atPath: fixture), "the fixture is in ../shared/fixtures beside the clone")
        let folder = try Folder()
        let unzip = try ChildProcess.run("/bin/sh", ["-c", "gunzip -c '\(fixture)' > '\(folder.path("two.sqlite"))'"])
        #expect(unzip.status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: folder.path("two.sqlite")))
        var commands = 0
        for command in [["info"], ["games"], ["log", "--limit", "3"], ["verify"], ["export"], ["keys"], ["heads"], ["state", "0"]] {
            let run = try gamelog(command + ["--db", "two.sqlite"], in: folder.url)
            #expect(run.status == 1 || run.status == 64, "\(command): \(run.status) \(run.stderr)")
            #expect(run.stderr.contains("stored both as rows and in blocks"), "\(command): \(run.stderr)")
            commands += 1
        }
        #expect(commands == 8)
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.path("two.sqlite"))) == before)
    }
}

/// Issue 41, item 11: `verify` while a writer appends judges the log as it stood, with no false alarm.
@Suite(.serialized) struct VerifyWhileAppendingTests {
    @Test func verifyDuringAppendsFindsNothingWrong() throws {
        let folder = try Folder()
        #expect(try gamelog(["simulate", "--db", "live.sqlite", "--games", "10", "--seed", "3", "--insecure-test-keys"], in: folder.url).status == 0)
        let writer = try ChildProcess(try gamelogPath(), ["simulate", "--db", "live.sqlite", "--games", "400", "--seed", "4", "--insecure-test-keys"],
                                      in: folder.url.path)
        defer { writer.send(SIGKILL); _ = writer.wait(atMost: 30) }
        var verified = 0
        for _ in 0..<3 {
            let verify = try gamelog(["verify", "--no-rerun", "--db", "live.sqlite"], in: folder.url)
            #expect(verify.status == 0, "\(verify.stdout.split(separator: "\n").filter { $0.hasPrefix("error") }.prefix(5))")
            verified += 1
        }
        #expect(verified == 3)
    }
}

/// Issue 41, item 14: `log --limit N` reads as far as it lists.
@Suite struct LogLimitTests {
    @Test func logWithALimitStopsReadingWhereItStopsListing() throws {
        let folder = try Folder()
        #expect(try gamelog(["demo", "--fixed-clock"], in: folder.url).status == 0)
        let last = try EventStore(path: folder.path("gamelog.sqlite"), access: .readOnly).lastPosition()
        try BlockSurgery.garble(folder.path("gamelog.sqlite"), position: last - 1)
        // The whole listing meets the damage; the first three events do not reach it.
        let all = try gamelog(["log"], in: folder.url)
        #expect(all.status == 1 && all.stdout.contains("damaged"))
        let three = try gamelog(["log", "--limit", "3"], in: folder.url)
        #expect(three.status == 0 && three.stdout.split(separator: "\n").count == 3 && !three.stdout.contains("damaged"), "\(three.stdout) \(three.stderr)")
    }
}

/// Issue 39, item 8: HEAD says the length GET sends, and every answer carries the security headers.
@Suite(.serialized) struct ViewerEdgesCLITests {
    @Test func headHasTheRealLengthAndEveryAnswerTheSecurityHeaders() throws {
        let folder = try Folder()
        #expect(try gamelog(["demo", "--fixed-clock"], in: folder.url).status == 0)
        let port = 20_000 + Int.random(in: 0..<20_000)
        let server = try ChildProcess(try gamelogPath(), ["serve", "--port", "\(port)"], in: folder.url.path)
        defer { server.send(SIGKILL); _ = server.wait(atMost: 10) }
        let base = "http://127.0.0.1:\(port)"
        var up = false
        for _ in 0..<200 where !up {
            up = (try? ChildProcess.run("curl", ["-sf", "-o", "/dev/null", base + "/games"]).status) == 0
            if !up { usleep(50_000) }
        }
        try #require(up, "the viewer did not start: \(server.outputSoFar)")
        var checked = 0
        for path in ["/games", "/assets/nowhere.js", "/games/zzzzzzzz", "/api/games"] {
            // The list fills in as the background audit goes: HEAD is compared with a GET
            // made while the page stood still (the same before and after the HEAD).
            var head = "", get = ""
            for _ in 0..<100 {
                let before = try ChildProcess.run("curl", ["-s", base + path]).stdout
                head = try ChildProcess.run("curl", ["-sI", base + path]).stdout.lowercased()
                get = try ChildProcess.run("curl", ["-s", base + path]).stdout
                if before == get { break }
                usleep(100_000)
            }
            #expect(head.contains("content-security-policy:") && head.contains("x-content-type-options: nosniff"), "\(path): \(head)")
            let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }.map { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) }
            #expect(length == get.utf8.count, "\(path): HEAD says \(String(describing: length)), GET sent \(get.utf8.count)")
            checked += 1
        }
        #expect(checked == 4)
    }

    /// `serve --host 0.0.0.0` is reachable from the network by any of the machine's names,
    /// with the reader token it prints, and by nobody without it.
    @Test func aViewerOnEveryAddressAnswersItsTokenFromAnyName() throws {
        let folder = try Folder()
        #expect(try gamelog(["demo", "--fixed-clock"], in: folder.url).status == 0)
        let port = 20_000 + Int.random(in: 0..<20_000)
        let server = try ChildProcess(try gamelogPath(), ["serve", "--host", "0.0.0.0", "--port", "\(port)"], in: folder.url.path)
        defer { server.send(SIGKILL); _ = server.wait(atMost: 10) }
        var token = ""
        for _ in 0..<200 where token.isEmpty {
            if let found = server.outputSoFar.range(of: #"(?<=any user name\): )[0-9a-f]{64}"#, options: .regularExpression) { token = String(server.outputSoFar[found]) }
            else { usleep(50_000) }
        }
        try #require(!token.isEmpty, "no token printed: \(server.outputSoFar)")
        // 127.0.0.2 stands for another name of this machine (the Host header names it).
        let other = "http://127.0.0.2:\(port)/games"
        let without = try ChildProcess.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", other]).stdout
        let wrong = try ChildProcess.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-u", "x:\(String(repeating: "0", count: 64))", other]).stdout
        let with = try ChildProcess.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-u", "x:\(token)", other]).stdout
        #expect(without == "401" && wrong == "401" && with == "200", "\(without) \(wrong) \(with)")
    }
}

/// Issue 39, item 5: `log --follow` shows a growing log's new events as they are appended.
@Suite(.serialized) struct LogFollowTests {
    @Test func logFollowListsWhatIsAppendedAfterIt() throws {
        let folder = try Folder()
        #expect(try gamelog(["simulate", "--db", "live.sqlite", "--games", "1", "--seed", "3", "--insecure-test-keys"], in: folder.url).status == 0)
        let before = try EventStore(path: folder.path("live.sqlite"), access: .readOnly).lastPosition()
        let follow = try ChildProcess(try gamelogPath(), ["log", "--follow", "--db", "live.sqlite"], in: folder.url.path)
        defer { follow.send(SIGKILL); _ = follow.wait(atMost: 10) }
        #expect(try gamelog(["simulate", "--db", "live.sqlite", "--games", "3", "--seed", "4", "--insecure-test-keys"], in: folder.url).status == 0)
        let after = try EventStore(path: folder.path("live.sqlite"), access: .readOnly).lastPosition()
        #expect(after > before)
        var lines: [Substring] = []
        for _ in 0..<100 {
            lines = follow.outputSoFar.split(separator: "\n")
            if lines.count >= Int(after) { break }
            usleep(100_000)
        }
        // Every event once, in order: the first pass's and the appended ones.
        let positions = lines.compactMap { Int64($0.split(separator: " ").first ?? "") }
        #expect(positions == Array(1...after), "\(positions.count) lines for \(after) events; last \(positions.suffix(3))")
    }
}
