import StoredEvents
import EventStore
import Foundation
import MessagesModel
@testable import RecordedEvents
import Recorder
import Simulation
import Games
import GameKit
import Testing

/// The fast canonical reader must give exactly what the reference (`JSONDecoder`)
/// gives, read every payload gamelog writes, and leave everything else to the
/// reference.
@Suite struct CanonicalDecodingTests {
    func fast(_ event: RecordedEvent) -> RecordedEvent? {
        fast(type: event.type, event.payload())
    }

    func fast(type: String, _ payload: [UInt8]) -> RecordedEvent? {
        let category = type.prefix { $0 != "." }
        let name = type.dropFirst(category.count + 1)
        return payload.withUnsafeBufferPointer { CanonicalDecoding.event(category: category, name: name, payload: $0) }
    }

    /// The fast reader on a compact (type version 2) payload, read in place.
    func fast(type: String, compact payload: [UInt8], of constants: StreamConstants) -> RecordedEvent? {
        let category = type.prefix { $0 != "." }
        let name = type.dropFirst(category.count + 1)
        return payload.withUnsafeBufferPointer {
            CanonicalDecoding.event(category: category, name: name, payload: $0, compactOf: constants)
        }
    }

    func reference(type: String, _ payload: [UInt8]) throws -> RecordedEvent {
        let category = type.prefix { $0 != "." }
        return try RecordedEvent.decodeWithJSONDecoder(type: type, category: category,
                                                       name: type.dropFirst(category.count + 1), payload: payload)
    }

    static let context = EventContext(device: "B", conversation: ConversationID(UUID()), style: .transcript, isActive: true,
                                      selectedMessage: MessageID(UUID()))
    static let message = Message(
        id: MessageID(UUID()), session: SessionID(UUID()), url: "https://example.com/?a=1&b=ünïcödé",
        layout: .live(alternate: TemplateLayout(caption: "c", subcaption: "s", trailingCaption: "tc", trailingSubcaption: "ts",
                                                image: MessageImage(kind: "k", cells: ["x", "o"]), mediaFileURL: "file:///m",
                                                imageTitle: "it", imageSubtitle: "is")),
        summaryText: "summary", accessibilityLabel: "label", senderParticipantIdentifier: ParticipantID(UUID()),
        shouldExpire: true, isPending: true, error: MessagesError(.sendWhileNotVisible, "not visible"))
    static let conversation = Conversation(id: ConversationID(UUID()), localParticipantIdentifier: ParticipantID(UUID()),
                                           remoteParticipantIdentifiers: [ParticipantID(UUID()), ParticipantID(UUID())],
                                           selectedMessage: message)

