import Foundation
import GRDB

/// The outcome of checking the whole log.
public struct IntegrityReport: Sendable {
    /// Events read.
    public var eventCount: Int64 = 0
    /// Every problem found, in position order. Empty for a sound log.
    public var problems: [EventStoreError] = []
    /// The hash of the last event read.
    public var headHash: [UInt8] = ChainHash.genesis

    public var isSound: Bool { problems.isEmpty }
}

extension EventStore {
    /// Checks the whole log: the hash chain, gapless positions, gapless versions in
    /// every stream, that every payload decodes with its dictionary, and that no
    /// stream's tail was cut off. Unlike ``scan(_:verify:_:)`` it does not stop at the
    /// first problem. Constant memory but for one entry per stream.
    ///
    /// - Parameter progress: called now and then with (events read, total).
    public func verifyIntegrity(progress: ((Int64, Int64) -> Void)? = nil) throws -> IntegrityReport {
        var report = IntegrityReport()
        let (sql, _) = Self.selectSQL(for: .all, withPredecessorHash: false)
        try Self.translating(path) {
            try queue.read { db in
                let total = try Int64.fetchOne(db, sql: "SELECT count(*) FROM events") ?? 0
                var previousHash = ChainHash.genesis
                var expectedPosition: Int64 = 1
                var lastVersion: [UUID: Int64] = [:]
                var envelope: [UInt8] = []
                let names = RowNames()
                let cursor = try Row.fetchCursor(db, sql: sql)
                while let row = try cursor.next() {
                    let position: Int64 = row[0]
                    report.eventCount += 1
                    if report.eventCount % 10_000 == 0 { progress?(report.eventCount, total) }
                    if position != expectedPosition {
                        if position > expectedPosition {
                            for missing in expectedPosition..<min(position, expectedPosition + 10) {
                                report.problems.append(.missingEvent(position: missing))
                            }
                        } else {
                            report.problems.append(.outOfOrder(position: position, detail: "expected \(expectedPosition)"))
                        }
                    }
                    expectedPosition = position + 1
                    let storedHash = try row.bytes(at: 11) ?? []
                    defer { previousHash = storedHash }
                    let event: StoredEvent
                    do {
                        event = try decodeRow(db, row, names)
                    } catch let error as EventStoreError {
                        report.problems.append(error)
                        continue
                    }
                    if ChainHash.hash(previous: previousHash, event: event, scratch: &envelope) != event.hash {
                        report.problems.append(.hashMismatch(position: position))
                    }
                    let expectedVersion = (lastVersion[event.stream] ?? 0) + 1
                    if event.streamVersion != expectedVersion {
                        report.problems.append(.streamVersionGap(position: position, stream: event.stream,
                                                                 expected: expectedVersion, found: event.streamVersion))
                    }
                    lastVersion[event.stream] = event.streamVersion
                }
                report.headHash = previousHash
                // A cut-off tail leaves the chain intact, but streams remember their versions.
                let streams = try Row.fetchAll(db, sql: "SELECT uuid, version FROM streams")
                for row in streams {
                    guard let stream = UUID(bytes: row[0] as Data) else { continue }
                    let version: Int64 = row[1]
                    let found = lastVersion[stream] ?? 0
                    if version > found {
                        report.problems.append(.streamVersionGap(position: expectedPosition, stream: stream,
                                                                 expected: version, found: found))
                    }
                }
                progress?(report.eventCount, total)
            }
        }
        return report
    }
}

extension EventStore {
    /// Checks some recordings only, at a cost that depends on them and not on the log:
    /// each event's hash against its predecessor's, gapless versions up to the stream's
    /// recorded version, and the stream's chain against its stored head. What it cannot
    /// see: events of other recordings, and rows that no stream names.
    public func verifyIntegrity(ofStreams streams: Set<UUID>) throws -> IntegrityReport {
        var report = IntegrityReport()
        // Each stream's row alone (through its unique index): listing every stream would grow with the log.
        var recorded: [UUID: Int64] = [:], heads: [UUID: [UInt8]] = [:]
        try read { db in
            for stream in streams {
                guard let row = try Row.fetchOne(db, sql: "SELECT version, head FROM streams WHERE uuid = ?",
                                                 arguments: [Data(stream.bytes)]) else { continue }
                recorded[stream] = row[0]
                if let head = row[1] as Data? { heads[stream] = Array(head) }
            }
        }
        for stream in streams.sorted(by: { $0.uuidString < $1.uuidString }) {
            var version: Int64 = 0, lastPosition: Int64 = 0
            var head = ChainHash.genesis, scratch: [UInt8] = []
            try scan(EventQuery(stream: stream), skippingDamaged: { report.problems.append($0) }) { event in
                report.eventCount += 1
                if event.streamVersion != version + 1 {
                    report.problems.append(.streamVersionGap(position: event.position, stream: stream,
                                                             expected: version + 1, found: event.streamVersion))
                }
                version = event.streamVersion
                lastPosition = event.position
                head = ChainHash.streamHash(previous: head, event: event, scratch: &scratch)
            }
            let expected = recorded[stream] ?? 0
            if expected > version {
                report.problems.append(.streamVersionGap(position: lastPosition + 1, stream: stream, expected: expected, found: version))
            } else if let stored = heads[stream], stored != head {
                report.problems.append(.hashMismatch(position: lastPosition))
            }
        }
        report.problems.sort { ($0.position ?? 0) < ($1.position ?? 0) }
        return report
    }
}
