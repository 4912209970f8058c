import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process for tests, started with `posix_spawn` and reaped with `waitpid`.
///
/// Foundation's `Process.waitUntilExit()` waits on a run loop for a termination
/// notice that, off the main thread and after some hundreds of children, may never
/// arrive on Linux (swift-corelibs-foundation and swiftlang/swift report it); a suite
/// that spawns many children then hangs until CI kills it. Here the test thread reaps
/// its own child, so nothing depends on that notice; output goes to files, so no
/// pipe can fill up and stall the child; and every wait has a deadline after which
/// the child is killed and the test fails instead of hanging.
public final class ChildProcess: @unchecked Sendable {
    /// How a child ended.
    public enum Termination: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)
        /// The child outlived its deadline and was killed with SIGKILL.
        case timedOut(seconds: Double)

        public var description: String {
            switch self {
            case .exited(let code): "exited with status \(code)"
            case .signaled(let signal): "killed by signal \(signal)"
            case .timedOut(let seconds): "still running after \(seconds) s, killed"
            }
        }
    }

    /// What a finished child left.
    public struct Result: Sendable {
        public var termination: Termination
        public var stdout: String
        public var stderr: String
        /// The exit status, or -1 if the child did not exit on its own.
        public var status: Int32 {
            if case .exited(let code) = termination { return code }
            return -1
        }
    }

    public let pid: pid_t
    private let outputPath: String
    private let errorPath: String
    private var ended: Termination?

    /// Starts `executable` (a path, or a name looked up on PATH) with `arguments`,
    /// in `directory` if given; stdin reads /dev/null.
    public init(_ executable: String, _ arguments: [String], in directory: String? = nil,
                environment: [String: String] = [:]) throws {
        let scratch = FileManager.default.temporaryDirectory.path
        let token = UUID().uuidString
        outputPath = "\(scratch)/child-\(token).out"
        errorPath = "\(scratch)/child-\(token).err"

        // env(1) changes the directory and searches PATH, which posix_spawn's
        // portable interface cannot do.
        var argv = ["/usr/bin/env"]
        if let directory { argv += ["-C", directory] }
        argv += environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        argv += [executable] + arguments

        #if canImport(Glibc)
        var actions = posix_spawn_file_actions_t()
        #else
        var actions: posix_spawn_file_actions_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)

        let cArguments = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var child: pid_t = 0
        let code = posix_spawn(&child, argv[0], &actions, nil, cArguments, environ)
        guard code == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EINVAL)
        }
        pid = child
    }

    deinit {
        if ended == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
        unlink(outputPath)
        unlink(errorPath)
    }

    /// What the child has written to its standard output so far (it may still be running).
    public var outputSoFar: String { read(outputPath) }
    /// What it wrote to standard error so far.
    public var errorsSoFar: String { read(errorPath) }

    /// Sends `signal` to the child (if it has not been reaped yet).
    public func send(_ signal: Int32) {
        if ended == nil { kill(pid, signal) }
    }

    /// Waits for the child to end, at most `seconds`; a child still running then is
    /// killed and reported as `.timedOut`.
    @discardableResult
    public func wait(atMost seconds: Double = 300) -> Result {
        if ended == nil { ended = reap(deadline: Date().addingTimeInterval(seconds), limit: seconds) }
        return Result(termination: ended!, stdout: read(outputPath), stderr: read(errorPath))
    }

    private func reap(deadline: Date, limit: Double) -> Termination {
        var status: Int32 = 0
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { return Self.termination(status) }
            if reaped == -1 && errno != EINTR { return .exited(-1) }
            if Date() >= deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                return .timedOut(seconds: limit)
            }
            usleep(2_000)
        }
    }

    private static func termination(_ status: Int32) -> Termination {
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
    }

    private func read(_ path: String) -> String {
        String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
    }

    /// Runs a command to its end (at most `seconds`) and returns what it left.
    public static func run(_ executable: String, _ arguments: [String], in directory: String? = nil,
                           environment: [String: String] = [:], atMost seconds: Double = 300) throws -> Result {
        try ChildProcess(executable, arguments, in: directory, environment: environment).wait(atMost: seconds)
    }
}
