import EventStore
import Foundation
import NIOCore
import PostgresNIO

extension SharedStore {
    /// Runs `body` with a writer of the store as it is in PostgreSQL, in one transaction
    /// that holds the store's revision row (writers anywhere are serialised on it):
    /// everything `body` stored is committed if it returns, nothing if it throws.
    ///
    /// Nothing is copied to this machine: the writer reads and writes the store's rows
    /// through its indexes, and appends through the same rules as a SQLite log
    /// (``EventLogWriter``), so the positions, hashes, leaves and heads are the ones a
    /// SQLite file would hold. Every row it writes carries the write's revision, so local
    /// copies (`verify`, `export`) fetch exactly what changed.
    ///
    /// `body` runs on a thread that may block (it waits for the server's answers).
    public func writeNatively<T: Sendable>(_ body: @escaping @Sendable (PostgresLogWriter) throws -> T) async throws -> T {
        try await writeNativelyReportingTail(body).result
    }

    /// The store's schema is not this build's, or the lock's statement failed (no such
    /// tables): ``version(_:requireMigrated:)`` says which; `underlying` is what was seen.
    private struct SchemaNotCurrent: Error {
        var underlying: Error
    }

    /// ``writeNatively(_:)``, also answering the log's tail as the write left it (nil if
    /// it imported nothing): what a write that follows it (``writeNatively(following:_:)``)
    /// checks it started from.
    package func writeNativelyReportingTail<T: Sendable>(_ body: @escaping @Sendable (PostgresLogWriter) throws -> T) async throws
        -> (result: T, tail: WriteTail?) {
        do {
            return try await writeReportingTail(body)
        } catch is SchemaNotCurrent {
            // Named precisely (not migrated, older, newer, not a store) by the full check;
            // a store migrated meanwhile passes it, and the write (which did nothing) runs again.
            try await withConnection { _ = try await version($0) }
            do {
                return try await writeReportingTail(body)
            } catch let again as SchemaNotCurrent {
                throw again.underlying
            }
        }
    }

    private func writeReportingTail<T: Sendable>(_ body: @escaping @Sendable (PostgresLogWriter) throws -> T) async throws
        -> (result: T, tail: WriteTail?) {
        try await Self.blocking {
            try await withConnection { connection in
                // BEGIN is not waited for on its own: the connection runs it before the lock's
                // statement, whose answer is waited for (a collector's writer waits for each of
                // its statements in turn, inside the lock, while uploads queue behind it).
                let begin: EventLoopFuture<PostgresQueryResult> = connection.query(PostgresQuery(unsafeSQL: "BEGIN"), logger: Self.logger)
                do {
                    // The revision row locked and the schema's version read in one round trip.
                    let state: (id: UUID, revision: Int64)?
                    do {
                        state = try await currentState(connection, locking: true)
                    } catch {
                        let error = translate(error)
                        guard case SharedStoreError.server = error else { throw error }
                        throw SchemaNotCurrent(underlying: error)
                    }
                    // A BEGIN that failed left the lock's statement outside any transaction.
                    // (Answered before the lock's statement: the deadline only bounds the wait.)
                    _ = try begin.wait(until: SharedStore.statementDeadlineFromNow(), on: connection,
                                       onExpiry: { _ = connection.close() as EventLoopFuture<Void> })
                    // Nil: the schema is not this version's, or (if the full check then finds it
                    // is) the store has lost its state row, and is no store.
                    guard let state else { throw SchemaNotCurrent(underlying: SharedStoreError.notAGamelogStore(location: location.description)) }
                    let writer = PostgresLogWriter(store: self, connection: connection, revision: state.revision + 1)
                    let result = try body(writer)
                    let tail = writer.tail(committed: writer.wrote ? state.revision + 1 : state.revision)
                    try writer.commit(revision: state.revision + 1)
                    return (result, tail)
                } catch {
                    _ = try? await run(connection, "ROLLBACK")
                    throw error
                }
            }
        }
    }

    /// The log's tail as a write planned it: its last event, the next recording and tree
    /// ids, its types and dictionary, and the revision the store has once it committed.
    /// A write that follows it starts from here.
    package struct WriteTail: Sendable, Equatable {
        package var revision: Int64
        package var lastPosition: Int64
        var lastHash: [UInt8]
        var types: [String: Int64]
        var nextStreamID: Int64
        var nextTreeID: Int64
        var dictionaryID: Int64?
        var dictionary: [UInt8]

        /// Whether the log had events at this tail.
        package var holdsEvents: Bool { lastPosition > 0 }
    }

    /// The write before a following one (``writeNatively(following:_:)``): the tail it
    /// announced while PostgreSQL was still storing it, and how it ended.
    package struct Followed: Sendable {
        package var tail: WriteTail
        /// Waits for the write to end: the tail it committed, or nil if it failed (nothing of it kept).
        package var outcome: @Sendable () async -> WriteTail?

        package init(tail: WriteTail, outcome: @escaping @Sendable () async -> WriteTail?) {
            self.tail = tail
            self.outcome = outcome
        }
    }

    /// Runs `body` as a write that follows another still under way, `followed`: planned
    /// and sent to PostgreSQL from the tail that write announced, without the store's
    /// lock, so PostgreSQL stores both at once and the writer plans this one while the
    /// other is stored. It commits only once the other has, and only if that one
    /// committed the very tail this one started from and no write came between (the
    /// lock, then the revision, checked): then the store holds what writing them one after
    /// the other would have made. Otherwise, or if `body` throws, nothing of it is kept
    /// and nil is returned: the caller writes again the usual way.
    ///
    /// `body` must touch only devices and recordings the followed write does not (what
    /// it reads of them was read before that write committed); the rows every write moves
    /// (the catalog's coverage, the store's revision) are written after the lock.
    package func writeNatively<T: Sendable>(following followed: Followed,
                                           _ body: @escaping @Sendable (PostgresLogWriter) throws -> T) async throws
        -> (result: T, tail: WriteTail?)? {
        guard followed.tail.holdsEvents else { return nil }
        return try await Self.blocking {
            try await withConnection { connection in
                let begin: EventLoopFuture<PostgresQueryResult> = connection.query(PostgresQuery(unsafeSQL: "BEGIN"), logger: Self.logger)
                // Alone, a following write never waits for a row lock: its rows are of other
                // devices than the write before's, at positions and ids past them. Another
                // collector's write, taking the lock after the one followed, plans from the same
                // tail and waits for this one's rows while this one waits for the lock: this
                // one gives up at once instead (each write of two collectors waited half a
                // second so, ten times slower than without following; docs/BENCHMARKS.md, session 46).
                let timeout: EventLoopFuture<PostgresQueryResult> = connection.query(PostgresQuery(unsafeSQL: "SET LOCAL lock_timeout = '20ms'"),
                                                                                    logger: Self.logger)
                do {
                    let writer = PostgresLogWriter(store: self, connection: connection, following: followed.tail)
                    let result: T
                    do {
                        result = try body(writer)
                        guard !writer.rolledBack else { throw CancellationError() }
                        try writer.flush()
                        // Both answered before the flushed statements: the deadline only bounds the wait.
                        let deadline = SharedStore.statementDeadlineFromNow()
                        for sent in [begin, timeout] {
                            _ = try sent.wait(until: deadline, on: connection, onExpiry: { _ = connection.close() as EventLoopFuture<Void> })
                        }
                    } catch {
                        // Planned on a tail that may not be the store's: an error here is no verdict.
                        _ = try? await run(connection, "ROLLBACK")
                        return nil
                    }
                    let tail = writer.tail(committed: writer.wrote ? followed.tail.revision + 1 : followed.tail.revision)
                    guard let committed = await followed.outcome(), committed == followed.tail,
                          try writer.commitFollowing(after: followed.tail.revision)
                    else {
                        _ = try? await run(connection, "ROLLBACK")
                        return nil
                    }
                    return (result, tail)
                } catch {
                    _ = try? await run(connection, "ROLLBACK")
                    throw error
                }
            }
        }
    }
}

/// The shared store written as itself, inside ``SharedStore/writeNatively(_:)``'s
/// transaction: an ``EventLogWriter`` (imports, a collector's uploads) and what a
/// collector checks and stores besides (device trees, cosignatures).
///
/// Used from one thread at a time, the one `writeNatively` runs its body on.
public final class PostgresLogWriter: PostgresLogReader, EventLogWriter, @unchecked Sendable {
    /// The revision every row this write makes carries.
    let revision: Int64
    /// Whether anything was written (the store's revision moves only then).
    private(set) var wrote = false
    private var savepoints = 0
    /// The savepoint just sent, if nothing was sent or held after it.
    private var savepointAtEnd: String?
    /// Statements sent so far, each a round trip of the connection.
    private(set) var statementsSent = 0

    init(store: SharedStore, connection: PostgresConnection, revision: Int64) {
        self.revision = revision
        defersSharedRows = false
        super.init(store: store, borrowing: connection)
    }

