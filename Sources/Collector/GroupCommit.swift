import Foundation

/// Group commit for a collector: uploads are checked in parallel (parsing, chains,
/// signatures: everything but their place in the store), then stored by one writer,
/// as many as are waiting in one write of the store.
///
/// A write of the shared store pays for its lock, its reads of the store's tail and its
/// commit, whatever it holds: with sixteen phones pushing a game at a
/// time, each push waited for every push before it, one write each. Here a push that
/// arrives while a write runs joins the next one, so the writes' cost is shared by
/// everyone waiting, and a push waits for at most the write before its own.
final class GroupCommit: Sendable {
    /// The most events one write takes: a group stays one short transaction.
    static let maximumEvents = 50_000
    /// The events of one `COPY` of a group's import: the writer plans a batch while
    /// PostgreSQL stores the one before, so smaller batches overlap more, and each costs
    /// a few statements more (its recordings' and catalog's rows).
    static let eventsPerCopy = 2_000

    private struct Waiting {
        var upload: Collector.Upload
        var answer: CheckedContinuation<Collector.Accepted, Error>
    }

    private struct State {
        var waiting: [Waiting] = []
        var writing = false
    }

    private let state = NSLockedValue(State())

    /// Stores `upload` with whatever else is waiting; returns once its group committed.
    func store(_ upload: Collector.Upload, with collector: Collector) async throws -> Collector.Accepted {
        try await withCheckedThrowingContinuation { answer in
            let startWriter = state.withLock { state -> Bool in
                state.waiting.append(Waiting(upload: upload, answer: answer))
                guard !state.writing else { return false }
                state.writing = true
                return true
            }
            if startWriter { Task { await self.write(for: collector) } }
        }
    }

    /// Writes groups until nothing waits.
    private func write(for collector: Collector) async {
        while let group = nextGroup() {
            do {
                let results = try await collector.storeGroup(group.map(\.upload))
                for (waiting, result) in zip(group, results) { waiting.answer.resume(with: result) }
            } catch {
                // The store failed (unreachable, a statement refused): nothing of the group was kept.
                for waiting in group { waiting.answer.resume(throwing: error) }
            }
        }
    }

    /// The uploads of the next write, oldest first, up to ``maximumEvents`` (at least
    /// one); nil when none wait, which also ends this writer.
    private func nextGroup() -> [Waiting]? {
        state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.writing = false
                return nil
            }
            var events = 0, count = 0
            for waiting in state.waiting {
                if count > 0 && events + waiting.upload.events > Self.maximumEvents { break }
                events += waiting.upload.events
                count += 1
            }
            let group = Array(state.waiting.prefix(count))
            state.waiting.removeFirst(count)
            return group
        }
    }
}

/// A value behind a lock, for state shared across tasks (as swift-nio's `NIOLockedValueBox`).
package final class NSLockedValue<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
