import Foundation

/// Where a forked conversation came from.
public struct ForkOrigin: Hashable, Codable, Sendable {
    /// The fork's conversation in this log.
    public var conversation: UUID
    /// The id (game or conversation) it was forked from, as given.
    public var sourceGame: String
    public var sourceConversation: UUID
    /// How many of the source conversation's steps were re-enacted.
    public var sourceStep: Int
    /// The source log's head hash when it was forked.
    public var sourceHead: [UInt8]
    /// The fork's own steps that re-enact the source's: the branch begins after them.
    public var branchStep: Int
    public var createdAt: Timestamp

    public init(conversation: UUID, sourceGame: String, sourceConversation: UUID, sourceStep: Int, sourceHead: [UInt8],
                branchStep: Int, createdAt: Timestamp) {
        self.conversation = conversation
        self.sourceGame = sourceGame
        self.sourceConversation = sourceConversation
        self.sourceStep = sourceStep
        self.sourceHead = sourceHead
        self.branchStep = branchStep
        self.createdAt = createdAt
    }
}
