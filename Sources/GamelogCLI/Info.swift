import StoredEvents
import ArgumentParser
import EventStore
import Foundation
import Presentation
import Recorder
import SharedStore

struct Info: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show the database's schema, size, dictionaries, head hash and how far its game catalog reaches.")

    @OptionGroup var options: GlobalOptions
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let store: any EventLogReader
        let info: CommandDocuments.Info
        if let shared = try options.sharedStore() {
            // Read as the store is: a few statements, nothing copied.
            let reader = shared.reader()
            let described = try reader.describe()
            info = CommandDocuments.Info(database: shared.location.description, schemaVersion: described.schemaVersion, events: described.events,
                                         lastPosition: described.lastPosition, streams: described.recordings, headHash: described.headHash,
                                         bytes: Int(described.bytes), dictionaries: described.dictionaries, catalogThrough: described.catalogThrough)
            store = reader
        } else {
            let file = try await options.openForReading()
            info = try CommandDocuments.Info(describing: file)
            store = file
        }
        if json {
            print(try CommandDocuments.text(info))
            return
        }
        let catalog: String
        if !info.hasCatalog {
            catalog = "none (a log from before the catalog: commands scan; `gamelog migrate` adds and fills it)"
        } else if !info.catalogComplete {
            // A shared store's catalog is filled by the writes of a gamelog of 0.17 or later; a file's by `index`.
            catalog = "covers positions 1-\(info.catalogThrough) of \(info.lastPosition) "
                + (SharedStoreLocation.isURL(options.db) ? "(commands read it through a copy on this machine)" : "(commands scan; `gamelog index` fills the rest)")
        } else {
            catalog = "complete, \(try store.catalogCount(.game)) games"
        }
        print("database:       \(info.database)")
        print("schema version: \(info.schemaVersion)")
        print("size:           \(info.bytes) bytes\(info.events > 0 ? String(format: " (%.1f per event)", Double(info.bytes) / Double(info.events)) : "")")
        print("events:         \(info.events) (last position \(info.lastPosition)) in \(info.streams) recordings")
        var storage: [String] = []
        if info.blocks > 0 { storage.append("\(info.blockEvents) events in \(info.blocks) blocks") }
        if info.rowEvents > 0 && SharedStoreLocation.isURL(options.db) {
            storage.append("\(info.rowEvents) events as rows of PostgreSQL's events table")
        } else if info.rowEvents > 0 {
            storage.append("\(info.rowEvents) as rows (written before blocks; `gamelog migrate` moves them into blocks)")
        }
        if !storage.isEmpty { print("storage:        \(storage.joined(separator: ", "))") }
        print("head hash:      \(info.headHash)")
        print("game catalog:   \(catalog)")
        for d in info.dictionaries { print("dictionary \(d.id):   \(d.name), \(d.bytes) bytes") }
    }
}
