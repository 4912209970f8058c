// The measuring helpers every benchmark shares: one clock, one way to take a median,
// one way to read peak memory.
import Foundation

/// Nanoseconds on a monotonic clock.
public func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Wall seconds that `body` took.
public func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = now()
    try body()
    return Double(now() - start) / 1e9
}

/// The median of `runs` timings: this machine's rates vary by 10-15% from run to
/// run (it is shared), and one slow run should not set a figure.
public func median(of runs: Int = 3, _ body: () throws -> Double) rethrows -> Double {
    var times: [Double] = []
    for _ in 0..<runs { times.append(try body()) }
    return times.sorted()[runs / 2]
}

/// The value below which a share `p` (0...1) of `values` lie.
/// User and system CPU seconds this process has used so far (all its threads).
public func processCPUSeconds() -> Double {
    var usage = rusage()
    #if os(Linux)
    getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

public func percentile(_ values: [Double], _ p: Double) -> Double {
    precondition(!values.isEmpty, "a percentile of no measurements")
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

/// This process's peak resident memory, the one way every benchmark reads it. From
/// /proc (VmHWM), not getrusage: a spawned child's ru_maxrss starts from its parent's
/// peak, and a parent here may hold a whole workload.
public func peakRSSMegabytes() -> Double {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
    let kilobytes = line.split(separator: " ").compactMap { Double($0) }.first ?? 0
    return kilobytes / 1024
}

/// A file's size in bytes, 0 when it is missing.
public func fileSize(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
}

/// A progress line on standard error, so that standard output holds only the figures.
public func status(_ message: String) {
    FileHandle.standardError.write(Data("… \(message)\n".utf8))
}

/// Removes a database and its -wal and -shm companions; returns the path.
@discardableResult public func fresh(_ path: String) -> String {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    return path
}

/// A whole number with thousands separators.
public func number(_ value: Double) -> String {
    let formatter = NumberFormatter()
    formatter.numberStyle = .decimal
    formatter.maximumFractionDigits = 0
    return formatter.string(from: NSNumber(value: value)) ?? String(value)
}

extension String {
    /// The string right-aligned in `width` columns.
    public func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
