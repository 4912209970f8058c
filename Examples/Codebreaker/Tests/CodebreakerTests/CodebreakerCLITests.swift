import Codebreaker
import EventStore
import Foundation
import GameKit
import Recorder
import Simulation
import Testing

/// The three-line executable is the whole gamelog command, knowing Codebreaker: it lists,
/// shows, verifies, re-runs, forks and serves its games, catches a cheating build, and
/// never shows the breaker the code before the game is over.
@Suite(.serialized) struct CodebreakerCLITests {
    @Test func theCommandListsShowsVerifiesRerunsAndForksCodebreakerGames() throws {
        let folder = try Folder()
        try record(games: 4, seed: 11, into: folder.path("games.sqlite"))
        let gamelog = { (arguments: [String]) in try run(arguments + ["--db", "games.sqlite"], in: folder) }

        let games = try gamelog(["games", "--json"])
        #expect(games.status == 0, "\(games.stderr)")
        let list = try #require(try JSONSerialization.jsonObject(with: Data(games.stdout.utf8)) as? [[String: Any]])
        #expect(list.count == 4 && list.allSatisfy { $0["kind"] as? String == "codebreaker" && $0["title"] as? String == "Codebreaker" },
                "\(games.stdout)")
        #expect(list.allSatisfy { $0["status"] as? String == "finished" }, "\(games.stdout)")
        let id = String(try #require(list.first?["id"] as? String).prefix(8))

        let state = try gamelog(["state", id])
        #expect(state.status == 0 && state.stdout.contains("Codebreaker") && state.stdout.contains("won in"), "\(state.stdout)\(state.stderr)")

        let verify = try gamelog(["verify"])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        #expect(verify.stdout.contains("no errors") && !verify.stdout.contains("not registered"), "\(verify.stdout)")

        let rerun = try gamelog(["rerun"])
        #expect(rerun.status == 0 && rerun.stdout.contains("matched"), "\(rerun.stdout)\(rerun.stderr)")

        let fork = try gamelog(["fork", id, "--at", "60", "--into", "fork.sqlite"])
        #expect(fork.status == 0, "\(fork.stdout)\(fork.stderr)")
        let forked = try run(["games", "--json", "--db", "fork.sqlite"], in: folder)
        #expect(forked.status == 0 && forked.stdout.contains("codebreaker") && forked.stdout.contains("forkedFrom"), "\(forked.stdout)\(forked.stderr)")
        let checked = try run(["verify", "--db", "fork.sqlite"], in: folder)
        #expect(checked.status == 0 && checked.stdout.contains("no errors"), "\(checked.stdout)\(checked.stderr)")
    }

    @Test func theViewerServesCodebreakerGames() throws {
        let folder = try Folder()
        try record(games: 2, seed: 12, into: folder.path("games.sqlite"))
        for _ in 0..<5 {
            let port = Int.random(in: 20_000...60_000)
            let server = try start(["serve", "--port", String(port), "--db", "games.sqlite"], in: folder)
            defer { server.terminate(); server.waitUntilExit() }
            var page: String?
            for _ in 0..<100 where page == nil && server.isRunning {
                Thread.sleep(forTimeInterval: 0.1)
                let fetched = try run(["-sf", "http://127.0.0.1:\(port)/games"], in: folder, executable: "/usr/bin/curl")
                if fetched.status == 0 { page = fetched.stdout }
            }
            guard let page else { continue } // the port was taken: another
            #expect(page.contains("Codebreaker") && !page.contains("not registered"), "\(page.prefix(2_000))")
            return
        }
        Issue.record("the viewer did not answer on any of 5 ports")
    }

    @Test func aCheatingBuildIsCaughtByVerify() throws {
        let folder = try Folder()
        try record(games: 3, seed: 13, into: folder.path("cheat.sqlite"), rules: Codebreaker(generousScoring: true))
        let verify = try run(["verify", "--no-rerun", "--db", "cheat.sqlite"], in: folder)
        #expect(verify.status == 1, "\(verify.stdout)\(verify.stderr)")
        #expect(verify.stdout.contains("legal-move"), "\(verify.stdout)")
    }

