import EventStore
import Foundation
import GameKit
import MessagesModel
import Replay
import SharedStore
import StoredEvents

/// Keeps a shared store's game summaries (`game_summaries`, a cache a page of games reads
/// instead of folding every event of its conversations) current: `gamelog index` for the
/// whole store, a collector for the conversations it wrote to.
///
/// It folds only conversations whose stored summary is missing, in another format or
/// behind their recordings, and writes each batch's rows in one statement. Readers check
/// every row against the recordings before using it, so a pass that is interrupted, or
/// races with uploads, leaves rows that are either current or unused.
public struct GameSummaryWriter: Sendable {
    public let store: SharedStore
    public let games: GameRegistry

    /// Conversations read, folded and written together.
    public static let conversationsPerBatch = 32

    /// Whether its reads and folds run on ``LowPriorityExecutor`` (a collector's, which
    /// give way to its writer) rather than at the process's priority.
    var givesWayToWriters = false

    public init(store: SharedStore, games: GameRegistry) {
        self.store = store
        self.games = games
    }

    /// What a pass did.
    public struct Outcome: Sendable, Equatable {
        /// Conversations looked at.
        public var conversations = 0
        /// Conversations whose summary was current already.
        public var current = 0
        /// Rows written.
        public var written = 0
        /// Conversations left without a current row (their events fall short of their
        /// recordings' rows: damage, which `verify` names).
        public var skipped: Int { conversations - current - written }
    }

    /// Every conversation of the store's catalog.
    /// - Parameters:
    ///   - lanes: batches folded at once, each on a connection of its own.
    ///   - progress: called with (conversations done, all of them), from one lane at a time.
    public func refreshAll(lanes: Int = 1, progress: (@Sendable (Int, Int) -> Void)? = nil) async throws -> Outcome {
        let reader = store.reader()
        guard try reader.catalogIsComplete() else { throw ReplayError.incompleteCatalog(location: reader.location) }
        return try await refresh(try GameIndex(store: reader).allStreams(), lanes: lanes, progress: progress)
    }

    /// The conversations that hold any of `streams` (recordings a collector or an import
    /// just wrote to).
    /// - Parameter beforeEachBatch: awaited before each batch of
    ///   ``conversationsPerBatch`` conversations is read, on its lane: a collector waits
    ///   there while uploads are in flight.
    public func refresh(streams: Set<UUID>, lanes: Int = 1, progress: (@Sendable (Int, Int) -> Void)? = nil,
                        beforeEachBatch: (@Sendable () async -> Void)? = nil) async throws -> Outcome {
        guard !streams.isEmpty else { return Outcome() }
        let reader = store.reader()
        let streamsOf = try await work { () -> [ConversationID: Set<UUID>] in
            let named = try reader.catalogEntries(ofStreams: streams).filter { $0.tag.kind == .conversation }
            return try GameIndex(store: reader).streams(ofConversations: Set(named.map { ConversationID($0.tag.id) }))
        }
        return try await refresh(streamsOf, lanes: lanes, progress: progress, beforeEachBatch: beforeEachBatch)
    }

    /// `streamsOf`'s conversations in batches, `lanes` at a time.
    private func refresh(_ streamsOf: [ConversationID: Set<UUID>], lanes: Int, progress: (@Sendable (Int, Int) -> Void)?,
                         beforeEachBatch: (@Sendable () async -> Void)? = nil) async throws -> Outcome {
        let ordered = streamsOf.keys.sorted { $0.uuid.uuidString < $1.uuid.uuidString }
        let batches = stride(from: 0, to: ordered.count, by: Self.conversationsPerBatch).map {
            ordered[$0..<min($0 + Self.conversationsPerBatch, ordered.count)].reduce(into: [ConversationID: Set<UUID>]()) { $0[$1] = streamsOf[$1] }
        }
        let next = BatchCounter()
        return try await withThrowingTaskGroup(of: Outcome.self) { group in
            for _ in 0..<max(1, min(lanes, batches.count)) {
                group.addTask {
                    let reader = store.reader()
                    var outcome = Outcome()
                    while let index = next.take(below: batches.count) {
                        await beforeEachBatch?()
                        let done = try await refresh(batches[index], on: reader)
                        outcome.add(done)
                        next.finished(done.conversations) { progress?($0, ordered.count) }
                    }
                    return outcome
                }
            }
            var total = Outcome()
            for try await outcome in group { total.add(outcome) }
            return total
        }
    }

    /// Runs `body` (blocking reads and folds) off the cooperative pool.
    private func work<T: Sendable>(_ body: @Sendable () throws -> T) async throws -> T {
        if givesWayToWriters {
            return try await withTaskExecutorPreference(LowPriorityExecutor.shared) { try body() }
        }
        return try await SharedStore.blocking { try body() }
    }

    /// One batch: its current rows kept, the others folded and written.
    private func refresh(_ streamsOf: [ConversationID: Set<UUID>], on reader: PostgresLogReader) async throws -> Outcome {
        let games = games
        let rows = try await work { () -> (rows: [StoredSummaries], current: Int) in
            let current = try GameCatalog.currentStoredSummaries(reader, conversations: Array(streamsOf.keys), streamsOf: streamsOf, games: games)
            let stale = streamsOf.filter { current[$0.key] == nil }
            return (try GameCatalog.summariesToStore(reader, conversations: stale, games: games), current.count)
        }
        try await store.storeSummaries(rows.rows)
        var outcome = Outcome()
        outcome.conversations = streamsOf.count
        outcome.current = rows.current
        outcome.written = rows.rows.count
        return outcome
    }
}

extension GameSummaryWriter.Outcome {
    mutating func add(_ other: Self) {
        conversations += other.conversations
        current += other.current
        written += other.written
    }
}

/// Hands out batch numbers to the lanes, and counts what they finished.
private final class BatchCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var handedOut = 0, done = 0
    func take(below count: Int) -> Int? {
        lock.withLock {
            guard handedOut < count else { return nil }
            handedOut += 1
            return handedOut - 1
        }
    }
    /// Counts a batch's conversations and reports the count, one report at a time.
    func finished(_ conversations: Int, report: (Int) -> Void) {
        lock.withLock {
            done += conversations
            report(done)
        }
    }
}
