import StoredEvents
import ArgumentParser
import EventStore
import Foundation
import Presentation
import Recorder

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show the database's schema, size, dictionaries, head hash and how far its game catalog reaches.")

    @OptionGroup var options: GlobalOptions
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        let store = try options.openForReading()
        let (count, last) = try store.count()
        let head = Hex.string(try store.headHash())
        let dictionaries = try store.dictionaries()
        let streams = try store.streams().count
        let bytes = (try? FileManager.default.attributesOfItem(atPath: store.path)[.size] as? Int) ?? 0
        let coverage = try store.catalogCoverage()
        let complete = coverage.map { $0.through == $0.last } ?? false
        let catalog: String
        switch coverage {
        case nil: catalog = "none (a log from before the catalog: commands scan; `gamelog migrate` adds and fills it)"
        case let (through, last)? where through < last:
            catalog = "covers positions 1-\(through) of \(last) (commands scan; `gamelog index` fills the rest)"
        default: catalog = "complete, \(try store.catalogCount(.game)) games"
        }
        if json {
            print(try CommandDocuments.text(CommandDocuments.Info(
                database: store.path, schemaVersion: try store.schemaVersion(), events: count, lastPosition: last, streams: streams,
                headHash: head, bytes: bytes, dictionaries: dictionaries.map { .init(id: $0.id, name: $0.name, bytes: $0.size) },
                catalogComplete: complete, catalogThrough: coverage?.through ?? 0)))
        } else {
            print("database:       \(store.path)")
            print("schema version: \(try store.schemaVersion())")
            print("size:           \(bytes) bytes\(count > 0 ? String(format: " (%.1f per event)", Double(bytes) / Double(count)) : "")")
            print("events:         \(count) (last position \(last)) in \(streams) recordings")
            print("head hash:      \(head)")
            print("game catalog:   \(catalog)")
            for d in dictionaries { print("dictionary \(d.id):   \(d.name), \(d.size) bytes") }
        }
    }
}
