import EventLog
import Foundation
import Interchange
import SharedStore

/// Group commit for a collector: uploads are checked in parallel (parsing, chains,
/// signatures: everything but their place in the store), then stored by one writer,
/// as many as are waiting in one write of the store.
///
/// A write of the shared store pays for its lock, its reads of the store's tail and its
/// commit, whatever it holds: with sixteen phones pushing a game at a
/// time, each push waited for every push before it, one write each. Here a push that
/// arrives while a write runs joins the next one, so the writes' cost is shared by
/// everyone waiting, and a push waits for at most the write before its own.
///
/// Two writes overlap: as soon as a write has planned and sent its group (PostgreSQL is
/// still storing it), the next group is written after it, from the tail it announced
/// (``SharedStore/writeNatively(following:_:)``), when the two share no device and no
/// recording. PostgreSQL then stores both at once while the writer plans the second; a
/// write's own work and the server's no longer take turns (docs/BENCHMARKS.md, session
/// 46). The second commits only after the first, from exactly the tail the first
/// committed, or is written again the usual way.
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
        /// The writer's loop, asleep until an upload arrives or a write moves on.
        var sleeper: CheckedContinuation<Void, Never>?
        /// Something happened while the loop was not asleep.
        var woken = false
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
            if startWriter { Task { await self.write(for: collector) } } else { wake() }
        }
    }

    /// One group's write under way, as the group after it may follow it.
    private final class Write: Sendable {
        let group: [Waiting]
        let devices: Set<[UInt8]>
        let recordings: Set<UUID>
        /// The write this one follows, if it does.
        let followed: Write?
        private let progress = NSLockedValue(Progress())
        private let commit: GroupCommit

        private struct Progress {
            /// The tail its write announced, until that write ended or failed.
            var planned: SharedStore.WriteTail?
            /// How the write that announced `planned` ended: committed (its tail) or not (nil).
            var outcome: SharedStore.WriteTail??
            var outcomeWaiters: [CheckedContinuation<SharedStore.WriteTail?, Never>] = []
            /// The write that follows this one, once one does.
            var follower: Write?
            /// Whether this write's own try as a follower is over (kept or given up).
            var settled = false
            var settledWaiters: [CheckedContinuation<Void, Never>] = []
            var ended = false
            var endWaiters: [CheckedContinuation<Void, Never>] = []
        }

        init(_ group: [Waiting], following followed: Write?, in commit: GroupCommit) {
            self.group = group
            self.followed = followed
            self.commit = commit
            devices = Set(group.map(\.upload.tree.owner.publicKey))
            recordings = group.reduce(into: Set<UUID>()) { $0.formUnion($1.upload.plan.recordings) }
        }

        /// The tail the write announced, while a group may still follow it.
        var plannedTail: SharedStore.WriteTail? { progress.withLock { $0.outcome == nil ? $0.planned : nil } }
        var hasEnded: Bool { progress.withLock { $0.ended } }
        /// The tail the write announced, if it did.
        var announcedTail: SharedStore.WriteTail? { progress.withLock { $0.planned } }

        /// Whether a group may follow this write: neither reads what the other writes.
        func canBeFollowed(by group: [Waiting]) -> Bool {
            group.allSatisfy { !devices.contains($0.upload.tree.owner.publicKey) && recordings.isDisjoint(with: $0.upload.plan.recordings) }
        }

        /// Makes `write` this write's follower; false if its tail can no longer be followed.
        func register(follower write: Write) -> Bool {
            progress.withLock { progress in
                guard progress.outcome == nil, progress.planned != nil, progress.follower == nil else { return false }
                progress.follower = write
                return true
            }
        }

        func announce(_ tail: SharedStore.WriteTail) {
            let first = progress.withLock { progress -> Bool in
                guard progress.planned == nil, progress.outcome == nil else { return false }
                progress.planned = tail
                return true
            }
            if first { commit.wake() }
        }

        /// Settles the announced tail's fate: `tail` committed, or nil (the write failed or
        /// is written again). Returns the follower, if one started.
        @discardableResult
        func settleOutcome(_ tail: SharedStore.WriteTail?) -> Write? {
            let (waiters, follower) = progress.withLock { progress -> ([CheckedContinuation<SharedStore.WriteTail?, Never>], Write?) in
                if progress.outcome == nil { progress.outcome = .some(tail) }
                defer { progress.outcomeWaiters = [] }
                return (progress.outcomeWaiters, progress.follower)
            }
            let outcome = progress.withLock { $0.outcome ?? nil }
            for waiter in waiters { waiter.resume(returning: outcome) }
            return follower
        }

        /// The announced tail's fate (see ``settleOutcome(_:)``).
        func outcome() async -> SharedStore.WriteTail? {
            await withCheckedContinuation { waiter in
                let known = progress.withLock { progress -> SharedStore.WriteTail?? in
                    guard let outcome = progress.outcome else {
                        progress.outcomeWaiters.append(waiter)
                        return nil
                    }
                    return .some(outcome)
                }
                if let known { waiter.resume(returning: known) }
            }
        }

        /// This write's try as a follower is over: its rows are committed or rolled back.
        func settleTry() {
            let waiters = progress.withLock { progress in
                progress.settled = true
                defer { progress.settledWaiters = [] }
                return progress.settledWaiters
            }
            for waiter in waiters { waiter.resume() }
        }

        func triedAsFollower() async {
            await withCheckedContinuation { waiter in
                let done = progress.withLock { progress -> Bool in
                    if !progress.settled { progress.settledWaiters.append(waiter) }
                    return progress.settled
                }
                if done { waiter.resume() }
            }
        }

        func end(committed tail: SharedStore.WriteTail?) {
            settleOutcome(tail)
            let waiters = progress.withLock { progress in
                progress.ended = true
                defer { progress.endWaiters = [] }
                return progress.endWaiters
            }
            for waiter in waiters { waiter.resume() }
            commit.wake()
        }

        func ended() async {
            await withCheckedContinuation { waiter in
                let done = progress.withLock { progress -> Bool in
                    if !progress.ended { progress.endWaiters.append(waiter) }
                    return progress.ended
                }
                if done { waiter.resume() }
            }
        }
    }

    /// Writes groups until nothing waits, at most two at once.
    private func write(for collector: Collector) async {
        var last: Write?
        while true {
            guard let previous = last, !previous.hasEnded else {
                last = nil
                guard let group = nextGroup(endingIfNone: true) else { return }
                last = start(group, following: nil, with: collector)
                continue
            }
            // The next group follows `previous` once it announced its tail, and once the
            // write it follows itself ended (two writes at once at most).
            guard previous.plannedTail != nil, previous.followed?.hasEnded ?? true, let group = nextGroup(endingIfNone: false) else {
                await sleep()
                continue
            }
            let write = Write(group, following: previous, in: self)
            if previous.canBeFollowed(by: group), previous.register(follower: write) {
                Task { await run(write, with: collector) }
                last = write
            } else {
                await previous.ended()
                last = start(group, following: nil, with: collector)
            }
        }
    }

    private func start(_ group: [Waiting], following followed: Write?, with collector: Collector) -> Write {
        let write = Write(group, following: followed, in: self)
        Task { await run(write, with: collector) }
        return write
    }

    private func run(_ write: Write, with collector: Collector) async {
        let uploads = write.group.map(\.upload)
        var stored: Collector.StoredGroup?
        if let followed = write.followed, let tail = followed.announcedTail {
            stored = try? await collector.storeGroup(uploads, following: SharedStore.Followed(tail: tail, outcome: { await followed.outcome() }),
                                                     whenPlanned: write.announce)
            collector.metrics.followedWrite(kept: stored != nil)
            if stored == nil {
                // Given up: what it announced is not followed either.
                await write.settleOutcome(nil)?.triedAsFollower()
            }
            write.settleTry()
            if stored == nil { await followed.ended() }
        } else {
            write.settleTry()
        }
        do {
            let group: Collector.StoredGroup
            if let stored {
                group = stored
            } else {
                do {
                    group = try await collector.storeGroup(uploads, whenPlanned: write.announce)
                } catch is PostgresLogWriter.AnnouncedTailUndone {
                    // Its follower gives up (its rows rolled back) before the group is written again, alone.
                    await write.settleOutcome(nil)?.triedAsFollower()
                    group = try await collector.storeGroup(uploads, whenPlanned: nil)
                }
            }
            for (waiting, result) in zip(write.group, group.results) { waiting.answer.resume(with: result) }
            write.end(committed: group.tail)
        } catch {
            // The store failed (unreachable, a statement refused): nothing of the group was kept.
            for waiting in write.group { waiting.answer.resume(throwing: error) }
            write.end(committed: nil)
        }
    }

    /// Returns when an upload arrived or a write moved on since the loop last slept (at
    /// once if one did meanwhile).
    private func sleep() async {
        await withCheckedContinuation { sleeper in
            let now = state.withLock { state -> Bool in
                if state.woken {
                    state.woken = false
                    return true
                }
                state.sleeper = sleeper
                return false
            }
            if now { sleeper.resume() }
        }
    }

    private func wake() {
        let sleeper = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let sleeper = state.sleeper else {
                state.woken = true
                return nil
            }
            state.sleeper = nil
            return sleeper
        }
        sleeper?.resume()
    }

    /// The uploads of the next write, oldest first, up to ``maximumEvents`` (at least
    /// one); nil when none wait, which also ends this writer if `endingIfNone`.
    private func nextGroup(endingIfNone: Bool) -> [Waiting]? {
        state.withLock { state in
            guard !state.waiting.isEmpty else {
                if endingIfNone { state.writing = false }
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