    /// A writer of a write that follows another (``SharedStore/writeNatively(following:_:)``),
    /// starting from the tail it announced.
    init(store: SharedStore, connection: PostgresConnection, following tail: SharedStore.WriteTail) {
        revision = tail.revision + 1
        defersSharedRows = true
        super.init(store: store, borrowing: connection)
        known = Known(lastPosition: tail.lastPosition, lastHash: tail.lastHash, types: tail.types, nextStreamID: tail.nextStreamID)
        encoder = PayloadEncoder(dictionaryID: tail.dictionaryID, dictionary: tail.dictionary)
        dictionary = tail.dictionary
        nextTreeID = tail.nextTreeID
    }

    /// Whether a scope of this write was rolled back (``undoingOnFailure(_:)``): a following
    /// write then forgot the tail it started from, and is not kept.
    private(set) var rolledBack = false
    /// Whether the rows every write moves (``sharedRows``) wait for ``commit(revision:)``:
    /// a following write sends them only once it holds the store's lock.
    private let defersSharedRows: Bool
    /// Tables with one row every write moves.
    private static let sharedRows: Set<String> = ["catalog_coverage", "store_state"]
    /// Writes of ``sharedRows`` held for the commit (see ``defersSharedRows``).
    private var deferred: [(write: HeldWrite, tables: Set<String>)] = []
    /// The newest dictionary's bytes, as read with the tail.
    private var dictionary: [UInt8] = []

    /// The log's tail as this write planned it, once the store is at `revision` (nil if it
    /// did not read or plan a tail).
    func tail(committed revision: Int64) -> SharedStore.WriteTail? {
        guard let known, let encoder, let nextTreeID else { return nil }
        return SharedStore.WriteTail(revision: revision, lastPosition: known.lastPosition, lastHash: known.lastHash, types: known.types,
                                     nextStreamID: known.nextStreamID, nextTreeID: nextTreeID, dictionaryID: encoder.dictionaryID,
                                     dictionary: dictionary)
    }

    /// Called once, with the tail an import planned, as soon as it sent its rows (before
    /// it waits for PostgreSQL to store them), if ``announcesPlannedTail`` is set: a
    /// collector then starts the next group's write from it.
    package var whenPlanned: (@Sendable (SharedStore.WriteTail) -> Void)?
    /// Whether the next import that completes announces its tail (``whenPlanned``): set
    /// by a collector before the import after which nothing moves the tail.
    package var announcesPlannedTail = false

    /// What the write's imports learned of the store (its last event, its type ids, the
    /// next recording id, the dictionary), kept for the next upload of the same write;
    /// forgotten when a savepoint is rolled back.
    struct Known {
        var lastPosition: Int64
        var lastHash: [UInt8]
        var types: [String: Int64]
        var nextStreamID: Int64
    }
    var known: Known?
    var encoder: PayloadEncoder?
    /// Device trees this write read or made, by public key: their row id and device (nil:
    /// none stored). A group's uploads and their imports then ask for each tree once
    /// (writers are serialised: only this write changes them). Forgotten with a savepoint
    /// rolled back.
    var knownTrees: [[UInt8]: (id: Int64, device: String?)?] = [:]
    /// The row id of the next tree this write makes (nil: not read yet).
    var nextTreeID: Int64?
    /// Tree rows this write read, by row id, as this write left them: an import's first
    /// leaf of a stored tree asks for its row, and a read behind a `COPY` under way waits
    /// for it. Forgotten with a savepoint rolled back.
    var knownTreeRows: [Int64: (publicKey: [UInt8], device: String, size: Int64, frontier: [UInt8]?)] = [:]
    /// Recordings' rows this write read or wrote, by uuid, as this write left them (nil:
    /// not stored): an import's batches ask for their recordings here first, so a batch
    /// is planned while PostgreSQL still copies the batch before it (a read would wait
    /// for that `COPY`). Forgotten with a savepoint rolled back.
    var knownStreams: [UUID: StreamRow?] = [:]
    /// Every head stored of a tree, by tree row id, as this write left them (root by
    /// size), for trees whose heads this write read or made: storing heads then asks
    /// nothing, so it need not wait for a `COPY` under way. Forgotten with a savepoint
    /// rolled back.
    var knownHeadRoots: [Int64: [Int64: [UInt8]]] = [:]
    /// The heads this write stored, exactly as stored: their cosignatures need not look
    /// them up (see ``store(cosignatures:)``). Forgotten with a savepoint rolled back.
    var headsStored: Set<TreeHead> = []

    /// A recording's row: its id, version, chain head (nil: stored before recordings kept
    /// their head) and device tree.
    struct StreamRow {
        var id: Int64
        var version: Int64
        var head: [UInt8]?
        var tree: Int64?
    }

    /// Statements sent and not yet answered (see ``execute(_:_:)``), and `COPY`s under way
    /// (see ``copy(into:columns:rows:)``).
    private var pending: [EventLoopFuture<Void>] = []
    /// Whether every statement in `pending` releases a savepoint (see ``undoingOnFailure(_:)``).
    private var pendingOnlyReleases = true

    /// A write held to be sent with the writes after it as one statement (``write(_:touching:_:)``).
    private struct HeldWrite {
        var sql: String
        /// Appends its values, numbered from 1 in `sql`.
        var bind: (inout PostgresBindings) -> Void
    }
    private var held: [HeldWrite] = []
    /// The tables the held writes touch.
    private var heldTables: Set<String> = []
    /// Trees made by this write and not sent yet (id, public key, device): one statement for all.
    private var heldTrees: [(id: Int64, publicKey: [UInt8], device: String)] = []

    /// Holds a write (an `INSERT` or `UPDATE` without a `WITH` of its own) to be sent with
    /// the ones after it as one statement, each a data-modifying `WITH` clause; it goes
    /// before any other statement, read or `COPY`. PostgresNIO sends a connection's next
    /// statement only once the one before is answered, so each statement was a round trip
    /// and two wake-ups: a collector's group of uploads made some twenty-five, and under
    /// load they were a third of its time. Writes that touch a table a held one touches go
    /// in a statement of their own, after it: the clauses of one statement do not see each
    /// other's rows.
    func write(_ sql: String, touching tables: Set<String>, _ bind: @escaping (inout PostgresBindings) -> Void) throws {
        if defersSharedRows, !tables.isDisjoint(with: Self.sharedRows) {
            holding()
            deferred.append((HeldWrite(sql: sql, bind: bind), tables))
            return
        }
        try hold(HeldWrite(sql: sql, bind: bind), touching: tables)
    }

    private func hold(_ write: HeldWrite, touching tables: Set<String>) throws {
        if !heldTables.isDisjoint(with: tables) { try sendHeld() }
        holding()
        held.append(write)
        heldTables.formUnion(tables)
    }

    /// Holds a new tree's row (see ``write(_:touching:_:)``): the trees a group's uploads
    /// make go in one row set.
    func holdTree(id: Int64, publicKey: [UInt8], device: String) throws {
        if heldTrees.isEmpty, heldTables.contains("trees") { try sendHeld() }
        holding()
        heldTrees.append((id, publicKey, device))
        heldTables.insert("trees")
    }

    /// A write held: its scope has statements to wait for, and nothing is right after a savepoint.
    private func holding() {
        pendingOnlyReleases = false
        savepointAtEnd = nil
    }

    /// Before a statement of its own goes (a read, a `COPY`): the held writes go first, and
    /// nothing is right after a savepoint any more.
    private func beforeStatement() throws {
        try sendHeld()
        savepointAtEnd = nil
        statementsSent += 1
    }

    /// Sends the held writes as one statement (not waited for, as ``execute(_:_:releasing:)``).
    private func sendHeld() throws {
        if !heldTrees.isEmpty {
            let trees = heldTrees, revision = self.revision
            heldTrees = []
            held.insert(HeldWrite(sql: """
                INSERT INTO trees (id, public_key, device, size, frontier, rev)
                SELECT v.id, v.key, v.device, 0, ''::bytea, $4 FROM unnest($1::bigint[], $2::bytea[], $3::text[]) AS v(id, key, device)
                """, bind: { binds in
                    binds.append(trees.map(\.id))
                    binds.append(trees.map { ByteBuffer(bytes: $0.publicKey) })
                    binds.append(trees.map(\.device))
                    binds.append(revision)
                }), at: 0)
        }
        guard !held.isEmpty else { return }
        let writes = held
        held = []
        heldTables = []
        var binds = PostgresBindings()
        guard writes.count > 1 else {
            writes[0].bind(&binds)
            return try sendWrite(writes[0].sql, binds)
        }
        var clauses: [String] = []
        for (index, write) in writes.enumerated() {
            let offset = binds.count
            write.bind(&binds)
            clauses.append("w\(index) AS (\(Self.renumbering(write.sql, by: offset)))")
        }
        try sendWrite("WITH " + clauses.joined(separator: ", ") + " SELECT 1", binds)
    }

