import ArgumentParser
import EventStore
import Foundation
import Replay

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The gamelog database file.", valueName: "path"))
    var db: String = "./gamelog.sqlite"

    func openForWriting() throws -> EventStore {
        try EventStore(path: db, access: .readWrite)
    }

    func openForReading() throws -> EventStore {
        try EventStore(path: db, access: .readOnly)
    }

    /// The recordings (streams) of the game or conversation whose id starts with `prefix`.
    func streams(ofGame prefix: String, in store: EventStore) throws -> Set<UUID> {
        let index = try GameIndex(store: store)
        return index.streams[try index.resolve(prefix).conversation] ?? []
    }
}

/// Runs a command body, printing any error as one or two plain lines on standard
/// error and exiting non-zero, instead of a stack of Swift type names.
func reportingErrors<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as ExitCode {
        throw error
    } catch let error as CleanExit {
        throw error
    } catch {
        Terminal.standardError("error: \(String(describing: error))")
        throw ExitCode.failure
    }
}
