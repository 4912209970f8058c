import ArgumentParser
import EventStore
import Foundation
import Replay
import SharedStore

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    /// The database when no --db is given: `GAMELOG_DB`, else ./gamelog.sqlite.
    static var defaultDatabase: String { ProcessInfo.processInfo.environment["GAMELOG_DB"] ?? "./gamelog.sqlite" }

    // Optional, so the help shows the one default this sentence gives (ArgumentParser
    // would add the value it saw when the help was made, a second default).
    @Option(name: .customLong("db"), help: ArgumentHelp(
        "The gamelog database: a SQLite file, or a shared store's postgres://user@host:port/database URL (default: $GAMELOG_DB, else ./gamelog.sqlite).",
        valueName: "path|url"))
    var givenDatabase: String?

    /// The database: `--db`, else ``defaultDatabase``.
    var db: String { givenDatabase ?? Self.defaultDatabase }

    /// The shared store `--db` names, or nil for a SQLite file.
    func sharedStore(maximumConnections: Int = 8) throws -> SharedStore? {
        SharedStoreLocation.isURL(db) ? try SharedStore(url: db, maximumConnections: maximumConnections) : nil
    }

    func openForWriting() throws -> EventStore {
        try refuseSharedStore()
        return try EventStore(path: db, access: .readWrite)
    }

    /// Opens an existing database for writing; never creates one.
    func openExistingForWriting() throws -> EventStore {
        try refuseSharedStore()
        guard FileManager.default.fileExists(atPath: db) else { throw EventStoreError.databaseNotFound(path: db) }
        return try EventStore(path: db, access: .readWrite)
    }

    /// Commands that write into a log write into a SQLite file; a shared store takes
    /// events through `import` and collectors only, which check them first.
    private func refuseSharedStore() throws {
        if SharedStoreLocation.isURL(db) {
            throw ValidationError("""
                this command writes into a SQLite log; a shared store (\(SharedStoreLocation.redacting(db))) takes events only \
                through `gamelog import --db URL` and a collector (`gamelog push`). Pass a SQLite file with --db.
                """)
        }
    }

    /// Opens the log for reading. A shared store is read through this machine's copy of
    /// it, brought up to date first (``SharedStore/localCopy(fresh:progress:)``); with
    /// `fresh`, through a new copy of every row it holds now.
    func openForReading(fresh: Bool = false) async throws -> EventStore {
        try EventStore(path: try await readablePath(fresh: fresh), access: .readOnly)
    }

    /// Opens the log to read games from it: a SQLite file as it is; a shared store as it
    /// is in PostgreSQL, through its indexes, with nothing copied to this machine
    /// (``SharedStore/reader()``). A shared store whose catalog does not cover every event
    /// (it can only be read game by game through the catalog) is read through this
    /// machine's copy instead, which is said on standard error.
    func openReader() async throws -> any SignedLogReader {
        if let reader = try nativeReader() { return reader }
        return try await openForReading()
    }

    /// A reader of the shared store `--db` names, as it is in PostgreSQL; nil for a SQLite
    /// file, and for a store whose catalog does not cover every event (said on standard
    /// error: such a store is read through this machine's copy).
    /// - Parameter snapshot: every read (and every reader made from it) sees the store at
    ///   one moment (``SharedStore/snapshotReader()``): what an audit reads.
    func nativeReader(snapshot: Bool = false) throws -> PostgresLogReader? {
        guard let shared = try sharedStore() else { return nil }
        let reader = snapshot ? shared.snapshotReader() : shared.reader()
        if try reader.catalogIsComplete() { return reader }
        Terminal.standardError("note: the catalog of \(shared.location) does not cover every event, so it is read through a copy on this machine")
        return nil
    }

    /// The SQLite file to read: `--db`, or this machine's up-to-date copy of the shared store it names.
    func readablePath(fresh: Bool = false) async throws -> String {
        guard let shared = try sharedStore() else { return db }
        return try await localCopy(of: shared, fresh: fresh).path
    }

    /// This machine's copy of `shared`, up to date (or, with `fresh`, new), held until exit.
    func localCopy(of shared: SharedStore, fresh: Bool = false) async throws -> LocalCopy {
        let progress = ProgressBar(total: 0, label: "events copied from the shared store")
        let copy = try await shared.localCopy(fresh: fresh) { done, total in progress.update(Int(done), total: Int(total)) }
        progress.finish()
        OpenCopies.keep(copy)
        return copy
    }

    /// The recordings (streams) of the game or conversation whose id starts with `prefix`.
    func streams(ofGame prefix: String, in store: any EventLogReader) throws -> Set<UUID> {
        let index = try GameIndex(store: store)
        return try index.streams(of: try index.resolve(prefix).conversation)
    }
}

