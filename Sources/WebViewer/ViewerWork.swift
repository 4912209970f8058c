import EventStore
import Foundation

/// Read-only connections to one log, lent one at a time: SQLite connections are not
/// shared between threads, and one connection for every request made each request
/// wait for all the others.
final class ReaderPool: @unchecked Sendable {
    private let make: @Sendable () throws -> any SignedLogReader
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var idle: [any SignedLogReader]
    private var opened: Int
    private let capacity: Int

    /// - Parameter first: a connection already open (the one that checked the log).
    init(make: @escaping @Sendable () throws -> any SignedLogReader, first: any SignedLogReader, capacity: Int) {
        self.make = make
        idle = [first]
        opened = 1
        self.capacity = max(1, capacity)
    }

    /// Runs `body` with a connection of its own, opening one while fewer than `capacity`
    /// are open, else waiting for one to come back.
    func with<T>(_ body: (any SignedLogReader) throws -> T) throws -> T {
        let reader = try borrow()
        defer { giveBack(reader) }
        return try body(reader)
    }

    private func borrow() throws -> any SignedLogReader {
        condition.lock()
        while idle.isEmpty && opened >= capacity { condition.wait() }
        if let reader = idle.popLast() {
            condition.unlock()
            return reader
        }
        opened += 1
        condition.unlock()
        do {
            return try make()
        } catch {
            condition.lock()
            opened -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    private func giveBack(_ reader: any SignedLogReader) {
        condition.lock()
        idle.append(reader)
        condition.signal()
        condition.unlock()
    }
}

/// A few threads of the viewer's own that take requests' work in the order it came:
/// the work reads SQLite and folds games, which blocks, and blocking Swift's
/// cooperative pool (two threads on a two-core machine) would stop every other
/// request, even those that only wait for a socket. First come, first served keeps
/// the slowest answers close to the typical one when many clients ask at once.
final class WorkQueue: @unchecked Sendable {
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [() -> Void] = []
    private var head = 0
    private var running = 0

    /// The viewers of a process share one queue: its threads live as long as the process.
    static let shared = WorkQueue(threads: max(2, min(8, ProcessInfo.processInfo.activeProcessorCount * 2)), name: "gamelog viewer")

    private init(threads: Int, name: String) {
        for index in 0..<max(1, threads) {
            let thread = Thread { self.loop() }
            thread.name = "\(name) \(index)"
            thread.start()
        }
    }

    private func loop() {
        while true {
            condition.lock()
            while head == jobs.count { condition.wait() }
            let job = jobs[head]
            head += 1
            // The array is emptied now and then rather than shifted at every take.
            if head > 1_024 && head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            running += 1
            condition.unlock()
            job()
            condition.lock()
            running -= 1
            condition.unlock()
        }
    }

    /// Whether the request whose work runs on the calling thread is the only one being
    /// answered, with none waiting.
    var answersThisRequestAlone: Bool {
        condition.lock()
        defer { condition.unlock() }
        return running <= 1 && head == jobs.count
    }

    /// Requests waiting or being answered.
    var busy: Bool {
        condition.lock()
        defer { condition.unlock() }
        return running > 0 || head < jobs.count
    }

    /// Waits while requests are waiting or being answered, at most `limit` seconds, in
    /// short naps: the background list and audit call it between conversations, so pages
    /// get the cores first. Their threads also run at a lower priority (``ThreadPriority``),
    /// which alone does not do it: a background thread preempted while it holds the
    /// model's lock would hold up every request, and the naps make that rare; the priority
    /// covers the threads a pass starts, which never nap. The limit keeps the passes going,
    /// slowly, under a load that never stops.
    func yieldToRequests(atMost limit: TimeInterval = 0.05) {
        let deadline = Date().addingTimeInterval(limit)
        while busy && Date() < deadline { Thread.sleep(forTimeInterval: 0.002) }
    }

    /// Runs `body` on one of the queue's threads and hands back what it returned or threw.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            jobs.append { continuation.resume(with: Result { try body() }) }
            condition.signal()
            condition.unlock()
        }
    }
}
