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
            switch fault {
            case .flippedPayloadByte:
                try BlockSurgery.flipPayloadByte(path, position: target, offset: nil)
            case .deletedRow:
                try BlockSurgery.delete(path, position: target)
            case .swappedRows:
                try BlockSurgery.swap(path, target, target + 1)
            default: // rehashedRow
                let store = try EventStore(path: path, access: .readOnly)
                let original = try store.event(at: target, verify: false)!
                let previous = try store.event(at: target - 1, verify: false)!.hash
                let forged = Array(#"{"forged":true}"#.utf8)
                let envelope = ChainHash.envelope(
                    position: target, id: original.id, stream: original.stream, streamVersion: original.streamVersion,
                    type: original.type, typeVersion: original.typeVersion, recordedAt: original.recordedAt, payload: forged)
                let hash = ChainHash.hash(previous: previous, envelope: envelope)
                try BlockSurgery.alter(path, position: target) { event in
                    event.payload = forged
                    event.hash = hash
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
}
