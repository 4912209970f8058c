import StoredEvents
import EventStore
import Foundation
import MessagesHost
import MessagesModel
import RecordedEvents
import Recorder
import Simulation
import TestSupport
import Games
import GameKit
import Testing

func decodedEvents(_ store: EventStore, _ query: EventQuery = .all) throws -> [(StoredEvent, RecordedEvent)] {
    var decoder = StreamDecoder(store: store)
    return try store.events(query).map { ($0, try decoder.decode(stream: $0.stream, type: $0.type, typeVersion: $0.typeVersion, payload: $0.payload)) }
}

@Suite struct RecorderCompletenessTests {
    @Test func everyDeliveredCallbackIsRecordedInALongRandomSimulation() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("log.sqlite"))
        let recorder = Recorder(store: store, clock: FixedClock(), seed: 99)
        let simulator = Simulator(recorder: recorder, games: .standard, seed: 99, noise: 0.3)
        for n in 0..<160 { try simulator.play(simulator.mixedKind(n)) }

        var stored: [Callback: Int] = [:]
        for callback in Callback.allCases {
            stored[callback] = try store.events(EventQuery(types: ["callback." + callback.rawValue]), verify: false).count
        }
        let delivered = simulator.deliveredCallbacks
        #expect(delivered.values.reduce(0, +) > 4_000)
        for callback in Callback.allCases {
            #expect(stored[callback] == (delivered[callback] ?? 0), "\(callback)")
        }
        #expect(recorder.recordedCallbacks == delivered)
        // The noisy players reached the rarer paths too.
        for callback: Callback in [.willSelect, .didSelect, .didReceive, .didStartSending, .didCancelSending] {
            #expect((delivered[callback] ?? 0) > 0, "\(callback) never happened")
        }
        // ... and everything else the host can do: the sticker extension's inserts,
        // iOS 11's send, live bubbles in transcript style.
        for type in ["action.insertSticker", "action.insertText", "action.insertAttachment", "action.send", "input.viewLiveMessage"] {
            #expect(try store.events(EventQuery(types: [type]), verify: false).count > 0, "no \(type)")
        }
        let transcriptStyle = try decodedEvents(store, EventQuery(types: ["callback.willBecomeActive"])).filter { pair in
            if case .callback(_, let context) = pair.1 { return context.style == .transcript }
            return false
        }
        #expect(transcriptStyle.count > 0)
        #expect(try store.verifyIntegrity().isSound)
    }
}

