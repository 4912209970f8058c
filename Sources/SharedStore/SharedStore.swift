import EventStore
import Foundation
import Logging
import NIOCore
import PostgresNIO
import NIOSSL

/// A gamelog log in PostgreSQL: the shared store a studio's collectors write into and any
/// number of machines read.
///
/// It holds the same rows as a SQLite log, column for column (`Migrations/postgres`), so
/// events, hashes, heads and signatures are the same bytes in both.
///
/// - Writes (`import`, a collector's uploads) go to the store as itself
///   (``writeNatively(_:)``): one transaction that holds the store's revision row, so
///   writers from any number of processes and machines are serialised and a write is
///   stored whole or not at all; appends follow the same planner as a SQLite log's
///   (`AppendPlanner`), so the rows are the ones a SQLite file would hold.
/// - Reads of one game, a page of games, a recording go to the store as itself too
///   (``reader()``). Whole-log checks (`verify`, `export`, proofs) still work on a *local
///   copy*: a SQLite log in a cache folder brought up to date from the rows written since
///   it was made (each row carries the revision of the write that wrote it).
public final class SharedStore: Sendable {
    public let location: SharedStoreLocation
    /// Where local copies are kept (see ``defaultCacheFolder``).
    public let cacheFolder: URL

    /// `$GAMELOG_CACHE`, else `$XDG_CACHE_HOME/gamelog`, else `~/.cache/gamelog`.
    public static var defaultCacheFolder: URL {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["GAMELOG_CACHE"], !path.isEmpty { return URL(fileURLWithPath: path) }
        if let path = environment["XDG_CACHE_HOME"], !path.isEmpty { return URL(fileURLWithPath: path).appending(path: "gamelog") }
        return FileManager.default.homeDirectoryForCurrentUser.appending(path: ".cache/gamelog")
    }

    /// At most this many connections of this process to the store at once; more callers wait their turn.
    public let maximumConnections: Int
    private let connections: AsyncSemaphore
    /// Open connections no caller holds, reused by the next: a new one costs PostgreSQL a
    /// backend process and its authentication (3 to 10 ms), which a collector paid three
    /// times an upload. Not postgres-nio's `PostgresClient`: its lease waits for the
    /// server up to its circuit breaker (60 s, not configurable), where a command must fail
    /// at once when the store is down and `/healthz` must answer now.
    private let idle = IdleConnections()

    /// - Parameter maximumConnections: a collector under load would otherwise open one
    ///   connection per request in flight (a writer holds its connection while it waits
    ///   for the writers before it), and PostgreSQL refuses clients past `max_connections`.
    public init(location: SharedStoreLocation, cacheFolder: URL = SharedStore.defaultCacheFolder, maximumConnections: Int = 8) {
        self.location = location
        self.cacheFolder = cacheFolder
        self.maximumConnections = max(1, maximumConnections)
        connections = AsyncSemaphore(max(1, maximumConnections))
    }

    public convenience init(url: String, cacheFolder: URL = SharedStore.defaultCacheFolder, maximumConnections: Int = 8) throws {
        self.init(location: try SharedStoreLocation(url: url), cacheFolder: cacheFolder, maximumConnections: maximumConnections)
    }

    static let logger: Logger = {
        var logger = Logger(label: "gamelog.shared-store")
        logger.logLevel = .critical
        return logger
    }()

    // MARK: - Connections