    /// `sql` with each parameter `$n` numbered `$(n + offset)`.
    static func renumbering(_ sql: String, by offset: Int) -> String {
        guard offset > 0 else { return sql }
        var out = ""
        out.reserveCapacity(sql.utf8.count + 8)
        var digits = ""
        var inParameter = false
        func endParameter() {
            if inParameter, let number = Int(digits) { out += String(number + offset) }
            inParameter = false
            digits = ""
        }
        for character in sql {
            if inParameter, character.isASCII, character.isNumber {
                digits.append(character)
                continue
            }
            endParameter()
            if character == "$" {
                out.append(character)
                inParameter = true
            } else {
                out.append(character)
            }
        }
        endParameter()
        return out
    }

    /// Drops the held writes (their scope failed and is rolled back).
    private func dropHeld() {
        held = []
        heldTables = []
        heldTrees = []
    }

    override func beforeSend() throws { try beforeStatement() }

    /// Sends a statement whose rows are not read, without waiting for its answer: the
    /// writer goes on planning while the connection runs it. The answers are waited for
    /// (and the first failure thrown) with the next read's, at the end of a savepoint's
    /// scope, and with the commit. Held writes go first.
    func execute(_ sql: String, _ binds: PostgresBindings = PostgresBindings(), releasing: Bool = false) throws {
        try sendHeld()
        if !releasing { pendingOnlyReleases = false }
        try sendWrite(sql, binds)
    }

