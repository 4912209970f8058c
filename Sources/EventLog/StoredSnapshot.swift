import Foundation

/// A stored projection snapshot: a cache of a conversation's state after `step` events.
public struct StoredSnapshot: Hashable, Sendable {
    public var conversation: UUID
    public var projectionVersion: Int
    public var step: Int
    /// The position and chain hash of the step's event, to check the snapshot still
    /// belongs to this log.
    public var position: Int64
    public var eventHash: [UInt8]
    /// The state, serialized by the caller.
    public var state: [UInt8]

    public init(conversation: UUID, projectionVersion: Int, step: Int, position: Int64, eventHash: [UInt8], state: [UInt8]) {
        self.conversation = conversation
        self.projectionVersion = projectionVersion
        self.step = step
        self.position = position
        self.eventHash = eventHash
        self.state = state
    }
}