/// A command that could not do its work for a reason found while doing it (not a wrong
/// argument): printed as `error: ...`, exit status 1.
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The local copies this process reads, held (kept from being rewritten) until it exits.
enum OpenCopies {
    nonisolated(unsafe) private static var copies: [LocalCopy] = []
    private static let lock = NSLock()
    static func keep(_ copy: LocalCopy) {
        lock.lock()
        if copies.isEmpty { atexit { OpenCopies.releaseAll() } }
        copies.append(copy)
        lock.unlock()
    }

    /// At exit: temporary copies are deleted (nothing runs deinitializers then).
    private static func releaseAll() {
        lock.lock()
        for copy in copies { copy.release() }
        copies = []
        lock.unlock()
    }
}

/// A command's failure as one or two plain lines on standard error (the library's
/// description of the problem, then the way out in commands and flags), instead of a
/// stack of Swift type names; nil for the argument parser's own errors and exits, which
/// `Gamelog.exitExplaining` words.
func reportedFailure(_ error: Error) -> ExitCode? {
    // The parser's own errors (help requested, a bad option) come as its internal types,
    // which only its module names.
    if error is ExitCode || error is CleanExit || error is ValidationError
        || String(reflecting: type(of: error)).hasPrefix("ArgumentParser.") {
        return nil
    }
    Terminal.standardError("error: " + shortened(String(describing: error)))
    if let hint = hint(for: error) { Terminal.standardError(hint) }
    return .failure
}

/// An error's text at a length a person reads: one that quotes a huge argument (an id of
/// 100,000 characters) is cut, saying how long it was.
func shortened(_ text: String) -> String {
    text.count > 600 ? String(text.prefix(300)) + "… (\(text.count) characters)" : text
}

/// The way out, in commands and flags, for errors the library describes.
func hint(for error: Error) -> String? {
    switch error {
    case SharedStoreError.olderSchema(let location, _, _):
        return "Run `gamelog migrate --db \(location)` to upgrade it: stop the collectors, migrate, start the new ones (docs/OPERATIONS.md, \"PostgreSQL\")."
    case SharedStoreError.notMigrated(let location):
        return "Run `gamelog migrate --db postgres://...` (\(location)) to create the schema."
    case SharedStoreError.unreachable:
        return "Check the URL given with --db (postgres://user@host:port/database) and that PostgreSQL runs there; `tools/shared-store.sh` starts a local one."
    case SharedStoreError.badURL:
        return "A shared store's URL reads postgres://user@host:port/database; a password comes from $PGPASSWORD."
    case SharedStoreError.newerSchema:
        return "Use a newer gamelog for this store."
    case SharedStoreError.copyDiverged:
        return "Run the command again; if it persists, the store's rows are being changed outside gamelog: `gamelog verify --db URL`."
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
    case ReplayError.incompleteCatalog:
        return "`gamelog index --db PATH` fills the catalog of a SQLite log; a shared store's catalog is filled by the import that wrote it."
    case ReplayError.undecodableEvent:
        return "`gamelog verify` checks the whole log."
    case EventStoreError.corruptPayload, EventStoreError.hashMismatch, EventStoreError.missingEvent,
         EventStoreError.unknownCodec, EventStoreError.unknownDictionary:
        return "`gamelog verify` names every damaged event; `gamelog export --skip-damaged` salvages the others."
    case EventStoreError.damagedLog:
        return "`gamelog verify` names every damaged event; `gamelog export --skip-damaged` then `gamelog import` into a new file keeps the others."
    case EventStoreError.blockIndexMismatch:
        return "`gamelog export` then `gamelog import` into a new file rebuilds the index from the events."
    default:
        return nil
    }
}
