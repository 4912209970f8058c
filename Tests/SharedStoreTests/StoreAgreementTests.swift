import Audit
import EventStore
import Foundation
import Games
import Interchange
import Replay
import StoredEvents
import TestSupport
import Testing

/// What a store answers is the log's, not the store's: one log of signed games in each
/// store, every answer compared byte for byte with the SQLite file that recorded it
/// (exports whole, of one game and redacted; consistency proofs; the signatures' report;
/// the audit's verdicts).
@Suite(.serialized) struct StoreAgreementTests {
    /// The log, written once, and each store's copy of it.
    final class Logs: @unchecked Sendable {
        let folder: TemporaryFolder
        let keys = TestKeys()
        /// The file that recorded the games: what every store must agree with.
        let original: EventStore
        private var made: [StoreUnderTest: LogUnderTest] = [:]
        private let lock = NSLock()

        nonisolated(unsafe) private static var shared: Logs?
        private static let sharedLock = NSLock()

        static func get() throws -> Logs {
            try sharedLock.withLock {
                if let shared { return shared }
                let logs = try Logs()
                shared = logs
                return logs
            }
        }

        private init() throws {
            folder = try TemporaryFolder()
            original = try EventStore(path: folder.path("original.sqlite"))
            try playMixedGames(6, into: original, seed: 61, keys: keys)
        }

        /// The log in `store`: its export imported (a file of blocks or rows, or PostgreSQL).
        func log(_ store: StoreUnderTest) async throws -> LogUnderTest {
            if let known = lock.withLock({ made[store] }) { return known }
            var lines: [String] = []
            _ = try Interchange.export(from: original) { lines.append($0) }
            let body = Data((lines.joined(separator: "\n") + "\n").utf8)
            let log = try await store.makeLog(folder) { file in
                _ = try Interchange.import(files: [ExportFile(name: "original", contents: body)], into: file)
            }
            lock.withLock { made[store] = log }
            return log
        }
    }

    static func exportLines(_ reader: any SignedLogReader, streams: Set<UUID>? = nil, redact: Bool = false) throws -> [String] {
        var lines: [String] = []
        _ = try Interchange.export(from: reader, streams: streams, redact: redact) { lines.append($0) }
        return lines
    }

    @Test(arguments: StoreUnderTest.allCases) func exportsAreTheOriginalsByteForByte(_ store: StoreUnderTest) async throws {
        let logs = try Logs.get()
        let reader = try await logs.log(store).reader()
        let whole = try Self.exportLines(logs.original)
        #expect(whole.count > 300)
        #expect(try Self.exportLines(reader) == whole)
        #expect(try Self.exportLines(reader, redact: true) == Self.exportLines(logs.original, redact: true))
        // One game's recordings, as `export --game` takes them, with its devices' proofs.
        let index = try GameIndex(store: logs.original)
        let games = try logs.original.catalogEntries(.game)
        try #require(games.count >= 4)
        var compared = 0
        for entry in games.prefix(4) {
            let streams = try index.streams(of: try index.resolve(entry.tag.id.uuidString).conversation)
            let one = try Self.exportLines(logs.original, streams: streams)
            #expect(one.count > 10 && one.count < whole.count)
            #expect(try Self.exportLines(reader, streams: streams) == one)
            compared += 1
        }
        #expect(compared == 4)
    }

    @Test(arguments: StoreUnderTest.allCases) func consistencyProofsAreTheOriginals(_ store: StoreUnderTest) async throws {
        let logs = try Logs.get()
        let reader = try await logs.log(store).reader()
        let trees = try logs.original.deviceTrees()
        #expect(trees.count >= 2)
        var proofs = 0
        for tree in trees where tree.size >= 3 {
            for (from, to) in [(1, tree.size), (tree.size / 2, tree.size), (2, tree.size - 1)] where from >= 1 && from <= to {
                let expected = try logs.original.consistencyProof(device: tree.owner.device, from: from, to: to)
                let proof = try reader.consistencyProof(device: tree.owner.device, from: from, to: to)
                #expect(proof == expected && proof.isValid)
                proofs += 1
            }
        }
        #expect(proofs >= 6)
        #expect(throws: ConsistencyProofError.noSuchDevice("nobody")) { try reader.consistencyProof(device: "nobody", from: 1) }
    }

    @Test(arguments: StoreUnderTest.allCases) func signaturesAndVerdictsAreTheOriginals(_ store: StoreUnderTest) async throws {
        let logs = try Logs.get()
        let reader = try await logs.log(store).reader()
        let expected = try logs.original.verifyProofs(trusting: logs.keys.trusted)
        let report = try reader.verifyProofs(trusting: logs.keys.trusted)
        #expect(expected.heads > 0 && expected.problems.isEmpty)
        #expect(report.heads == expected.heads && report.problems == expected.problems)
        #expect(report.keys == expected.keys && report.deviceOfStream == expected.deviceOfStream)
        let integrity = try reader.verifyIntegrity(progress: nil), original = try logs.original.verifyIntegrity()
        #expect(integrity.isSound && integrity.eventCount == original.eventCount && integrity.headHash == original.headHash)
        // The audit's verdicts, finding by finding (warnings included), and one game's.
        let auditor = Auditor(games: .standard)
        let findings = try auditor.audit(reader, trusting: logs.keys.trusted)
        #expect(try findings == auditor.audit(logs.original, trusting: logs.keys.trusted))
        #expect(!findings.contains { $0.severity == .error })
        let game = try #require(try logs.original.catalogEntries(.game).last).tag.id.uuidString
        #expect(try auditor.audit(reader, game: game, trusting: logs.keys.trusted)
                == auditor.audit(logs.original, game: game, trusting: logs.keys.trusted))
    }
}
