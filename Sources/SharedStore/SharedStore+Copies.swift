import EventStore
import Foundation
import NIOCore
import PostgresNIO

/// A local copy of a shared store, up to date when handed out and kept from being
/// rewritten while held (a shared `flock` on its lock file, until ``release()``).
public final class LocalCopy: @unchecked Sendable {
    /// The SQLite log to open read-only.
    public let path: String
    /// The store revision it holds.
    public let revision: Int64
    private var descriptor: Int32
    private let folderToRemove: URL?

    init(path: String, revision: Int64, descriptor: Int32, folderToRemove: URL?) {
        self.path = path
        self.revision = revision
        self.descriptor = descriptor
        self.folderToRemove = folderToRemove
    }

    /// Lets other processes update the copy again (a temporary copy is deleted).
    public func release() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        if let folderToRemove { try? FileManager.default.removeItem(at: folderToRemove) }
    }

    deinit { release() }
}

extension SharedStore {
    private struct CopyFiles {
        var database: URL
        var revision: URL
        var lock: URL
    }

    private func copyFiles(_ storeID: UUID, in folder: URL) -> CopyFiles {
        let base = "shared-" + storeID.uuidString.lowercased()
        return CopyFiles(database: folder.appending(path: base + ".sqlite"), revision: folder.appending(path: base + ".revision"),
                         lock: folder.appending(path: base + ".lock"))
    }

    /// Brings this machine's copy of the store up to date and hands it out for reading.
    ///
    /// - Parameter fresh: make a new copy in a temporary folder from every row the store
    ///   holds now (what `verify` reads, so a row changed in the store after an earlier
    ///   copy was made is seen), deleted on release.
    /// - Parameter progress: events copied and events to copy.
    public func localCopy(fresh: Bool = false, progress: (@Sendable (Int64, Int64) -> Void)? = nil) async throws -> LocalCopy {
        try await Self.blocking { try await withConnection { connection in
            // Most commands find their copy current: one statement tells, where the checks
            // below take four round trips (each command pays them before its own work).
            if !fresh, let state = try? await currentState(connection), let current = upToDateCopy(state) { return current }
            _ = try await version(connection)
            return try await inTransaction(connection, readOnly: true) {
                let state = try await self.state(connection)
                if fresh { return try await temporaryCopy(connection, state: state, progress: progress) }
                let (files, descriptor) = try lockedCopyFiles(state.id)
                guard let descriptor else {
                    // Another process reads the cached copy: work on a private one.
                    return try await temporaryCopy(connection, state: state, seed: files.database, progress: progress)
                }
                do {
                    try await update(connection, files, to: state, progress: progress)
                    flock(descriptor, LOCK_SH)
                    return LocalCopy(path: files.database.path, revision: state.revision, descriptor: descriptor, folderToRemove: nil)
                } catch {
                    close(descriptor)
                    throw error
                }
            }
        } }
    }