    /// Sends one statement, not waited for.
    private func sendWrite(_ sql: String, _ binds: PostgresBindings) throws {
        savepointAtEnd = nil
        statementsSent += 1
        guard let connection = borrowedConnection, !connection.isClosed else {
            throw SharedStoreError.unreachable(location: store.location.description, detail: "the writer's connection closed during its transaction")
        }
        pending.append(connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: SharedStore.logger).map { _ in })
    }

    override func beforeAnswer() throws { try flush() }

    /// Waits for every statement sent; throws the first one's failure.
    func flush() throws {
        try sendHeld()
        guard !pending.isEmpty else { return }
        let sent = pending
        pending = []
        pendingOnlyReleases = true
        var failure: Error?
        let deadline = SharedStore.statementDeadlineFromNow()
        for answer in sent {
            do {
                _ = try answer.wait(until: deadline, on: borrowedConnection, onExpiry: closeConnection)
            } catch {
                if failure == nil { failure = error }
                // A statement the server refused leaves the connection usable: what was sent
                // after it failed with it, and is drained. Any other failure (the deadline,
                // the connection gone) ends the write, and what was sent after is not waited
                // for: after PostgreSQL crashed during a write, PostgresNIO never answered
                // one such statement, closed connection or not (collect-load, session 47).
                guard case SharedStoreError.server = store.translate(error) else {
                    closeConnection()
                    break
                }
            }
        }
        if let failure { throw store.translate(failure) }
    }

    /// Closes the writer's connection: what a wait past its deadline does, so a server
    /// gone without a word, or a statement PostgresNIO never answers, does not hold the
    /// writer (and every upload behind it) for good.
    private var closeConnection: @Sendable () -> Void {
        let connection = borrowedConnection
        return { _ = connection?.close() as EventLoopFuture<Void>? }
    }

    /// Sends a statement whose rows are read later, with ``rows(of:_:)``: reads sent one
    /// after another and then read are waited for once (the connection still answers each
    /// before it sends the next: see ``write(_:touching:_:)``).
    func send(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws -> EventLoopFuture<PostgresQueryResult> {
        try beforeStatement()
        guard let connection = borrowedConnection, !connection.isClosed else {
            throw SharedStoreError.unreachable(location: store.location.description, detail: "the writer's connection closed during its transaction")
        }
        return connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: SharedStore.logger)
    }

    /// The rows of a statement ``send(_:_:)`` sent, each turned into a value by
    /// `decode`; the statements sent before it are answered (and their first failure
    /// thrown) first.
    func rows<T>(of answer: EventLoopFuture<PostgresQueryResult>, _ decode: (PostgresRandomAccessRow) throws -> T) throws -> [T] {
        try flush()
        let result: PostgresQueryResult
        do {
            result = try answer.wait(until: SharedStore.statementDeadlineFromNow(), on: borrowedConnection, onExpiry: closeConnection)
        } catch {
            throw store.translate(error)
        }
        return try result.rows.map { try decode($0.makeRandomAccess()) }
    }

    func changed() { wrote = true }

    /// Moves the store's revision if anything was written, and commits: the statements
    /// still unanswered, the revision's and the COMMIT are sent together and waited for
    /// once. A failure among them made PostgreSQL end the transaction without keeping
    /// anything (it answers the COMMIT as a ROLLBACK): the first failure is thrown.
    func commit(revision: Int64) throws {
        let shared = deferred
        deferred = []
        for (write, tables) in shared { try hold(write, touching: tables) }
        if wrote {
            try hold(HeldWrite(sql: "UPDATE store_state SET revision = $1", bind: { $0.append(revision) }), touching: ["store_state"])
        }
        try execute("COMMIT")
        try flush()
    }

    /// A following write's commit (``SharedStore/writeNatively(following:_:)``), once the
    /// write it follows committed: the store's revision moved on from `expected` (taking
    /// the store's lock, and checking that no write came between), with the rows held for
    /// the commit, in one statement; then the COMMIT. False, with nothing committed, if the
    /// revision was not `expected` (the caller rolls back).
    func commitFollowing(after expected: Int64) throws -> Bool {
        try sendHeld()
        var shared = deferred
        deferred = []
        var binds = PostgresBindings()
        binds.append(wrote ? revision : expected)
        binds.append(expected)
        // The lock taken without waiting: held by another writer, the revision will not be
        // `expected` once it is free, and this write is given up at once (see above).
        var clauses = ["locked AS (SELECT 1 FROM store_state WHERE revision = $2 FOR UPDATE NOWAIT)",
                       "moved AS (UPDATE store_state SET revision = $1 WHERE revision = $2 AND EXISTS (SELECT 1 FROM locked) RETURNING 1)"]
        // The clauses of one statement do not see each other's rows: of writes to one
        // table (a long import's coverage, batch after batch) the first goes with the check,
        // the rest after it.
        if let first = shared.first {
            first.write.bind(&binds)
            clauses.append("w0 AS (\(Self.renumbering(first.write.sql, by: 2)))")
            shared.removeFirst()
        }
        let answer = try send("WITH " + clauses.joined(separator: ", ") + " SELECT count(*) FROM moved", binds)
        guard try rows(of: answer, { try $0[0].decode(Int64.self) }).first == 1 else { return false }
        for (write, tables) in shared { try hold(write, touching: tables) }
        try execute("COMMIT")
        try flush()
        return true
    }

    /// Writes `rows` (``CopyRows``) into `table`'s `columns` with `COPY ... FROM STDIN`,
    /// behind the statements sent before it (the connection runs them in order), and
    /// returns once PostgreSQL takes the rows, without waiting for it to have stored them:
    /// like ``execute(_:_:releasing:)``'s statements, the `COPY`'s outcome is waited for
    /// (and its failure thrown) with the next read's answer, at the end of a savepoint's
    /// scope, and with the commit. An import plans its next batch meanwhile: a
    /// collector's writer waited for each `COPY`, which was two fifths of its time, while
    /// the server stored the rows. PostgreSQL takes rows this way at about twice the rate
    /// of an `INSERT` of the same rows from arrays.
    func copy(into table: String, columns: [String], rows: CopyRows) throws {
        try beforeStatement()
        guard let connection = borrowedConnection, !connection.isClosed else {
            throw SharedStoreError.unreachable(location: store.location.description, detail: "the writer's connection closed during its transaction")
        }
        let buffer = rows.buffer, store = self.store
        // A COPY under way when the server went away was never ended by PostgresNIO, not
        // even when its connection closed (a collector's writer, and every upload behind
        // it, waited for good: tools/collect-load.sh's crash of PostgreSQL found it). So
        // it is raced against a deadline of its own, in proportion to its rows (50,000 take
        // under a second; a group holds at most that many): past it the connection is
        // closed and the write fails as the store being unreachable, nothing of it kept.
        let deadline = Duration.seconds(10) + .milliseconds(rows.count / 10)
        let outcome = connection.eventLoop.makePromise(of: Void.self)
        // Signalled once the connection runs the COPY (its rows are being sent), or once it
        // failed: statements sent after that run after it, in order.
        let begun = DispatchSemaphore(value: 0)
        Task(executorPreference: SharedStore.WaitExecutor.shared) {
            do {
                try await store.withDeadline(deadline, onExpiry: { _ = connection.close() as EventLoopFuture<Void> }) {
                    try await connection.copyFrom(table: table, columns: columns, logger: SharedStore.logger) { writer in
                        begun.signal()
                        try await writer.write(buffer)
                    }
                }
                outcome.succeed(())
            } catch {
                outcome.fail(error)
            }
            begun.signal()
        }
        begun.wait()
        pendingOnlyReleases = false
        pending.append(outcome.futureResult)
    }

    /// Runs `body` so that what it writes is undone alone if it throws (a savepoint): a
    /// refused upload in a group leaves the others stored.
    public func undoingOnFailure<T>(_ body: () throws -> T) throws -> T {
        if defersSharedRows {
            // A following write gives up whole at any failure (see the catch below): no
            // savepoint to roll back to, and two round trips fewer.
            do {
                let result = try body()
                if !pendingOnlyReleases { try flush() }
                return result
            } catch {
                dropHeld()
                rolledBack = true
                _ = try? flush()
                throw error
            }
        }
        // A scope that opens right where another opened (nothing sent between) rolls back
        // to the same state: it shares that savepoint rather than sending one of its own
        // and its release (two round trips of a collector's group, see ``write(_:touching:_:)``).
        let name: String
        let shared = savepointAtEnd != nil
        if let outer = savepointAtEnd {
            name = outer
        } else {
            savepoints += 1
            name = "gamelog_\(savepoints)"
            try execute("SAVEPOINT \(name)")
            savepointAtEnd = name
        }
        let wroteBefore = wrote
        do {
            let result = try body()
            // Its statements' answers are its own: a failure among them undoes it alone. A
            // nested savepoint's release, all that may be left of them after its own wait,
            // is not waited for here (it fails only with the connection, which fails the
            // write at its next wait, and the commit waits for everything).
            if !pendingOnlyReleases { try flush() }
            if !shared { try execute("RELEASE SAVEPOINT \(name)", releasing: true) }
            return result
        } catch {
            // Its writes not sent yet are dropped; statements sent after the failing one
            // failed with it, and their answers are drained.
            dropHeld()
            rolledBack = true
            if announced {
                // A write that announced its tail (see ``AnnouncedTailUndone``) does not go on
                // past a part of it undone: nothing more is written in this transaction, which
                // ends whole. Nor does one that follows another (its tail and reads are its
                // start's: above).
                _ = try? flush()
                throw AnnouncedTailUndone()
            }
            _ = try? flush()
            try execute("ROLLBACK TO SAVEPOINT \(name)")
            try flush()
            wrote = wroteBefore
            known = nil
            // What was rolled back may have been asked about since; asking again is always right.
            absentIDs = []
            knownTrees = [:]
            knownTreeRows = [:]
            knownStreams = [:]
            knownHeadRoots = [:]
            headsStored = []
            nextTreeID = nil
            throw error
        }
    }

    // MARK: - EventLogWriter

    public func streamVersion(_ stream: UUID) throws -> Int64 {
        var binds = PostgresBindings()
        binds.append(ByteBuffer(bytes: stream.bytes))
        return try fetch("SELECT version FROM streams WHERE uuid = $1", binds) { try $0[0].decode(Int64.self) }.first ?? 0
    }

    /// The last position, as this write's imports left it where they know it (the write
    /// holds the store's lock: no one else appends meanwhile).
    public override func lastPosition() throws -> Int64 {
        try tail().known.lastPosition
    }

    /// What an import starts from: the log's tail, its types, the next recording id and
    /// the dictionary, as this write's imports left them, or read (with the next tree id)
    /// in one round trip: an import asks for the last position first, and two reads of
    /// the tail were two waits inside the store's lock.
    func tail() throws -> (known: Known, encoder: PayloadEncoder) {
        if let known, let encoder { return (known, encoder) }
        return try readTail(try sendTail())
    }

    private static let tailQuery = """
        SELECT t.position, t.hash, (SELECT array_agg(name ORDER BY id) FROM event_types), (SELECT array_agg(id ORDER BY id) FROM event_types),
               (SELECT coalesce(max(id), 0) FROM streams), d.id, d.bytes, (SELECT coalesce(max(id), 0) FROM trees)
        FROM (SELECT 1) AS one
        LEFT JOIN (SELECT position, hash FROM events ORDER BY position DESC LIMIT 1) AS t ON true
        LEFT JOIN (SELECT id, bytes FROM dictionaries ORDER BY id DESC LIMIT 1) AS d ON true
        """

    private func sendTail() throws -> EventLoopFuture<PostgresQueryResult> { try send(Self.tailQuery) }

    private func readTail(_ answer: EventLoopFuture<PostgresQueryResult>) throws -> (known: Known, encoder: PayloadEncoder) {
        let row = try rows(of: answer) { row in
            (position: try row[0].decode(Int64?.self), hash: try row[1].decode(ByteBuffer?.self).map { Array($0.readableBytesView) },
             names: try row[2].decode([String]?.self) ?? [], ids: try row[3].decode([Int64]?.self) ?? [],
             maxStream: try row[4].decode(Int64.self),
             dictionary: try row[5].decode(Int64?.self), bytes: try row[6].decode(ByteBuffer?.self).map { Array($0.readableBytesView) },
             maxTree: try row[7].decode(Int64.self))
        }.first
        let read = Known(lastPosition: row?.position ?? 0, lastHash: row?.hash ?? ChainHash.genesis,
                         types: Dictionary(zip(row?.names ?? [], row?.ids ?? []), uniquingKeysWith: { first, _ in first }),
                         nextStreamID: (row?.maxStream ?? 0) + 1)
        // Kept by the write: an import after a rolled-back one (which forgets `known`) reuses it.
        let encoder: PayloadEncoder
        if let kept = self.encoder {
            encoder = kept
        } else {
            encoder = PayloadEncoder(dictionaryID: row?.dictionary, dictionary: row?.bytes ?? [])
            dictionary = row?.bytes ?? []
        }
        self.encoder = encoder
        known = read
        if nextTreeID == nil { nextTreeID = (row?.maxTree ?? 0) + 1 }
        return (read, encoder)
    }

    /// Answered from the recordings' rows this write knows (``knownStreams``), reading
    /// only those it does not: a collector's group read them all before its import.
    public func streamVersions(_ streams: Set<UUID>) throws -> [UUID: Int64] {
        guard !streams.isEmpty else { return [:] }
        try readStreams(streams)
        return Dictionary(uniqueKeysWithValues: streams.map { ($0, knownStreams[$0].flatMap { $0?.version } ?? 0) })
    }

    public func event(id: UUID) throws -> StoredEvent? { try storedEvents(ids: [id])[id] }

    /// The recording's stored head when `version` is where it stands (what an upload that
    /// continues a recording asks): one row, rather than every event of the recording.
    public func streamHash(_ stream: UUID, at version: Int64) throws -> [UInt8]? {
        guard version > 0 else { return ChainHash.genesis }
        var binds = PostgresBindings()
        binds.append(ByteBuffer(bytes: stream.bytes))
        let row = try fetch("SELECT version, head FROM streams WHERE uuid = $1", binds) { row in
            (try row[0].decode(Int64.self), try row[1].decode(ByteBuffer?.self).map { Array($0.readableBytesView) })
        }.first
        if let row, row.0 == version, let head = row.1, head.count == 32 { return head }
        guard let row, row.0 >= version else { return nil }
        return try recomputedStreamHash(stream, at: version)
    }

    public func storedEvents(ids: [UUID]) throws -> [UUID: StoredEvent] {
        guard !ids.isEmpty else { return [:] }
        // Taken as new: nothing to ask, and nothing to note for the append, which asks
        // nothing either (a set of every id, hashed three times an event, was a twentieth
        // of a collector's write).
        if assumesNewEvents { return [:] }
        var binds = PostgresBindings()
        binds.append(ids.map { ByteBuffer(bytes: $0.bytes) })
        let positions = try fetch("SELECT position FROM events WHERE event_id = ANY($1::bytea[]) ORDER BY position", binds) {
            try $0[0].decode(Int64.self)
        }
        var out: [UUID: StoredEvent] = [:]
        for position in positions {
            if let event = try event(at: position, verify: false) { out[event.id] = event }
        }
        absentIDs.formUnion(ids.lazy.filter { out[$0] == nil })
        return out
    }

    /// Payloads compressed before the write began (``CompressedPayloads``), by event id:
    /// a collector compresses an upload's while it waits for the writer, so the write,
    /// which holds the store's lock, does not. Used when compressed with the dictionary
    /// the write would use; otherwise compressed again.
    package var precompressed: CompressedPayloads?

    /// Whether `storedEvents(ids:)` answers "none" without asking: see ``assumingNewEvents(_:)``.
    private(set) var assumesNewEvents = false

    /// Runs `body` (an import) taking its events as new: their ids are not looked up,
    /// which for an upload of new events was most of the store's time in it. If one is
    /// stored after all, the write fails (the events table's unique index refuses it, or
    /// a device tree's leaf is taken); then, as on any failure, everything `body` wrote
    /// is undone and nil is returned, and the caller imports again the careful way,
    /// whose outcome stands (stored events skipped, conflicts named).
    /// - Throws: ``AnnouncedTailUndone`` if the import had announced its tail
    ///   (``whenPlanned``): the write must end, nothing of it kept, before it imports again.
    package func assumingNewEvents<T>(_ body: () throws -> T) throws -> T? {
        do {
            return try undoingOnFailure {
                assumesNewEvents = true
                defer { assumesNewEvents = false }
                return try body()
            }
        } catch {
            // After its tail was announced the scope threw ``AnnouncedTailUndone``, and a
            // following write gives up whole (``undoingOnFailure(_:)``): no falling back.
            if announced || defersSharedRows { throw error }
            return nil
        }
    }

    /// An import that announced its tail (``whenPlanned``) was undone: a write that follows
    /// this one holds rows planned after that tail, which an import in its place could wait
    /// for while the follower waits for this write. The write fails with nothing kept; the
    /// collector tells the follower, and writes the group again once it gave up.
    package struct AnnouncedTailUndone: Error {}

    /// Whether this write announced its tail (``whenPlanned``).
    private(set) var announced = false

    /// Ids this write asked for and found absent, and has not stored since: an import
    /// checks its lines' ids against the store and then appends them, and the append
    /// need not ask again (writers are serialised, so only this write can add them).
    var absentIDs: Set<UUID> = []

    public func importTransaction(_ body: (any EventLogImport) throws -> Void) throws {
        try undoingOnFailure {
            let transaction = try PostgresImport(writer: self)
            try body(transaction)
            try transaction.finish()
            // Only a write that moves the store's revision has the tail it would announce
            // (one that stored nothing commits none). Before this scope waits for
            // PostgreSQL to store what the import sent.
            if announcesPlannedTail, wrote, let whenPlanned, let tail = tail(committed: revision) {
                announcesPlannedTail = false
                announced = true
                whenPlanned(tail)
            }
        }
    }

    /// Reads the rows of those of `uuids` this write does not know yet into
    /// ``knownStreams`` (in one statement): each batch of an import asks, and finds
    /// there the rows earlier batches left and a collector's ``prepare(publicKeys:recordings:)``
    /// read for its whole group.
    func readStreams(_ uuids: Set<UUID>) throws {
        try sendStreams(uuids).map(readStreams)
    }

    /// The read of ``readStreams(_:)``, sent (nil: nothing to ask).
    private func sendStreams(_ uuids: Set<UUID>) throws -> (unknown: [UUID], answer: EventLoopFuture<PostgresQueryResult>)? {
        let unknown = uuids.filter { knownStreams[$0] == nil }
        guard !unknown.isEmpty else { return nil }
        var list = PostgresBindings()
        list.append(unknown.map { ByteBuffer(bytes: $0.bytes) })
        return (Array(unknown), try send("SELECT uuid, id, version, head, tree_id FROM streams WHERE uuid = ANY($1::bytea[])", list))
    }

    private func readStreams(_ sent: (unknown: [UUID], answer: EventLoopFuture<PostgresQueryResult>)) throws {
        let rows = try rows(of: sent.answer) { row in
            (UUID(bytes: Array(try row[0].decode(ByteBuffer.self).readableBytesView)),
             StreamRow(id: try row[1].decode(Int64.self), version: try row[2].decode(Int64.self),
                       head: try row[3].decode(ByteBuffer?.self).map { Array($0.readableBytesView) }, tree: try row[4].decode(Int64?.self)))
        }
        for uuid in sent.unknown { knownStreams[uuid] = .some(nil) }
        for case (let uuid?, let row) in rows { knownStreams[uuid] = row }
    }

    /// What a collector's import of a group's uploads reads of the store, sent together and
    /// then read (three statements, each a round trip, rather than one a device and one a
    /// batch): the devices' trees (``deviceTreesAndFrontiers(publicKeys:)``), the recordings'
    /// rows (``readStreams(_:)``) and the log's tail.
    package func prepare(publicKeys: [[UInt8]], recordings: Set<UUID>) throws -> [[UInt8]: (tree: DeviceTree, frontier: MerkleTree.Frontier?)] {
        let tail = known == nil ? try sendTail() : nil
        let streams = try sendStreams(recordings)
        let trees = try sendTrees(publicKeys)
        if let tail { _ = try readTail(tail) }
        try streams.map(readStreams)
        return try trees.map(readTrees) ?? [:]
    }

    // MARK: - What a collector reads and stores

    /// The device tree of `publicKey` as stored (with its heads, smallest first), or nil.
    public func deviceTree(publicKey: [UInt8]) throws -> DeviceTree? {
        try deviceTreeAndFrontier(publicKey: publicKey)?.tree
    }

    /// The device tree of `publicKey` and its frontier (``treeFrontier(publicKey:)``),
    /// read together: what a collector asks of every upload.
    package func deviceTreeAndFrontier(publicKey: [UInt8]) throws -> (tree: DeviceTree, frontier: MerkleTree.Frontier?)? {
        try deviceTreesAndFrontiers(publicKeys: [publicKey])[publicKey]
    }

    /// ``deviceTreeAndFrontier(publicKey:)`` of several keys, in two statements whatever
    /// their number: what a collector asks of a group's uploads. A key with no tree has no entry.
    package func deviceTreesAndFrontiers(publicKeys: [[UInt8]]) throws -> [[UInt8]: (tree: DeviceTree, frontier: MerkleTree.Frontier?)] {
        try sendTrees(publicKeys).map(readTrees) ?? [:]
    }

    /// The read of ``deviceTreesAndFrontiers(publicKeys:)``, sent (nil: no keys): each tree
    /// with its heads, one row a head (one with none for a tree without), in one
    /// statement (each statement is a round trip: see ``write(_:touching:_:)``).
    private func sendTrees(_ publicKeys: [[UInt8]]) throws -> (keys: [[UInt8]], answer: EventLoopFuture<PostgresQueryResult>)? {
        guard !publicKeys.isEmpty else { return nil }
        var binds = PostgresBindings()
        binds.append(publicKeys.map { ByteBuffer(bytes: $0) })
        return (publicKeys, try send("""
            SELECT t.id, t.public_key, t.device, t.size, t.frontier, h.size, h.root, h.signed_at, h.flags, h.signature
            FROM trees t LEFT JOIN tree_heads h ON h.tree_id = t.id
            WHERE t.public_key = ANY($1::bytea[]) ORDER BY t.id, h.size
            """, binds))
    }

    private func readTrees(_ sent: (keys: [[UInt8]], answer: EventLoopFuture<PostgresQueryResult>)) throws
        -> [[UInt8]: (tree: DeviceTree, frontier: MerkleTree.Frontier?)] {
        var trees: [(id: Int64, publicKey: [UInt8], device: String, size: Int64, frontier: ByteBuffer?)] = []
        var heads: [Int64: [(TreeOwner) -> TreeHead]] = [:]
        var roots: [Int64: [Int64: [UInt8]]] = [:]
        for (tree, head) in try rows(of: sent.answer, { row in
            ((id: try row[0].decode(Int64.self), publicKey: Array(try row[1].decode(ByteBuffer.self).readableBytesView),
              device: try row[2].decode(String.self), size: try row[3].decode(Int64.self), frontier: try row[4].decode(ByteBuffer?.self)),
             try row[5].decode(Int64?.self) == nil ? nil
                : (try Self.head(row, from: 5), try row[5].decode(Int64.self), Array(try row[6].decode(ByteBuffer.self).readableBytesView)))
        }) {
            if trees.last?.id != tree.id { trees.append(tree) }
            if let (head, size, root) = head {
                heads[tree.id, default: []].append(head)
                roots[tree.id, default: [:]][size] = root
            }
        }
        for key in sent.keys { knownTrees[key] = .some(nil) }
        var found: [[UInt8]: (tree: DeviceTree, frontier: MerkleTree.Frontier?)] = [:]
        for tree in trees {
            knownTrees[tree.publicKey] = (tree.id, tree.device)
            knownTreeRows[tree.id] = (tree.publicKey, tree.device, tree.size, tree.frontier.map { Array($0.readableBytesView) })
            knownHeadRoots[tree.id] = roots[tree.id] ?? [:]
            let owner = TreeOwner(device: tree.device, publicKey: tree.publicKey)
            let parsed = tree.frontier.flatMap { MerkleTree.Frontier(size: tree.size, packed: Array($0.readableBytesView)) }
            found[tree.publicKey] = (DeviceTree(owner: owner, size: tree.size, heads: (heads[tree.id] ?? []).map { $0(owner) },
                                                holdsEveryLeaf: parsed != nil), parsed)
        }
        return found
    }

    /// The frontier of `publicKey`'s tree, where the store holds every leaf of it.
    public func treeFrontier(publicKey: [UInt8]) throws -> MerkleTree.Frontier? {
        var binds = PostgresBindings()
        binds.append(ByteBuffer(bytes: publicKey))
        return try fetch("SELECT size, frontier FROM trees WHERE public_key = $1", binds) { row -> MerkleTree.Frontier? in
            guard let packed = try row[1].decode(ByteBuffer?.self) else { return nil }
            return MerkleTree.Frontier(size: try row[0].decode(Int64.self), packed: Array(packed.readableBytesView))
        }.first ?? nil
    }

    /// The cosignatures stored for `head` that verify, by witness name.
    public func cosignatures(of head: TreeHead) throws -> [Cosignature] {
        var binds = PostgresBindings()
        binds.append(ByteBuffer(bytes: head.publicKey))
        binds.append(head.size)
        return try fetch("""
            SELECT c.witness, c.witness_key, c.cosigned_at, c.signature FROM cosignatures c JOIN trees t ON t.id = c.tree_id
            WHERE t.public_key = $1 AND c.size = $2 ORDER BY c.witness
            """, binds) { row -> Cosignature? in
            let at = try row[2].decode(Int64.self)
            guard at >= 0 else { return nil }
            let cosignature = Cosignature(witness: try row[0].decode(String.self), witnessKey: Array(try row[1].decode(ByteBuffer.self).readableBytesView),
                                          cosignedAt: UInt64(at), signature: Array(try row[3].decode(ByteBuffer.self).readableBytesView))
            return cosignature.isValid(for: head) ? cosignature : nil
        }.compactMap { $0 }
    }

    /// Stores cosignatures of heads the store holds (one already stored is kept).
    /// - Throws: ``EventStoreError/invalidCosignature(device:size:witness:)`` for one that
    ///   does not verify or whose head is not stored.
    public func store(cosignatures: [(head: TreeHead, cosignature: Cosignature)]) throws {
        guard !cosignatures.isEmpty else { return }
        for (head, cosignature) in cosignatures where !cosignature.isValid(for: head) {
            throw EventStoreError.invalidCosignature(device: head.device, size: head.size, witness: cosignature.witness)
        }
        if cosignatures.allSatisfy({ headsStored.contains($0.head) }) {
            // Heads this write stored, exactly: each is there, and nothing cosigned them
            // before. Held with the write's last rows (one statement fewer, see
            // ``write(_:touching:_:)``); it reads the trees' rows, so it follows theirs.
            let revision = self.revision
            try write("""
                INSERT INTO cosignatures (tree_id, size, witness, witness_key, cosigned_at, signature, rev)
                SELECT t.id, v.size, v.witness, v.witness_key, v.cosigned_at, v.cosignature, $7
                FROM unnest($1::bytea[], $2::bigint[], $3::text[], $4::bytea[], $5::bigint[], $6::bytea[])
                    AS v(public_key, size, witness, witness_key, cosigned_at, cosignature)
                JOIN trees t ON t.public_key = v.public_key
                ON CONFLICT DO NOTHING
                """, touching: ["cosignatures", "trees"]) { binds in
                binds.append(cosignatures.map { ByteBuffer(bytes: $0.head.publicKey) })
                binds.append(cosignatures.map(\.head.size))
                binds.append(cosignatures.map(\.cosignature.witness))
                binds.append(cosignatures.map { ByteBuffer(bytes: $0.cosignature.witnessKey) })
                binds.append(cosignatures.map { Int64(clamping: $0.cosignature.cosignedAt) })
                binds.append(cosignatures.map { ByteBuffer(bytes: $0.cosignature.signature) })
                binds.append(revision)
            }
            changed()
            return
        }
        var binds = PostgresBindings()
        binds.append(cosignatures.map { ByteBuffer(bytes: $0.head.publicKey) })
        binds.append(cosignatures.map(\.head.size))
        binds.append(cosignatures.map { ByteBuffer(bytes: $0.head.root) })
        binds.append(cosignatures.map { ByteBuffer(bytes: $0.head.signature) })
        binds.append(cosignatures.map(\.cosignature.witness))
        binds.append(cosignatures.map { ByteBuffer(bytes: $0.cosignature.witnessKey) })
        binds.append(cosignatures.map { Int64(clamping: $0.cosignature.cosignedAt) })
        binds.append(cosignatures.map { ByteBuffer(bytes: $0.cosignature.signature) })
        binds.append(revision)
        // The heads looked up and the cosignatures stored in one statement (one round trip
        // for a group's uploads): each row says whether its head was found.
        let rows = try fetch("""
            WITH v AS (
                SELECT * FROM unnest($1::bytea[], $2::bigint[], $3::bytea[], $4::bytea[], $5::text[], $6::bytea[], $7::bigint[], $8::bytea[])
                    WITH ORDINALITY AS v(public_key, size, root, signature, witness, witness_key, cosigned_at, cosignature, n)),
            head AS (
                SELECT v.n, t.id FROM v JOIN trees t ON t.public_key = v.public_key
                JOIN tree_heads h ON h.tree_id = t.id AND h.size = v.size AND h.root = v.root AND h.signature = v.signature),
            stored AS (
                INSERT INTO cosignatures (tree_id, size, witness, witness_key, cosigned_at, signature, rev)
                SELECT head.id, v.size, v.witness, v.witness_key, v.cosigned_at, v.cosignature, $9 FROM v JOIN head ON head.n = v.n
                ON CONFLICT DO NOTHING RETURNING 1)
            SELECT EXISTS (SELECT 1 FROM head WHERE head.n = v.n), (SELECT count(*) FROM stored) FROM v ORDER BY v.n
            """, binds) { (found: try $0[0].decode(Bool.self), inserted: try $0[1].decode(Int64.self)) }
        for (index, (head, cosignature)) in cosignatures.enumerated() where index >= rows.count || !rows[index].found {
            throw EventStoreError.invalidCosignature(device: head.device, size: head.size, witness: cosignature.witness)
        }
        if rows.contains(where: { $0.inserted > 0 }) { changed() }
    }
}

