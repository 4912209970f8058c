import EventStore
import Projections
import RecordedEvents

extension ReplayEvent {
    /// A stored event as projections see it: the one way from the log to the reducers.
    /// - Parameters:
    ///   - decoder: remembers each recording's constants, which compact payloads need.
    ///   - keepingHash: keep its chain hash (what stored snapshots are checked against);
    ///     a pass that never needs it saves the bytes.
    /// - Throws: ``ReplayError/undecodableEvent(position:detail:)``, naming the position.
    public init(_ stored: StoredEvent, decoder: inout StreamDecoder, keepingHash: Bool = true) throws(ReplayError) {
        let event: RecordedEvent
        do {
            event = try decoder.decode(stream: stored.stream, type: stored.type, typeVersion: stored.typeVersion, payload: stored.payload)
        } catch {
            throw ReplayError.undecodableEvent(position: stored.position, detail: error.description)
        }
        self.init(position: stored.position, recordedAt: stored.recordedAt.microsecondsSince1970, stream: stored.stream,
                  event: event, hash: keepingHash ? stored.hash : [])
    }

    /// A stored event whose recording's constants the caller already holds (nil for
    /// version 1 payloads, which carry everything).
    public init(_ stored: StoredEvent, constants: StreamConstants?, keepingHash: Bool = true) throws(ReplayError) {
        try self.init(stored, constants: constants, keepingHash: keepingHash, memo: nil)
    }

    /// ``init(_:constants:keepingHash:)`` for a reader of many events, handing back values
    /// it read from the same bytes before (`memo`, one reader's).
    package init(_ stored: StoredEvent, constants: StreamConstants?, keepingHash: Bool = true, memo: DecodingMemo?) throws(ReplayError) {
        let event: RecordedEvent
        do {
            event = try RecordedEvent.decode(type: stored.type, typeVersion: stored.typeVersion, payload: stored.payload,
                                             stream: constants, memo: memo)
        } catch {
            throw ReplayError.undecodableEvent(position: stored.position, detail: error.description)
        }
        self.init(position: stored.position, recordedAt: stored.recordedAt.microsecondsSince1970, stream: stored.stream,
                  event: event, hash: keepingHash ? stored.hash : [])
    }
}
