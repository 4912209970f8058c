import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Work that gives way to the rest of its process: a viewer's background list and audit
/// while people ask for pages, a collector's checks while its writer writes.
///
/// A thread is lowered with ``lowerCallingThread()``; the threads it starts keep its
/// priority (Linux copies a thread's `nice` to the threads it creates; Apple's systems,
/// its quality-of-service class). Work handed to Dispatch does not: a pass that folds on
/// `DispatchQueue.global()` ran its folds at the priority of the pages it was meant to
/// yield to (on a fresh viewer of 1.8M events, more than half of the server's CPU while
/// 50 clients waited). ``queueAtCallersPriority()`` is the queue that keeps it.
package enum ThreadPriority {
    /// Lowers the calling thread below its process's others: 10 more `nice` (a tenth of
    /// their weight when both want a core) on Linux, where the value is the thread's own;
    /// the utility class on Apple's systems.
    package static func lowerCallingThread() {
        #if canImport(Glibc)
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        errno = 0
        let current = getpriority(which, 0)
        if errno == 0 { _ = setpriority(which, 0, min(19, current + 10)) }
        #elseif canImport(Darwin)
        _ = pthread_set_qos_class_self_np(QOS_CLASS_UTILITY, 0)
        #endif
    }

    /// Whether the calling thread runs below its process's main thread.
    package static var callingThreadIsLowered: Bool {
        #if canImport(Glibc)
        // On Linux `PRIO_PROCESS` with the process's id names its main thread alone.
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        errno = 0
        let mine = getpriority(which, 0)
        guard errno == 0 else { return false }
        let main = getpriority(which, id_t(getpid()))
        return errno == 0 && mine > main
        #elseif canImport(Darwin)
        let mine = qos_class_self()
        return mine != QOS_CLASS_UNSPECIFIED && mine.rawValue < QOS_CLASS_DEFAULT.rawValue
        #else
        return false
        #endif
    }

    /// The global queue for work the calling thread hands out: background (Linux runs its
    /// threads at `nice` 10) when the caller was lowered, else the default one.
    package static func queueAtCallersPriority() -> DispatchQueue {
        callingThreadIsLowered ? DispatchQueue.global(qos: .background) : DispatchQueue.global()
    }
}
