import Collector
import Foundation
import SharedStore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A collector's checks and summaries run on threads that give way to its writer.
struct LowPriorityExecutorTests {
    /// The calling thread's nice value and kernel thread id (Linux).
    private static func niceAndThread() -> (nice: Int32, thread: Int) {
        #if canImport(Glibc)
        // getpriority's -1 is a valid nice value: errno tells an error apart.
        errno = 0
        let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        #expect(errno == 0)
        let stat = (try? String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8)) ?? ""
        return (nice, Int(stat.split(separator: " ").first ?? "") ?? -1)
        #else
        return (0, 0)
        #endif
    }

    @Test func jobsRunBelowTheWritersPriorityOnAtMostOneThreadACore() async throws {
        #if canImport(Glibc)
        let jobs = 4 * ProcessInfo.processInfo.activeProcessorCount
        let seen = try await withThrowingTaskGroup(of: (nice: Int32, thread: Int).self) { group in
            for _ in 0..<jobs {
                group.addTask(executorPreference: LowPriorityExecutor.shared) {
                    // Long enough that the jobs overlap, so a thread a job would show.
                    try await Task.sleep(for: .milliseconds(20))
                    return Self.niceAndThread()
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        // The writer's threads (every store write runs there) keep the process's priority.
        let writer = try await SharedStore.blocking { Self.niceAndThread() }
        #expect(seen.count == jobs)
        #expect(seen.allSatisfy { $0.nice == min(19, writer.nice + 10) }, "\(seen), the writer's \(writer.nice)")
        let threads = Set(seen.map(\.thread))
        #expect(!threads.contains(-1) && !threads.isEmpty)
        #expect(threads.count <= ProcessInfo.processInfo.activeProcessorCount, "\(threads)")
        #expect(!threads.contains(writer.thread))
        #endif
    }
}
