import Foundation
import MessagesModel

/// Why a stored payload could not be turned back into a ``RecordedEvent``.
public enum PayloadDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    case unknownType(String)
    case unsupportedTypeVersion(type: String, version: Int)
    case malformed(type: String, detail: String)
    /// A version 2 payload read without its recording's `recording.started` event.
    case needsRecordingStart(type: String)

    public var description: String {
        switch self {
        case .unknownType(let type): return "unknown event type '\(type)'"
        case .unsupportedTypeVersion(let type, let version):
            return "event type '\(type)' version \(version) is newer than this gamelog understands"
        case .malformed(let type, let detail): return "malformed '\(type)' payload: \(detail)"
        case .needsRecordingStart(let type):
            return "a compact (version 2) '\(type)' payload, which can only be read with its recording's recording.started event"
        }
    }
}

extension RecordedEvent {
    private struct Wrapped<Body: Codable, Context: Codable>: Codable {
        var body: Body
        var context: Context
    }

    private static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        // Canonical: the same event always gives the same bytes, so hashes are stable.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// The canonical payload bytes: JSON with sorted keys, no whitespace.
    public func payload() -> [UInt8] {
        let encoder = Self.encoder()
        do {
            switch self {
            case .recordingStarted(let info): return Array(try encoder.encode(info))
            case .recordingEnded(let c): return Array(try encoder.encode(Wrapped(body: [String: String](), context: c)))
            case .input(let action, let c): return Array(try encoder.encode(Wrapped(body: action, context: c)))
            case .callback(let record, let c): return Array(try encoder.encode(Wrapped(body: record, context: c)))
            case .action(let record, let c): return Array(try encoder.encode(Wrapped(body: record, context: c)))
            case .transcript(let change, let c): return Array(try encoder.encode(Wrapped(body: change, context: c)))
            case .screen(let screen, let c): return Array(try encoder.encode(Wrapped(body: screen, context: c)))
            }
        } catch {
            // Every case holds plain Codable values; encoding cannot fail.
            preconditionFailure("encoding a recorded event failed: \(error)")
        }
    }

    /// The type version and payload bytes the recorder stores: version 2, the compact
    /// layout, when the recording's constants are known and the event's context is
    /// theirs; else version 1. `recording.started` is always version 1.
    public func storedForm(in stream: StreamConstants?) -> (typeVersion: Int, payload: [UInt8]) {
        let v1 = payload()
        guard let stream, context != nil, let v2 = CompactPayload.compact(v1, with: stream) else { return (1, v1) }
        return (2, v2)
    }

    /// Decodes a stored payload of any type version. Version 2 needs its recording's
    /// constants (`stream`): canonical compact bytes are read as they are, the recording's
    /// ids put where they are referred to; anything else is expanded to version 1 by the
    /// upcaster first, which gives the same values.
    public static func decode(type: String, typeVersion: Int, payload: [UInt8],
                              stream: StreamConstants?) throws(PayloadDecodingError) -> RecordedEvent {
        try decode(type: type, typeVersion: typeVersion, payload: payload, stream: stream, memo: nil)
    }

    /// ``decode(type:typeVersion:payload:stream:)`` for a reader of many events, which
    /// hands back values it read from the same bytes before (`memo`).
    package static func decode(type: String, typeVersion: Int, payload: [UInt8], stream: StreamConstants?,
                               memo: DecodingMemo?) throws(PayloadDecodingError) -> RecordedEvent {
        guard typeVersion == 2 else {
            guard typeVersion == 1, let event = canonical(type: type, payload: payload, compactOf: nil, memo: memo) else {
                return try decode(type: type, typeVersion: typeVersion, payload: payload)
            }
            return event
        }
        guard let stream else { throw .needsRecordingStart(type: type) }
        if let event = canonical(type: type, payload: payload, compactOf: stream, memo: memo) { return event }
        return try decode(type: type, typeVersion: 1, payload: try CompactPayload.expand(payload, with: stream))
    }

    /// The canonical reader's reading of `payload` as an event of `type` (a compact one
    /// with the recording's `constants`), or nil when it declines the bytes or they tell
    /// of another type: the caller's slower path decides then.
    private static func canonical(type: String, payload: [UInt8], compactOf constants: StreamConstants?,
                                  memo: DecodingMemo? = nil) -> RecordedEvent? {
        // The type's parts as bytes (a dot is ASCII, so they are the same as Character-wise):
        // walking Characters, or comparing `Substring`s, for every event decoded showed in
        // full replays' profiles.
        var type = type
        return type.withUTF8 { spelled -> RecordedEvent? in
            let category: UnsafeBufferPointer<UInt8>, name: UnsafeBufferPointer<UInt8>
            if let dot = spelled.firstIndex(of: UInt8(ascii: ".")) {
                category = UnsafeBufferPointer(rebasing: spelled[..<dot])
                name = UnsafeBufferPointer(rebasing: spelled[(dot + 1)...])
            } else {
                category = spelled
                name = UnsafeBufferPointer(rebasing: spelled[spelled.endIndex...])
            }
            guard let event = payload.withUnsafeBufferPointer({
                CanonicalDecoding.event(category: category, name: name, payload: $0, compactOf: constants, memo: memo)
            }), event.hasType(category: category, name: name) else { return nil }
            return event
        }
    }

