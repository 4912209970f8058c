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
///
/// Writes overlap: as soon as a write has planned and sent its group (PostgreSQL is
/// still storing it), the next group is written after it, from the tail it announced
/// (``SharedStore/writeNatively(following:_:)``), when it shares no device, recording or
/// event id with any write still open (up to ``maximumOpen`` writes, each following the
/// one before). PostgreSQL
/// then stores them at once while the writer plans the next; a write's own work and the
/// server's no longer take turns (docs/BENCHMARKS.md, session 46). A follower commits
/// only after the write it follows, from exactly the tail that one committed, or is
/// written again the usual way; after a few given up in a row (another collector writing
/// the same store) none is tried for a while.
///
/// Generic over what writes the groups (``GroupWriting``): a collector's store, or a
/// test's script of one.
final class GroupCommit<Writer: GroupWriting>: Sendable {
    /// The most events one write takes: a group stays one short transaction.
    static var maximumEvents: Int { 50_000 }
    /// The most writes open at once, each following the one before (each on a connection
    /// of its own): three gave 5% more than two at 8 and at 16 uploads in flight, four no
    /// more than three (docs/BENCHMARKS.md, session 46).
    static var maximumOpen: Int { 3 }

    typealias Item = Writer.Item
    typealias Tail = Writer.Tail

    private struct Waiting {
        var item: Item
        var answer: CheckedContinuation<Writer.Answer, Error>
    }

    private struct State {
        var waiting: [Waiting] = []
        /// Items handed in and not answered yet: waiting, or in a write still open.
        var unanswered = 0
        var writing = false
        /// The writer's loop, asleep until an upload arrives or a write moves on.
        var sleeper: CheckedContinuation<Void, Never>?
        /// Something happened while the loop was not asleep.
        var woken = false
        /// Following writes given up one after another, and until when none is tried.
        var givenUp = 0
        var followingPausedUntil: ContinuousClock.Instant?
    }

    /// Following writes given up in a row after which none is tried for ``followingPause``:
    /// with another collector writing the same store, nearly every one is (the other's write
    /// comes between), and each costs its planning and the other's wait for its rows.
    static var givenUpBeforePause: Int { 3 }
    static var followingPause: Duration { .seconds(5) }

    /// Whether a group may be written following another now (not paused).
    private var mayFollowNow: Bool {
        state.withLock { state in
            guard let until = state.followingPausedUntil else { return true }
            if ContinuousClock.now < until { return false }
            state.followingPausedUntil = nil
            return true
        }
    }

    private func noteFollowed(kept: Bool) {
        state.withLock { state in
            guard !kept else { return state.givenUp = 0 }
            state.givenUp += 1
            if state.givenUp >= Self.givenUpBeforePause {
                state.givenUp = 0
                state.followingPausedUntil = ContinuousClock.now + Self.followingPause
            }
        }
    }

    private let state = NSLockedValue(State())

    /// Items waiting for a write, not in one yet.
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Items handed in and not answered yet: waiting, or in a write still open.
    var unansweredCount: Int { state.withLock { $0.unanswered } }

    private func answered(_ count: Int) { state.withLock { $0.unanswered -= count } }

    /// Stores `item` with whatever else is waiting; returns once its group committed.
    func store(_ item: Item, with writer: Writer) async throws -> Writer.Answer {
        try await withCheckedThrowingContinuation { answer in
            let startWriter = state.withLock { state -> Bool in
                state.waiting.append(Waiting(item: item, answer: answer))
                state.unanswered += 1
                guard !state.writing else { return false }
                state.writing = true
                return true
            }
            if startWriter { Task { await self.write(with: writer) } } else { wake() }
        }
    }

    /// One group's write under way, as the group after it may follow it.
    private final class Write: Sendable {
        let group: [Waiting]
        /// The write this one follows, if it does, until this one ended: held no longer,
        /// or every write would hold the one before it, and the uploads of each.
        var followed: Write? { progress.withLock { $0.followed } }
        private let progress = NSLockedValue(Progress())
        /// How the write that announced its tail ended: committed (its tail) or not (nil).
        private let outcomeOfTail = Eventual<Tail?>()
        /// This write's own try as a follower is over (kept, or given up and rolled back);
        /// awaited only of a follower.
        private let tried = Eventual<Void>()
        private let over = Eventual<Void>()
        private let commit: GroupCommit

