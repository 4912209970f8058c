import EventStore
import Foundation
import NIOCore
import PostgresNIO

extension SharedStore {
    /// Keeps conversations' summaries (`game_summaries`, schema 8), one row a conversation,
    /// in one statement. A row already stored in the same format from at least as many
    /// events is kept: two folds of one conversation finishing out of order leave the
    /// newer. Readers check each row against the recordings before using it, so a row
    /// this writes from a fold that was already behind is never shown.
    public func storeSummaries(_ rows: [StoredSummaries]) async throws {
        guard !rows.isEmpty else { return }
        var binds = PostgresBindings()
        binds.append(rows.map { ByteBuffer(bytes: $0.conversation.bytes) })
        binds.append(rows.map(\.format))
        binds.append(rows.map { ByteBuffer(bytes: $0.recordingBytes) })
        binds.append(rows.map { $0.recordings.values.reduce(Int64(0)) { $0 + $1.version } })
        binds.append(rows.map { ByteBuffer(bytes: $0.body) })
        binds.append(Timestamp(Date()).microsecondsSince1970)
        _ = try await withConnection { connection in
            try await run(connection, """
                INSERT INTO game_summaries (conversation, format, recordings, events, body, folded_at)
                SELECT c, f, r, e, b, $6 FROM unnest($1::bytea[], $2::text[], $3::bytea[], $4::bigint[], $5::bytea[]) AS u(c, f, r, e, b)
                ON CONFLICT (conversation) DO UPDATE
                SET format = excluded.format, recordings = excluded.recordings, events = excluded.events,
                    body = excluded.body, folded_at = excluded.folded_at
                WHERE game_summaries.format <> excluded.format OR game_summaries.events <= excluded.events
                """, binds)
        }
    }
}