    /// Whether the store answers a query now: nil if it does, else what went wrong (for a
    /// health check, which must not say "ok" while PostgreSQL is down).
    public func problem() async -> String? {
        do {
            _ = try await withConnection { try await run($0, "SELECT 1") }
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// The TLS the URL asks for.
    private func tls() throws -> PostgresConnection.Configuration.TLS {
        switch location.tls {
        case .disable:
            return .disable
        case .require:
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .none
            return .require(try NIOSSLContext(configuration: configuration))
        case .verifyFull(let root):
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .fullVerification
            if let root {
                guard FileManager.default.isReadableFile(atPath: root) else {
                    throw SharedStoreError.badURL(text: location.description, reason: "sslrootcert \(root) cannot be read")
                }
                configuration.trustRoots = .file(root)
            }
            return .require(try NIOSSLContext(configuration: configuration))
        }
    }

    /// Runs `body` on a connection of this process's pool (one made if none is idle),
    /// given back afterwards. A connection whose `body` threw is closed instead: it may be
    /// broken, or in the middle of a transaction.
    func withConnection<T>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        await connections.acquire()
        defer { connections.release() }
        let connection: PostgresConnection
        if let reused = idle.take() { connection = reused } else { connection = try await connect() }
        do {
            let result = try await body(connection)
            idle.giveBack(connection, keepingAtMost: maximumConnections)
            return result
        } catch {
            try? await connection.close()
            throw translate(error)
        }
    }

    /// A new connection to the store, as the URL says (TLS included); the caller closes it.
    func connect() async throws -> PostgresConnection {
        var configuration = PostgresConnection.Configuration(host: location.host, port: location.port, username: location.user,
                                                             password: location.password, database: location.database, tls: try tls())
        configuration.options.connectTimeout = .seconds(10)
        // Every statement of ours is an index lookup or a plain scan, which JIT compilation
        // only delays: a page of games' read of 187 recordings spent 10 ms compiling
        // expressions to run 40 ms (the whole page 200 -> 170 ms), and a whole-store
        // verify was no faster with it.
        configuration.options.additionalStartupParameters = [("jit", "off")]
        do {
            return try await PostgresConnection.connect(configuration: configuration, id: 1, logger: Self.logger)
        } catch {
            throw SharedStoreError.unreachable(location: location.description, detail: Self.describe(error))
        }
    }

    /// Runs `body` in a transaction: committed if it returns, rolled back if it throws.
    func inTransaction<T>(_ connection: PostgresConnection, readOnly: Bool = false,
                          _ body: () async throws -> T) async throws -> T {
        try await run(connection, readOnly ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN")
        do {
            let result = try await body()
            try await run(connection, "COMMIT")
            return result
        } catch {
            _ = try? await run(connection, "ROLLBACK")
            throw error
        }
    }

    /// Runs one statement and returns its rows.
    ///
    /// Each statement has a deadline (``statementDeadline``, or `deadline`): PostgresNIO
    /// can leave a statement sent as the server went away waiting forever (seen on a
    /// COMMIT during an immediate shutdown), and a collector's request, its file lock and
    /// a graceful shutdown would wait with it. Past the deadline the connection is closed
    /// and the statement fails as the store being unreachable.
    @discardableResult
    func run(_ connection: PostgresConnection, _ sql: String, _ binds: PostgresBindings = PostgresBindings(),
             deadline: Duration = SharedStore.statementDeadline) async throws -> [PostgresRow] {
        let query = PostgresQuery(unsafeSQL: sql, binds: binds)
        // A statement on a connection that closed (its server went away mid-write) fails
        // at once, not at its deadline: the ROLLBACK after a failed write is one.
        guard !connection.isClosed else {
            throw SharedStoreError.unreachable(location: location.description, detail: "the connection closed (the server went away)")
        }
        return try await withDeadline(deadline, onExpiry: { _ = connection.close() as EventLoopFuture<Void> }) {
            var rows: [PostgresRow] = []
            for try await row in try await connection.query(query, logger: Self.logger) {
                rows.append(row)
            }
            return rows
        }
    }

    /// How long one statement may take (a lock wait on the store's revision row has its own, longer one).
    static let statementDeadline: Duration = .seconds(120)

    /// When a wait for a statement that begins now ends at the latest (``statementDeadline``).
    static func statementDeadlineFromNow() -> NIODeadline {
        .now() + .seconds(statementDeadline.components.seconds)
    }

    /// A statement's wait that reached its deadline (the connection is then closed).
    struct StatementDeadlinePassed: Error {}

    /// A statement's wait given up because its connection closed without answering it.
    struct ConnectionClosed: Error {}

    /// `body`'s result, or ``SharedStoreError/unreachable(location:detail:)`` once
    /// `deadline` passes (then `onExpiry` runs). The body runs in a task of its own, left
    /// behind if it never ends, so the caller is never held by it.
    func withDeadline<T: Sendable>(_ deadline: Duration, onExpiry: @escaping @Sendable () -> Void,
                                   _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let location = location.description
        let outcome = Outcome<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
                outcome.install(continuation)
                // Unstructured tasks do not inherit a task executor preference: without one
                // they would need Swift's cooperative pool, which synchronous callers of
                // ``wait(_:)`` may be holding whole (two tests at once on two cores did).
                let work = Task(executorPreference: WaitExecutor.shared) {
                    do { outcome.finish(.success(try await body())) } catch { outcome.finish(.failure(error)) }
                }
                outcome.onCancel = { work.cancel() }
                Task(executorPreference: WaitExecutor.shared) {
                    try? await Task.sleep(for: deadline)
                    if outcome.finish(.failure(SharedStoreError.unreachable(location: location,
                                                                            detail: "no answer within \(deadline) (the connection was closed)"))) {
                        work.cancel()
                        onExpiry()
                    }
                }
            }
        } onCancel: {
            outcome.cancel()
        }
    }

