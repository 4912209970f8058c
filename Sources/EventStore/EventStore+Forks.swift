import EventLog
import Foundation
import GRDB

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