/// One import into the shared store: ``EventLogImport`` over PostgreSQL rows.
///
/// Each batch is planned by ``AppendPlanner`` (the rules a SQLite log appends by) from
/// rows fetched for the whole batch at once (its ids, its recordings), then written in a
/// few statements of arrays (`unnest`): one for the batch's events, one for its new
/// recordings, one for the recordings it moved, one for its catalog rows.
final class PostgresImport: EventLogImport {
    private let writer: PostgresLogWriter
    private var trees = TreeStates()
    private var lastPosition: Int64
    private var lastHash: [UInt8]
    private var types: [String: Int64]
    private var nextStreamID: Int64
    private var nextTypeID: Int64
    private let encoder: PayloadEncoder

    init(writer: PostgresLogWriter) throws {
        self.writer = writer
        let (known, encoder) = try writer.tail()
        (lastPosition, lastHash, types, nextStreamID) = (known.lastPosition, known.lastHash, known.types, known.nextStreamID)
        self.encoder = encoder
        nextTypeID = (types.values.max() ?? 0) + 1
        if lastPosition == 0 {
            // A store no write has touched yet has no coverage row: its empty catalog covers its empty log.
            try writer.write("""
                INSERT INTO catalog_coverage ("only", through, rev) SELECT 1, 0, $1
                WHERE NOT EXISTS (SELECT 1 FROM catalog_coverage) AND NOT EXISTS (SELECT 1 FROM events)
                """, touching: ["catalog_coverage", "events"]) { binds in
                binds.append(writer.revision)
            }
        }
    }

