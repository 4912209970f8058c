import EventStore
import Foundation
import Interchange
import Replay
import Games
import PostgresNIO
@testable import SharedStore
import TestSupport
import Testing

/// What PostgreSQL plans our statements with: the connections' settings, the tables' statistics.
@Suite(.serialized) struct PlannerSettingsTests {
    /// JIT compilation only delays our statements (index lookups and plain scans): a page
    /// of games spent a sixth of its time compiling. The server's default is on.
    @Test func connectionsRunWithoutJIT() async throws {
        let folder = try TemporaryFolder()
        let (store, _) = try await SharedStoreTests.makeStore(folder)
        let rows = try await store.withConnection {
            try await store.run($0, "SELECT current_setting('jit'), reset_val, boot_val FROM pg_settings WHERE name = 'jit'")
        }
        #expect(rows.count == 1)
        let (session, start, server) = try rows[0].decode((String, String, String).self)
        #expect(session == "off")
        // Set when the connection was opened (a reset goes back to it), against the server's own default.
        #expect(start == "off")
        #expect(server == "on")
    }

    /// An import that grows the store by a tenth or more gathers the statistics at once
    /// (a table never analyzed has no row estimate); a smaller one leaves it to autovacuum.
    @Test func aWriteThatGrowsTheStoreByATenthAnalyzesIt() async throws {
        let folder = try TemporaryFolder()
        let (store, _) = try await SharedStoreTests.makeStore(folder)
        func estimate() async throws -> Double {
            let rows = try await store.withConnection { try await store.run($0, "SELECT reltuples::float8 FROM pg_class WHERE relname = 'events'") }
            return try rows[0].decode(Double.self)
        }
        #expect(try await estimate() < 0)
        let original = try EventStore(path: folder.path("log.sqlite"))
        try playMixedGames(3, into: original, seed: 5, keys: TestKeys())
        let summary = try await SharedStoreTests.importing(try SharedStoreTests.exportLines(original), into: store)
        #expect(summary.stored > 100)
        #expect(try await !store.analyzeIfGrown(stored: summary.stored / 20))
        #expect(try await !store.analyzeIfGrown(stored: 0))
        #expect(try await store.analyzeIfGrown(stored: summary.stored / 10))
        #expect(try await estimate() == Double(summary.stored))
    }
}

/// A page of games read on two connections at once still answers when the server allows
/// one (a role at its connection limit): the second lane's conversations are read on the
/// first connection.
@Suite(.serialized) struct PageLanesTests {
    @Test func aPageOnTwoLanesAnswersWhenASecondConnectionIsRefused() async throws {
        let folder = try TemporaryFolder()
        let original = try EventStore(path: folder.path("log.sqlite"))
        try playMixedGames(40, into: original, seed: 12, keys: TestKeys())
        let (store, url) = try await SharedStoreTests.makeStore(folder)
        _ = try await SharedStoreTests.importing(try SharedStoreTests.exportLines(original), into: store)
        let expected = try GameCatalog.page(store: original, games: .standard, offset: 0, limit: 100)
        #expect(Set(expected.games.map(\.conversation)).count >= 16)
        // A role that may hold one connection, and read the store.
        let role = "lanes_\(UUID().uuidString.prefix(8).lowercased())"
        _ = try PostgresServer.shared().psql(url, """
            CREATE ROLE \(role) LOGIN CONNECTION LIMIT 1; GRANT SELECT ON ALL TABLES IN SCHEMA public TO \(role)
            """)
        let limited = try SharedStore(url: url.replacingOccurrences(of: "postgres://gamelog@", with: "postgres://\(role)@"),
                                      cacheFolder: folder.url.appending(path: "cache"))
        // The limit holds: a second reader is refused while the first is open.
        let first = limited.reader(), second = limited.reader()
        #expect(try first.lastPosition() > 0)
        #expect(throws: SharedStoreError.self) { try second.lastPosition() }
        let page = try GameCatalog.page(store: first, games: .standard, offset: 0, limit: 100, lanes: 2)
        #expect(page.games == expected.games && page.total == expected.total)
    }
}