        private struct Progress {
            /// The tail its write announced.
            var planned: Tail?
            /// Whether that tail's fate is known (``outcomeOfTail``): no follower joins after.
            var settled = false
            /// The write this one follows (see ``followed``).
            var followed: Write?
            /// The write that follows this one, once one does, until its outcome is settled.
            var follower: Write?
        }

        init(_ group: [Waiting], following followed: Write?, in commit: GroupCommit) {
            self.group = group
            self.commit = commit
            progress.withLock { $0.followed = followed }
        }

        var items: [Item] { group.map(\.item) }

        /// The tail the write announced, while a group may still follow it.
        var plannedTail: Tail? { progress.withLock { $0.settled ? nil : $0.planned } }
        var hasEnded: Bool { over.isSet }
        /// The writes still open before this one in its chain of follows, nearest first.
        var openBefore: [Write] {
            var open: [Write] = [], write = followed
            while let before = write, !before.hasEnded {
                open.append(before)
                write = before.followed
            }
            return open
        }
        /// The tail the write announced, if it did.
        var announcedTail: Tail? { progress.withLock { $0.planned } }

        /// The items of this write and of every write before it in its chain that is still
        /// open: a group that follows it reads the store as it was before all of them.
        var itemsOfOpenWrites: [Item] { openBefore.reduce(items) { $0 + $1.items } }

        /// Makes `write` this write's follower; false if its tail can no longer be followed.
        func register(follower write: Write) -> Bool {
            progress.withLock { progress in
                guard !progress.settled, progress.planned != nil, progress.follower == nil else { return false }
                progress.follower = write
                return true
            }
        }

        func announce(_ tail: Tail) {
            let first = progress.withLock { progress -> Bool in
                guard progress.planned == nil, !progress.settled else { return false }
                progress.planned = tail
                return true
            }
            if first { commit.wake() }
        }

        /// Settles the announced tail's fate, the first call alone: `tail` committed, or nil
        /// (the write failed or is written again). Returns the follower, if one started.
        @discardableResult
        func settleOutcome(_ tail: Tail?) -> Write? {
            let follower = progress.withLock { progress -> Write? in
                progress.settled = true
                defer { progress.follower = nil }
                return progress.follower
            }
            outcomeOfTail.set(tail)
            return follower
        }

        /// The announced tail's fate (see ``settleOutcome(_:)``).
        func outcome() async -> Tail? { await outcomeOfTail.value }

        /// This write's try as a follower is over: its rows are committed or rolled back.
        func settleTry() { tried.set(()) }

        func triedAsFollower() async { await tried.value }

        func end(committed tail: Tail?) {
            settleOutcome(tail)
            progress.withLock { $0.followed = nil }
            over.set(())
            commit.wake()
        }

        func ended() async { await over.value }
    }

    /// Writes groups until nothing waits, at most ``maximumOpen`` at once.
    private func write(with writer: Writer) async {
        var last: Write?
        while true {
            guard let previous = last, !previous.hasEnded else {
                last = nil
                guard let group = nextGroup(endingIfNone: true) else { return }
                last = start(group, with: writer)
                continue
            }
            // The next group follows `previous` once it announced its tail, while fewer than
            // ``maximumOpen`` writes are open.
            guard previous.plannedTail != nil, previous.openBefore.count < Self.maximumOpen - 1, let group = nextGroup(endingIfNone: false) else {
                await sleep()
                continue
            }
            if mayFollowNow, writer.mayFollow(previous.itemsOfOpenWrites, with: group.map(\.item)) {
                let write = Write(group, following: previous, in: self)
                if previous.register(follower: write) {
                    Task { await run(write, with: writer) }
                    last = write
                    continue
                }
            }
            // Reads what `previous` writes, or `previous` can no longer be followed: after it.
            await previous.ended()
            last = start(group, with: writer)
        }
    }

    private func start(_ group: [Waiting], with writer: Writer) -> Write {
        let write = Write(group, following: nil, in: self)
        Task { await run(write, with: writer) }
        return write
    }

