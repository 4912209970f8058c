import EventStore
import Foundation
import GRDB

/// Why a forgery could not be made: the test that asked for it is wrong.
public enum ForgeryError: Error {
    case noEvent(Int64)
    case unchanged(Int64)
}

/// A forger who knows docs/FORMAT.md and holds no device key: edits rows with raw
/// SQL and recomputes everything that is not signed.
public struct LogForger {
    public init(path: String) { self.path = path }

    public let path: String

    /// Replaces the payload of the event at `position` (stored raw, codec 0), then
    /// recomputes the global chain from there and the stream's stored head.
    public func rewrite(position: Int64, _ change: (String) -> String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            let store = try EventStore(path: path, access: .readOnly)
            guard let event = try store.event(at: position, verify: false) else { throw ForgeryError.noEvent(position) }
            let payload = Array(change(String(decoding: event.payload, as: UTF8.self)).utf8)
            guard payload != event.payload else { throw ForgeryError.unchanged(position) }
            try db.execute(sql: "UPDATE events SET codec = 0, dictionary_id = NULL, payload = ?, raw_size = ? WHERE position = ?",
                           arguments: [Data(payload), payload.count, position])
            try rechain(db, from: position)
        }
    }

    /// Recomputes the global chain from `position` on, and every stream's head.
    public func rechain(_ db: Database, from position: Int64) throws {
        let store = try EventStore(path: path, access: .readOnly)
        var previous = position <= 1 ? ChainHash.genesis
            : Array(try Data.fetchOne(db, sql: "SELECT hash FROM events WHERE position = ?", arguments: [position - 1])!)
        var chains = StreamChains()
        for event in try store.events(verify: false) {
            chains.advance(event)
            guard event.position >= position else { continue }
            let hash = ChainHash.hash(previous: previous, envelope: ChainHash.envelope(
                position: event.position, id: event.id, stream: event.stream, streamVersion: event.streamVersion, type: event.type,
                typeVersion: event.typeVersion, recordedAt: event.recordedAt, payload: event.payload))
            try db.execute(sql: "UPDATE events SET hash = ? WHERE position = ?", arguments: [Data(hash), event.position])
            previous = hash
        }
        for (stream, head) in chains.heads {
            try db.execute(sql: "UPDATE streams SET head = ? WHERE uuid = ?", arguments: [Data(head), withUnsafeBytes(of: stream.uuid) { Data($0) }])
        }
    }
}
