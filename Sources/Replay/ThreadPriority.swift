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
    /// How far ``lowerCallingThread(_:)`` lowers a thread.
    package enum Lowering {
        /// Below its process's others: 10 more `nice` on Linux (a tenth of their weight when
        /// both want a core); the utility class on Apple's systems. Work another part of the
        /// process waits for (a collector's checks, which its writer needs next).
        case below
        /// As low as a thread goes: `nice` 19 on Linux (about a seventieth of a thread at
        /// 0); the background class on Apple's systems. Work nobody waits for, such as a
        /// viewer's passes while people ask for pages: at a tenth, the passes took about a
        /// tenth of a fresh viewer's cores under 50 clients, and its answers were that much
        /// slower (p95 107-113 ms against 94-100 ms at the lowest).
        case lowest
    }

    /// Lowers the calling thread (see ``Lowering``); on Linux the value is the thread's own.
    package static func lowerCallingThread(_ lowering: Lowering = .below) {
        #if canImport(Glibc)
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        errno = 0
        let current = getpriority(which, 0)
        if errno == 0 { _ = setpriority(which, 0, lowering == .lowest ? 19 : min(19, current + 10)) }
        #elseif canImport(Darwin)
        _ = pthread_set_qos_class_self_np(lowering == .lowest ? QOS_CLASS_BACKGROUND : QOS_CLASS_UTILITY, 0)
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