    /// `callback.didSelect` as `callback` and `didSelect` (a type without a dot is all category).
    private static func typeParts(_ type: String) -> (category: Substring, name: Substring) {
        // Found in the UTF-8 view: walking Characters (grapheme breaking) for every event
        // decoded was 3.5% of a full replay. A dot is ASCII, so its index is a Character
        // boundary and both slices are the same as Character-wise.
        guard let dot = type.utf8.firstIndex(of: UInt8(ascii: ".")) else { return (type[...], type[type.endIndex...]) }
        return (type[..<dot], type[type.utf8.index(after: dot)...])
    }

    /// The version 1 bytes of a stored payload: as stored for version 1, expanded for version 2.
    public static func v1Payload(typeVersion: Int, payload: [UInt8], stream: StreamConstants?,
                                 type: String) throws(PayloadDecodingError) -> [UInt8] {
        guard typeVersion == 2 else { return payload }
        guard let stream else { throw .needsRecordingStart(type: type) }
        return try CompactPayload.expand(payload, with: stream)
    }

    /// Decodes a self-contained payload: version 1 (a version 2 payload needs
    /// ``decode(type:typeVersion:payload:stream:)``).
    public static func decode(type: String, typeVersion: Int, payload: [UInt8]) throws(PayloadDecodingError) -> RecordedEvent {
        guard typeVersion <= currentTypeVersion else { throw .unsupportedTypeVersion(type: type, version: typeVersion) }
        guard typeVersion == 1 else { throw .needsRecordingStart(type: type) }
        // Canonical bytes (all that gamelog writes) take the fast path; anything else,
        // and every refusal, goes through JSONDecoder, the reference.
        if let event = canonical(type: type, payload: payload, compactOf: nil) { return event }
        let (category, name) = typeParts(type)
        return try decodeWithJSONDecoder(type: type, category: category, name: name, payload: payload)
    }

    /// Decodes with the reference decoder only (`Codable` through `JSONDecoder`),
    /// never the canonical fast path: for differential tests and fuzzing.
    public static func decodeWithReferenceDecoder(type: String, typeVersion: Int,
                                                  payload: [UInt8]) throws(PayloadDecodingError) -> RecordedEvent {
        guard typeVersion <= currentTypeVersion else { throw .unsupportedTypeVersion(type: type, version: typeVersion) }
        guard typeVersion == 1 else { throw .needsRecordingStart(type: type) }
        let (category, name) = typeParts(type)
        return try decodeWithJSONDecoder(type: type, category: category, name: name, payload: payload)
    }

    /// The reference decoder: `Codable` through `JSONDecoder`, with precise errors.
    static func decodeWithJSONDecoder(type: String, category: Substring, name: Substring,
                                      payload: [UInt8]) throws(PayloadDecodingError) -> RecordedEvent {
        let data = Data(payload)
        let decoder = JSONDecoder()
        func body<T: Codable>(_: T.Type) throws -> (T, EventContext) {
            let wrapped = try decoder.decode(Wrapped<T, EventContext>.self, from: data)
            return (wrapped.body, wrapped.context)
        }
        do {
            let event: RecordedEvent
            switch category {
            case "recording" where name == "started":
                event = .recordingStarted(try decoder.decode(InstanceInfo.self, from: data))
            case "recording" where name == "ended":
                event = .recordingEnded(try body([String: String].self).1)
            case "input":
                let (action, c) = try body(UserAction.self)
                event = .input(action, c)
            case "callback":
                let (record, c) = try body(CallbackRecord.self)
                event = .callback(record, c)
            case "action":
                let (record, c) = try body(ActionRecord.self)
                event = .action(record, c)
            case "transcript":
                let (change, c) = try body(TranscriptChange.self)
                event = .transcript(change, c)
            case "ui" where name == "screen":
                let (screen, c) = try body(Screen.self)
                event = .screen(screen, c)
            default:
                throw PayloadDecodingError.unknownType(type)
            }
            // The type column and the payload must tell the same story.
            guard event.type == type else {
                throw PayloadDecodingError.malformed(type: type, detail: "the payload describes a '\(event.type)' event")
            }
            return event
        } catch let error as PayloadDecodingError {
            throw error
        } catch {
            throw .malformed(type: type, detail: plainDescription(of: error))
        }
    }
}