    /// Every line the breaker's view of the log shows, and each step's state and diff as
    /// the breaker: the code appears only once the game is over.
    @Test func theBreakerNeverSeesTheCodeBeforeTheEnd() throws {
        let folder = try Folder()
        try record(games: 3, seed: 14, into: folder.path("games.sqlite"))
        let full = try run(["log", "--json", "--db", "games.sqlite"], in: folder)
        let codes = Set(full.stdout.matches(of: /code=([RGB]{4})/).map { String($0.output.1) })
        #expect(codes.count >= 2, "\(codes)")

        let breaker = try run(["log", "--as", "B", "--json", "--db", "games.sqlite"], in: folder)
        #expect(breaker.status == 0, "\(breaker.stderr)")
        let lines = breaker.stdout.split(separator: "\n")
        #expect(lines.count > 50 && !breaker.stdout.contains(#""hidden":true"#))
        var over: Set<String> = []
        var checked = 0
        for line in lines {
            let conversation = line.firstMatch(of: /"conversation":"([0-9a-f-]{36})"/).map { String($0.output.1) } ?? ""
            if line.contains("Broken in") || line.contains("Unbroken after") { over.insert(conversation) }
            guard !over.contains(conversation) else { continue }
            checked += 1
            for code in codes { #expect(!line.contains("code=\(code)"), "\(line)") }
        }
        #expect(checked > 50)

        let list = try run(["games", "--json", "--db", "games.sqlite"], in: folder)
        let games = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
        let id = String(try #require(games.first?["id"] as? String).prefix(8))
        var steps = 0
        for step in 1...60 {
            let state = try run(["state", id, "--at", String(step), "--as", "B", "--json", "--db", "games.sqlite"], in: folder)
            guard state.status == 0 else { break }
            if state.stdout.contains("Broken in") || state.stdout.contains("Unbroken after") { break }
            steps += 1
            let diff = try run(["diff", id, String(step - 1), String(step), "--as", "B", "--db", "games.sqlite"], in: folder)
            for code in codes {
                #expect(!state.stdout.contains("code=\(code)"), "step \(step): \(state.stdout)")
                #expect(!diff.stdout.contains("code=\(code)"), "step \(step): \(diff.stdout)")
            }
        }
        #expect(steps > 10)
    }
}

// MARK: Support

/// Records simulated Codebreaker games into a SQLite log.
func record(games: Int, seed: UInt64, into path: String, rules: Codebreaker = Codebreaker()) throws {
    let store = try EventStore(path: path)
    let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: seed), games: GameRegistry([RulesGame(rules)]),
                              seed: seed, noise: 0.1)
    for _ in 0..<games { try simulator.play("codebreaker") }
}

final class Folder {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appending(path: "codebreaker-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func path(_ name: String) -> String { url.appending(path: name).path }
}

struct Run {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// The built `codebreaker-gamelog`, beside the test bundle.
func executable() throws -> String {
    let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let candidates = [here, Bundle.main.bundleURL.deletingLastPathComponent()].map { $0.appending(path: "codebreaker-gamelog") }
    guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: candidates[0].path])
    }
    return found.path
}

/// A child process of `path` (the built command by default) in `folder`, its keys in the folder.
func makeProcess(_ arguments: [String], in folder: Folder, executable path: String? = nil) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try path ?? executable())
    process.arguments = arguments
    process.currentDirectoryURL = folder.url
    process.environment = ProcessInfo.processInfo.environment.merging(["GAMELOG_KEYS": folder.path("keys")]) { $1 }
    return process
}

func start(_ arguments: [String], in folder: Folder, executable path: String? = nil) throws -> Process {
    let process = try makeProcess(arguments, in: folder, executable: path)
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    return process
}

func run(_ arguments: [String], in folder: Folder, executable path: String? = nil) throws -> Run {
    let process = try makeProcess(arguments, in: folder, executable: path)
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // Read both pipes before waiting, so a large output cannot fill a pipe and stall the child.
    let group = DispatchGroup()
    nonisolated(unsafe) var errData = Data()
    group.enter()
    DispatchQueue.global().async { errData = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    return Run(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
}

/// The README's library tour runs and says what it promises: the outcome, the moves that
/// arrived, the game as the auditor and as device B saw it.
@Suite struct LibraryTourTests {
    @Test func theReadmesLibraryTourRunsAndPrintsWhatItSays() throws {
        let folder = try Folder()
        let here = URL(fileURLWithPath: try executable()).deletingLastPathComponent()
        let tour = try run([], in: folder, executable: here.appending(path: "library-tour").path)
        #expect(tour.status == 0, "\(tour.stderr)")
        let lines = tour.stdout.split(separator: "\n")
        #expect(lines.filter { $0.hasSuffix("transcript.arrived") }.count >= 4, "\(tour.stdout)")
        #expect(tour.stdout.contains("auditor: [\"tictactoe finished") && tour.stdout.contains("device B, "), "\(tour.stdout)")
    }
}
