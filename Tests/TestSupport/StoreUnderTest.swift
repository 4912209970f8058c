import EventStore
import Foundation
import GRDB
import Interchange
import SharedStore

/// Where a store-level test keeps its log: the same rules are checked on each store gamelog
/// reads, so a verdict cannot depend on which one holds the log. A test parameterised over
/// `allCases` runs once per store.
public enum StoreUnderTest: String, CaseIterable, Sendable, CustomStringConvertible {
    /// A SQLite file as gamelog writes it: events in blocks.
    case sqliteBlocks = "SQLite, blocks"
    /// A SQLite file of one event a row (logs from before blocks, and copies of a shared store).
    case sqliteRows = "SQLite, rows"
    /// PostgreSQL, read and written as itself.
    case postgres = "PostgreSQL"

    public var description: String { rawValue }

    /// A log holding what `fill` appends to a SQLite log: written there first, then, for
    /// PostgreSQL, imported from its export (what `gamelog import --db URL` does).
    public func makeLog(_ folder: TemporaryFolder, _ fill: (EventStore) throws -> Void) async throws -> LogUnderTest {
        let path = folder.path("log-\(UUID().uuidString.prefix(8)).sqlite")
        let original = try EventStore(path: path, layout: self == .sqliteBlocks ? .blocks : .rows)
        try fill(original)
        guard self == .postgres else { return LogUnderTest(store: self, path: path, url: nil, shared: nil) }
        let url = try PostgresServer.shared().makeDatabase()
        let shared = try SharedStore(url: url, cacheFolder: folder.url.appending(path: "cache"))
        try await shared.migrate()
        var lines: [String] = []
        _ = try Interchange.export(from: original) { lines.append($0) }
        let body = Data((lines.joined(separator: "\n") + "\n").utf8)
        _ = try await shared.writeNatively { writer in
            try Interchange.import(files: [ExportFile(name: "log", contents: body)], into: writer)
        }
        return LogUnderTest(store: self, path: path, url: url, shared: shared)
    }
}

/// One test's log in one store, with what a forger who knows docs/FORMAT.md does to its
/// rows: each change made the way that store holds them (an event row, or an event inside
/// its block), so the same forgery is asked of every store.
public struct LogUnderTest: Sendable {
    public let store: StoreUnderTest
    /// The SQLite file (for PostgreSQL, the file its rows were imported from, left as written).
    public let path: String
    public let url: String?
    let shared: SharedStore?

    /// A new reader of the log as it is now.
    public func reader() throws -> any SignedLogReader {
        if let shared {
            let reader = shared.reader()
            // Pages cut small, so that every read crosses page boundaries.
            reader.pageSize = 7
            return reader
        }
        return try EventStore(path: path, access: .readOnly)
    }

    /// Runs SQL on the log's own rows (a SQLite statement for a file, PostgreSQL's for a
    /// shared store): what a forger with the database's password does.
    public func sql(_ statement: String) throws {
        if let url {
            _ = try PostgresServer.shared().psql(url, statement)
        } else {
            try DatabaseQueue(path: path).writeWithoutTransaction { try $0.execute(sql: statement) }
        }
    }

    /// An SQL expression for `count` zero bytes, in this store's dialect.
    public func zeros(_ count: Int) -> String {
        store == .postgres ? "decode(repeat('00', \(count)), 'hex')" : "zeroblob(\(count))"
    }

    /// An SQL literal for `bytes`, in this store's dialect.
    public func blob(_ bytes: [UInt8]) -> String {
        store == .postgres ? "'\\x\(Hex.string(bytes))'::bytea" : "X'\(Hex.string(bytes))'"
    }

