import EventStore
import Foundation
import NIOCore
import NIOPosix
import PostgresNIO
@testable import SharedStore
import TestSupport
import Testing

/// A write sends its last statements, the revision's and the COMMIT without waiting for
/// each: whatever fails among them, nothing of the write is kept.
@Suite(.serialized, .timeLimit(.minutes(5))) struct WriteCommitTests {
    /// A new store holding one event type (`id`, named "kept.type") written before the test's.
    static func storeHolding(type id: Int, in folder: TemporaryFolder) async throws -> (store: SharedStore, url: String, server: PostgresServer) {
        let (store, url) = try await SharedStoreTests.makeStore(folder)
        try await store.writeNatively { writer in
            try writer.execute("INSERT INTO event_types (id, name, rev) VALUES (\(id), 'kept.type', \(writer.revision))")
            writer.changed()
        }
        return (store, url, try PostgresServer.shared())
    }

    /// A statement's wait ends at its deadline whether or not its future ever completes
    /// (PostgresNIO left statements sent behind a `COPY` pending for good once PostgreSQL
    /// went away during it: a collector's writer waited on one until it was restarted), its
    /// connection's close asked for, and the store named unreachable; a future that
    /// completes in time is waited for as before.
    @Test func aWaitEndsAtItsDeadlineWhetherOrNotItsFutureEverCompletes() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let never = loop.makePromise(of: Int.self)
        defer { never.succeed(0) }
        let expired = DispatchSemaphore(value: 0)
        let started = ContinuousClock.now
        #expect(throws: SharedStore.StatementDeadlinePassed.self) {
            try never.futureResult.wait(until: .now() + .milliseconds(200), onExpiry: { expired.signal() })
        }
        #expect(expired.wait(timeout: .now()) == .success)
        #expect(ContinuousClock.now - started < .seconds(30))

        let answered = loop.makePromise(of: Int.self)
        loop.scheduleTask(in: .milliseconds(50)) { answered.succeed(7) }
        #expect(try answered.futureResult.wait(until: .now() + .seconds(60), onExpiry: { expired.signal() }) == 7)
        #expect(expired.wait(timeout: .now() + .milliseconds(100)) == .timedOut)

        let store = try SharedStore(url: "postgres://gamelog@127.0.0.1:1/never")
        guard case SharedStoreError.unreachable(_, let detail) = store.translate(SharedStore.StatementDeadlinePassed()) else {
            Issue.record("a passed deadline is not named the store unreachable")
            return
        }
        #expect(detail.contains("no answer within"))
    }

    /// A wait on a statement of a connection that closed ends within about a second, not
    /// at its deadline: nothing can answer it any more.
    @Test func aWaitEndsSoonAfterItsConnectionClosed() async throws {
        let folder = try TemporaryFolder()
        let (store, _) = try await SharedStoreTests.makeStore(folder)
        let connection = try await store.connect()
        let never = connection.eventLoop.makePromise(of: Int.self)
        defer { never.succeed(0) }
        try await connection.close()
        let started = ContinuousClock.now
        #expect(throws: SharedStore.ConnectionClosed.self) {
            try never.futureResult.wait(until: .now() + .seconds(100), on: connection, onExpiry: {})
        }
        #expect(ContinuousClock.now - started < .seconds(30), "\(ContinuousClock.now - started)")
        guard case SharedStoreError.unreachable = store.translate(SharedStore.ConnectionClosed()) else {
            Issue.record("a closed connection is not named the store unreachable")
            return
        }
    }

    @Test func aStatementThatFailsAtTheCommitKeepsNothingOfTheWrite() async throws {
        let folder = try TemporaryFolder()
        let (store, url, server) = try await Self.storeHolding(type: 901, in: folder)
        let revision = try await store.revision()
        #expect(try server.psql(url, "SELECT count(*) FROM event_types WHERE id = 901") == "1")

        // Two rows sent and not waited for, the second refused (the id is taken): the
        // write fails, and the first row and the revision stay as they were.
        await #expect(throws: SharedStoreError.self) {
            try await store.writeNatively { writer in
                try writer.execute("INSERT INTO event_types (id, name, rev) VALUES (902, 'lost.type', \(writer.revision))")
                try writer.execute("INSERT INTO event_types (id, name, rev) VALUES (901, 'again', \(writer.revision))")
                writer.changed()
            }
        }
        #expect(try server.psql(url, "SELECT count(*) FROM event_types WHERE id = 902") == "0")
        #expect(try await store.revision() == revision)
        #expect(try server.psql(url, "SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in transaction' AND datname = current_database()") == "0")

        // A savepoint's scope whose statements fail is undone alone; its release is not
        // waited for, and the write around it commits.
        try await store.writeNatively { writer in
            try writer.execute("INSERT INTO event_types (id, name, rev) VALUES (903, 'outer.type', \(writer.revision))")
            _ = try? writer.undoingOnFailure {
                try writer.execute("INSERT INTO event_types (id, name, rev) VALUES (904, 'inner.type', \(writer.revision))")
                try writer.execute("INSERT INTO event_types (id, name, rev) VALUES (901, 'again', \(writer.revision))")
            }
            try writer.undoingOnFailure {
                try writer.undoingOnFailure {
                    try writer.execute("INSERT INTO event_types (id, name, rev) VALUES (905, 'nested.type', \(writer.revision))")
                }
            }
            writer.changed()
        }
        #expect(try server.psql(url, "SELECT string_agg(id::text, ',' ORDER BY id) FROM event_types WHERE id > 900") == "901,903,905")
        #expect(try await store.revision() == revision + 1)
    }

    /// A read sent behind statements that were not waited for is answered after them; when
    /// one of them failed, that failure is what the read throws (not PostgreSQL's "the
    /// transaction is aborted", which every statement after it gets).
    @Test func aReadBehindAFailedStatementNamesThatStatementsFailure() async throws {
        let folder = try TemporaryFolder()
        let (store, url) = try await SharedStoreTests.makeStore(folder)
        var thrown: Error?
        do {
            try await store.writeNatively { writer in
                try writer.execute("INSERT INTO event_types (id, name, rev) VALUES (911, 'first', \(writer.revision))")
                try writer.execute("INSERT INTO event_types (id, name, rev) VALUES (911, 'again', \(writer.revision))")
                let names = try writer.fetch("SELECT name FROM event_types WHERE id = 911") { try $0[0].decode(String.self) }
                Issue.record("the read answered \(names) after a refused statement")
            }
        } catch {
            thrown = error
        }
        let description = String(describing: try #require(thrown))
        #expect(description.contains("duplicate key"), "\(description)")
        #expect(!description.contains("aborted"), "\(description)")
        #expect(try PostgresServer.shared().psql(url, "SELECT count(*) FROM event_types WHERE id = 911") == "0")
    }

    /// Writes held by the writer go as one statement (PostgresNIO sends a statement only
    /// once the one before is answered: each is a round trip), except that a write touching
    /// a table a held one touches goes after them, in a statement of its own, and sees
    /// their rows.
    @Test func heldWritesGoAsOneStatementUnlessTheyTouchOneTable() async throws {
        let folder = try TemporaryFolder()
        let (store, url) = try await SharedStoreTests.makeStore(folder)
        let server = try PostgresServer.shared()
        let sent = try await store.writeNatively { writer -> Int in
            let before = writer.statementsSent, revision = writer.revision
            try writer.write("INSERT INTO event_types (id, name, rev) VALUES ($1, 'held.one', $2)", touching: ["event_types"]) {
                $0.append(Int64(911))
                $0.append(revision)
            }
            try writer.write("INSERT INTO trees (id, public_key, device, size, frontier, rev) VALUES ($1, $2, 'held.device', 0, ''::bytea, $3)",
                             touching: ["trees"]) {
                $0.append(Int64(77))
                $0.append(ByteBuffer(bytes: [UInt8](repeating: 7, count: 32)))
                $0.append(revision)
            }
            try writer.write("UPDATE event_types SET name = 'held.renamed' WHERE id = $1", touching: ["event_types"]) {
                $0.append(Int64(911))
            }
            try writer.flush()
            writer.changed()
            return writer.statementsSent - before
        }
        #expect(sent == 2)
        #expect(try server.psql(url, "SELECT name FROM event_types WHERE id = 911") == "held.renamed")
        #expect(try server.psql(url, "SELECT device FROM trees WHERE id = 77") == "held.device")
    }

    /// A savepoint's scope opened where another just opened shares its savepoint (nothing
    /// between them to keep): its failure, a held write refused at its end, undoes it
    /// alone, and the scope around it goes on and commits.
    @Test func aScopeOpenedWhereAnotherOpenedSharesItsSavepoint() async throws {
        let folder = try TemporaryFolder()
        let (store, url, server) = try await Self.storeHolding(type: 931, in: folder)
        let sent = try await store.writeNatively { writer -> Int in
            let before = writer.statementsSent, revision = writer.revision
            try writer.undoingOnFailure {
                _ = try? writer.undoingOnFailure {
                    try writer.write("INSERT INTO event_types (id, name, rev) VALUES (932, 'inner.type', $1)", touching: ["event_types"]) {
                        $0.append(revision)
                    }
                    // The id is taken: refused when the scope's writes are sent, at its end.
                    try writer.write("INSERT INTO event_types (id, name, rev) VALUES (931, 'again', $1)", touching: ["event_types"]) {
                        $0.append(revision)
                    }
                }
                try writer.write("INSERT INTO event_types (id, name, rev) VALUES (933, 'outer.type', $1)", touching: ["event_types"]) {
                    $0.append(revision)
                }
            }
            writer.changed()
            return writer.statementsSent - before
        }
        #expect(try server.psql(url, "SELECT string_agg(id::text || ':' || name, ',' ORDER BY id) FROM event_types WHERE id > 930")
                == "931:kept.type,933:outer.type")
        // One SAVEPOINT, the inner scope's two writes, its ROLLBACK TO, the outer write and
        // the RELEASE: a savepoint of the inner scope's own would be one more.
        #expect(sent == 6)
    }

    @Test func aHeldWritesParametersAreNumberedAfterTheOnesBefore() {
        #expect(PostgresLogWriter.renumbering("SELECT $1, $2::bigint[], $10 FROM unnest($3) WHERE x = '$'", by: 4)
                == "SELECT $5, $6::bigint[], $14 FROM unnest($7) WHERE x = '$'")
        #expect(PostgresLogWriter.renumbering("UPDATE t SET a = $1", by: 0) == "UPDATE t SET a = $1")
    }
}
