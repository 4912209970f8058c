import Foundation
import MessagesModel

/// Decodes the events of many recordings in any order, remembering each recording's
/// constants from its `recording.started` event, which compact (version 2) payloads
/// need. A recording whose start it has not seen is looked up with `firstEventOf`.
public struct StreamDecoder {
    /// A stored event's type, type version and payload.
    public typealias Payload = (type: String, typeVersion: Int, payload: [UInt8])

    public private(set) var constants: [UUID: StreamConstants] = [:]
    private let firstEventOf: ((UUID) -> Payload?)?
    /// Values it read lately, by their bytes: a recording repeats its conversation and
    /// messages from event to event.
    private let memo = DecodingMemo()

    /// - Parameter firstEventOf: the first event of a recording (its `recording.started`),
    ///   for recordings whose start was not decoded first; nil when there is none.
    public init(firstEventOf: ((UUID) -> Payload?)? = nil) {
        self.firstEventOf = firstEventOf
    }

    /// Remembers a recording's constants, as its `recording.started` event gives them.
    public mutating func learn(_ info: InstanceInfo, stream: UUID) {
        constants[stream] = StreamConstants(info)
    }

    /// The recording's constants, looking its start up if need be.
    public mutating func constants(of stream: UUID) -> StreamConstants? {
        if let known = constants[stream] { return known }
        guard let first = firstEventOf?(stream), first.type == RecordedEvent.TypeName.recordingStarted,
              case .recordingStarted(let info)? = try? RecordedEvent.decode(type: first.type, typeVersion: first.typeVersion,
                                                                             payload: first.payload) else { return nil }
        learn(info, stream: stream)
        return constants[stream]
    }

    /// Decodes one stored event of `stream`.
    public mutating func decode(stream: UUID, type: String, typeVersion: Int,
                                payload: [UInt8]) throws(PayloadDecodingError) -> RecordedEvent {
        let event = try RecordedEvent.decode(type: type, typeVersion: typeVersion, payload: payload,
                                             stream: typeVersion == 2 ? constants(of: stream) : nil, memo: memo)
        if case .recordingStarted(let info) = event { learn(info, stream: stream) }
        return event
    }

    /// Decodes one stored event of `stream` and keeps its version 1 bytes, expanding a
    /// compact payload once for both (what `log --json` prints beside what it decodes).
    public mutating func decodeKeepingFullPayload(stream: UUID, type: String, typeVersion: Int,
                                                  payload: [UInt8]) throws(PayloadDecodingError) -> (event: RecordedEvent, full: [UInt8]) {
        let full = try v1Payload(stream: stream, type: type, typeVersion: typeVersion, payload: payload)
        let event = try RecordedEvent.decode(type: type, typeVersion: typeVersion == 2 ? 1 : typeVersion, payload: full)
        if case .recordingStarted(let info) = event { learn(info, stream: stream) }
        return (event, full)
    }

    /// The version 1 bytes of one stored event of `stream` (what `log --json` and people read).
    public mutating func v1Payload(stream: UUID, type: String, typeVersion: Int,
                                   payload: [UInt8]) throws(PayloadDecodingError) -> [UInt8] {
        try RecordedEvent.v1Payload(typeVersion: typeVersion, payload: payload,
                                    stream: typeVersion == 2 ? constants(of: stream) : nil, type: type)
    }
}
