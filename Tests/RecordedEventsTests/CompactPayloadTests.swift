import Foundation
import MessagesModel
import RecordedEvents
import Testing

/// Type version 2 (issue 14): what a recording already says is left out of each payload
/// and read back through the upcaster, exactly.
@Suite struct CompactPayloadTests {
    typealias Shapes = CanonicalDecodingTests

    /// The recording that `Shapes.context` and `Shapes.conversation` belong to.
    static let recording = InstanceInfo(
        instanceID: UUID(), device: Shapes.context.device, conversation: Shapes.context.conversation, kind: "battleship",
        localParticipant: Shapes.conversation.localParticipantIdentifier,
        remoteParticipants: Shapes.conversation.remoteParticipantIdentifiers, names: [:])
    static let constants = StreamConstants(recording)

    @Test func everyShapeReadsBackExactlyAndTheCompactOnesAreSmaller() throws {
        var compacted = 0
        for event in Shapes.everyShape {
            let stored = event.storedForm(in: Self.constants)
            let v1 = event.payload()
            if case .recordingStarted = event {
                #expect(stored.typeVersion == 1 && stored.payload == v1, "a recording's start is its constants: version 1")
            } else if event.context?.device == Self.recording.device && event.context?.conversation == Self.recording.conversation {
                #expect(stored.typeVersion == 2, "\(event.type)")
                #expect(stored.payload.count < v1.count - 40, "\(event.type): \(stored.payload.count) of \(v1.count) bytes")
                #expect(try CompactPayload.expand(stored.payload, with: Self.constants) == v1)
                compacted += 1
            } else {
                // Another device's or conversation's context than the recording's: left whole.
                #expect(stored.typeVersion == 1 && stored.payload == v1, "\(event.type)")
            }
            let decoded = try RecordedEvent.decode(type: event.type, typeVersion: stored.typeVersion, payload: stored.payload,
                                                   stream: Self.constants)
            #expect(decoded == event, "\(event.type)")
        }
        #expect(compacted > 10)
    }

    @Test func theRecordingsIdsBecomeReferencesAndDollarsAreEscaped() throws {
        let remote = Self.recording.remoteParticipants[1].uuid.uuidString
        for text in ["$c", "$$x", "$", "plain", "$\(remote) placed their ships!", remote, "$r1"] {
            let event = RecordedEvent.action(ActionRecord(action: .insertText(text)), Shapes.context)
            let stored = event.storedForm(in: Self.constants)
            #expect(stored.typeVersion == 2)
            let payload = String(decoding: stored.payload, as: UTF8.self)
            #expect(!payload.contains(Self.recording.conversation.uuid.uuidString), "\(payload)")
            #expect(!payload.contains(#""device":"#), "\(payload)")
            if text == remote { #expect(payload.contains(#""$r1""#), "\(payload)") }
            if text.hasPrefix("$") { #expect(payload.contains("\"$\(text)\""), "\(payload)") }
            #expect(try RecordedEvent.decode(type: event.type, typeVersion: 2, payload: stored.payload, stream: Self.constants) == event)
        }
    }

    /// Constants changed after they were made spell what they now say: the same compact
    /// bytes and the same readings as constants made with those values.
    @Test func changedConstantsSpellTheirNewValues() throws {
        var changed = Self.constants
        let other = ParticipantID(UUID())
        changed.device = DeviceID("Another phone")
        changed.remoteParticipants = [other]
        let made = StreamConstants(device: "Another phone", conversation: Self.recording.conversation,
                                   localParticipant: Self.recording.localParticipant, remoteParticipants: [other])
        #expect(changed == made)
        // An event of the old device is another device's now: it stays whole.
        let old = RecordedEvent.input(.touch(.cell(1)), Shapes.context)
        #expect(CompactPayload.compact(old.payload(), with: changed) == nil)
        // One of the new device that names the new participant: compacted and read back alike.
        let moved = RecordedEvent.action(ActionRecord(action: .insertText(other.uuid.uuidString)),
                                         EventContext(device: "Another phone", conversation: Self.recording.conversation,
                                                      style: .expanded, isActive: true, selectedMessage: nil))
        let compact = try #require(CompactPayload.compact(moved.payload(), with: changed))
        #expect(compact == CompactPayload.compact(moved.payload(), with: made))
        #expect(String(decoding: compact, as: UTF8.self).contains(#""$r0""#))
        #expect(try CompactPayload.expand(compact, with: changed) == moved.payload())
        #expect(try RecordedEvent.decode(type: moved.type, typeVersion: 2, payload: compact, stream: changed) == moved)
    }

    @Test func deviceNamesThatJSONEscapesStillCompact() throws {
        for name in ["A", "Bob's \"phone\"", "back\\slash", "line\nfeed\ttab", "\u{1}\u{1F}", "é/ü 😀"] {
            let device = DeviceID(name)
            let info = InstanceInfo(instanceID: UUID(), device: device, conversation: Shapes.context.conversation, kind: "k",
                                    localParticipant: ParticipantID(UUID()), remoteParticipants: [], names: [:])
            let event = RecordedEvent.screen(.blank, EventContext(device: device, conversation: info.conversation, style: .compact,
                                                                  isActive: true, selectedMessage: nil))
            let stored = event.storedForm(in: StreamConstants(info))
            #expect(stored.typeVersion == 2, "\(name)")
            #expect(try CompactPayload.expand(stored.payload, with: StreamConstants(info)) == event.payload(), "\(name)")
        }
    }

    @Test func aCompactPayloadIsRefusedWithoutItsRecordingOrWithAReferenceToNothing() throws {
        let event = RecordedEvent.input(.touch(.cell(4)), Shapes.context)
        let stored = event.storedForm(in: Self.constants)
        #expect(throws: PayloadDecodingError.needsRecordingStart(type: event.type)) {
            try RecordedEvent.decode(type: event.type, typeVersion: 2, payload: stored.payload)
        }
        let dangling = Array(String(decoding: stored.payload, as: UTF8.self).replacingOccurrences(of: "\"isActive\"", with: "\"x\":\"$r9\",\"isActive\"").utf8)
        #expect {
            try RecordedEvent.decode(type: event.type, typeVersion: 2, payload: dangling, stream: Self.constants)
        } throws: { error in
            "\(error)".contains("$r9 names nothing")
        }
        #expect(throws: PayloadDecodingError.unsupportedTypeVersion(type: event.type, version: 3)) {
            try RecordedEvent.decode(type: event.type, typeVersion: 3, payload: stored.payload, stream: Self.constants)
        }
    }

    @Test func aDecoderLooksUpTheStartOfARecordingItMeetsInTheMiddle() throws {
        let stream = Self.recording.instanceID
        let start = RecordedEvent.recordingStarted(Self.recording)
        var lookups = 0
        var decoder = StreamDecoder(firstEventOf: { asked in
            lookups += 1
            return asked == stream ? (start.type, 1, start.payload()) : nil
        })
        let event = RecordedEvent.screen(.blank, Shapes.context)
        let stored = event.storedForm(in: Self.constants)
        for _ in 0..<3 {
            #expect(try decoder.decode(stream: stream, type: event.type, typeVersion: stored.typeVersion, payload: stored.payload) == event)
        }
        #expect(lookups == 1, "the start is looked up once, then remembered")
        #expect(throws: PayloadDecodingError.self) {
            try decoder.decode(stream: UUID(), type: event.type, typeVersion: 2, payload: stored.payload)
        }
    }
}
