import EventStore
import Foundation
import GRDB
import Interchange
import MessagesModel
import RecordedEvents

/// Builds logs with one injected fault each, for testing auditors: the faults a
/// disputed game might hide, each with the position where it must be found.
public enum TamperKit {
    public enum Fault: String, CaseIterable, Sendable {
        /// A result message whose Ship_Location differs from the placement.
        case changedShipLocation
        /// A tic-tac-toe message adding two marks.
        case ticTacToeDoubleMove
        /// A tic-tac-toe message naming the wrong mover.
        case moveOutOfTurn
        /// A message arrives that nobody sent.
        case receivedNeverSent
        /// One byte of a stored payload flipped with raw SQL.
        case flippedPayloadByte
        /// A row deleted with raw SQL.
        case deletedRow
        /// Two rows' contents swapped with raw SQL.
        case swappedRows
        /// A changed row given a correct hash, its successors left alone.
        case rehashedRow
        /// didStartSending delivered with nothing staged.
        case startSendingWithNothingStaged
    }

    /// A tampered copy of a log and where its fault must be reported.
    public struct Tampered: Sendable {
        public var fault: Fault
        public var path: String
        /// The position an auditor must name.
        public var position: Int64
        /// The kind of check that must catch it: integrity, lifecycle, legality or consistency.
        public var check: String
    }

    public enum TamperError: Error, CustomStringConvertible {
        case noCandidate(Fault)
        public var description: String {
            switch self {
            case .noCandidate(let fault): return "the clean log has no event where \(fault.rawValue) can be injected"
            }
        }
    }

