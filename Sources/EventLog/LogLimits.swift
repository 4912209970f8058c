import Foundation

/// Bounds every store holds events to, whoever wrote them.
public enum LogLimits {
    /// The largest canonical payload accepted, so one bad event cannot bloat the log.
    public static let maximumPayloadSize = 1 << 20
    /// The largest position, recording version or leaf a log holds (a device tree's
    /// largest size): numbers past it, written into a store's rows by hand, are damage,
    /// and arithmetic on the numbers below it never overflows.
    public static let maximumCount: Int64 = MerkleTree.maximumSize

    /// Why a stored event's numbers cannot be an event's, or nil when they can: what a
    /// store's reader checks before anything counts with them (a position or version at
    /// the end of the integers made `verify` trap on the next one's `+ 1`).
    package static func outOfRange(position: Int64, streamVersion: Int64, typeVersion: Int64, leaf: Int64?) -> String? {
        if position < 1 || position > maximumCount { return "its position is outside 1...2^62" }
        if let leaf, leaf < 0 || leaf >= maximumCount { return "its leaf \(leaf) is outside 0...2^62-1" }
        if streamVersion < 1 || streamVersion > maximumCount { return "its recording version \(streamVersion) is outside 1...2^62" }
        // The chain's envelope holds the type version in 32 bits.
        if typeVersion < 1 || typeVersion > Int64(UInt32.max) { return "its type version \(typeVersion) is outside 1...2^32-1" }
        return nil
    }

    /// Refuses a recording's stored version that cannot be one: an append counts on from it.
    /// - Throws: ``EventStoreError/damagedDatabase(path:detail:)`` naming `stream` and `location`.
    /// - Parameter location: made only for the error (a store's is a string made each time).
    package static func checkStored(recordingVersion version: Int64, of stream: UUID, in location: @autoclosure () -> String) throws {
        guard version < 0 || version >= maximumCount else { return }
        throw EventStoreError.damagedDatabase(path: location(), detail:
            "recording \(stream.uuidString.lowercased()): its row says it holds \(version) events, outside 0...2^62-1")
    }
}
