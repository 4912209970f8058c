import MessagesModel
import Projections
import ArgumentParser
import Collector
import EventStore
import Foundation
import Interchange
import SharedStore
import RecordedEvents
import Replay

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write events as JSON Lines (one event per line), complete enough to rebuild a database.",
        discussion: "Example: gamelog export --game 1a2b > game.jsonl; gamelog import game.jsonl --db other.sqlite")

    @OptionGroup var options: GlobalOptions
    @Option(help: "Only this game (or conversation) id prefix.") var game: String?
    @Option(help: "Only the recordings of this device (e.g. A): that device's own log, in full (what the phone holds, secrets included).")
    var device: String?
    @Flag(help: "Replace participant identifiers and names consistently; with --device, also show every message as that device's player may see it (a game's secrets hidden).")
    var redact = false
    @Flag(help: "Leave out events that cannot be read (a damaged file), export the rest, and say what was left out.")
    var skipDamaged = false
    @Flag(help: "With --redact, show the messages of a game this gamelog does not register whole (by default what they carry is left out, and the export fails: no view of them can be computed).")
    var unredacted = false

    func run() async throws {
        let store = try await options.openReader()
        var streams: Set<UUID>? = nil
        if let game { streams = try options.streams(ofGame: game, in: store) }
        if let device {
            // As `log --device`: any case; a device that recorded nothing here is refused, not exported as nothing.
            let all = try recordings(store)
            let names = Set(all.values.map(\.device.name))
            guard let name = names.first(where: { $0.lowercased() == device.lowercased() }) else {
                throw ValidationError("--device '\(device)' recorded nothing here; the devices are \(names.sorted().joined(separator: ", ")).")
            }
            let own = Set(all.filter { $0.value.device.name == name }.keys)
            streams = streams.map { $0.intersection(own) } ?? own
        }
        let output = FileHandle.standardOutput
        var buffer = ""
        var damaged: [EventStoreError] = []
        // A device's redacted log shows what its player may see: each message through the game's view.
        var views = DeviceViews(try device.map { name in
            Perspective.device(try recordedDevices(store).first { $0.name.lowercased() == name.lowercased() } ?? DeviceID(name))
        } ?? .auditor, unredacted: unredacted)
        let viewing: ((StoredEvent, RecordedEvent) -> RecordedEvent)? = redact && device != nil ? { views.view($1, stored: $0) } : nil
        let count = try Interchange.export(from: store, streams: streams, redact: redact, viewing: viewing,
                                           skippingDamaged: skipDamaged ? { damaged.append($0) } : nil) { line in
            buffer += line + "\n"
            if buffer.utf8.count > 1 << 16 {
                output.write(Data(buffer.utf8))
                buffer = ""
            }
        }
        output.write(Data(buffer.utf8))
        Terminal.standardError("exported \(count) events")
        if !damaged.isEmpty {
            let positions = damaged.compactMap(\.position).map(String.init)
            Terminal.standardError("left out \(damaged.count) damaged events (positions \(positions.prefix(10).joined(separator: ", "))\(positions.count > 10 ? ", …" : "")); `gamelog verify` says what is wrong with each")
        }
        try views.finish(command: "export --redact")
    }
}

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Merge exported logs (e.g. one per device) into the database; importing twice adds nothing.")

    @OptionGroup var options: GlobalOptions
    @Argument(help: "JSON Lines files written by `gamelog export`; - reads standard input.") var files: [String]
    @Flag(inversion: .prefixedNo, help: ArgumentHelp(
        "Into a shared store: store the game summaries of the conversations the import changed (what a page of games reads instead of folding).",
        discussion: "--no-summaries leaves them to `gamelog index --db URL`."))
    var summaries = true

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("Give at least one file to import.") }
    }

    func run() async throws {
        // Every line of every file is checked before the database is even opened.
        let logs = try files.map { try ExportFile(path: $0) }
        let checking = ProgressBar(total: logs.reduce(0) { $0 + $1.contents.count }, label: "bytes checked")
        let plan = try Interchange.check(files: logs) { done, _ in checking.update(done) }
        checking.finish()
        let summary: ImportSummary, place: String
        if let shared = try options.sharedStore() {
            // An empty database is given the schema, as a new SQLite file would be; a
            // database holding anything else is refused by the migration.
            let (from, to) = try await shared.migrate()
            if from == 0 { Terminal.standardError("made the gamelog schema (version \(to)) in \(shared.location)") }
            // Checked again against the store's rows and stored in one transaction, written
            // as the store itself (nothing copied to this machine).
            summary = try await shared.writeNatively { writer in try Interchange.import(plan, into: writer) }
            place = shared.location.description
            if try await shared.analyzeIfGrown(stored: summary.stored) {
                Terminal.standardError("gathered the planner's statistics of \(shared.location) (ANALYZE): the import grew it by a tenth or more")
            }
            if summaries && summary.stored > 0 {
                // What a page of games reads instead of folding, for the conversations written to.
                let outcome = try await Index.storeSummaries(in: shared, ofStreams: plan.recordings)
                Terminal.standardError("stored the game summaries of the \(outcome.written) conversations the import changed")
            }
        } else {
            let store = try options.openForWriting()
            let storing = ProgressBar(total: plan.count, label: "events stored")
            summary = try Interchange.import(plan, into: store) { done, _ in storing.update(done) }
            storing.finish()
            place = store.path
        }
        print("imported \(summary.stored) new events (\(summary.read - summary.stored) already present) into \(place)")
        if summary.unsigned > 0 {
            Terminal.standardError("warning: \(summary.unsigned) of the events read carry no signature (no signed head in the files covers them); `gamelog verify --trust KEYS.json` will report them")
        }
    }
}