    /// One event of every case and every optional field, set and unset.
    static let everyShape: [RecordedEvent] = {
        let c = context
        let bare = Message(id: MessageID(UUID()))
        var events: [RecordedEvent] = [
            .recordingStarted(InstanceInfo(instanceID: UUID(), device: "A", conversation: ConversationID(UUID()), kind: "battleship",
                                           localParticipant: ParticipantID(UUID()), remoteParticipants: [ParticipantID(UUID())],
                                           names: [ParticipantID(UUID()): "Alice", ParticipantID(UUID()): "Bøb"],
                                           liveMessage: MessageID(UUID()))),
            .recordingStarted(InstanceInfo(instanceID: UUID(), device: "A", conversation: ConversationID(UUID()), kind: "k",
                                           localParticipant: ParticipantID(UUID()), remoteParticipants: [], names: [:])),
            .recordingEnded(EventContext(device: "A", conversation: ConversationID(UUID()), style: .compact, isActive: false,
                                         selectedMessage: nil)),
            .screen(Screen(name: "shipDestroy", labels: ["a", "b"], cells: ["hit", "miss"],
                           buttons: [Screen.Button("OK"), Screen.Button("No", isEnabled: false)],
                           alert: Screen.Alert(title: "t", message: "m")), c),
            .screen(.blank, c),
            .transcript(.sent(.message(message)), c),
            .transcript(.arrived(.message(bare), sender: ParticipantID(UUID())), c),
            .transcript(.sent(.text("hello")), c),
            .transcript(.sent(.sticker(Sticker(fileURL: "file:///s.png", localizedDescription: "s"))), c),
            .transcript(.sent(.attachment(fileURL: "file:///a", alternateFilename: "a.txt")), c),
            .transcript(.arrived(.attachment(fileURL: "file:///a", alternateFilename: nil), sender: ParticipantID(UUID())), c),
        ]
        let actions: [UserAction] = [
            .openConversation(ConversationID(UUID())), .leaveMessages, .quitMessages, .openExtension,
            .tapMessage(MessageID(UUID())), .viewLiveMessage(MessageID(UUID())), .touch(.cell(-7)), .touch(.button("Start game")),
            .touch(.sticker(0)), .touch(.dismissAlert), .expand, .collapse, .tapSend, .deleteStaged, .dismissExtension,
        ]
        events += actions.map { .input($0, c) }
        events += Callback.allCases.map { .callback(CallbackRecord(callback: $0), c) }
        events.append(.callback(CallbackRecord(callback: .didSelect, conversation: conversation, message: message, style: .expanded), c))
        let extensionActions: [ExtensionAction] = [
            .insert(message), .insert(bare), .insertText("t"), .insertSticker(Sticker(fileURL: "f", localizedDescription: "d")),
            .insertAttachment(fileURL: "f", alternateFilename: "n"), .insertAttachment(fileURL: "f", alternateFilename: nil),
            .send(bare), .sendText("s"), .requestPresentationStyle(.expanded), .dismiss,
            .sendSticker(Sticker(fileURL: "f", localizedDescription: "d")), .sendAttachment(fileURL: "f", alternateFilename: "n"),
            .sendAttachment(fileURL: "f", alternateFilename: nil),
        ]
        events += extensionActions.map { .action(ActionRecord(action: $0), c) }
        events.append(.action(ActionRecord(action: .insert(bare), changeDescription: ChangeDescription(nil)), c))
        events.append(.action(ActionRecord(action: .insert(bare), changeDescription: ChangeDescription("Moved to B2")), c))
        events.append(.callback(CallbackRecord(callback: .contentSizeThatFits, availableSize: ContentSize(width: 300, height: 480),
                                               contentSize: ContentSize(width: 294, height: 296)), c))
        events.append(.action(ActionRecord(action: .insert(bare), error: MessagesError(.urlExceedsMaxSize, "too long"),
                                           warnings: ["w1", "w2"]), c))
        return events
    }()

    @Test func everyShapeTakesTheFastPathAndEqualsTheReference() throws {
        for event in Self.everyShape {
            let payload = event.payload()
            let quick = try #require(fast(event), "not read canonically: \(String(decoding: payload, as: UTF8.self))")
            #expect(quick == event)
            #expect(try reference(type: event.type, payload) == quick)
        }
    }

