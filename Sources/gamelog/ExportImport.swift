import ArgumentParser
import EventStore
import Foundation
import Interchange
import RecordedEvents
import Replay

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write events as JSON Lines (one event per line), complete enough to rebuild a database.",
        discussion: "Example: gamelog export --game 1a2b > game.jsonl; gamelog import game.jsonl --db other.sqlite")

    @OptionGroup var options: GlobalOptions
    @Option(help: "Only this game (or conversation) id prefix.") var game: String?
    @Option(help: "Only the recordings of this device (e.g. A): that device's own log.") var device: String?
    @Flag(help: "Replace participant identifiers and names consistently.") var redact = false

    func run() throws {
        try reportingErrors {
            let store = try options.openForReading()
            var streams: Set<UUID>? = nil
            if let game { streams = try options.streams(ofGame: game, in: store) }
            if let device {
                var own = Set<UUID>()
                try store.scan(EventQuery(types: ["recording.started"])) { stored in
                    if case .recordingStarted(let info)? = try? RecordedEvent.decode(type: stored.type, typeVersion: stored.typeVersion, payload: stored.payload),
                       info.device.name == device {
                        own.insert(stored.stream)
                    }
                }
                streams = streams.map { $0.intersection(own) } ?? own
            }
            let output = FileHandle.standardOutput
            var buffer = ""
            let count = try Interchange.export(from: store, streams: streams, redact: redact) { line in
                buffer += line + "\n"
                if buffer.utf8.count > 1 << 16 {
                    output.write(Data(buffer.utf8))
                    buffer = ""
                }
            }
            output.write(Data(buffer.utf8))
            Terminal.standardError("exported \(count) events")
        }
    }
}

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Merge exported logs (e.g. one per device) into the database; importing twice adds nothing.")

    @OptionGroup var options: GlobalOptions
    @Argument(help: "JSON Lines files written by `gamelog export`.") var files: [String]

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("Give at least one file to import.") }
    }

    func run() throws {
        try reportingErrors {
            var events: [ExportedEvent] = []
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else {
                    throw ValidationError("cannot read \(file): no such file, or no permission.")
                }
                events += try Interchange.read(String(decoding: data, as: UTF8.self), file: file)
            }
            let store = try options.openForWriting()
            let progress = ProgressBar(total: events.count, label: "events")
            let written = try Interchange.import(events, into: store) { progress.update(min($0, events.count)) }
            progress.finish()
            print("imported \(written) new events (\(events.count - written) already present) into \(store.path)")
        }
    }
}