    private func run(_ write: Write, with writer: Writer) async {
        let items = write.items
        var stored: GroupWritten<Writer.Answer, Tail>?
        if let followed = write.followed, let tail = followed.announcedTail {
            stored = try? await writer.write(items, following: tail, outcome: { await followed.outcome() }, whenPlanned: write.announce)
            writer.followed(kept: stored != nil)
            noteFollowed(kept: stored != nil)
            if stored == nil {
                // Given up: what it announced is not followed either, and a write that
                // followed it gives up (its rows rolled back) before this one is written again.
                await write.settleOutcome(nil)?.triedAsFollower()
            }
            write.settleTry()
            if stored == nil { await followed.ended() }
        }
        do {
            let group: GroupWritten<Writer.Answer, Tail>
            if let stored {
                group = stored
            } else {
                do {
                    group = try await writer.write(items, whenPlanned: write.announce)
                } catch where writer.undidAnnouncedTail(error) {
                    // Its follower gives up (its rows rolled back) before the group is written again, alone.
                    await write.settleOutcome(nil)?.triedAsFollower()
                    group = try await writer.write(items, whenPlanned: nil)
                }
            }
            answered(write.group.count)
            for (waiting, result) in zip(write.group, group.results) { waiting.answer.resume(with: result) }
            write.end(committed: group.tail)
        } catch {
            // The store failed (unreachable, a statement refused): nothing of the group was kept.
            answered(write.group.count)
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
                let size = Writer.events(of: waiting.item)
                if count > 0 && events + size > Self.maximumEvents { break }
                events += size
                count += 1
            }
            let group = Array(state.waiting.prefix(count))
            state.waiting.removeFirst(count)
            return group
        }
    }
}

/// What ``GroupCommit`` writes groups with: a collector's store (``Collector``), or in a
/// test, a script of one.
protocol GroupWriting: Sendable {
    associatedtype Item: Sendable
    associatedtype Answer: Sendable
    /// The log's tail as a write planned it (``SharedStore/WriteTail``).
    associatedtype Tail: Sendable & Equatable

    /// The events of an item, which a group holds at most ``GroupCommit/maximumEvents`` of.
    static func events(of item: Item) -> Int

    /// Writes a group the usual way; calls `whenPlanned` (if given) with its tail as soon
    /// as it planned and sent it, before it committed.
    func write(_ items: [Item], whenPlanned: (@Sendable (Tail) -> Void)?) async throws -> GroupWritten<Answer, Tail>

    /// Writes a group following a write that announced `tail` and has not committed yet
    /// (`outcome` waits for it: its committed tail, or nil). Nil: not kept, nothing of it stored.
    func write(_ items: [Item], following tail: Tail, outcome: @escaping @Sendable () async -> Tail?,
               whenPlanned: (@Sendable (Tail) -> Void)?) async throws -> GroupWritten<Answer, Tail>?

    /// Whether a group of `next` may be written following the writes still open of
    /// `previous` (neither reads nor writes a row the other writes: a row both write makes
    /// one wait for the other's transaction, and the one that waits may be the first).
    func mayFollow(_ previous: [Item], with next: [Item]) -> Bool

    /// Whether `error` is a write's failure because its announced tail was undone: it is
    /// written again, alone, once its follower gave up.
    func undidAnnouncedTail(_ error: Error) -> Bool

    /// Counts a group written following another: kept, or written again.
    func followed(kept: Bool)
}

/// A group's answers, each item's, and the tail its write committed (nil if it planned none).
struct GroupWritten<Answer: Sendable, Tail: Sendable>: Sendable {
    var results: [Result<Answer, Error>]
    var tail: Tail?
}

/// A value set once and awaited by any number of tasks: the first value set stands.
package final class Eventual<Value: Sendable>: Sendable {
    private let state = NSLockedValue<(value: Value?, waiters: [CheckedContinuation<Value, Never>])>((nil, []))

    package init() {}

    /// Sets the value, if none was set; the tasks waiting for it go on.
    package func set(_ value: Value) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, Never>] in
            guard state.value == nil else { return [] }
            state.value = value
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    package var isSet: Bool { state.withLock { $0.value != nil } }

    /// The value, once set.
    package var value: Value {
        get async {
            await withCheckedContinuation { waiter in
                let known = state.withLock { state -> Value? in
                    if state.value == nil { state.waiters.append(waiter) }
                    return state.value
                }
                if let known { waiter.resume(returning: known) }
            }
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
