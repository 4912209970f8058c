import Foundation
import ArgumentParser
import EventStore
import Replay
import SharedStore

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Upgrade the database to this gamelog's schema (reading commands never do).")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        if let shared = try options.sharedStore() {
            let (from, to) = try await shared.migrate()
            print(from == to ? "\(shared.location) is at schema version \(to), the newest this gamelog knows."
                             : "\(shared.location): schema version \(from) -> \(to), the newest this gamelog knows.")
            return
        }
        guard FileManager.default.fileExists(atPath: options.db) else {
            throw EventStoreError.databaseNotFound(path: options.db)
        }
        // Opening for writing applies the missing migrations, each in one transaction.
        let store = try options.openForWriting()
        // Events stored as rows (by a gamelog before blocks) move into blocks: the same
        // events, fewer bytes, faster reads. First, so that a log that does not verify is
        // refused before anything derived is written to it.
        let rows = try store.storedAsRows()
        if rows > 0 {
            let before = store.fileSize
            let progress = ProgressBar(total: Int(rows), label: "events moved into blocks")
            let moved = try store.packRowsIntoBlocks { done, _ in progress.update(Int(done)) }
            progress.finish()
            try store.reclaimFreePages()
            print("moved \(moved) events into blocks; the file went from \(before) to \(store.fileSize) bytes")
        }
        // The catalog is derived from the events: a log from before it existed gets it filled now.
        if !(try store.catalogIsComplete()) {
            let progress = ProgressBar(total: Int(try store.count().lastPosition), label: "events catalogued")
            try GameIndex.fillCatalog(store) { done, _ in progress.update(Int(done)) }
            progress.finish()
            print("filled the game catalog")
        }
        print("\(store.path) is at schema version \(try store.schemaVersion()), the newest this gamelog knows.")
    }
}