    func translate(_ error: Error) -> Error {
        if error is SharedStoreError || error is EventStoreError { return error }
        if error is StatementDeadlinePassed {
            return SharedStoreError.unreachable(location: location.description,
                                                detail: "no answer within \(Self.statementDeadline) (the connection was closed)")
        }
        if error is ConnectionClosed {
            return SharedStoreError.unreachable(location: location.description, detail: "the connection closed before the statement was answered (the server went away)")
        }
        if let error = error as? PSQLError {
            if error.code == .server { return SharedStoreError.server(location: location.description, detail: Self.describe(error)) }
            return SharedStoreError.unreachable(location: location.description, detail: Self.describe(error))
        }
        return error
    }

    /// PostgresNIO keeps server messages out of its errors' descriptions (they may quote
    /// data); these are gamelog's own statements, so their messages are safe to show.
    static func describe(_ error: Error) -> String {
        guard let error = error as? PSQLError else {
            let text = String(describing: error)
            return text.contains("Connection refused") ? "connection refused (is PostgreSQL running there?)" : text
        }
        if let message = error.serverInfo?[.message] {
            return message + (error.serverInfo?[.detail].map { " (\($0))" } ?? "")
        }
        if let underlying = error.underlying {
            let text = String(describing: underlying)
            return text.contains("Connection refused") ? "connection refused (is PostgreSQL running there?)" : text
        }
        return "\(error.code)"
    }

    // MARK: - Values

    static func decode(_ row: PostgresRow, kinds: [ReplicatedTable.Kind]) throws -> [ReplicatedValue] {
        let cells = row.makeRandomAccess()
        return try kinds.enumerated().map { index, kind in
            let cell = cells[index]
            switch kind {
            case .integer: return try cell.decode(Int64?.self).map(ReplicatedValue.integer) ?? .null
            case .text: return try cell.decode(String?.self).map(ReplicatedValue.text) ?? .null
            case .blob: return try cell.decode(ByteBuffer?.self).map { .blob(Array($0.readableBytesView)) } ?? .null
            }
        }
    }

    static func bind(_ value: ReplicatedValue, into binds: inout PostgresBindings) {
        switch value {
        case .null: binds.appendNull()
        case .integer(let number): binds.append(number)
        case .text(let text): binds.append(text)
        case .blob(let bytes): binds.append(ByteBuffer(bytes: bytes))
        }
    }
}

extension SharedStore {
    /// Waits for `body` from synchronous code (the command line's commands, synchronous tests).
    ///
    /// The work runs on a queue of its own rather than Swift's cooperative pool: a caller that
    /// blocks one of the pool's few threads (a synchronous test on a two-core machine does)
    /// would otherwise wait for work that needs the very thread it holds.
    public static func wait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let box = Box<T>()
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: WaitExecutor.shared) {
            do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
            done.signal()
        }
        done.wait()
        return try box.result!.get()
    }

    private final class Box<T>: @unchecked Sendable {
        var result: Result<T, Error>?
    }

    /// Runs `body` on threads that may block: the local copy's SQLite writes and fsyncs,
    /// its file locks, a write's checks (hashes, signatures, compression).
    ///
    /// Swift's cooperative pool has one thread per core: a collector that ran that work
    /// there would hold one of two threads for the whole of a write, and every other
    /// request of the process, with the PostgreSQL connections it opens, would wait behind it.
    public static func blocking<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await withTaskExecutorPreference(WaitExecutor.shared) { try await body() }
    }

    /// Runs each job on a serial Dispatch queue of its own, whose threads are not the
    /// cooperative pool's. libdispatch gives serial queues threads that may block (it
    /// starts another when one does); a concurrent queue's are capped at the number of
    /// cores on Linux, and two jobs blocked there (a claim held while another process
    /// works, a synchronous caller) stalled every other job until a timeout.
    final class WaitExecutor: TaskExecutor {
        static let shared = WaitExecutor()

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            let executor = asUnownedTaskExecutor()
            DispatchQueue(label: "gamelog.shared-store.wait").async { job.runSynchronously(on: executor) }
        }
    }
}

