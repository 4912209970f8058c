import EventStore
import Foundation
import NIOCore
import PostgresNIO

/// Audits shared among processes, on any number of machines: a run lists the games to
/// check, and each process claims a few at a time for a while (a lease, taken with `FOR
/// UPDATE SKIP LOCKED` in one short statement), checks them on its own copy of the store
/// with no transaction open, and stores what it found. A process that dies leaves its
/// games to whoever claims after its lease.
extension SharedStore {
    /// What a shared audit checks.
    public enum AuditKind: String, Sendable, Codable {
        /// Every check of `verify`, per game.
        case verify
        /// Re-running recordings against the extensions' code only.
        case rerun
    }

    /// One audit shared among processes.
    public struct AuditRun: Hashable, Sendable {
        public var id: UUID
        public var kind: AuditKind
        /// The store's revision the run audits; a process checks at that revision or later.
        public var revision: Int64
        /// Whether recordings are re-run against the extensions' code.
        public var reruns: Bool
    }

    /// What checking one game found, as a worker stores it.
    public struct AuditOutcome: Sendable {
        /// The findings, encoded by the caller (JSON).
        public var result: String
        public var errors: Int
        public var warnings: Int
        /// The copy's revision the game was checked at.
        public var revision: Int64

        public init(result: String, errors: Int, warnings: Int, revision: Int64) {
            self.result = result
            self.errors = errors
            self.warnings = warnings
            self.revision = revision
        }
    }

    /// A claimed game's stored outcome.
    public struct AuditTaskResult: Sendable {
        public var game: UUID
        public var worker: String
        public var result: String
    }

    /// Starts a run over `games` (each a task) of the store at `revision`.
    public func startAuditRun(_ kind: AuditKind, revision: Int64, reruns: Bool, games: [UUID]) async throws -> AuditRun {
        let run = AuditRun(id: UUID(), kind: kind, revision: revision, reruns: reruns)
        try await withConnection { connection in
            try await inTransaction(connection) {
                var binds = PostgresBindings()
                binds.append(run.id)
                binds.append(kind.rawValue)
                binds.append(revision)
                binds.append(reruns)
                binds.append(Timestamp(Date()).microsecondsSince1970)
                try await self.run(connection, "INSERT INTO audit_runs (id, kind, store_rev, reruns, started_at) VALUES ($1, $2, $3, $4, $5)", binds)
                // Under PostgreSQL's limit of bound parameters per statement.
                for chunk in stride(from: 0, to: games.count, by: 10_000) {
                    let slice = games[chunk..<min(games.count, chunk + 10_000)]
                    var rows = PostgresBindings()
                    rows.append(run.id)
                    var values: [String] = []
                    for game in slice {
                        rows.append(ByteBuffer(bytes: gameBytes(game)))
                        values.append("($1, $\(values.count + 2))")
                    }
                    try await self.run(connection, "INSERT INTO audit_tasks (run, game) VALUES \(values.joined(separator: ", "))", rows)
                }
            }
        }
        return run
    }

    /// The run with this id, or nil if the store holds none.
    public func auditRun(_ id: UUID) async throws -> AuditRun? {
        try await withConnection { connection in
            var binds = PostgresBindings()
            binds.append(id)
            guard let row = try await run(connection, "SELECT kind, store_rev, reruns FROM audit_runs WHERE id = $1", binds).first else {
                return nil
            }
            let (kind, revision, reruns) = try row.decode((String, Int64, Bool).self)
            return AuditRun(id: id, kind: AuditKind(rawValue: kind) ?? .verify, revision: revision, reruns: reruns)
        }
    }

    /// Checking one game while holding its claim in an open transaction: replaced by
    /// leases, which hold no transaction while the games are checked.
    @available(*, unavailable, message: "claim with claimGames(of:worker:count:lease:reclaimingFrom:), check with no transaction open, then storeOutcomes(of:worker:_:)")
    public func claimGame(of run: AuditRun, worker: String, check: (UUID) throws -> AuditOutcome) async throws -> Bool {
        fatalError("unavailable")
    }

    /// Claims up to `count` games of `run` that are neither done nor claimed by another
    /// worker whose lease still runs, for `lease`: one short statement (`FOR UPDATE SKIP
    /// LOCKED`, so workers never wait for each other). The worker then checks them with
    /// no transaction open and stores what it found with ``storeOutcomes(of:worker:_:)``.
    /// A worker that dies leaves its games to whoever claims after the lease.
    ///
    /// - Parameter reclaimingFrom: workers known to have ended (a coordinator's own
    ///   processes, once they exited): their leases are not waited for.
    /// - Returns: the games claimed, none when every game is done or held.
    public func claimGames(of run: AuditRun, worker: String, count: Int, lease: Duration,
                           reclaimingFrom ended: [String] = []) async throws -> [UUID] {
        try await withConnection { connection in
            let now = Timestamp(Date()).microsecondsSince1970
            var binds = PostgresBindings()
            binds.append(run.id)
            binds.append(worker)
            binds.append(now + lease.components.seconds * 1_000_000)
            binds.append(now)
            binds.append(Int64(max(1, count)))
            binds.append(ended)
            // The games are picked once, in a CTE PostgreSQL must materialise: under
            // `IN (...)` the planner may re-run a `LIMIT ... SKIP LOCKED` subquery for
            // every task of the run (a nested-loop semi join), and a claim of 4 took them all.
            return try await self.run(connection, """
                WITH picked AS MATERIALIZED (
                    SELECT game FROM audit_tasks
                    WHERE run = $1 AND NOT done
                      AND (claimed_until IS NULL OR claimed_until < $4 OR claimed_by = $2 OR claimed_by = ANY($6))
                    ORDER BY game LIMIT $5 FOR UPDATE SKIP LOCKED)
                UPDATE audit_tasks t SET claimed_by = $2, claimed_until = $3
                FROM picked WHERE t.run = $1 AND t.game = picked.game
                RETURNING t.game
                """, binds).compactMap { row in gameID(Array(try row.decode(ByteBuffer.self).readableBytesView)) }
                .sorted { $0.precedes($1) }
        }
    }

