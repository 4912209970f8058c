@testable import Collector
import Foundation
import Testing

/// The collector's scheduling of group writes (`GroupCommit`), step by step: a write
/// that announced its tail is followed by the next group while it is still stored; at
/// most three writes at once; a follower commits only after the write it follows; and when
/// a write's announced tail is undone or a follower is not kept, each is written again
/// the usual way, in order, with every item answered once. The writes are a script here
/// (what the store does is `FollowingWriteTests`' and `CollectorTests`' part).
/// The limit guards against a hang only (each test's waits have deadlines of their own):
/// its tasks run on the cooperative threads, which the suite's synchronous tests hold for
/// minutes at a time on a two-core machine, and one minute was once not enough for the
/// random test's twelve rounds in a full run (it takes a fifth of a second alone).
@Suite(.timeLimit(.minutes(5))) struct GroupCommitTests {
    /// An upload, as far as scheduling goes: a name, the device it is of, and what its write does.
    struct Job: Sendable {
        enum Write: Sendable {
            /// Commits once the test opens its gate ("commit NAME").
            case commits
            /// Announces, then fails as an undone announced tail; written again, it commits.
            case undoesItsAnnouncedTail
            /// Fails as the store failing.
            case storeFails
            /// As a follower, gives up (not kept); written the usual way, it commits.
            case notKeptAsFollower
        }
        var name: String
        var device: String
        var write: Write = .commits
        /// Counts itself alive in `Live` while anything holds the job.
        var token: Token?
    }

    /// Jobs alive, by their tokens.
    final class Live: Sendable {
        private let count = NSLockedValue(0)
        var value: Int { count.withLock { $0 } }
        func change(_ by: Int) { count.withLock { $0 += by } }
    }

    final class Token: Sendable {
        let live: Live
        init(_ live: Live) {
            self.live = live
            live.change(1)
        }
        deinit { live.change(-1) }
    }

    struct StoreFailed: Error {}
    struct TailUndone: Error {}

    /// What the scripted store did, in order, and gates the test opens.
    final class Script: Sendable {
        private struct State {
            var log: [String] = []
            /// Log entries and gates, each a signal raised once.
            var signals: [String: Eventual<Void>] = [:]
            /// Items committed so far: the store's tail.
            var stored = 0
            var followed: [Bool] = []
        }
        private let state = NSLockedValue(State())

        var log: [String] { state.withLock { $0.log } }
        var stored: Int { state.withLock { $0.stored } }
        var followed: [Bool] { state.withLock { $0.followed } }

        private func signal(_ name: String) -> Eventual<Void> {
            state.withLock { state in
                if let known = state.signals[name] { return known }
                let made = Eventual<Void>()
                state.signals[name] = made
                return made
            }
        }

        func note(_ entry: String) {
            state.withLock { $0.log.append(entry) }
            signal("noted " + entry).set(())
        }

        /// Returns once `entry` was noted.
        func reached(_ entry: String) async { await signal("noted " + entry).value }

        func open(_ gate: String) { signal("open " + gate).set(()) }

        func pass(_ gate: String) async { await signal("open " + gate).value }

        func commit(_ tail: Int) { state.withLock { $0.stored = tail } }
        func countFollowed(_ kept: Bool) { state.withLock { $0.followed.append(kept) } }
    }

    struct ScriptedStore: GroupWriting {
        let script: Script

        static func events(of job: Job) -> Int { 1 }

        static func name(_ jobs: [Job]) -> String { jobs.map(\.name).joined(separator: "+") }

        func write(_ jobs: [Job], whenPlanned: (@Sendable (Int) -> Void)?) async throws -> GroupWritten<String, Int> {
            let name = Self.name(jobs)
            let tail = script.stored + jobs.count
            script.note("write \(name)")
            if let whenPlanned {
                whenPlanned(tail)
                script.note("announce \(name)")
            }
            await script.pass("commit \(name)")
            if jobs.contains(where: { $0.write == .storeFails }) {
                script.note("failed \(name)")
                throw StoreFailed()
            }
            if whenPlanned != nil, jobs.contains(where: { $0.write == .undoesItsAnnouncedTail }) {
                script.note("undone \(name)")
                throw TailUndone()
            }
            script.commit(tail)
            script.note("commit \(name)")
            return GroupWritten(results: jobs.map { .success($0.name) }, tail: tail)
        }

        func write(_ jobs: [Job], following tail: Int, outcome: @escaping @Sendable () async -> Int?,
                   whenPlanned: (@Sendable (Int) -> Void)?) async throws -> GroupWritten<String, Int>? {
            let name = Self.name(jobs)
            script.note("follow \(name) after \(tail)")
            whenPlanned?(tail + jobs.count)
            let committed = await outcome()
            guard committed == tail, script.stored == tail, !jobs.contains(where: { $0.write == .notKeptAsFollower }) else {
                script.note("gave up \(name)")
                return nil
            }
            script.commit(tail + jobs.count)
            script.note("commit \(name)")
            return GroupWritten(results: jobs.map { .success($0.name) }, tail: tail + jobs.count)
        }

        func mayFollow(_ previous: [Job], with next: [Job]) -> Bool {
            Set(previous.map(\.device)).isDisjoint(with: next.map(\.device))
        }

        func undidAnnouncedTail(_ error: Error) -> Bool { error is TailUndone }

        func followed(kept: Bool) { script.countFollowed(kept) }
    }

    let script = Script()
    let commit = GroupCommit<ScriptedStore>()
    var store: ScriptedStore { ScriptedStore(script: script) }

    func submit(_ job: Job) -> Task<String, Error> {
        Task { [commit, store] in try await commit.store(job, with: store) }
    }

    /// A, whose write does `first`, and B, of another device, whose write does `second`
    /// and follows A's (A waits at its gate).
    func aThenBFollowingIt(_ first: Job.Write, _ second: Job.Write = .commits) async -> (a: Task<String, Error>, b: Task<String, Error>) {
        let a = submit(Job(name: "A", device: "a", write: first))
        await script.reached("announce A")
        let b = submit(Job(name: "B", device: "b", write: second))
        await script.reached("follow B after 1")
        return (a, b)
    }

    /// Where `entry` stands in the log (the log's end if absent).
    func place(_ entry: String) -> Int { script.log.firstIndex(of: entry) ?? Int.max }

    @Test func theNextGroupFollowsAWriteThatAnnouncedAndCommitsAfterIt() async throws {
        let a = submit(Job(name: "A", device: "a"))
        await script.reached("announce A")
        let b = submit(Job(name: "B", device: "b"))
        // B is written while A is open (A waits at its gate), from A's tail; C from B's.
        await script.reached("follow B after 1")
        #expect(!script.log.contains("commit A"))
        let c = submit(Job(name: "C", device: "c"))
        await script.reached("follow C after 2")
        let d = submit(Job(name: "D", device: "d"))
        try await Task.sleep(for: .milliseconds(50))
        // At most three writes at once: D waits for A.
        #expect(!script.log.contains { $0.hasSuffix(" D") || $0.contains(" D after") })
        #expect(GroupCommit<ScriptedStore>.maximumOpen == 3)
        script.open("commit A")
        #expect(try await a.value == "A")
        #expect(try await b.value == "B")
        #expect(try await c.value == "C")
        script.open("commit D")
        #expect(try await d.value == "D")
        #expect(place("commit A") < place("commit B"))
        #expect(place("commit B") < place("commit C"))
        #expect(place("commit C") < place("commit D"))
        #expect(place("commit A") < script.log.firstIndex { $0.contains(" D") }!)
        #expect(script.stored == 4)
        #expect(script.followed.prefix(2) == [true, true])
    }

    @Test func aGroupOfTheSameDeviceWaitsForTheWriteBeforeIt() async throws {
        let a = submit(Job(name: "A", device: "a"))
        await script.reached("announce A")
        let again = submit(Job(name: "A2", device: "a"))
        try await Task.sleep(for: .milliseconds(50))
        #expect(script.log == ["write A", "announce A"])
        script.open("commit A")
        script.open("commit A2")
        #expect(try await a.value == "A")
        #expect(try await again.value == "A2")
        #expect(script.log == ["write A", "announce A", "commit A", "write A2", "announce A2", "commit A2"])
        #expect(script.followed.isEmpty)
    }

    /// A group is checked against every write still open, not only the last: A's device
    /// uploading again while B follows A would read the device's tree without A's rows,
    /// and write where A's transaction waits for it (A then waited for its statement's
    /// deadline, and the writes behind it with it).
    @Test func aGroupOfADeviceInAnyOpenWriteWaitsForIt() async throws {
        let (a, b) = await aThenBFollowingIt(.commits)
        let again = submit(Job(name: "A2", device: "a"))
        try await Task.sleep(for: .milliseconds(50))
        #expect(script.log == ["write A", "announce A", "follow B after 1"])
        for name in ["A", "B", "A2"] { script.open("commit \(name)") }
        #expect(try await a.value == "A")
        #expect(try await b.value == "B")
        #expect(try await again.value == "A2")
        #expect(script.log == ["write A", "announce A", "follow B after 1", "commit A", "commit B", "write A2", "announce A2", "commit A2"])
        #expect(script.followed == [true])
    }

    @Test func anUndoneAnnouncedTailStopsItsFollowerBeforeItIsWrittenAgain() async throws {
        let (a, b) = await aThenBFollowingIt(.undoesItsAnnouncedTail)
        script.open("commit A")
        script.open("commit B")
        #expect(try await a.value == "A")
        #expect(try await b.value == "B")
        // A's announced write is undone; B gives up before A is written again (alone, not
        // announcing), and B is written the usual way after A.
        #expect(script.log == ["write A", "announce A", "follow B after 1", "undone A", "gave up B",
                               "write A", "commit A", "write B", "announce B", "commit B"])
        #expect(script.stored == 2)
        #expect(script.followed == [false])
    }

    /// Three writes open, the first undone: the second gives up, and so the third, each
    /// before the one it followed is written again; then all three in turn.
    @Test func anUndoneTailStopsEveryWriteThatFollowsIt() async throws {
        let (a, b) = await aThenBFollowingIt(.undoesItsAnnouncedTail)
        let c = submit(Job(name: "C", device: "c"))
        await script.reached("follow C after 2")
        for name in ["A", "B", "C"] { script.open("commit \(name)") }
        #expect(try await a.value == "A")
        #expect(try await b.value == "B")
        #expect(try await c.value == "C")
        let log = script.log
        #expect(Array(log.prefix(8)) == ["write A", "announce A", "follow B after 1", "follow C after 2", "undone A", "gave up B", "gave up C", "write A"],
                "\(log)")
        #expect(place("commit A") < place("write B"))
        #expect(log.firstIndex(of: "commit B")! < log.lastIndex(of: "write C") ?? log.lastIndex(of: "follow C after 2")!)
        #expect(log.last == "commit C")
        #expect(script.stored == 3)
        #expect(script.followed == [false, false])
    }

    @Test func aFollowerNotKeptIsWrittenAgainAfterTheWriteItFollowed() async throws {
        let (a, b) = await aThenBFollowingIt(.commits, .notKeptAsFollower)
        script.open("commit B")
        script.open("commit A")
        #expect(try await a.value == "A")
        #expect(try await b.value == "B")
        #expect(script.log == ["write A", "announce A", "follow B after 1", "commit A", "gave up B", "write B", "announce B", "commit B"])
        #expect(script.followed == [false])
        #expect(script.stored == 2)
    }

    /// A write holds the write it follows only until it ends, and a write its follower
    /// only until its own outcome is known: under load, memory holds the writes open, not
    /// every write (and its uploads) since the writer started.
    @Test func writesThatEndedAreLetGo() async throws {
        let live = Live()
        for pair in 0..<5 {
            let first = submit(Job(name: "X\(pair)", device: "x\(pair)", token: Token(live)))
            await script.reached("announce X\(pair)")
            let second = submit(Job(name: "Y\(pair)", device: "y\(pair)", token: Token(live)))
            await script.reached("follow Y\(pair) after \(2 * pair + 1)")
            script.open("commit X\(pair)")
            #expect(try await first.value == "X\(pair)")
            #expect(try await second.value == "Y\(pair)")
        }
        #expect(script.followed == [Bool](repeating: true, count: 5))
        // The writer is still writing (Z waits at its gate): the ten jobs before are let go.
        let last = submit(Job(name: "Z", device: "z", token: Token(live)))
        await script.reached("announce Z")
        // The writes' tasks end just after answering: given up to ten seconds on a busy machine.
        for _ in 0..<1_000 where live.value > 2 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(live.value <= 2, "\(live.value) jobs still held")
        script.open("commit Z")
        #expect(try await last.value == "Z")
        for _ in 0..<1_000 where live.value > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(live.value == 0)
    }

    /// Three following writes given up in a row (as with another collector writing the
    /// same store): for a while, no group follows another.
    @Test func followingPausesAfterThreeGivenUp() async throws {
        for round in 0..<3 {
            let first = submit(Job(name: "X\(round)", device: "x\(round)"))
            await script.reached("announce X\(round)")
            let second = submit(Job(name: "Y\(round)", device: "y\(round)", write: .notKeptAsFollower))
            await script.reached("follow Y\(round) after \(2 * round + 1)")
            script.open("commit X\(round)")
            script.open("commit Y\(round)")
            #expect(try await first.value == "X\(round)")
            #expect(try await second.value == "Y\(round)")
        }
        #expect(script.followed == [false, false, false])
        let first = submit(Job(name: "X3", device: "x3"))
        await script.reached("announce X3")
        let second = submit(Job(name: "Y3", device: "y3"))
        try await Task.sleep(for: .milliseconds(50))
        #expect(!script.log.contains { $0.contains(" Y3") }, "\(script.log.suffix(4))")
        script.open("commit X3")
        script.open("commit Y3")
        #expect(try await first.value == "X3")
        #expect(try await second.value == "Y3")
        #expect(Array(script.log.suffix(5)) == ["announce X3", "commit X3", "write Y3", "announce Y3", "commit Y3"])
        #expect(script.followed.count == 3)
        #expect(GroupCommit<ScriptedStore>.givenUpBeforePause == 3)
    }

    /// A store that answers after short random waits, with the outcomes its jobs ask for,
    /// and checks what the scheduler promises it: no two usual writes open at once, a
    /// usual write's tail not moved under it, and a follower that commits only on the
    /// tail it followed.
    final class RandomStore: GroupWriting, Sendable {
        private struct State {
            var tail = 0
            var usualOpen = 0
            var committed: [String] = []
            var failed: [String] = []
            var violations: [String] = []
            var followersKept = 0
        }
        private let state = NSLockedValue(State())

        var tail: Int { state.withLock { $0.tail } }
        var committed: [String] { state.withLock { $0.committed } }
        var failed: [String] { state.withLock { $0.failed } }
        var violations: [String] { state.withLock { $0.violations } }
        var followersKept: Int { state.withLock { $0.followersKept } }

        static func events(of job: Job) -> Int { 1 }

        private func pause() async { try? await Task.sleep(for: .microseconds(Int.random(in: 0...400))) }

        func write(_ jobs: [Job], whenPlanned: (@Sendable (Int) -> Void)?) async throws -> GroupWritten<String, Int> {
            let start = state.withLock { state -> Int in
                state.usualOpen += 1
                if state.usualOpen > 1 { state.violations.append("two usual writes open (\(ScriptedStore.name(jobs)))") }
                return state.tail
            }
            await pause()
            whenPlanned?(start + jobs.count)
            await pause()
            let outcome = state.withLock { state -> Error? in
                defer { state.usualOpen -= 1 }
                if jobs.contains(where: { $0.write == .storeFails }) {
                    state.failed += jobs.map(\.name)
                    return StoreFailed()
                }
                if whenPlanned != nil, jobs.contains(where: { $0.write == .undoesItsAnnouncedTail }) { return TailUndone() }
                if state.tail != start { state.violations.append("the tail moved under \(ScriptedStore.name(jobs))") }
                state.tail = start + jobs.count
                state.committed += jobs.map(\.name)
                return nil
            }
            if let outcome { throw outcome }
            return GroupWritten(results: jobs.map { .success($0.name) }, tail: start + jobs.count)
        }

        func write(_ jobs: [Job], following tail: Int, outcome: @escaping @Sendable () async -> Int?,
                   whenPlanned: (@Sendable (Int) -> Void)?) async throws -> GroupWritten<String, Int>? {
            await pause()
            whenPlanned?(tail + jobs.count)
            await pause()
            let committed = await outcome()
            guard committed == tail, !jobs.contains(where: { $0.write == .notKeptAsFollower || $0.write == .storeFails }) else { return nil }
            let kept = state.withLock { state -> Bool in
                if state.usualOpen > 0 { state.violations.append("\(ScriptedStore.name(jobs)) committed during a usual write") }
                guard state.tail == tail else { return false }
                state.tail = tail + jobs.count
                state.committed += jobs.map(\.name)
                state.followersKept += 1
                return true
            }
            return kept ? GroupWritten(results: jobs.map { .success($0.name) }, tail: tail + jobs.count) : nil
        }

        func mayFollow(_ previous: [Job], with next: [Job]) -> Bool {
            Set(previous.map(\.device)).isDisjoint(with: next.map(\.device))
        }

        func undidAnnouncedTail(_ error: Error) -> Bool { error is TailUndone }

        func followed(kept: Bool) {}
    }

    /// Many items of a few devices arriving at random moments, each write answering after
    /// random waits, a few failing, undone or not kept as followers: every item is answered
    /// once (none left waiting: the test gives up after half a minute rather than hang), the
    /// failed ones exactly those of writes that failed, and the store's tail is every
    /// item it committed, each once.
    @Test func underRandomTimingsAndOutcomesEveryItemIsAnsweredOnce() async throws {
        var items = 0, followersKept = 0
        for round in 0..<12 {
            let store = RandomStore()
            let commit = GroupCommit<RandomStore>()
            let answers = NSLockedValue<[String: [Bool]]>([:])
            let count = 150
            for index in 0..<count {
                let write: Job.Write = switch (index * 7 + round) % 41 {
                case 0: .storeFails
                case 1: .undoesItsAnnouncedTail
                case 2: .notKeptAsFollower
                default: .commits
                }
                let job = Job(name: "J\(index)", device: "d\((index * 5 + round) % 9)", write: write)
                Task {
                    let stored: Bool
                    do { stored = try await commit.store(job, with: store) == job.name } catch { stored = false }
                    answers.withLock { $0[job.name, default: []].append(stored) }
                }
                if index % 4 == 0 { try await Task.sleep(for: .microseconds(Int.random(in: 0...600))) }
            }
            let deadline = ContinuousClock.now + .seconds(30)
            while answers.withLock({ $0.values.reduce(0) { $0 + $1.count } }) < count, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            let answered = answers.withLock { $0 }
            try #require(answered.count == count, "round \(round): \(count - answered.count) items never answered, \(commit.waitingCount) waiting")
            #expect(answered.values.allSatisfy { $0.count == 1 }, "round \(round): an item answered twice")
            #expect(commit.unansweredCount == 0 && commit.waitingCount == 0, "round \(round)")
            #expect(store.violations.isEmpty, "round \(round): \(store.violations)")
            let committed = store.committed
            #expect(Set(committed).count == committed.count && store.tail == committed.count, "round \(round)")
            #expect(Set(answered.filter { $0.value == [true] }.keys) == Set(committed), "round \(round)")
            #expect(Set(answered.filter { $0.value == [false] }.keys) == Set(store.failed), "round \(round)")
            // Some write failed (the path was taken). How many items failed with it depends on
            // how many the machine's timing put in its group: on a loaded machine one group can
            // hold most of them, so no bound on the count (session 48 saw 85 of 150 once, with a
            // build running beside the tests).
            #expect(!store.failed.isEmpty, "round \(round): no write failed")
            items += answered.count
            followersKept += store.followersKept
        }
        // Following was exercised, not only usual writes one after another.
        #expect(items == 12 * 150 && followersKept > 0, "\(followersKept) followers kept")
    }

    @Test func aFailedWriteFailsItsItemsAndItsFollowerIsWrittenAlone() async throws {
        let (a, b) = await aThenBFollowingIt(.storeFails)
        script.open("commit A")
        script.open("commit B")
        await #expect(throws: StoreFailed.self) { try await a.value }
        #expect(try await b.value == "B")
        #expect(script.log == ["write A", "announce A", "follow B after 1", "failed A", "gave up B", "write B", "announce B", "commit B"])
        #expect(script.stored == 1)
        #expect(script.followed == [false])
        // The writer ended with nothing waiting, and starts again for the next item.
        let c = submit(Job(name: "C", device: "a"))
        script.open("commit C")
        #expect(try await c.value == "C")
        #expect(script.stored == 2)
    }
}
