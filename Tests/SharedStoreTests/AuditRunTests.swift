import EventStore
import Foundation
import SharedStore
import TestSupport
import Testing

/// Audits shared among processes: each game of a run is claimed by one process at a
/// time, skipped (not waited for) by the others, and done exactly once.
@Suite(.serialized) struct AuditRunTests {
    final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var games: [String: UUID] = [:]
        func record(_ worker: String, _ game: UUID) { lock.lock(); games[worker] = game; lock.unlock() }
        func game(of worker: String) -> UUID? { lock.lock(); defer { lock.unlock() }; return games[worker] }
    }

    static func outcome(_ game: UUID) -> SharedStore.AuditOutcome {
        .init(result: "[\"\(game.uuidString)\"]", errors: 0, warnings: 1, revision: 1)
    }

    @Test func aClaimedGameIsSkippedNotWaitedForAndEveryGameIsDoneOnce() throws {
        let folder = try TemporaryFolder()
        let (store, _) = try SharedStoreTests.makeStore(folder)
        let games = (0..<3).map { _ in UUID() }
        let run = try SharedStore.wait { try await store.startAuditRun(.verify, revision: 1, reruns: false, games: games) }
        let seen = Seen()
        let aClaimed = DispatchSemaphore(value: 0), bFinished = DispatchSemaphore(value: 0), aFinished = DispatchSemaphore(value: 0)
        let aWaitedForB = Seen()

        // A holds its claim until B has claimed and finished another game: with a plain
        // FOR UPDATE, B would wait for A's row and A would time out.
        DispatchQueue.global().async {
            _ = try? SharedStore.wait {
                try await store.claimGame(of: run, worker: "A") { game in
                    seen.record("A", game)
                    aClaimed.signal()
                    if bFinished.wait(timeout: .now() + 30) == .success { aWaitedForB.record("A", game) }
                    return Self.outcome(game)
                }
            }
            aFinished.signal()
        }
        #expect(aClaimed.wait(timeout: .now() + 30) == .success)
        let claimedByB = try SharedStore.wait {
            try await store.claimGame(of: run, worker: "B") { game in
                seen.record("B", game)
                return Self.outcome(game)
            }
        }
        bFinished.signal()
        #expect(aFinished.wait(timeout: .now() + 60) == .success)
        #expect(claimedByB && aWaitedForB.game(of: "A") != nil)
        #expect(seen.game(of: "A") != nil && seen.game(of: "A") != seen.game(of: "B"))

        // A check that fails leaves its game to the next process.
        struct Crash: Error {}
        #expect(throws: Crash.self) {
            try SharedStore.wait { try await store.claimGame(of: run, worker: "C") { _ in throw Crash() } }
        }
        #expect(try SharedStore.wait { try await store.progress(of: run) } == (2, 3))
        #expect(try SharedStore.wait { try await store.claimGame(of: run, worker: "D") { Self.outcome($0) } })
        #expect(try !SharedStore.wait { try await store.claimGame(of: run, worker: "E") { Self.outcome($0) } })

        let results = try SharedStore.wait { try await store.results(of: run) }
        #expect(Set(results.map(\.game)) == Set(games) && results.count == 3)
        #expect(results.map(\.worker).sorted() == ["A", "B", "D"])
        #expect(results.allSatisfy { $0.result == "[\"\($0.game.uuidString)\"]" })
        // A verify run's outcome is each game's latest stored audit.
        let stored = try SharedStore.wait { try await store.storedAudit(game: games[0]) }
        #expect(stored?.warnings == 1 && stored?.report == "[\"\(games[0].uuidString)\"]")
        // Joining a run that is done does nothing; a run that does not exist is nil.
        #expect(try SharedStore.wait { try await store.auditRun(run.id) } == run)
        #expect(try SharedStore.wait { try await store.auditRun(UUID()) } == nil)
    }
}
