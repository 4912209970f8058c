import Foundation
import GRDB

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

extension EventStore {
    /// Records where a forked conversation came from.
    public func recordFork(_ origin: ForkOrigin) throws {
        guard access == .readWrite else { throw EventStoreError.readOnly(path: path, detail: "opened read-only") }
        try Self.translating(path) {
            try queue.write { db in
                try db.execute(sql: """
                    INSERT INTO forks (conversation, source_game, source_conversation, source_step, source_head, branch_step, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [Data(origin.conversation.bytes), origin.sourceGame, Data(origin.sourceConversation.bytes),
                                     origin.sourceStep, Data(origin.sourceHead), origin.branchStep,
                                     origin.createdAt.microsecondsSince1970])
            }
        }
    }

    /// Every fork recorded in this log, by conversation.
    public func forkOrigins() throws -> [UUID: ForkOrigin] {
        try read { db in
            var out: [UUID: ForkOrigin] = [:]
            for row in try Row.fetchAll(db, sql: """
                SELECT conversation, source_game, source_conversation, source_step, source_head, branch_step, created_at FROM forks
                """) {
                let conversation = UUID(bytes: Array(row[0] as Data))!
                out[conversation] = ForkOrigin(conversation: conversation, sourceGame: row[1],
                                               sourceConversation: UUID(bytes: Array(row[2] as Data))!, sourceStep: row[3],
                                               sourceHead: Array(row[4] as Data), branchStep: row[5],
                                               createdAt: Timestamp(microsecondsSince1970: row[6]))
            }
            return out
        }
    }
}