    /// Flips one bit in the middle of the stored (compressed) payload of the event at `position`.
    public func flipPayloadByte(at position: Int64) throws {
        switch store {
        case .sqliteBlocks:
            try BlockSurgery.flipPayloadByte(path, position: position)
        case .sqliteRows:
            try DatabaseQueue(path: path).write { db in
                var payload = try Data.fetchOne(db, sql: "SELECT payload FROM events WHERE position = ?", arguments: [position])!
                payload[payload.count / 2] ^= 0x10
                try db.execute(sql: "UPDATE events SET payload = ? WHERE position = ?", arguments: [payload, position])
            }
        case .postgres:
            try sql("""
                UPDATE events SET payload = set_byte(payload, length(payload) / 2, get_byte(payload, length(payload) / 2) # 16)
                WHERE position = \(position)
                """)
        }
    }

    /// Replaces the payload of the event at `position` with as many zero bytes as it
    /// decodes to, stored uncompressed: a payload that reads, and that its hash refutes.
    public func zeroPayload(at position: Int64) throws {
        switch store {
        case .sqliteBlocks:
            try BlockSurgery.alter(path, position: position) { $0.payload = [UInt8](repeating: 0, count: $0.payload.count) }
        case .sqliteRows:
            try sql("UPDATE events SET codec = 0, dictionary_id = NULL, payload = zeroblob(raw_size) WHERE position = \(position)")
        case .postgres:
            try sql("UPDATE events SET codec = 0, dictionary_id = NULL, payload = decode(repeat('00', raw_size::int), 'hex') WHERE position = \(position)")
        }
    }

    /// Removes the event at `position`.
    public func delete(at position: Int64) throws {
        switch store {
        case .sqliteBlocks: try BlockSurgery.delete(path, position: position)
        case .sqliteRows, .postgres: try sql("DELETE FROM events WHERE position = \(position)")
        }
    }

    /// Stores `payload` (uncompressed) and `hash` for the event at `position`: a forger
    /// who recomputes the event's own chain hash.
    public func rewrite(at position: Int64, payload: [UInt8], hash: [UInt8]) throws {
        switch store {
        case .sqliteBlocks:
            try BlockSurgery.alter(path, position: position) { event in
                event.payload = payload
                event.hash = hash
            }
        case .sqliteRows:
            try DatabaseQueue(path: path).write { db in
                try db.execute(sql: "UPDATE events SET codec = 0, dictionary_id = NULL, raw_size = ?, payload = ?, hash = ? WHERE position = ?",
                               arguments: [payload.count, Data(payload), Data(hash), position])
            }
        case .postgres:
            try sql("""
                UPDATE events SET codec = 0, dictionary_id = NULL, raw_size = \(payload.count), payload = \(blob(payload)),
                hash = \(blob(hash)) WHERE position = \(position)
                """)
        }
    }

    /// Sets the recording version and the type version stored for the event at
    /// `position` (what the schema lets through: any positive integer).
    public func setVersions(at position: Int64, streamVersion: Int64? = nil, typeVersion: Int64? = nil) throws {
        switch store {
        case .sqliteBlocks:
            try BlockSurgery.alter(path, position: position) { event in
                if let streamVersion { event.streamVersion = streamVersion }
                if let typeVersion { event.typeVersion = typeVersion }
            }
        case .sqliteRows, .postgres:
            if let streamVersion { try sql("UPDATE events SET stream_version = \(streamVersion) WHERE position = \(position)") }
            if let typeVersion { try sql("UPDATE events SET type_version = \(typeVersion) WHERE position = \(position)") }
        }
    }

    /// Appends `events` (with no device tree) as this store's writer does: a file's
    /// append, or PostgreSQL's native write in one transaction.
    public func append(_ events: [NewEvent]) async throws {
        if let shared {
            _ = try await shared.writeNatively { writer in try writer.importTransaction { _ = try $0.append(events, owners: [:]) } }
        } else {
            try EventStore(path: path, layout: store == .sqliteRows ? .rows : .blocks).append(events)
        }
    }

