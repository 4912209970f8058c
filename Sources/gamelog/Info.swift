import ArgumentParser
import EventStore
import Foundation

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the database's schema, size, dictionaries and head hash.")

    @OptionGroup var options: GlobalOptions
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        try reportingErrors {
            let store = try options.openForReading()
            let (count, last) = try store.count()
            let head = try store.headHash().map { String(format: "%02x", $0) }.joined()
            let dictionaries = try store.dictionaries()
            let streams = try store.streams().count
            let bytes = (try? FileManager.default.attributesOfItem(atPath: store.path)[.size] as? Int) ?? 0
            if json {
                let object: [String: Any] = [
                    "database": store.path, "schemaVersion": try store.schemaVersion(), "events": count,
                    "lastPosition": last, "streams": streams, "headHash": head, "bytes": bytes,
                    "dictionaries": dictionaries.map { ["id": $0.id, "name": $0.name, "bytes": $0.size] },
                ]
                print(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
            } else {
                print("database:       \(store.path)")
                print("schema version: \(try store.schemaVersion())")
                print("size:           \(bytes) bytes\(count > 0 ? String(format: " (%.1f per event)", Double(bytes) / Double(count)) : "")")
                print("events:         \(count) (last position \(last)) in \(streams) recordings")
                print("head hash:      \(head)")
                for d in dictionaries { print("dictionary \(d.id):   \(d.name), \(d.size) bytes") }
            }
        }
    }
}
