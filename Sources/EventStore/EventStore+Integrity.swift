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
