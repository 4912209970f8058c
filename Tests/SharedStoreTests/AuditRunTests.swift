import EventStore
import Foundation
import SharedStore
import TestSupport
import Testing

/// Audits shared among processes: games are claimed a few at a time for a while (a
/// lease), skipped (not waited for) by the other workers, checked with no transaction
/// open, and each stored once.
@Suite(.serialized) struct AuditRunTests {
    static func outcome(_ game: UUID) -> SharedStore.AuditOutcome {
        .init(result: "[\"\(game.uuidString)\"]", errors: 0, warnings: 1, revision: 1)
    }

    @Test func claimsAreLeasesThatOtherWorkersSkipAndEveryGameIsStoredOnce() async throws {
        let folder = try TemporaryFolder()
        let (store, url) = try await SharedStoreTests.makeStore(folder)
        let games = (0..<7).map { _ in UUID() }.sorted { $0.uuidString < $1.uuidString }
        let run = try await store.startAuditRun(.verify, revision: 1, reruns: false, games: games)
        func claim(_ worker: String, _ count: Int, lease: Duration = .seconds(300), ended: [String] = []) async throws -> [UUID] {
            try await store.claimGames(of: run, worker: worker, count: count, lease: lease, reclaimingFrom: ended)
        }
        func finish(_ worker: String, _ claimed: [UUID]) async throws {
            try await store.storeOutcomes(of: run, worker: worker, claimed.map { ($0, Self.outcome($0)) })
        }

        // A and B claim at once: different games, and neither waits for the other's claim.
        let a = try await claim("A", 3), b = try await claim("B", 3)
        #expect(a.count == 3 && b.count == 3 && Set(a).isDisjoint(with: b))
        // No transaction is open while they check: the claims are rows anyone can read now.
        #expect(try PostgresServer.shared().psql(url, "SELECT count(*) FROM audit_tasks WHERE claimed_by IS NOT NULL") == "6")
        #expect(try PostgresServer.shared().psql(url, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'") == "0")

        // C dies holding its claim of the last game (a lease that ran out long ago).
        let c = try await claim("C", 3, lease: .seconds(-1))
        #expect(c.count == 1 && Set(games) == Set(a + b + c))
        try await finish("A", a)
        #expect(try (await store.progress(of: run)) == (3, 7))
        // B's games are still B's while its lease runs; C's lapsed lease lets D take its game.
        let d = try await claim("D", 5)
        #expect(d == c)
        try await finish("B", b)
        try await finish("D", d)
        // Nothing is left to claim; an outcome stored late for a game done already changes nothing.
        await #expect(try claim("E", 5).isEmpty)
        try await finish("C", c)

        let results = try await store.results(of: run)
        #expect(Set(results.map(\.game)) == Set(games) && results.count == 7)
        #expect(Dictionary(grouping: results, by: \.worker).mapValues(\.count) == ["A": 3, "B": 3, "D": 1])
        #expect(results.allSatisfy { $0.result == "[\"\($0.game.uuidString)\"]" })
        // A verify run's outcome is each game's latest stored audit.
        let stored = try await store.storedAudit(game: games[0])
        #expect(stored?.warnings == 1 && stored?.report == "[\"\(games[0].uuidString)\"]")
        // An outcome checked at an older revision of the store is its run's result but does
        // not replace a newer stored audit; a game given twice in one call is stored once.
        let older = try await store.startAuditRun(.verify, revision: 0, reruns: false, games: [games[0]])
        let again = try await store.claimGames(of: older, worker: "F", count: 2, lease: .seconds(300))
        #expect(again == [games[0]])
        try await store.storeOutcomes(of: older, worker: "F", [(games[0], .init(result: "[1]", errors: 2, warnings: 0, revision: 0)),
                                                              (games[0], .init(result: "[2]", errors: 3, warnings: 0, revision: 0))])
        #expect(try (await store.progress(of: older)) == (1, 1))
        #expect(try (await store.results(of: older)).map(\.result) == ["[1]"])
        #expect(try (await store.storedAudit(game: games[0]))?.report == "[\"\(games[0].uuidString)\"]")
        #expect(try (await store.auditRun(run.id)) == run)
        #expect(try (await store.auditRun(UUID())) == nil)
    }

    /// A claim takes at most its count whatever plan PostgreSQL picks. With the table's
    /// statistics made before a run started, its id looks rare (a row or so), and the
    /// planner re-ran a `LIMIT ... SKIP LOCKED` subquery under `IN` for every task of the
    /// run (a nested-loop semi join): a worker's first claim of 4 took all 2,735 games of
    /// a store, and the other workers found none (`verify --workers 2` was no faster than one).
    @Test func aClaimOfAFewGamesTakesThatFewOfALargeRun() async throws {
        let folder = try TemporaryFolder()
        let (store, url) = try await SharedStoreTests.makeStore(folder)
        let earlier = try await store.startAuditRun(.verify, revision: 1, reruns: false, games: (0..<3_000).map { _ in UUID() })
        _ = try PostgresServer.shared().psql(url, "ANALYZE audit_tasks")
        let run = try await store.startAuditRun(.verify, revision: 1, reruns: false, games: (0..<3_000).map { _ in UUID() })
        #expect(earlier.id != run.id)
        let a = try await store.claimGames(of: run, worker: "A", count: 4, lease: .seconds(300))
        let b = try await store.claimGames(of: run, worker: "B", count: 4, lease: .seconds(300))
        #expect(a.count == 4 && b.count == 4 && Set(a).isDisjoint(with: b))
        #expect(try PostgresServer.shared().psql(url, "SELECT count(*) FROM audit_tasks WHERE claimed_by IS NOT NULL") == "8")
        // Once the statistics know the run, the same.
        _ = try PostgresServer.shared().psql(url, "ANALYZE audit_tasks")
        let c = try await store.claimGames(of: run, worker: "C", count: 4, lease: .seconds(300))
        #expect(c.count == 4 && Set(c).isDisjoint(with: a + b))
        #expect(try PostgresServer.shared().psql(url, "SELECT count(*) FROM audit_tasks WHERE claimed_by IS NOT NULL") == "12")
    }

    @Test func aCoordinatorTakesBackTheGamesOfWorkersItSawEnd() async throws {
        let folder = try TemporaryFolder()
        let (store, _) = try await SharedStoreTests.makeStore(folder)
        let games = (0..<4).map { _ in UUID() }
        let run = try await store.startAuditRun(.rerun, revision: 1, reruns: true, games: games)
        let held = try await store.claimGames(of: run, worker: "host:101", count: 4, lease: .seconds(300))
        #expect(held.count == 4)
        // Another worker waits for the lease; the coordinator that saw host:101 exit does not.
        #expect(try (await store.claimGames(of: run, worker: "other", count: 4, lease: .seconds(300))).isEmpty)
        let taken = try await store.claimGames(of: run, worker: "coordinator", count: 4, lease: .seconds(300), reclaimingFrom: ["host:101"])
        #expect(Set(taken) == Set(games))
    }
}
