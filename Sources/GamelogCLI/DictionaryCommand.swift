import ArgumentParser
import Crypto
import EventStore
import Foundation
import Recorder
import Games
import SharedStore
import Simulation
import ZlibCodec

struct DictionaryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dictionary",
        abstract: "Inspect, train and add preset compression dictionaries.",
        subcommands: [List.self, Train.self, Add.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the stored dictionaries.")
        @OptionGroup var options: GlobalOptions
        func run() async throws {
            // A shared store's as it is; a file's.
            let listed: [(id: Int64, name: String, size: Int)]
            if let shared = try options.sharedStore() {
                listed = try shared.reader().describe().dictionaries
            } else {
                listed = try await options.openForReading().dictionaries()
            }
            for d in listed { print("\(d.id)\t\(d.name)\t\(d.size) bytes") }
        }
    }

    struct Train: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "train",
            abstract: "Build a dictionary from the events of simulated games.",
            discussion: "Writes the dictionary as raw bytes (--out) and/or as a migration that inserts it (--sql-out).")

        @Option(help: "How many games to simulate for samples.") var games: Int = 400
        @Option(help: "The simulation's seed.") var seed: UInt64 = 7
        @Option(help: "The dictionary's size limit in bytes (at most 32768).") var size: Int = 16 * 1024
        @Option(help: "The dictionary's name.") var name: String = "default-v1"
        @Option(help: "Write the raw dictionary bytes here.") var out: String?
        @Option(help: "Write a migration inserting the dictionary here.") var sqlOut: String?

        func validate() throws {
            guard (256...32768).contains(size) else { throw ValidationError("--size must be 256 to 32768 bytes.") }
            guard out != nil || sqlOut != nil else { throw ValidationError("Give --out, --sql-out or both.") }
        }

        func run() throws {
            let folder = FileManager.default.temporaryDirectory.appending(path: "gamelog-train-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let store = try EventStore(path: folder.appending(path: "samples.sqlite").path)
            let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: seed), games: GamelogCLI.games, seed: seed)
            for n in 0..<games { try simulator.play(simulator.mixedKind(n)) }
            var samples: [(kind: String, bytes: [UInt8])] = []
            try store.scan { samples.append(($0.type, $0.payload)) }
            let dictionary = DictionaryTrainer.train(samples: samples, maximumSize: size, strip: stripUUIDs)
            if let out { try Data(dictionary).write(to: URL(fileURLWithPath: out)) }
            if let sqlOut {
                let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02X", $0) }.joined() }
                let digest = Array(SHA256.hash(data: dictionary))
                let sql = """
                    -- gamelog schema, step 2: the default preset dictionary for payload compression.
                    -- Made by tools/build-default-dictionary.sh (`gamelog dictionary train`) from \(samples.count)
                    -- events of \(games) simulated games (seed \(seed)), UUIDs stripped. Never edit it in
                    -- place: add a new dictionary in a new migration; old events name this one.
                    INSERT INTO dictionaries (id, name, bytes, sha256, created_at) VALUES (
                        1,
                        '\(name)',
                        X'\(hex(dictionary))',
                        X'\(hex(digest))',
                        0);

                    """
                try sql.write(toFile: sqlOut, atomically: true, encoding: .utf8)
            }
            print("Trained a \(dictionary.count)-byte dictionary from \(samples.count) events.")
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add a dictionary file; new events are compressed with it, older ones keep theirs.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The raw dictionary file.") var file: String
        @Option(help: "Its name.") var name: String
        func run() throws {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw ValidationError("cannot read \(file).")
            }
            let id = try options.openExistingForWriting().addDictionary(name: name, bytes: Array(data))
            print("Added dictionary \(id) (\(name), \(data.count) bytes).")
        }
    }
}

/// Removes every canonical (36-character) UUID: ids never repeat between events, so
/// they would only waste dictionary space.
func stripUUIDs(_ bytes: [UInt8]) -> [UInt8] {
    let text = String(decoding: bytes, as: UTF8.self)
    let pattern = try! NSRegularExpression(pattern: "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
    let stripped = pattern.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "")
    return Array(stripped.utf8)
}
