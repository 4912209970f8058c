import Projections
import ArgumentParser
import EventStore
import Foundation
import Presentation
import GameKit
import MessagesHost
import MessagesModel
import Games
import Recorder
import Simulation

struct Simulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Play many random games (with cancels, re-taps, dismissals, switching away) and record them.",
        discussion: "The same seed plays the same games; with --clock fixed it also writes the same times, so the events are identical (the same head hash); the signatures differ, made with each device's own random key, unless --insecure-test-keys is given. Each game is stored whole or not at all. Re-running a seed into the same database skips the games it already recorded and plays the rest, so an interrupted run resumes where it stopped.")

    enum Clock: String, ExpressibleByArgument, CaseIterable {
        case system, fixed
    }

    @OptionGroup var options: GlobalOptions

    // Unconditional, so that `--games -1` is read as a number (and refused as one), not as an option.
    @Option(parsing: .unconditional, help: "How many games to play.")
    var games: Int = 100

    @Option(help: "The seed for every random choice.")
    var seed: UInt64 = 1

    @Option(help: "Which game: \(GamelogCLI.games.kinds.joined(separator: ", ")), or mixed (each in turn).")
    var game: String = "mixed"

    @Option(help: "Where recorded times come from: system, or fixed (reproducible).")
    var clock: Clock = .system

    @Option(help: "Chance, 0 to 0.9, that a step is noise (cancel, re-tap, dismiss, switch away).")
    var noise: Double = 0.15

    @Option(help: ArgumentHelp("Write each device's recordings to a database of its own, DIR/A.sqlite, DIR/B.sqlite (and C, D when they join group games), as phones would (instead of --db).", valueName: "DIR"))
    var perDevice: String?

    @Option(help: ArgumentHelp("The players' devices, comma-separated: two for every game, and up to two more who join the games a group can play (stickers); C and D join A and B when no others are named (phones of a studio's fleet need names of their own).",
                               valueName: "NAME,NAME[,NAME,NAME]"))
    var devices: String = "A,B"

    /// The device names --devices gives.
    var deviceNames: [String] { devices.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }

    /// The devices that join group games: those named after the first two; with the
    /// default A and B, C and D. Two devices named otherwise play every game alone.
    var groupNames: [String] {
        deviceNames.count > 2 ? Array(deviceNames.dropFirst(2)) : deviceNames == ["A", "B"] ? ["C", "D"] : []
    }

    /// Whether the games to play include one a group can play (only then do group devices need logs).
    var playsGroupGames: Bool {
        let kinds = game == "mixed" ? GamelogCLI.games.kinds : [game]
        return kinds.contains { (GamelogCLI.games.plugin(for: $0)?.players.upperBound ?? 2) > 2 }
    }

    static let ownerNames = ["A": "Alice", "B": "Bob", "C": "Carol", "D": "Dave"]

    enum Network: String, ExpressibleByArgument, CaseIterable {
        case ideal, phone, hostile
    }

    @Option(help: ArgumentHelp(
        "How the network treats messages: ideal (each at once, in order, once), phone (short delays; now and then a message late, twice, out of order or lost, a send that fails, a phone without signal for a while), hostile (all of that, often).",
        valueName: "ideal|phone|hostile"))
    var network: Network = .phone

    @Flag(help: "Also print how often each behaviour of the Messages model occurred: callbacks by presentation style, transitions, actions and their results, error codes, what users did, what the network did, how games ended.")
    var coverage = false

    @Flag(help: "Print a JSON summary instead of text.")
    var json = false

    @OptionGroup var signing: SigningOptions

    func validate() throws {
        let kinds = GamelogCLI.games.kinds
        guard game == "mixed" || kinds.contains(game) else {
            throw ValidationError("--game '\(game)' is not a game; choose one of \(kinds.joined(separator: ", ")), or mixed.")
        }
        guard games >= 1 else { throw ValidationError("--games must be at least 1, not \(games).") }
        guard (0...0.9).contains(noise) else { throw ValidationError("--noise must be between 0 and 0.9, not \(noise).") }
        guard (2...4).contains(deviceNames.count), Set(deviceNames).count == deviceNames.count else {
            throw ValidationError("--devices names two to four different devices, e.g. --devices P1,P2; not '\(devices)'.")
        }
        for name in deviceNames {
            do { try DeviceName.check(name) } catch { throw ValidationError("--devices: \(error)") }
            // A device's log is DIR/<name>.sqlite: a name must make one file name.
            if perDevice != nil, name.contains("/") || name.hasPrefix(".") {
                throw ValidationError("--devices: '\(name)' cannot name a file in --per-device; use letters, digits, '-' and '_'.")
            }
        }
    }

    func run() throws {
        let recordingClock: any RecordingClock = clock == .fixed ? FixedClock() : SystemClock()
        let recorder: Recorder
        let signer: SigningOptions.Signer
        let destination: String
        if let perDevice {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: perDevice, isDirectory: &isFolder), !isFolder.boolValue {
                throw ValidationError("--per-device \(perDevice) is a file; give a folder (it is created if missing).")
            }
            try FileManager.default.createDirectory(atPath: perDevice, withIntermediateDirectories: true)
            // Open every device's database up front, so a bad folder fails before any game.
            var stores: [DeviceID: EventStore] = [:]
            for name in deviceNames.prefix(2) + (playsGroupGames ? groupNames : []) {
                stores[DeviceID(name)] = try EventStore(path: URL(fileURLWithPath: perDevice).appending(path: "\(name).sqlite").path)
            }
            signer = try signing.signer(logPath: stores[DeviceID(deviceNames[0])]!.path)
            recorder = Recorder(storeOf: { stores[$0]! }, clock: recordingClock, seed: seed, keys: signer.key)
            destination = stores.keys.map { "\(perDevice)/\($0).sqlite" }.sorted().joined(separator: ", ")
        } else {
            let store = try options.openForWriting()
            signer = try signing.signer(logPath: store.path)
            recorder = Recorder(store: store, clock: recordingClock, seed: seed, keys: signer.key)
            destination = store.path
        }
        let standardNames = (deviceNames + groupNames).allSatisfy { Self.ownerNames[$0] != nil }
        func owner(_ name: String) -> String { standardNames ? Self.ownerNames[name]! : "Owner of \(name)" }
        let simulator = Simulator(recorder: recorder, games: GamelogCLI.games, seed: seed, noise: noise,
                                  devices: deviceNames.prefix(2).map { (DeviceID($0), owner($0)) })
        simulator.groupDevices = groupNames.map { (DeviceID($0), owner($0)) }
        simulator.network = NetworkProfile.named(network.rawValue) ?? .phone
        let progress = ProgressBar(total: games, label: "games")
        let started = Date()
        var run = CommandDocuments.Simulation(seed: seed, database: destination, network: network.rawValue)
        for number in 0..<games {
            let report = try simulator.play(game == "mixed" ? simulator.mixedKind(number) : game)
            try signer.check()
            run.games += 1
            if report.finished && !report.alreadyRecorded { run.finished += 1 }
            if report.alreadyRecorded { run.alreadyRecorded += 1 }
            // Counted as the log shows them: every game of the conversation, strays and strandings included.
            for game in report.games { run.outcomes[outcomeClass(report.kind, game), default: 0] += 1 }
            if report.games.isEmpty { run.outcomes["\(report.kind): no game message", default: 0] += 1 }
            progress.update(number + 1, detail: "· \(recorder.writtenEvents) events")
        }
        progress.finish()
        run.seconds = Date().timeIntervalSince(started)
        run.eventsWritten = recorder.writtenEvents
        if coverage { run.coverage = Dictionary(uniqueKeysWithValues: simulator.coverage.table.map { ($0.row, $0.count) }) }
        if json {
            print(try CommandDocuments.text(run))
        } else {
            if run.alreadyRecorded == games {
                print("All \(games) games of seed \(seed) were already recorded in \(destination): nothing was played or written.")
                return
            }
            print(signer.summary)
            print("Played \(counted(games - run.alreadyRecorded, "game")) (\(run.finished) finished) with seed \(seed) in \(String(format: "%.1f", run.seconds)) s.")
            let logged = run.outcomes.values.reduce(0, +)
            if logged != games {
                print("The log shows \(logged) games: besides the games played, stray taps started some and others were left unsent (each below, as `gamelog games` lists them).")
            }
            print("Wrote \(run.eventsWritten) events to \(destination) (\(Int(Double(run.eventsWritten) / max(run.seconds, 0.001))) events/s).")
            if run.alreadyRecorded > 0 {
                print("\(run.alreadyRecorded) of the \(games) games were already recorded with this seed and were skipped.")
            }
            for (outcome, count) in run.outcomes.sorted(by: { $0.key < $1.key }) { print("  \(outcome): \(count)") }
            if coverage {
                let table = simulator.coverage.table
                let never = table.filter { $0.count == 0 }.count
                print("\nCoverage (network \(network.rawValue)): how often each behaviour occurred; \(never) of \(table.count) rows never did.")
                let width = table.map(\.row.count).max() ?? 0
                for (row, count) in table {
                    print("  \(row.padding(toLength: width, withPad: " ", startingAt: 0))  \(String(repeating: " ", count: max(0, 8 - String(count).count)))\(count)")
                }
            }
        }
    }

    private func outcomeClass(_ kind: String, _ game: GameOutcomeReport) -> String {
        switch game.status {
        case .finished: return "\(kind): \(game.winner.map { "\($0) won" } ?? "a draw")"
        case .abandoned: return "\(kind): abandoned before its first message was sent"
        case .staged: return "\(kind): first message never sent"
        case .inProgress: return "\(kind): \(game.result)"
        }
    }
}
