import EventStore
import Foundation
import MessagesModel
@testable import RecordedEvents
import Testing
import TestSupport

/// A reader that hands back values it decoded before from the same bytes must give the
/// same events as one that reads every value, and never a value read for another
/// recording's references.
@Suite struct DecodingMemoTests {
    @Test func aSimulatedLogDecodesToTheSameEventsWithAndWithoutTheMemo() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("log.sqlite"))
        // Every registered game in turn, with the simulator's noise (taps, leaving, coming back).
        try playMixedGames(30, into: store, seed: 11, noise: 0.4)
        var constants: [UUID: StreamConstants] = [:]
        let memo = DecodingMemo()
        var count = 0, compact = 0
        try store.scan(verify: false) { stored in
            let known = stored.typeVersion == 2 ? constants[stored.stream] : nil
            let plain = try RecordedEvent.decode(type: stored.type, typeVersion: stored.typeVersion, payload: stored.payload, stream: known)
            let remembered = try RecordedEvent.decode(type: stored.type, typeVersion: stored.typeVersion, payload: stored.payload,
                                                      stream: known, memo: memo)
            #expect(remembered == plain, "position \(stored.position) (\(stored.type))")
            if case .recordingStarted(let info) = plain { constants[stored.stream] = StreamConstants(info) }
            count += 1
            if stored.typeVersion == 2 { compact += 1 }
        }
        #expect(count > 1_000 && compact > 1_000)
        // Conversations repeat in every activation's callbacks: most are handed back.
        #expect(memo.hits > count / 10, "\(memo.hits) values handed back of \(count) events")
    }

    @Test func theSameBytesOfAnotherRecordingAreAnotherValue() throws {
        // Two recordings of two conversations: `"$c"` and `"$l"` mean different ids.
        func constants() -> StreamConstants {
            StreamConstants(device: "A", conversation: ConversationID(UUID()), localParticipant: ParticipantID(UUID()),
                            remoteParticipants: [ParticipantID(UUID())])
        }
        let first = constants(), second = constants()
        func event(_ constants: StreamConstants) -> RecordedEvent {
            let conversation = Conversation(id: constants.conversation, localParticipantIdentifier: constants.localParticipant,
                                            remoteParticipantIdentifiers: constants.remoteParticipants)
            return .callback(CallbackRecord(callback: .willBecomeActive, conversation: conversation),
                             EventContext(device: "A", conversation: constants.conversation, style: .compact, isActive: true,
                                          selectedMessage: nil))
        }
        let a = event(first).storedForm(in: first), b = event(second).storedForm(in: second)
        #expect(a.typeVersion == 2 && a.payload == b.payload, "the test needs the same compact bytes")
        let memo = DecodingMemo()
        let type = event(first).type
        #expect(try RecordedEvent.decode(type: type, typeVersion: 2, payload: a.payload, stream: first, memo: memo) == event(first))
        #expect(try RecordedEvent.decode(type: type, typeVersion: 2, payload: b.payload, stream: second, memo: memo) == event(second))
        #expect(try RecordedEvent.decode(type: type, typeVersion: 2, payload: a.payload, stream: first, memo: memo) == event(first))
        #expect(memo.hits == 1, "only the repeat of the first recording's bytes is handed back")
    }

    @Test func repeatedStringsOfAnArrayAreReadAsTheReferenceReadsThem() throws {
        let stream = StreamConstants(device: "A", conversation: ConversationID(UUID()), localParticipant: ParticipantID(UUID()),
                                     remoteParticipants: [])
        let cells = ["empty", "empty", "$x", "$x", "ship", "ship", "ship", stream.conversation.uuid.uuidString,
                     stream.conversation.uuid.uuidString, "", "", "é", "é", "empty"]
        let event = RecordedEvent.screen(Screen(name: "s", labels: ["a", "a"], cells: cells, buttons: [], alert: nil),
                                         EventContext(device: "A", conversation: stream.conversation, style: .expanded,
                                                      isActive: true, selectedMessage: nil))
        for (typeVersion, payload) in [(1, event.payload()), event.storedForm(in: stream)] {
            let decoded = try RecordedEvent.decode(type: event.type, typeVersion: typeVersion, payload: payload, stream: stream)
            #expect(decoded == event, "type version \(typeVersion)")
        }
        #expect(event.storedForm(in: stream).typeVersion == 2)
    }
}
