import EventStore
import Foundation
import PostgresNIO
@testable import SharedStore
import TestSupport
import Testing

/// A write sends its last statements, the revision's and the COMMIT without waiting for
/// each: whatever fails among them, nothing of the write is kept.
@Suite(.serialized) struct WriteCommitTests {
    @Test func aStatementThatFailsAtTheCommitKeepsNothingOfTheWrite() async throws {
        let folder = try TemporaryFolder()
        let (store, url) = try await SharedStoreTests.makeStore(folder)
        let server = try PostgresServer.shared()
        try await store.writeNatively { writer in
            try writer.execute("INSERT INTO event_types (id, name, rev) VALUES (901, 'kept.type', \(writer.revision))")
            writer.changed()
        }
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
}
