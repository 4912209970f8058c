import ArgumentParser
import EventStore
import Foundation
import Replay

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    /// The database when no --db is given: `GAMELOG_DB`, else ./gamelog.sqlite.
    static var defaultDatabase: String { ProcessInfo.processInfo.environment["GAMELOG_DB"] ?? "./gamelog.sqlite" }

    @Option(name: .long, help: ArgumentHelp("The gamelog database file (default: $GAMELOG_DB, else ./gamelog.sqlite).",
                                            valueName: "path"))
    var db: String = GlobalOptions.defaultDatabase

    func openForWriting() throws -> EventStore {
        try EventStore(path: db, access: .readWrite)
    }

    /// Opens an existing database for writing; never creates one.
    func openExistingForWriting() throws -> EventStore {
        guard FileManager.default.fileExists(atPath: db) else { throw EventStoreError.databaseNotFound(path: db) }
        return try EventStore(path: db, access: .readWrite)
    }

    func openForReading() throws -> EventStore {
        try EventStore(path: db, access: .readOnly)
    }

    /// The recordings (streams) of the game or conversation whose id starts with `prefix`.
    func streams(ofGame prefix: String, in store: EventStore) throws -> Set<UUID> {
        let index = try GameIndex(store: store)
        return try index.streams(of: try index.resolve(prefix).conversation)
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
    } catch let error as ValidationError {
        throw error
    } catch {
        Terminal.standardError("error: \(String(describing: error))")
        if let hint = hint(for: error) { Terminal.standardError(hint) }
        throw ExitCode.failure
    }
}

/// The way out, in commands and flags, for errors the library describes.
func hint(for error: Error) -> String? {
    switch error {
    case EventStoreError.databaseNotFound:
        return "Create one with `gamelog demo` or `gamelog simulate`, or pass --db PATH (or set GAMELOG_DB)."
    case EventStoreError.isAFolder, EventStoreError.folderNotFound, EventStoreError.notADatabase,
         EventStoreError.notAGamelogDatabase:
        return "Pass the path of a gamelog database with --db."
    case EventStoreError.olderSchema(let path, _, _):
        return "Run `gamelog migrate --db \(path)` to upgrade it."
    case EventStoreError.readOnly:
        return "Pass another --db, or fix the permissions."
    case ReplayError.noSuchGame, ReplayError.ambiguousGame:
        return "`gamelog games` lists the games and their ids."
    case ReplayError.catalogContradictsEvents:
        return "`gamelog verify` lists every catalog row that disagrees with the events; `gamelog export` then `gamelog import` into a new file rebuilds the catalog from the events."
    case ReplayError.undecodableEvent:
        return "`gamelog verify` checks the whole log."
    case EventStoreError.corruptPayload, EventStoreError.hashMismatch, EventStoreError.missingEvent,
         EventStoreError.unknownCodec, EventStoreError.unknownDictionary:
        return "`gamelog verify` names every damaged event; `gamelog export --skip-damaged` salvages the others."
    default:
        return nil
    }
}