    /// Swaps the events at positions `a` and `b`.
    public func swap(_ a: Int64, _ b: Int64) throws {
        switch store {
        case .sqliteBlocks:
            try BlockSurgery.swap(path, a, b)
        case .sqliteRows, .postgres:
            try sql("""
                UPDATE events SET position = -1 WHERE position = \(a);
                UPDATE events SET position = \(a) WHERE position = \(b);
                UPDATE events SET position = \(b) WHERE position = -1;
                """)
        }
    }

    /// Replaces the payload of the event at `position` (stored raw), then recomputes the
    /// global chain from there and every recording's stored head: everything a forger
    /// without a device's key can recompute. Only a signature can tell.
    public func rewriteRechaining(at position: Int64, _ change: (String) -> String) throws {
        guard store == .postgres else { return try LogForger(path: path).rewrite(position: position, change) }
        guard let event = try reader().event(at: position, verify: false) else { throw ForgeryError.noEvent(position) }
        let payload = Array(change(String(decoding: event.payload, as: UTF8.self)).utf8)
        guard payload != event.payload else { throw ForgeryError.unchanged(position) }
        try sql("""
            UPDATE events SET codec = 0, dictionary_id = NULL, raw_size = \(payload.count), payload = \(blob(payload))
            WHERE position = \(position)
            """)
        try rechain(from: position)
    }

    /// Removes the last `count` events of the log's last recording and lowers its row's
    /// version to match, then recomputes the chain over what follows: a recording cut short
    /// with every unsigned trace of the cut made consistent.
    /// - Returns: the positions removed.
    @discardableResult
    public func cutLastEvents(_ count: Int) throws -> [Int64] {
        let events = try readerWithoutPaging().events(verify: false)
        guard let last = events.last else { throw ForgeryError.noEvent(1) }
        let cut = events.filter { $0.stream == last.stream }.suffix(count).map(\.position)
        guard cut.count == count else { throw ForgeryError.noEvent(last.position) }
        if store == .sqliteBlocks {
            for position in cut { try BlockSurgery.delete(path, position: position) }
        } else {
            try sql("DELETE FROM events WHERE position IN (\(cut.map(String.init).joined(separator: ",")))")
        }
        try sql("UPDATE streams SET version = version - \(count) WHERE uuid = \(blob(last.stream.bytes))")
        try rechain(from: cut[0])
        return cut
    }

    /// Recomputes the global chain from `position` on, and every recording's stored head.
    public func rechain(from position: Int64) throws {
        guard let url else {
            return try DatabaseQueue(path: path).writeWithoutTransaction { try LogForger(path: path).rechain($0, from: position) }
        }
        let events = try readerWithoutPaging().events(verify: false)
        var previous = events.last { $0.position < position }?.hash ?? ChainHash.genesis
        var chains = StreamChains()
        var rows: [String] = []
        for event in events {
            chains.advance(event)
            guard event.position >= position else { continue }
            let hash = ChainHash.hash(previous: previous, envelope: ChainHash.envelope(
                position: event.position, id: event.id, stream: event.stream, streamVersion: event.streamVersion, type: event.type,
                typeVersion: event.typeVersion, recordedAt: event.recordedAt, payload: event.payload))
            rows.append("(\(event.position), \(blob(hash)))")
            previous = hash
        }
        var script = rows.isEmpty ? "" : "UPDATE events AS e SET hash = v.h FROM (VALUES \(rows.joined(separator: ",\n"))) AS v(p, h) WHERE e.position = v.p;\n"
        for (stream, head) in chains.heads {
            script += "UPDATE streams SET head = \(blob(head)) WHERE uuid = \(blob(stream.bytes));\n"
        }
        let file = path + ".forgery.sql"
        try Data(script.utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        _ = try PostgresServer.shared().psql(url, file: file)
    }

    /// A reader of whole pages (a forger's reads need not cross page boundaries).
    private func readerWithoutPaging() throws -> any SignedLogReader {
        if let shared { return shared.reader() }
        return try EventStore(path: path, access: .readOnly)
    }
}