    /// Writes a copy of the clean log at `source` with `fault` injected to `path`.
    public static func make(_ fault: Fault, from source: EventStore, to path: String) throws -> Tampered {
        var events: [ExportedEvent] = []
        _ = try Interchange.export(from: source) { line in
            // Tree and head lines stay behind: a forger without the keys cannot re-sign.
            guard !line.hasPrefix(#"{"head":"#) && !line.hasPrefix(#"{"tree":"#) else { return }
            events.append(try JSONDecoder().decode(ExportedEvent.self, from: Data(line.utf8)))
        }
        func rebuild(_ list: [ExportedEvent]) throws {
            let store = try EventStore(path: path)
            // The log's own order: its phones' clocks may disagree.
            try Interchange.import(list, into: store, keepingOrder: true)
        }
        let starts = Dictionary(events.filter { $0.streamVersion == 1 }.map { ($0.stream, $0) }, uniquingKeysWith: { a, _ in a })
        var decoder = StreamDecoder(firstEventOf: { stream in
            starts[stream].map { ($0.type, $0.typeVersion, Array($0.payload.utf8)) }
        })
        func decoded(_ e: ExportedEvent) -> RecordedEvent? {
            try? decoder.decode(stream: e.stream, type: e.type, typeVersion: e.typeVersion, payload: Array(e.payload.utf8))
        }
        switch fault {
        case .changedShipLocation:
            guard let index = events.firstIndex(where: { $0.type == "transcript.sent" && $0.payload.contains("Is_Complete=1") }),
                  let range = events[index].payload.range(of: #"Ship_Location=\d"#, options: .regularExpression) else {
                throw TamperError.noCandidate(fault)
            }
            let current = events[index].payload[range]
            let ships = events[index].payload.matches(of: /Ship_Location=(\d)/).map { String($0.output.1) }
            let replacement = (0...8).map(String.init).first { !ships.contains($0) }!
            events[index].payload.replaceSubrange(range, with: "Ship_Location=\(replacement)")
            _ = current
            try rebuild(events)
            return Tampered(fault: fault, path: path, position: events[index].position, check: "legality")
        case .ticTacToeDoubleMove, .moveOutOfTurn:
            // The second message of a game: O's first move.
            let sent = events.indices.filter { events[$0].type == "transcript.sent" && events[$0].payload.contains(#""url":"?"#) }
            guard sent.count > 1 else { throw TamperError.noCandidate(fault) }
            let index = sent[1]
            var payload = events[index].payload
            if fault == .ticTacToeDoubleMove {
                // Mark one more empty cell with the mover's mark (-1 for O).
                guard let empty = payload.range(of: "&0=0&") else { throw TamperError.noCandidate(fault) }
                payload.replaceSubrange(empty, with: "&-1=-1&")
            } else {
                guard let trailing = payload.range(of: #"&-1=0""#) else { throw TamperError.noCandidate(fault) }
                payload.replaceSubrange(trailing, with: #"&1=0""#)
            }
            events[index].payload = payload
            try rebuild(events)
            return Tampered(fault: fault, path: path, position: events[index].position, check: "legality")
        case .receivedNeverSent:
            guard let index = events.firstIndex(where: { $0.type == "transcript.arrived" }),
                  case .transcript(.arrived(.message(var message), let sender), let context)? = decoded(events[index]) else {
                throw TamperError.noCandidate(fault)
            }
            message.id = .init(UUID())
            var forged = events[index]
            forged.id = UUID()
            forged.payload = String(decoding: RecordedEvent.transcript(.arrived(.message(message), sender: sender), context).payload(), as: UTF8.self)
            forged.typeVersion = 1 // a self-contained payload: the forger needs no compact form
            let position = insert(forged, after: index, into: &events)
            try rebuild(events)
            return Tampered(fault: fault, path: path, position: position, check: "consistency")
        case .startSendingWithNothingStaged:
            guard let index = events.firstIndex(where: { $0.type == "callback.didBecomeActive" }),
                  case .callback(let record, let context)? = decoded(events[index]),
                  let conversation = record.conversation,
                  let sample = events.compactMap(decoded).compactMap({ event -> Message? in
                      if case .transcript(.sent(.message(let m)), _) = event { return m }
                      return nil
                  }).first else {
                throw TamperError.noCandidate(fault)
            }
            var forged = events[index]
            forged.id = UUID()
            forged.type = "callback.didStartSending"
            let callback = CallbackRecord(callback: .didStartSending, conversation: conversation, message: sample)
            forged.payload = String(decoding: RecordedEvent.callback(callback, context).payload(), as: UTF8.self)
            forged.typeVersion = 1
            let position = insert(forged, after: index, into: &events)
            try rebuild(events)
            return Tampered(fault: fault, path: path, position: position, check: "lifecycle")
        case .flippedPayloadByte, .deletedRow, .swappedRows, .rehashedRow:
            try rebuild(events)
            let target: Int64 = Int64(events.count / 2)
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                switch fault {
                case .flippedPayloadByte:
                    var payload = try Data.fetchOne(db, sql: "SELECT payload FROM events WHERE position = ?", arguments: [target])!
                    payload[payload.count / 2] ^= 0x20
                    try db.execute(sql: "UPDATE events SET payload = ? WHERE position = ?", arguments: [payload, target])
                case .deletedRow:
                    try db.execute(sql: "DELETE FROM events WHERE position = ?", arguments: [target])
                case .swappedRows:
                    let columns = "event_id, stream_id, stream_version, type_id, type_version, recorded_at, codec, dictionary_id, raw_size, payload, hash"
                    try db.execute(sql: "CREATE TEMP TABLE pair AS SELECT position, \(columns) FROM events WHERE position IN (?, ?)",
                                   arguments: [target, target + 1])
                    try db.execute(sql: "DELETE FROM events WHERE position IN (?, ?)", arguments: [target, target + 1])
                    try db.execute(sql: "INSERT INTO events (position, \(columns)) SELECT \(2 * target + 1) - position, \(columns) FROM pair")
                default: // rehashedRow
                    let row = try Row.fetchOne(db, sql: "SELECT e.event_id, s.uuid, e.stream_version, t.name, e.type_version, e.recorded_at FROM events e JOIN streams s ON s.id = e.stream_id JOIN event_types t ON t.id = e.type_id WHERE position = ?", arguments: [target])!
                    let previous = try Data.fetchOne(db, sql: "SELECT hash FROM events WHERE position = ?", arguments: [target - 1])!
                    let forged = Array(#"{"forged":true}"#.utf8)
                    let envelope = ChainHash.envelope(
                        position: target, id: UUID(uuid: Self.uuidBytes(row[0])), stream: UUID(uuid: Self.uuidBytes(row[1])),
                        streamVersion: row[2], type: row[3], typeVersion: row[4],
                        recordedAt: Timestamp(microsecondsSince1970: row[5]), payload: forged)
                    let hash = ChainHash.hash(previous: Array(previous), envelope: envelope)
                    try db.execute(sql: "UPDATE events SET codec = 0, dictionary_id = NULL, raw_size = ?, payload = ?, hash = ? WHERE position = ?",
                                   arguments: [forged.count, Data(forged), Data(hash), target])
                }
            }
            return Tampered(fault: fault, path: path, position: fault == .rehashedRow ? target + 1 : target, check: "integrity")
        }
    }

    /// Inserts `event` right after `index` in its stream, shifting the stream's later
    /// versions, and returns the position it will take when the list is imported.
    private static func insert(_ event: ExportedEvent, after index: Int, into events: inout [ExportedEvent]) -> Int64 {
        var forged = event
        forged.streamVersion = events[index].streamVersion + 1
        forged.recordedAt = events[index].recordedAt + 1
        for i in events.indices where events[i].stream == forged.stream && events[i].streamVersion >= forged.streamVersion {
            events[i].streamVersion += 1
        }
        events.insert(forged, at: index + 1)
        return events[index].position + 1
    }

    private static func uuidBytes(_ data: Data) -> uuid_t {
        let b = Array(data)
        return (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
    }
}