    private func remember() {
        writer.known = PostgresLogWriter.Known(lastPosition: lastPosition, lastHash: lastHash, types: types, nextStreamID: nextStreamID)
    }

    func append(_ events: [NewEvent], owners: [UUID: TreeOwner]) throws -> [AppendedEvent] {
        guard !events.isEmpty else { return [] }
        try AppendPlanner.validate(events)
        var rows = try PostgresAppendRows(writer: writer, events: events, types: types, nextStreamID: nextStreamID,
                                          nextTypeID: nextTypeID, encoder: encoder)
        var planner = AppendPlanner(lastPosition: lastPosition,
                                    lastHash: try AppendPlanner.chainStart(lastHash, at: lastPosition, in: writer.location),
                                    expectedEvents: events.count)
        var results: [AppendedEvent] = []
        results.reserveCapacity(events.count)
        for (index, event) in events.enumerated() {
            results.append(try planner.add(event, index: index, expecting: [:], owner: { owners[$0] }, trees: &trees, store: &rows))
        }
        guard planner.position > lastPosition else { return results }
        try rows.store(planner)
        types = rows.types
        nextStreamID = rows.nextStreamID
        nextTypeID = rows.nextTypeID
        lastPosition = planner.position
        lastHash = rows.lastHash?.bytes ?? lastHash
        remember()
        writer.changed()
        return results
    }

    func store(_ checkpoints: [Checkpoint]) throws {
        for checkpoint in checkpoints {
            var key = PostgresBindings()
            key.append(ByteBuffer(bytes: checkpoint.publicKey))
            key.append(checkpoint.sequence)
            let stored = try writer.fetch("""
                SELECT device, previous, signed_at, heads, signature FROM checkpoints WHERE public_key = $1 AND sequence = $2
                """, key) { row in
                Checkpoint(device: try row[0].decode(String.self), publicKey: checkpoint.publicKey, sequence: checkpoint.sequence,
                           previous: Array(try row[1].decode(ByteBuffer.self).readableBytesView),
                           signedAt: Timestamp(microsecondsSince1970: try row[2].decode(Int64.self)),
                           heads: Checkpoint.unpacked(Array(try row[3].decode(ByteBuffer.self).readableBytesView)) ?? [],
                           signature: Array(try row[4].decode(ByteBuffer.self).readableBytesView))
            }.first
            if let stored {
                guard stored == checkpoint else { throw EventStoreError.checkpointConflict(device: checkpoint.device, sequence: checkpoint.sequence) }
                continue
            }
            var binds = key
            binds.append(checkpoint.device)
            binds.append(ByteBuffer(bytes: checkpoint.previous))
            binds.append(checkpoint.signedAt.microsecondsSince1970)
            binds.append(ByteBuffer(bytes: Checkpoint.packed(checkpoint.heads)))
            binds.append(ByteBuffer(bytes: checkpoint.signature))
            binds.append(writer.revision)
            try writer.execute("""
                INSERT INTO checkpoints (public_key, sequence, device, previous, signed_at, heads, signature, rev)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                """, binds)
            writer.changed()
        }
    }