    /// Stores what checking claimed games found, in one statement. A game another
    /// worker finished first (it claimed it after this worker's lease ran out) keeps that
    /// worker's outcome: both checked the same store at the run's revision or later.
    /// A `verify` outcome also becomes the game's latest stored audit (unless one of a
    /// later revision is stored already).
    public func storeOutcomes(of run: AuditRun, worker: String, _ outcomes: [(game: UUID, outcome: AuditOutcome)]) async throws {
        // A game given twice is stored once (the first), as one statement can write a row once.
        var seen = Set<UUID>()
        let outcomes = outcomes.filter { seen.insert($0.game).inserted }
        guard !outcomes.isEmpty else { return }
        try await withConnection { connection in
            var binds = PostgresBindings()
            binds.append(run.id)
            binds.append(outcomes.map { ByteBuffer(bytes: gameBytes($0.game)) })
            binds.append(worker)
            binds.append(outcomes.map(\.outcome.revision))
            binds.append(outcomes.map(\.outcome.result))
            binds.append(outcomes.map { Int64($0.outcome.errors) })
            binds.append(outcomes.map { Int64($0.outcome.warnings) })
            binds.append(Timestamp(Date()).microsecondsSince1970)
            binds.append(run.kind == .verify)
            // One statement for the claim (two for each game were most of storing it): the
            // tasks this worker finishes first, and for those the games' latest audits.
            try await self.run(connection, """
                WITH given AS (
                    SELECT * FROM unnest($2::bytea[], $4::bigint[], $5::text[], $6::bigint[], $7::bigint[])
                        AS o(game, store_rev, result, errors, warnings)),
                finished AS (
                    UPDATE audit_tasks t SET done = true, worker = $3, store_rev = given.store_rev, result = given.result
                    FROM given WHERE t.run = $1 AND t.game = given.game AND NOT t.done
                    RETURNING t.game)
                INSERT INTO audit_results (game, store_rev, errors, warnings, report, checked_at)
                SELECT given.game, given.store_rev, given.errors, given.warnings, given.result, $8
                FROM given JOIN finished ON finished.game = given.game WHERE $9
                ON CONFLICT (game) DO UPDATE SET store_rev = excluded.store_rev, errors = excluded.errors,
                    warnings = excluded.warnings, report = excluded.report, checked_at = excluded.checked_at
                WHERE audit_results.store_rev <= excluded.store_rev
                """, binds)
        }
    }

    /// How many of the run's games are done, of how many.
    public func progress(of run: AuditRun) async throws -> (done: Int, total: Int) {
        try await withConnection { connection in
            var binds = PostgresBindings()
            binds.append(run.id)
            guard let row = try await self.run(connection, "SELECT count(*) FILTER (WHERE done), count(*) FROM audit_tasks WHERE run = $1", binds).first else {
                return (0, 0)
            }
            let (done, total) = try row.decode((Int64, Int64).self)
            return (Int(done), Int(total))
        }
    }

    /// The outcomes of the run's games that are done, in game order.
    public func results(of run: AuditRun) async throws -> [AuditTaskResult] {
        try await withConnection { connection in
            var binds = PostgresBindings()
            binds.append(run.id)
            return try await self.run(connection, """
                SELECT game, worker, result FROM audit_tasks WHERE run = $1 AND done ORDER BY game
                """, binds).compactMap { row in
                let (game, worker, result) = try row.decode((ByteBuffer, String, String).self)
                return gameID(Array(game.readableBytesView)).map { AuditTaskResult(game: $0, worker: worker, result: result) }
            }
        }
    }

    /// Every game's latest stored audit: (game, revision checked at, findings as stored).
    public func storedAudits() async throws -> [(game: UUID, revision: Int64, report: String)] {
        try await withConnection { connection in
            try await self.run(connection, "SELECT game, store_rev, report FROM audit_results ORDER BY game").compactMap { row in
                let (game, revision, report) = try row.decode((ByteBuffer, Int64, String).self)
                return gameID(Array(game.readableBytesView)).map { ($0, revision, report) }
            }
        }
    }

    /// The latest stored audit of a game (`verify --workers` keeps one per game), if any.
    public func storedAudit(game: UUID) async throws -> (revision: Int64, errors: Int, warnings: Int, report: String)? {
        try await withConnection { connection in
            var binds = PostgresBindings()
            binds.append(ByteBuffer(bytes: gameBytes(game)))
            guard let row = try await self.run(connection, "SELECT store_rev, errors, warnings, report FROM audit_results WHERE game = $1", binds).first else {
                return nil
            }
            let (revision, errors, warnings, report) = try row.decode((Int64, Int64, Int64, String).self)
            return (revision, Int(errors), Int(warnings), report)
        }
    }
}

private func gameBytes(_ game: UUID) -> [UInt8] { withUnsafeBytes(of: game.uuid) { Array($0) } }

private func gameID(_ bytes: [UInt8]) -> UUID? {
    guard bytes.count == 16 else { return nil }
    var uuid = UUID().uuid
    withUnsafeMutableBytes(of: &uuid) { $0.copyBytes(from: bytes) }
    return UUID(uuid: uuid)
}