    @Test func everyEventOfASimulationTakesTheFastPath() throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "gamelog-canonical-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try EventStore(path: folder.appending(path: "log.sqlite").path)
        let recorder = Recorder(store: store, clock: FixedClock(), seed: 5)
        let simulator = Simulator(recorder: recorder, games: .standard, seed: 5, noise: 0.4)
        for n in 0..<40 { try simulator.play(n.isMultiple(of: 2) ? "battleship" : "tictactoe") }
        var count = 0, compact = 0
        var decoder = StreamDecoder(store: store)
        try store.scan(verify: false) { stored in
            // A compact payload is read as its upcaster expands it.
            let payload = try decoder.v1Payload(stream: stored.stream, type: stored.type, typeVersion: stored.typeVersion, payload: stored.payload)
            let quick = fast(type: stored.type, payload)
            #expect(quick != nil, "position \(stored.position) (\(stored.type)) was not read canonically")
            let slow = try reference(type: stored.type, payload)
            #expect(slow == quick)
            if stored.typeVersion == 2 {
                // Read in place, without the upcaster's bytes: the same event.
                let known = decoder.constants(of: stored.stream)
                let constants = try #require(known)
                let direct = fast(type: stored.type, compact: stored.payload, of: constants)
                #expect(direct != nil, "position \(stored.position) (\(stored.type)) was not read in place")
                #expect(direct == slow)
            }
            _ = try decoder.decode(stream: stored.stream, type: stored.type, typeVersion: stored.typeVersion, payload: stored.payload)
            count += 1
            if stored.typeVersion == 2 { compact += 1 }
        }
        #expect(count > 2_000 && compact > count / 2, "\(compact) of \(count) compact")
    }

    /// A compact payload's references and escaped dollars are read in place, as the
    /// upcaster would spell them; what it would refuse is left to it.
    @Test func compactPayloadsAreReadInPlace() throws {
        let recording = InstanceInfo(instanceID: UUID(), device: Self.context.device, conversation: Self.context.conversation,
                                     kind: "tictactoe", localParticipant: Self.conversation.localParticipantIdentifier,
                                     remoteParticipants: Self.conversation.remoteParticipantIdentifiers, names: [:])
        let constants = StreamConstants(recording)
        let remote = recording.remoteParticipants[1].uuid.uuidString
        var read = 0
        for text in ["$c", "$$x", "$", "$$", "plain", "é $c", recording.conversation.uuid.uuidString, remote, "$r1"] {
            let event = RecordedEvent.action(ActionRecord(action: .insertText(text)), Self.context)
            let stored = event.storedForm(in: constants)
            #expect(stored.typeVersion == 2)
            #expect(fast(type: event.type, compact: stored.payload, of: constants) == event, "\(text)")
            read += 1
        }
        // A message whose ids are the recording's: references where UUIDs are read.
        for event in Self.everyShape where event.context?.device == recording.device && event.context?.conversation == recording.conversation {
            let stored = event.storedForm(in: constants)
            guard stored.typeVersion == 2 else { continue }
            #expect(fast(type: event.type, compact: stored.payload, of: constants) == event, "\(event.type)")
            read += 1
        }
        #expect(read > 20)
        // A reference to nothing, a context that names its device, a start in version 2: the upcaster's.
        let event = RecordedEvent.input(.touch(.cell(4)), Self.context)
        let payload = String(decoding: event.storedForm(in: constants).payload, as: UTF8.self)
        for odd in [payload.replacingOccurrences(of: "\"isActive\"", with: "\"x\":\"$r9\",\"isActive\""),
                    payload.replacingOccurrences(of: "\"isActive\"", with: "\"device\":\"B\",\"isActive\"")] {
            #expect(fast(type: event.type, compact: Array(odd.utf8), of: constants) == nil, "\(odd)")
        }
        #expect(fast(type: "recording.started", compact: RecordedEvent.recordingStarted(recording).payload(), of: constants) == nil)
    }

    /// Valid JSON that is not canonical still decodes (through the reference); the
    /// fast reader declines it.
    @Test func nonCanonicalJSONGoesToTheReference() throws {
        let event = RecordedEvent.input(.touch(.cell(4)), Self.context)
        let canonical = String(decoding: event.payload(), as: UTF8.self)
        let variants = [
            canonical.replacingOccurrences(of: ":", with: ": "),                           // whitespace
            canonical.replacingOccurrences(of: "\"isActive\":true", with: "\"isActive\":true,\"extra\":1"), // unknown key
            canonical.replacingOccurrences(of: "\"cell\":{\"_0\":4}", with: "\"cell\":{\"_0\":4.0}"),      // a fraction
            canonical.replacingOccurrences(of: "\"device\":\"B\"", with: "\"device\":\"\\u0042\""),         // an escape
        ]
        var readByTheReference = 0
        for variant in variants {
            let bytes = Array(variant.utf8)
            #expect(fast(type: event.type, bytes) == nil, "\(variant)")
            // The reference reads the whitespace, the unknown key and the escape alike (a fraction it may refuse).
            if let decoded = try? RecordedEvent.decode(type: event.type, typeVersion: 1, payload: bytes) {
                #expect(decoded == event, "\(variant)")
                readByTheReference += 1
            }
        }
        #expect(readByTheReference >= 3)
        // Unsorted keys: the reference reads them; the fast reader must not.
        let unsorted = Array(#"{"context":\#(String(decoding: try JSONEncoder().encode(Self.context), as: UTF8.self)),"body":{"expand":{}}}"#.utf8)
        #expect(fast(type: "input.expand", unsorted) == nil)
        #expect(try RecordedEvent.decode(type: "input.expand", typeVersion: 1, payload: unsorted) == .input(.expand, Self.context))
    }

    /// Truncations and byte flips of canonical payloads: whatever the fast reader
    /// accepts, the reference accepts as the same event.
    @Test func theFastReaderNeverAcceptsWhatTheReferenceRefuses() throws {
        var generator = SeededGenerator(seed: 11)
        var fastAccepted = 0
        for event in Self.everyShape {
            let payload = event.payload()
            for _ in 0..<200 {
                var bytes = payload
                switch generator.next() % 3 {
                case 0: bytes = Array(bytes.prefix(Int(generator.next() % UInt64(bytes.count))))
                case 1: bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
                default: bytes.insert(UInt8(truncatingIfNeeded: generator.next()), at: Int(generator.next() % UInt64(bytes.count)))
                }
                guard let quick = fast(type: event.type, bytes) else { continue }
                fastAccepted += 1
                let slow = try? reference(type: event.type, bytes)
                #expect(slow == quick, "\(String(decoding: bytes, as: UTF8.self))")
            }
        }
        // Some mutations (a changed letter inside a string) stay canonical: the comparison ran.
        #expect(fastAccepted > 50)
    }
}