    func store(heads: [TreeHead], nodes: [(owner: TreeOwner, lo: Int64, hi: Int64, hash: [UInt8])]) throws {
        var rows = PostgresTreeRows(writer: writer)
        let treeIDs = try heads.map { try trees.tree(&rows, owner: TreeOwner(device: $0.device, publicKey: $0.publicKey)) }
        var storedRoots: [HeadSlot: [UInt8]] = [:]
        if treeIDs.allSatisfy({ writer.knownHeadRoots[$0] != nil }) {
            // Every head of these trees is known to this write: nothing to ask, so nothing
            // waits here for the events' `COPY`.
            for (head, tree) in zip(heads, treeIDs) {
                if let root = writer.knownHeadRoots[tree]?[head.size] { storedRoots[HeadSlot(tree: tree, size: head.size)] = root }
            }
        } else if !heads.isEmpty {
            // The roots stored at the heads' sizes, in one statement (an upload carries a head a game).
            var keys = PostgresBindings()
            keys.append(treeIDs)
            keys.append(heads.map(\.size))
            storedRoots = Dictionary(try writer.fetch("""
                SELECT h.tree_id, h.size, h.root FROM tree_heads h
                JOIN unnest($1::bigint[], $2::bigint[]) AS k(tree, size) ON h.tree_id = k.tree AND h.size = k.size
                """, keys) { row in
                (HeadSlot(tree: try row[0].decode(Int64.self), size: try row[1].decode(Int64.self)),
                 Array(try row[2].decode(ByteBuffer.self).readableBytesView))
            }, uniquingKeysWith: { first, _ in first })
        }
        var new: [(tree: Int64, head: TreeHead)] = []
        for (head, tree) in zip(heads, treeIDs) {
            let slot = HeadSlot(tree: tree, size: head.size)
            // Stored before, or earlier in this import: it must be the same head.
            if let stored = storedRoots[slot] {
                guard stored == head.root else { throw EventStoreError.headConflict(device: head.device, size: head.size) }
                continue
            }
            storedRoots[slot] = head.root
            writer.knownHeadRoots[tree]?[head.size] = head.root
            writer.headsStored.insert(head)
            new.append((tree, head))
            trees.grow(tree, to: head.size)
        }
        if !new.isEmpty {
            // One statement for all of them: a group of uploads carries a head a game,
            // each of which was a statement for PostgreSQL to parse, plan and answer.
            let revision = writer.revision
            try writer.write("""
                INSERT INTO tree_heads (tree_id, size, root, signed_at, flags, signature, rev)
                SELECT tree, size, root, signed_at, flags, signature, $7
                FROM unnest($1::bigint[], $2::bigint[], $3::bytea[], $4::bigint[], $5::bigint[], $6::bytea[])
                    AS v(tree, size, root, signed_at, flags, signature)
                """, touching: ["tree_heads"]) { binds in
                binds.append(new.map(\.tree))
                binds.append(new.map(\.head.size))
                binds.append(new.map { ByteBuffer(bytes: $0.head.root) })
                binds.append(new.map(\.head.signedAt.microsecondsSince1970))
                binds.append(new.map { Int64($0.head.isTestKey ? 1 : 0) })
                binds.append(new.map { ByteBuffer(bytes: $0.head.signature) })
                binds.append(revision)
            }
            writer.changed()
        }
        var tiles: [(tree: Int64, lo: Int64, hi: Int64, hash: [UInt8])] = []
        for node in nodes {
            let tree = try trees.tree(&rows, owner: node.owner)
            tiles.append((tree, node.lo, node.hi, node.hash))
            trees.grow(tree, to: node.hi)
        }
        try storeNodes(tiles)
    }

    private struct HeadSlot: Hashable {
        var tree: Int64
        var size: Int64
    }

    /// The trees the import grew, and the tiles their new leaves completed.
    func finish() throws {
        try storeNodes(trees.tiles)
        let changed = trees.states.filter(\.value.changed).sorted { $0.key < $1.key }
        guard !changed.isEmpty else { return }
        let revision = writer.revision
        try writer.write("""
            UPDATE trees t SET size = v.size, frontier = CASE WHEN v.partial THEN NULL ELSE v.frontier END, rev = $5
            FROM unnest($1::bigint[], $2::bigint[], $3::bytea[], $4::boolean[]) AS v(id, size, frontier, partial) WHERE t.id = v.id
            """, touching: ["trees"]) { binds in
            binds.append(changed.map(\.key))
            binds.append(changed.map(\.value.size))
            // A tree held in part has no frontier (NULL): the empty array element stands for it.
            binds.append(changed.map { ByteBuffer(bytes: $0.value.frontier?.packed ?? []) })
            binds.append(changed.map { $0.value.frontier == nil })
            binds.append(revision)
        }
        // Read again if asked for again (this import's trees are its own to grow).
        for (id, _) in changed { writer.knownTreeRows[id] = nil }
        writer.changed()
    }

    private func storeNodes(_ tiles: [(tree: Int64, lo: Int64, hi: Int64, hash: [UInt8])]) throws {
        guard !tiles.isEmpty else { return }
        let revision = writer.revision
        try writer.write("""
            INSERT INTO tree_nodes (tree_id, lo, hi, hash, rev)
            SELECT v.tree, v.lo, v.hi, v.hash, $5 FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bytea[]) AS v(tree, lo, hi, hash)
            ON CONFLICT DO NOTHING
            """, touching: ["tree_nodes"]) { binds in
            binds.append(tiles.map(\.tree))
            binds.append(tiles.map(\.lo))
            binds.append(tiles.map(\.hi))
            binds.append(tiles.map { ByteBuffer(bytes: $0.hash) })
            binds.append(revision)
        }
        writer.changed()
    }
}

/// The shared store's tree rows (``TreeRowStore``).
struct PostgresTreeRows: TreeRowStore {
    let writer: PostgresLogWriter
    /// Recordings this batch put in a tree, by row id.
    var streamTrees: [Int64: Int64] = [:]

    init(writer: PostgresLogWriter) { self.writer = writer }

    func tree(publicKey: [UInt8]) throws -> (id: Int64, device: String?)? {
        if let known = writer.knownTrees[publicKey] { return known }
        var binds = PostgresBindings()
        binds.append(ByteBuffer(bytes: publicKey))
        let found = try writer.fetch("SELECT id, device FROM trees WHERE public_key = $1", binds) { row in
            (id: try row[0].decode(Int64.self), device: try row[1].decode(String?.self))
        }.first
        writer.knownTrees[publicKey] = .some(found)
        return found
    }

    func treeRow(id: Int64) throws -> (publicKey: [UInt8], device: String, size: Int64, frontier: [UInt8]?)? {
        if let known = writer.knownTreeRows[id] { return known }
        var binds = PostgresBindings()
        binds.append(id)
        let row = try writer.fetch("SELECT public_key, device, size, frontier FROM trees WHERE id = $1", binds) { row in
            (Array(try row[0].decode(ByteBuffer.self).readableBytesView), try row[1].decode(String.self), try row[2].decode(Int64.self),
             try row[3].decode(ByteBuffer?.self).map { Array($0.readableBytesView) })
        }.first
        if let row { writer.knownTreeRows[id] = row }
        return row
    }

    func insertTree(_ owner: TreeOwner) throws -> Int64 {
        // The id chosen here, so the row is sent without waiting for an answer.
        let id = try writer.nextTreeID ?? ((try writer.fetch("SELECT coalesce(max(id), 0) FROM trees") { try $0[0].decode(Int64.self) }.first ?? 0) + 1)
        try writer.holdTree(id: id, publicKey: owner.publicKey, device: owner.device)
        writer.nextTreeID = id + 1
        writer.knownTrees[owner.publicKey] = (id, owner.device)
        writer.knownHeadRoots[id] = [:]
        writer.changed()
        return id
    }

    mutating func setTree(_ tree: Int64, ofStream rowID: Int64) throws { streamTrees[rowID] = tree }
}