/// The one result of a race between a statement and its deadline.
final class Outcome<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, Error>?
    private var early: Result<T, Error>?
    private var done = false
    var onCancel: (@Sendable () -> Void)? {
        get { lock.withLock { cancelHandler } }
        set { lock.withLock { cancelHandler = newValue } }
    }
    private var cancelHandler: (@Sendable () -> Void)?

    func install(_ continuation: CheckedContinuation<T, Error>) {
        lock.lock()
        if let early {
            lock.unlock()
            continuation.resume(with: early)
            return
        }
        self.continuation = continuation
        lock.unlock()
    }

    /// Resumes the waiter with `result` if nothing did before; whether this one did.
    @discardableResult
    func finish(_ result: Result<T, Error>) -> Bool {
        lock.lock()
        guard !done else { lock.unlock(); return false }
        done = true
        guard let continuation else {
            early = result
            lock.unlock()
            return true
        }
        self.continuation = nil
        lock.unlock()
        continuation.resume(with: result)
        return true
    }

    func cancel() {
        if finish(.failure(CancellationError())) { onCancel?() }
    }
}

/// The pool's idle connections (see ``SharedStore``): handed out newest first, and only
/// while still open.
final class IdleConnections: @unchecked Sendable {
    private let lock = NSLock()
    private var connections: [PostgresConnection] = []

    func take() -> PostgresConnection? {
        lock.withLock {
            while let connection = connections.popLast() {
                if !connection.isClosed { return connection }
            }
            return nil
        }
    }

    func giveBack(_ connection: PostgresConnection, keepingAtMost limit: Int) {
        guard !connection.isClosed else { return }
        let kept = lock.withLock { () -> Bool in
            guard connections.count < limit else { return false }
            connections.append(connection)
            return true
        }
        if !kept { connection.closeAndRelease() }
    }

    deinit {
        for connection in connections { connection.closeAndRelease() }
    }
}

extension PostgresConnection {
    /// Closes the connection and keeps it until the close completes, for a holder about to
    /// let it go: one released while still open is a programming error to PostgresNIO (an
    /// assertion in debug builds, which a test's store ending with idle connections met).
    func closeAndRelease() {
        (close() as EventLoopFuture<Void>).whenComplete { _ in withExtendedLifetime(self) {} }
    }
}

/// A counting semaphore for tasks: waiters are resumed in the order they came.
final class AsyncSemaphore: @unchecked Sendable {
    private let lock = NSLock()
    private var available: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) { available = count }

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted: Bool = lock.withLock {
                if available > 0 {
                    available -= 1
                    return true
                }
                waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    /// Hands the permit to the first waiter, if any.
    func release() {
        let next: CheckedContinuation<Void, Never>? = lock.withLock {
            if waiters.isEmpty {
                available += 1
                return nil
            }
            return waiters.removeFirst()
        }
        next?.resume()
    }
}

extension EventLoopFuture where Value: Sendable {
    /// Waits for the future from a thread that may block, until `deadline` at the latest:
    /// past it `onExpiry` runs and the wait fails with
    /// ``SharedStore/StatementDeadlinePassed``, whether or not the future ever completes.
    ///
    /// Closing the connection at the deadline is not enough on its own: after PostgreSQL
    /// crashed during a collector's write, PostgresNIO never completed the future of one
    /// of its statements, closed connection or not, and the writer waited on it, with
    /// every upload behind it, until the collector was restarted (tools/collect-load.sh's
    /// crash of PostgreSQL, session 47).
    ///
    /// - Parameter connection: the statement's connection: once it is closed, the wait
    ///   fails within a second rather than at the deadline (the statement can no longer
    ///   be answered, and the one PostgresNIO never answered would hold it that long).
    func wait(until deadline: NIODeadline, on connection: PostgresConnection? = nil,
              onExpiry: @escaping @Sendable () -> Void) throws -> Value {
        let bounded = eventLoop.makePromise(of: Value.self)
        cascade(to: bounded)
        // Whichever completes `bounded` first stands (NIO ignores the others).
        let timer = eventLoop.scheduleTask(deadline: deadline) {
            onExpiry()
            bounded.fail(SharedStore.StatementDeadlinePassed())
        }
        let watch = connection.map { connection in
            eventLoop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in
                if connection.isClosed { bounded.fail(SharedStore.ConnectionClosed()) }
            }
        }
        defer {
            timer.cancel()
            watch?.cancel()
        }
        return try bounded.futureResult.wait()
    }
}
