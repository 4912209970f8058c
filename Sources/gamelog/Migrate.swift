import Foundation
import ArgumentParser
import EventStore

struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Upgrade the database to this gamelog's schema (reading commands never do).")

    @OptionGroup var options: GlobalOptions

    func run() throws {
        try reportingErrors {
            guard FileManager.default.fileExists(atPath: options.db) else {
                throw EventStoreError.databaseNotFound(path: options.db)
            }
            // Opening for writing applies the missing migrations, each in one transaction.
            let store = try options.openForWriting()
            print("\(store.path) is at schema version \(try store.schemaVersion()), the newest this gamelog knows.")
        }
    }
}