@Suite struct RecordingContentTests {
    func recordDemoGame() throws -> (TemporaryFolder, EventStore, [(StoredEvent, RecordedEvent)]) {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("log.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: 5), games: .standard, seed: 5)
        try simulator.play("battleship") { game in
            [("A", .act(.openConversation(game))), ("A", .act(.openExtension)), ("A", .act(.touch(.button("Start game")))),
             ("A", .act(.touch(.cell(0)))), ("A", .act(.touch(.cell(1)))), ("A", .act(.touch(.button("Finished")))),
             ("A", .act(.tapSend)), ("B", .act(.openConversation(game))), ("B", .deliver), ("B", .tapLatestMessage),
             ("B", .act(.touch(.cell(0))))]
        }
        return (folder, store, try decodedEvents(store))
    }

    @Test func eachRecordingStartsWithItsInstanceAndStreamsAreGapless() throws {
        let (_, store, events) = try recordDemoGame()
        var versions: [UUID: Int64] = [:]
        for (stored, event) in events {
            let expected = (versions[stored.stream] ?? 0) + 1
            #expect(stored.streamVersion == expected)
            versions[stored.stream] = expected
            if expected == 1 {
                guard case .recordingStarted(let info) = event else { Issue.record("stream starts with \(event.type)"); continue }
                #expect(info.instanceID == stored.stream)
            }
        }
        #expect(try store.streams().count == versions.count)
    }

    @Test func userInputIsRecordedBeforeTheCallbacksItCauses() throws {
        let (_, _, events) = try recordDemoGame()
        let types = events.map(\.1.type).filter { $0 != "ui.screen" }
        let tap = try #require(types.firstIndex(of: "input.tapMessage"))
        #expect(Array(types[tap..<(tap + 3)]) == ["input.tapMessage", "callback.willBecomeActive", "callback.didBecomeActive"])
        let start = try #require(types.firstIndex(of: "input.openExtension"))
        #expect(types[start + 1] == "callback.willBecomeActive")
    }

    /// In Messages the extension's `send` returns and the transcript follows: every
    /// accepted direct send is recorded before its `transcript.sent`, which comes next in
    /// the device's recording (before 0.19 it came first).
    @Test func aDirectSendIsRecordedBeforeItsTranscriptLine() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("log.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: 12), games: .standard, seed: 12, noise: 0.3)
        for n in 0..<(4 * GameRegistry.standard.kinds.count) { try simulator.play(simulator.mixedKind(n)) }
        let events = try decodedEvents(store)
        func sentItem(_ action: ExtensionAction) -> Item? {
            switch action {
            case .send(let message): return .message(message)
            case .sendText(let text): return .text(text)
            case .sendSticker(let sticker): return .sticker(sticker)
            case .sendAttachment(let url, let name): return .attachment(fileURL: url, alternateFilename: name)
            default: return nil
            }
        }
        func same(_ a: Item, _ b: Item) -> Bool {
            if let m = a.message { return b.message?.id == m.id }
            return a == b
        }
        var checked = 0
        for (index, (stored, event)) in events.enumerated() {
            guard case .action(let record, _) = event, record.error == nil, let item = sentItem(record.action) else { continue }
            let later = events[(index + 1)...].first { $0.0.stream == stored.stream && $0.0.type == "transcript.sent" }
            guard case .transcript(.sent(let sent), _)? = later?.1 else {
                Issue.record("no transcript.sent after the \(stored.type) at \(stored.position)")
                continue
            }
            #expect(same(item, sent), "the \(stored.type) at \(stored.position) is followed by another item's transcript line")
            let earlier = events[..<index].contains { pair in
                guard pair.0.stream == stored.stream, case .transcript(.sent(let before), _) = pair.1 else { return false }
                return item.message != nil && same(item, before)
            }
            #expect(!earlier, "the message of the \(stored.type) at \(stored.position) was in the transcript before the call")
            checked += 1
        }
        #expect(checked > 5)
    }

    @Test func callbacksCarryDeviceConversationStyleAndSelection() throws {
        let (_, _, events) = try recordDemoGame()
        let launches = events.compactMap { pair -> (CallbackRecord, EventContext)? in
            if case .callback(let r, let c) = pair.1, r.callback == .willBecomeActive { return (r, c) }
            return nil
        }
        let byTap = try #require(launches.last)
        #expect(byTap.1.device == "B")
        #expect(byTap.1.style == .expanded)
        #expect(byTap.1.selectedMessage != nil)
        #expect(byTap.0.conversation?.selectedMessage?.id == byTap.1.selectedMessage)
    }

    @Test func actionsAreRecordedWithTheirOutcomeAndScreensWithTheirLabels() throws {
        let (_, _, events) = try recordDemoGame()
        let inserts = events.compactMap { pair -> ActionRecord? in
            if case .action(let r, _) = pair.1, case .insert = r.action { return r }
            return nil
        }
        #expect(inserts.count == 1 && inserts[0].error == nil)
        #expect(inserts[0].warnings.first?.contains("no scheme") == true)
        let labels = events.compactMap { pair -> [String]? in
            if case .screen(let s, let c) = pair.1, c.device == "B" { return s.labels }
            return nil
        }
        #expect(labels.last == ["Hit: 1/2", "Lives: 3/3"])
    }

    @Test func refusedInsertsAreRecordedWithTheError() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("log.sqlite"))
        let recorder = Recorder(store: store, clock: FixedClock(), seed: 1)
        let games = GameRegistry.standard
        let host = recorder.makeHost(seed: 1) { games.plugin(for: $0.kind)!.makeExtension() }
        // The URL rules to the letter: seed 004's `emptyURL` has no scheme, so the insert is refused.
        host.urlPolicy = .documented
        host.addDevice("A", owner: "Alice")
        host.addDevice("B", owner: "Bob")
        let chat = try host.startConversation(kind: "stickers", between: ["A", "B"])
        try host.perform(.openConversation(chat), on: "A")
        try host.perform(.openExtension, on: "A")
        try host.perform(.touch(.button("Send")), on: "A")
        try recorder.flush()
        let refused = try decodedEvents(store, EventQuery(types: ["action.insert"])).compactMap { pair -> ActionRecord? in
            if case .action(let r, _) = pair.1 { return r }
            return nil
        }
        #expect(refused.count == 1)
        #expect(refused.first?.error?.code == .unknown)
        #expect(refused.first?.error?.reason.contains("no scheme") == true)
    }
}

@Suite struct DeterminismTests {
    @Test func theSameSeedAndFixedClockWriteTheSameLog() throws {
        let folder = try TemporaryFolder()
        var logs: [[StoredEvent]] = []
        for name in ["one.sqlite", "two.sqlite"] {
            let store = try EventStore(path: folder.path(name))
            let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: 31), games: .standard, seed: 31)
            for n in 0..<10 { try simulator.play(n.isMultiple(of: 2) ? "tictactoe" : "battleship") }
            logs.append(try store.events())
        }
        #expect(logs[0].count > 100)
        #expect(logs[0].count == logs[1].count)
        let firstDifference = zip(logs[0], logs[1]).first { $0 != $1 }
        #expect(firstDifference == nil, "first difference at position \(firstDifference?.0.position ?? 0)")
    }

    @Test func replayingASeedIntoTheSameDatabaseAddsNothing() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("log.sqlite"))
        for _ in 0..<2 {
            let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: 8), games: .standard, seed: 8)
            for _ in 0..<5 { try simulator.play("battleship") }
        }
        let first = try EventStore(path: folder.path("fresh.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: first, clock: FixedClock(), seed: 8), games: .standard, seed: 8)
        for _ in 0..<5 { try simulator.play("battleship") }
        #expect(try first.count().events > 100)
        #expect(try store.count().events == (try first.count().events))
    }
}