/// A batch's rows in the shared store (``AppendRowStore``): the ids and recordings the
/// batch names, fetched in two statements; the new events gathered into column arrays.
struct PostgresAppendRows: AppendRowStore {
    var location: String { writer.location }
    private var treeRows: PostgresTreeRows
    private var writer: PostgresLogWriter { treeRows.writer }
    private let stored: [UUID: (position: Int64, streamVersion: Int64)]
    private(set) var types: [String: Int64]
    private var newTypes: [(id: Int64, name: String)] = []
    private(set) var nextStreamID: Int64
    private(set) var nextTypeID: Int64
    private let encoder: PayloadEncoder
    private(set) var lastHash: Hash32?
    /// The new events' rows, as `COPY` reads them.
    private var rows = CopyRows()
    private var written: [UUID] = []

    init(writer: PostgresLogWriter, events: [NewEvent], types: [String: Int64], nextStreamID: Int64, nextTypeID: Int64,
         encoder: PayloadEncoder) throws {
        treeRows = PostgresTreeRows(writer: writer)
        self.types = types
        self.nextStreamID = nextStreamID
        self.nextTypeID = nextTypeID
        self.encoder = encoder
        let unknown = events.lazy.map(\.id).filter { !writer.absentIDs.contains($0) }
        if writer.assumesNewEvents || unknown.isEmpty {
            stored = [:]
        } else {
            var idList = PostgresBindings()
            idList.append(unknown.map { ByteBuffer(bytes: $0.bytes) })
            stored = Dictionary(try writer.fetch("SELECT event_id, position, stream_version FROM events WHERE event_id = ANY($1::bytea[])", idList) { row in
                (UUID(bytes: Array(try row[0].decode(ByteBuffer.self).readableBytesView)), try row[1].decode(Int64.self), try row[2].decode(Int64.self))
            }.compactMap { row in row.0.map { ($0, (row.1, row.2)) } }, uniquingKeysWith: { first, _ in first })
        }
        // The batch's recordings, as this write knows them, in ``PostgresLogWriter/knownStreams``.
        try writer.readStreams(Set(events.map(\.stream)))
    }

    func storedEvent(_ id: UUID, nextPosition: Int64) throws -> (position: Int64, streamVersion: Int64)? { stored[id] }

    mutating func stream(_ uuid: UUID) throws -> AppendPlanner.Stream {
        guard case .some(.some(let row)) = writer.knownStreams[uuid] else {
            defer { nextStreamID += 1 }
            return AppendPlanner.Stream(rowID: nextStreamID, version: 0, head: Hash32(ChainHash.genesis)!, tree: nil, isNew: true)
        }
        // A recording stored before recordings kept their head: its chain from its events.
        let stored = try row.head ?? (row.version == 0 ? ChainHash.genesis : writer.streamHash(uuid, at: row.version) ?? [])
        guard let head = Hash32(stored) else {
            throw EventStoreError.damagedDatabase(path: writer.location, detail:
                "recording \(uuid.uuidString.lowercased())'s chain head is \(stored.count) bytes, not 32")
        }
        return AppendPlanner.Stream(rowID: row.id, version: row.version, head: head, tree: row.tree, isNew: false)
    }

    mutating func typeID(_ name: String) throws -> Int64 {
        if let id = types[name] { return id }
        let id = nextTypeID
        nextTypeID += 1
        types[name] = id
        newTypes.append((id, name))
        return id
    }

    mutating func write(_ planned: AppendPlanner.PlannedEvent, of event: NewEvent, index: Int) throws {
        let encoded = writer.precompressed?.payload(of: event.id, dictionaryID: encoder.dictionaryID) ?? encoder.encode(event.payload)
        // The columns of `Self.eventColumns`, in order.
        rows.append(planned.position)
        withUnsafeBytes(of: event.id.uuid) { rows.append(bytes: $0) }
        rows.append(planned.streamRowID)
        rows.append(planned.streamVersion)
        rows.append(planned.typeID)
        rows.append(Int64(event.typeVersion))
        rows.append(event.recordedAt.microsecondsSince1970)
        rows.append(encoded.codec)
        rows.append(encoded.dictionaryID)
        rows.append(Int64(event.payload.count))
        rows.append(bytes: encoded.bytes)
        if let hash = planned.hash { hash.withUnsafeBytes { rows.append(bytes: $0) } } else { rows.append(bytes: [UInt8]()) }
        rows.append(planned.leaf)
        rows.append(writer.revision)
        rows.endRow()
        written.append(event.id)
        lastHash = planned.hash
    }

    func tree(publicKey: [UInt8]) throws -> (id: Int64, device: String?)? { try treeRows.tree(publicKey: publicKey) }
    func treeRow(id: Int64) throws -> (publicKey: [UInt8], device: String, size: Int64, frontier: [UInt8]?)? { try treeRows.treeRow(id: id) }
    func insertTree(_ owner: TreeOwner) throws -> Int64 { try treeRows.insertTree(owner) }
    mutating func setTree(_ tree: Int64, ofStream rowID: Int64) throws { try treeRows.setTree(tree, ofStream: rowID) }

    /// Writes the planned batch: types and recordings first (the events name them), then
    /// the events, the catalog rows and the catalog's coverage.
    static let eventColumns = ["position", "event_id", "stream_id", "stream_version", "type_id", "type_version", "recorded_at", "codec",
                               "dictionary_id", "raw_size", "payload", "hash", "leaf", "rev"]

    func store(_ planner: AppendPlanner) throws {
        let revision = writer.revision
        if !newTypes.isEmpty {
            try writer.write("INSERT INTO event_types (id, name, rev) SELECT v.id, v.name, $3 FROM unnest($1::bigint[], $2::text[]) AS v(id, name)", touching: ["event_types"]) { binds in
                binds.append(newTypes.map(\.id))
                binds.append(newTypes.map(\.name))
                binds.append(revision)
            }
        }
        let touched = planner.streams.values.sorted { $0.rowID < $1.rowID }
        let made = touched.filter(\.isNew)
        if !made.isEmpty {
            let uuids = Dictionary(planner.streams.map { ($0.value.rowID, $0.key.uuid) }, uniquingKeysWith: { first, _ in first })
            try writer.write("""
                INSERT INTO streams (id, uuid, version, head, tree_id, rev)
                SELECT v.id, v.uuid, v.version, v.head, NULLIF(v.tree, -1), $6
                FROM unnest($1::bigint[], $2::bytea[], $3::bigint[], $4::bytea[], $5::bigint[]) AS v(id, uuid, version, head, tree)
                """, touching: ["streams"]) { binds in
                binds.append(made.map(\.rowID))
                binds.append(made.map { ByteBuffer(bytes: uuids[$0.rowID]!.bytes) })
                binds.append(made.map(\.version))
                binds.append(made.map { ByteBuffer(bytes: $0.head.bytes) })
                binds.append(made.map { $0.tree ?? -1 })
                binds.append(revision)
            }
        }
        let moved = touched.filter { !$0.isNew && ($0.version != $0.startVersion || treeRows.streamTrees[$0.rowID] != nil) }
        if !moved.isEmpty {
            try writer.write("""
                UPDATE streams s SET version = v.version, head = v.head, tree_id = coalesce(NULLIF(v.tree, -1), s.tree_id), rev = $5
                FROM unnest($1::bigint[], $2::bigint[], $3::bytea[], $4::bigint[]) AS v(id, version, head, tree) WHERE s.id = v.id
                """, touching: ["streams"]) { binds in
                binds.append(moved.map(\.rowID))
                binds.append(moved.map(\.version))
                binds.append(moved.map { ByteBuffer(bytes: $0.head.bytes) })
                binds.append(moved.map { $0.tree ?? -1 })
                binds.append(revision)
            }
        }
        for (key, stream) in planner.streams {
            writer.knownStreams[key.uuid] = PostgresLogWriter.StreamRow(id: stream.rowID, version: stream.version,
                                                                        head: stream.head.bytes, tree: stream.tree)
        }
        if rows.count > 0 {
            try writer.copy(into: "events", columns: Self.eventColumns, rows: rows)
            if !writer.absentIDs.isEmpty { writer.absentIDs.subtract(written) }
        }
        let catalog = planner.catalogRows.sorted { $0.value < $1.value }
        if !catalog.isEmpty {
            try writer.write("""
                INSERT INTO catalog (kind, key, stream_id, position, rev)
                SELECT v.kind, v.key, v.stream, v.position, $5 FROM unnest($1::bigint[], $2::bytea[], $3::bigint[], $4::bigint[]) AS v(kind, key, stream, position)
                ON CONFLICT (kind, key, stream_id) DO NOTHING
                """, touching: ["catalog"]) { rows in
                rows.append(catalog.map { Int64($0.key.tag.kind.rawValue) })
                rows.append(catalog.map { ByteBuffer(bytes: $0.key.tag.id.bytes) })
                rows.append(catalog.map(\.key.streamRowID))
                rows.append(catalog.map(\.value))
                rows.append(revision)
            }
        }
        if planner.everyEventTagged {
            try writer.write("UPDATE catalog_coverage SET through = $1, rev = $3 WHERE through = $2", touching: ["catalog_coverage"]) { coverage in
                coverage.append(planner.position)
                coverage.append(planner.firstPosition)
                coverage.append(revision)
            }
        }
    }
}
