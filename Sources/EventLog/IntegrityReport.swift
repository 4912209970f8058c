import Foundation

/// The outcome of checking the whole log.
public struct IntegrityReport: Sendable {
    /// Events read.
    public var eventCount: Int64 = 0
    /// Every problem found, in position order. Empty for a sound log.
    public var problems: [EventStoreError] = []
    /// The hash of the last event read.
    public var headHash: [UInt8] = ChainHash.genesis

    public var isSound: Bool { problems.isEmpty }

    package init() {}
}
