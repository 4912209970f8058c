import Audit
import EventStore
import Foundation
import MessagesModel
import Projections
import RecordedEvents
import Recorder
import Replay
import Simulation
import TestSupport
import Games
import GameKit
import Testing

@Suite struct TamperCorpusTests {
    @Test func everyInjectedFaultIsFoundAtItsPosition() throws {
        let folder = try TemporaryFolder()
        let clean = try EventStore(path: folder.path("clean.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: clean, clock: FixedClock(), seed: 77), games: .standard, seed: 77, noise: 0.2)
        for n in 0..<12 { try simulator.play(n.isMultiple(of: 2) ? "battleship" : "tictactoe") }
        #expect(try Auditor(games: .standard).audit(clean).filter { $0.severity == .error }.isEmpty)
        for fault in TamperKit.Fault.allCases {
            let tampered = try TamperKit.make(fault, from: clean, to: folder.path("\(fault.rawValue).sqlite"))
            let findings = try Auditor(games: .standard).audit(try EventStore(path: tampered.path, access: .readOnly))
            // Conversations are checked by several lanes; the report must not depend on which finishes first.
            #expect(try Auditor(games: .standard).audit(try EventStore(path: tampered.path, access: .readOnly)) == findings)
            let hit = findings.first { $0.position == tampered.position && $0.check.rawValue == tampered.check && $0.severity == .error }
            #expect(hit != nil, "\(fault.rawValue) not found at \(tampered.position): \(findings.prefix(3))")
        }
    }

    @Test func noisyCleanGamesHaveNoErrors() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("clean.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: 101), games: .standard, seed: 101, noise: 0.35)
        for n in 0..<160 { try simulator.play(n.isMultiple(of: 3) ? "tictactoe" : "battleship") }
        let errors = try Auditor(games: .standard).audit(store).filter { $0.severity == .error }
        #expect(errors.isEmpty, "\(errors.prefix(5))")
    }
}

@Suite struct LifecycleRuleTests {
    let conversation = ConversationID(UUID())
    let stream = UUID()

    func event(_ n: Int64, _ callback: Callback, style: PresentationStyle = .compact, message: Message? = nil) -> ReplayEvent {
        let context = EventContext(device: "A", conversation: conversation, style: style, isActive: true, selectedMessage: nil)
        return ReplayEvent(position: n, recordedAt: n, stream: stream,
                           event: .callback(CallbackRecord(callback: callback, message: message, style: callback == .willTransition || callback == .didTransition ? .expanded : nil), context))
    }

    var start: ReplayEvent {
        let info = InstanceInfo(instanceID: stream, device: "A", conversation: conversation, kind: "battleship",
                                localParticipant: ParticipantID(UUID()), remoteParticipants: [], names: [:])
        return ReplayEvent(position: 1, recordedAt: 1, stream: stream, event: .recordingStarted(info))
    }

    func findings(_ events: [ReplayEvent]) -> [Finding] {
        Auditor(games: .standard, invariants: []).check(conversation, [start] + events).filter { $0.check == .lifecycle }
    }

    @Test func aProperLifecycleHasNoFinding() {
        #expect(findings([event(2, .willBecomeActive), event(3, .didBecomeActive), event(4, .willTransition),
                          event(5, .didTransition), event(6, .willResignActive), event(7, .didResignActive)]).isEmpty)
    }

    @Test func didBecomeActiveNeedsWillBecomeActive() {
        let found = findings([event(2, .didBecomeActive)])
        #expect(found.first?.rule == "didBecomeActive-after-willBecomeActive" && found.first?.position == 2)
    }

    @Test func nothingButANewActivationAfterDidResignActive() {
        let m = Message(id: MessageID(UUID()))
        let found = findings([event(2, .willBecomeActive), event(3, .didBecomeActive), event(4, .willResignActive),
                              event(5, .didResignActive), event(6, .didReceive, message: m)])
        #expect(found.map(\.position) == [6])
    }

    @Test func noSelectReceiveSendCancelOrTransitionInTranscriptStyle() {
        let m = Message(id: MessageID(UUID()))
        let found = findings([event(2, .willBecomeActive, style: .transcript), event(3, .didBecomeActive, style: .transcript),
                              event(4, .didReceive, style: .transcript, message: m)])
        #expect(found.contains { $0.rule == "none-in-transcript-style" && $0.position == 4 })
    }

    @Test func contentSizeThatFitsOnlyInTranscriptStyle() {
        let inTranscript = findings([event(2, .willBecomeActive, style: .transcript), event(3, .didBecomeActive, style: .transcript),
                                     event(4, .contentSizeThatFits, style: .transcript)])
        #expect(inTranscript.isEmpty, "\(inTranscript)")
        let expanded = findings([event(2, .willBecomeActive, style: .expanded), event(3, .didBecomeActive, style: .expanded),
                                 event(4, .contentSizeThatFits, style: .expanded)])
        #expect(expanded.map(\.rule) == ["only-in-transcript-style"] && expanded.first?.position == 4)
    }

    /// A direct send (iOS 11) leaves the staged message in the input field: sending it
    /// afterwards is no false alarm, and a didStartSending for a message never staged is.
    @Test func aDirectSendLeavesTheStagedMessage() {
        let staged = Message(id: MessageID(UUID()))
        let context = EventContext(device: "A", conversation: conversation, style: .expanded, isActive: true, selectedMessage: nil)
        func at(_ n: Int64, _ event: RecordedEvent) -> ReplayEvent { ReplayEvent(position: n, recordedAt: n, stream: stream, event: event) }
        let clean = findings([event(2, .willBecomeActive, style: .expanded), event(3, .didBecomeActive, style: .expanded),
                              at(4, .action(ActionRecord(action: .insert(staged)), context)),
                              at(5, .transcript(.sent(.text("now")), context)),
                              at(6, .action(ActionRecord(action: .sendText("now")), context)),
                              at(7, .input(.tapSend, context)),
                              event(8, .didStartSending, style: .expanded, message: staged)])
        #expect(clean.isEmpty, "\(clean)")
        let forged = findings([event(2, .willBecomeActive, style: .expanded), event(3, .didBecomeActive, style: .expanded),
                               at(4, .input(.tapSend, context)),
                               event(5, .didStartSending, style: .expanded, message: staged)])
        #expect(forged.map(\.rule) == ["didStartSending-for-a-staged-message"])
    }

    @Test func willSelectMustBeFollowedByDidSelect() {
        let m = Message(id: MessageID(UUID()))
        let found = findings([event(2, .willBecomeActive), event(3, .didBecomeActive), event(4, .willSelect, message: m),
                              event(5, .willResignActive)])
        #expect(found.contains { $0.rule == "didSelect-follows-willSelect" && $0.position == 5 })
    }
}

@Suite struct BisectTests {
    @Test func bisectFindsTheFirstStepThatBreaksTheRule() throws {
        let folder = try TemporaryFolder()
        let clean = try EventStore(path: folder.path("clean.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: clean, clock: FixedClock(), seed: 78), games: .standard, seed: 78)
        for n in 0..<4 { try simulator.play(n.isMultiple(of: 2) ? "tictactoe" : "battleship") }
        let tampered = try TamperKit.make(.moveOutOfTurn, from: clean, to: folder.path("t.sqlite"))
        let store = try EventStore(path: tampered.path, access: .readOnly)
        let catalog = try GameCatalog(store: store, games: .standard)
        var found: BisectResult?
        for (conversation, streams) in catalog.streams {
            let events = try Replayer.load(from: store, streams: streams)
            if let result = Auditor(games: .standard).bisect(conversation, events, rule: "legal-move") {
                #expect(events[result.step - 1].position == tampered.position)
                found = result
            } else {
                #expect(!events.contains { $0.position == tampered.position })
            }
        }
        #expect(found != nil)
    }
}