    /// The cached copy, shared with other readers, when it already holds the store's
    /// revision: nothing to pull, and no need to wait for the lock a writer takes (a
    /// viewer or collector reading the copy made every command wait a second for it and
    /// then copy the whole file).
    private func upToDateCopy(_ state: (id: UUID, revision: Int64)) -> LocalCopy? {
        let files = copyFiles(state.id, in: cacheFolder)
        guard FileManager.default.fileExists(atPath: files.database.path) else { return nil }
        let descriptor = open(files.lock.path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        // The revision is written last by an update, under the writer's lock, which a shared one excludes.
        guard flock(descriptor, LOCK_SH | LOCK_NB) == 0,
              let held = (try? String(contentsOf: files.revision, encoding: .utf8)).flatMap({ Int64($0.trimmingCharacters(in: .whitespacesAndNewlines)) }),
              held == state.revision else {
            close(descriptor)
            return nil
        }
        return LocalCopy(path: files.database.path, revision: state.revision, descriptor: descriptor, folderToRemove: nil)
    }

    /// The cached copy's files, locked for writing: nil descriptor when another process
    /// holds the copy (reading it) for more than a second.
    private func lockedCopyFiles(_ storeID: UUID) throws -> (CopyFiles, Int32?) {
        try FileManager.default.createDirectory(at: cacheFolder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let files = copyFiles(storeID, in: cacheFolder)
        let descriptor = open(files.lock.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw EventStoreError.readOnly(path: files.lock.path, detail: "the cache folder cannot be written (set GAMELOG_CACHE to another)")
        }
        for _ in 0..<20 {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return (files, descriptor) }
            usleep(50_000)
        }
        close(descriptor)
        return (files, nil)
    }

    private func temporaryCopy(_ connection: PostgresConnection, state: (id: UUID, revision: Int64), seed: URL? = nil,
                               progress: (@Sendable (Int64, Int64) -> Void)?) async throws -> LocalCopy {
        let folder = FileManager.default.temporaryDirectory.appending(path: "gamelog-copy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        do {
            let files = copyFiles(state.id, in: folder)
            if let seed, let source = Optional(copyFiles(state.id, in: seed.deletingLastPathComponent())),
               FileManager.default.fileExists(atPath: source.database.path) {
                // Held shared by its readers, so no writer changes it while it is copied.
                let reading = open(source.lock.path, O_RDONLY | O_CLOEXEC)
                if reading >= 0 { flock(reading, LOCK_SH) }
                defer { if reading >= 0 { close(reading) } }
                try? FileManager.default.copyItem(at: source.database, to: files.database)
                try? FileManager.default.copyItem(at: source.revision, to: files.revision)
            }
            try await update(connection, files, to: state, progress: progress)
            return LocalCopy(path: files.database.path, revision: state.revision, descriptor: -1, folderToRemove: folder)
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
    }

    /// Fetches what the copy lacks; a copy that cannot be brought up to date (ahead of the
    /// store, or not ending where the store's rows say) is made again from nothing.
    private func update(_ connection: PostgresConnection, _ files: CopyFiles, to state: (id: UUID, revision: Int64),
                        progress: (@Sendable (Int64, Int64) -> Void)?) async throws {
        var held = (try? String(contentsOf: files.revision, encoding: .utf8)).flatMap { Int64($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        if !FileManager.default.fileExists(atPath: files.database.path) { held = nil }
        if let revision = held, revision > state.revision { held = nil }
        for attempt in 0..<2 {
            if held == nil || attempt > 0 {
                removeCopy(files)
                held = 0
            }
            let store = try EventStore(path: files.database.path, access: .readWrite, layout: .rows)
            try await pull(connection, into: store, after: held ?? 0, progress: progress)
            if try await tailMatches(connection, store) {
                try String(state.revision).write(to: files.revision, atomically: true, encoding: .utf8)
                return
            }
            if attempt == 1 {
                throw SharedStoreError.copyDiverged(location: location.description, detail:
                    "a new copy's last event is not the store's: rows were changed in the store while it was read")
            }
        }
    }

    private func removeCopy(_ files: CopyFiles) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: files.database.path + suffix) }
        try? FileManager.default.removeItem(at: files.revision)
    }

    /// Whether the copy ends with the store's last event, hash for hash.
    private func tailMatches(_ connection: PostgresConnection, _ store: EventStore) async throws -> Bool {
        let rows = try await run(connection, "SELECT position, hash FROM events ORDER BY position DESC LIMIT 1")
        guard let row = rows.first else { return try store.lastPosition() == 0 }
        let (position, hash) = try row.decode((Int64, ByteBuffer).self)
        guard try store.lastPosition() == position, let stored = try store.event(at: position, verify: false) else { return false }
        return stored.hash == Array(hash.readableBytesView)
    }

    /// Copies every row written after revision `revision` into `store`, table by table,
    /// parents first, a page of rows a statement (by primary key, so each statement has
    /// its deadline and memory stays flat) and a SQLite transaction a page.
    func pull(_ connection: PostgresConnection, into store: EventStore, after revision: Int64,
              progress: (@Sendable (Int64, Int64) -> Void)?) async throws {
        var counting = PostgresBindings()
        counting.append(revision)
        let total = try await run(connection, "SELECT count(*) FROM events WHERE rev > $1", counting).first?.decode(Int64.self) ?? 0
        var done: Int64 = 0
        progress?(0, total)
        let page = 4096
        for table in ReplicatedTable.all {
            let keyColumns = table.key.map(quoted).joined(separator: ", ")
            let keyIndexes = table.key.map { table.columns.firstIndex(of: $0)! }
            let select = "SELECT \(table.columns.map(quoted).joined(separator: ", ")) FROM \(table.name) WHERE rev > $1"
            var last: [ReplicatedValue]?
            while true {
                var binds = PostgresBindings()
                binds.append(revision)
                var sql = select
                if let last {
                    for value in last { Self.bind(value, into: &binds) }
                    sql += " AND (\(keyColumns)) > (" + (2..<(2 + last.count)).map { "$\($0)" }.joined(separator: ", ") + ")"
                }
                sql += " ORDER BY \(keyColumns) LIMIT \(page)"
                let rows = try await run(connection, sql, binds).map { try Self.decode($0, kinds: table.kinds) }
                guard let final = rows.last else { break }
                try store.applyReplicatedRows([ReplicatedRows(table: table, rows: rows)])
                if table.name == "events" { done += Int64(rows.count); progress?(done, total) }
                if rows.count < page { break }
                last = keyIndexes.map { final[$0] }
            }
        }
    }

    /// Ran a write on a local copy and sent back the rows it wrote.
    @available(*, unavailable, message: "use writeNatively(_:): the store is written as itself, through the same append rules as a SQLite log, with no copy made (Interchange.import(_:into:) and a collector's checks take the PostgresLogWriter it hands out)")
    public func write<T: Sendable>(_ body: @escaping (EventStore) throws -> T) async throws -> T {
        fatalError("unavailable")
    }
}

func quoted(_ name: String) -> String { "\"\(name)\"" }
