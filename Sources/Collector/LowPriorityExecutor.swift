import Foundation
import Replay

/// The threads a collector checks uploads and folds game summaries on: one a core, each
/// at a lower scheduling priority than the rest of the process and the database.
///
/// A collector's throughput is its one writer's: a group of uploads is written with some
/// twenty-five statements, about a dozen of them waited for, each a wake-up of the writer's
/// thread, an event loop and a PostgreSQL backend. With every upload's check on a thread
/// of its own at the same priority (eight uploads in flight: eight threads busy on two
/// cores), each wake-up waited its turn behind them, and the writer was busy for the
/// whole of a run that left a quarter of the machine idle. Checks and summaries yield to
/// it now; they take whatever CPU the writer and the database leave, and as many run at
/// once as there are cores.
///
/// A job here may block its thread on a statement (the summaries' reads do): the event
/// loops that answer it are not these threads.
package final class LowPriorityExecutor: TaskExecutor, @unchecked Sendable {
    package static let shared = LowPriorityExecutor(threads: max(1, ProcessInfo.processInfo.activeProcessorCount))

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    private init(threads: Int) {
        for index in 0..<threads {
            // A name Linux keeps whole (15 bytes at most), so ps and perf show it.
            Thread { [unowned self] in
                Thread.current.name = "gamelog-low-\(index)"
                self.run()
            }.start()
        }
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() -> Never {
        ThreadPriority.lowerCallingThread()
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: executor)
        }
    }
}
