import EventStore
import Foundation

/// Where recorded times come from.
public protocol RecordingClock: AnyObject {
    func now() -> Timestamp
}

/// The system's wall clock, never going backwards within one recorder.
public final class SystemClock: RecordingClock {
    private var last: Int64 = 0
    public init() {}
    public func now() -> Timestamp {
        // Two events in the same microsecond still get increasing times.
        last = max(last + 1, Timestamp(Date()).microsecondsSince1970)
        return Timestamp(microsecondsSince1970: last)
    }
}

/// A clock that starts at a fixed instant and advances a fixed step per reading,
/// so a seeded simulation writes byte-identical logs (`--clock fixed`).
public final class FixedClock: RecordingClock {
    private var current: Int64
    private let step: Int64
    public init(start: Timestamp = Timestamp(microsecondsSince1970: 1_767_225_600_000_000), stepMicroseconds: Int64 = 250_000) {
        current = start.microsecondsSince1970
        step = stepMicroseconds
    }
    public func now() -> Timestamp {
        defer { current += step }
        return Timestamp(microsecondsSince1970: current)
    }
}
