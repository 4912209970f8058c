import Audit
import EventStore
import Foundation
import GameKit
import Games
import Interchange
import MessagesHost
import MessagesModel
import Projections
import RecordedEvents
import Recorder
import Replay
import Simulation
import TestSupport
import Testing

/// What a device sees is what its own log holds, whoever else's log lies beside it.
@Suite struct PerspectiveSpecification {
    /// The state without its log coordinates: positions differ between a log and an
    /// import of part of it; what was shown does not.
    func shown(_ state: ConversationState) -> ConversationState {
        var out = state
        out.position = 0
        // Which activation events wait for a game, by position (positions are the log's own).
        out.membership = GameMembership()
        for session in out.gameOrder {
            out.games[session]?.firstPosition = 0
            out.games[session]?.lastPosition = 0
        }
        return out
    }

    /// The recordings of each device in a log.
    func streamsByDevice(_ store: EventStore) throws -> [DeviceID: Set<UUID>] {
        var out: [DeviceID: Set<UUID>] = [:]
        for stored in try store.events(EventQuery(types: ["recording.started"])) {
            guard case .recordingStarted(let info) = try RecordedEvent.decode(
                type: stored.type, typeVersion: stored.typeVersion, payload: stored.payload) else { continue }
            out[info.device, default: []].insert(stored.stream)
        }
        return out
    }

    /// The specification: for every device D, the view as D computed from the full
    /// log equals the view computed from D's export alone, after the last step and
    /// at every step where D's own log has the same event. Also: D's log alone
    /// audits with no error, and games D saw end as D saw them end.
    /// On the hostile network too: late, lost, doubled and reordered messages, phones
    /// without signal and clocks minutes apart change nothing of it.
    @Test(arguments: [NetworkProfile.ideal, .hostile])
    func aDevicesViewFromTheWholeLogIsItsViewFromItsOwnLogAlone(_ network: NetworkProfile) throws {
        let folder = try TemporaryFolder()
        let full = try EventStore(path: folder.path("full.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: full, clock: FixedClock(), seed: 404), games: .standard, seed: 404,
                                  noise: 0.3)
        simulator.network = network
        let played = network == .ideal ? 240 : 120
        for n in 0..<played { try simulator.play(simulator.mixedKind(n)) }
        let fullCatalog = try GameCatalog(store: full, games: .standard)
        let byDevice = try streamsByDevice(full)
        // A and B play every game; C and D join them for the games a group plays.
        #expect(byDevice.keys.sorted() == ["A", "B", "C", "D"])

        var comparedSteps = 0, comparedFinals = 0, notCheckable = 0
        for (device, streams) in byDevice {
            var exported = ""
            _ = try Interchange.export(from: full, streams: streams) { exported += $0 + "\n" }
            let own = try EventStore(path: folder.path("\(device.name).sqlite"))
            try Interchange.import(try Interchange.read(exported, file: "\(device.name).jsonl"), into: own)

            let ownCatalog = try GameCatalog(store: own, games: .standard)
            for (conversation, ownStreams) in ownCatalog.streams {
                let mine = try Replayer(store: own, conversation: conversation, streams: ownStreams, games: .standard)
                let whole = try Replayer(store: full, conversation: conversation,
                                         streams: fullCatalog.streams[conversation] ?? [], games: .standard)
                // Steps of the whole log by event identity: a recording and its time.
                var wholeStep: [String: Int] = [:]
                for (index, event) in whole.events.enumerated() { wholeStep["\(event.stream) \(event.recordedAt)"] = index + 1 }
                let perspective = Perspective.device(device)
                for step in 1...mine.stepCount {
                    let event = try #require(mine.event(at: step))
                    let other = try #require(wholeStep["\(event.stream) \(event.recordedAt)"])
                    #expect(shown(try whole.state(at: other, as: perspective)) == shown(try mine.state(at: step, as: perspective)),
                            "device \(device), conversation \(conversation), step \(step)")
                    comparedSteps += 1
                }
                #expect(shown(try whole.state(at: whole.stepCount, as: perspective))
                        == shown(try mine.state(at: mine.stepCount, as: perspective)))
                comparedFinals += 1
            }
            let findings = try Auditor(games: .standard).audit(own)
            #expect(findings.filter { $0.severity == .error }.isEmpty, "device \(device): \(findings.filter { $0.severity == .error }.prefix(3))")
            notCheckable += findings.filter { $0.severity == .notCheckable }.count
            // A finished game the device saw end is finished in its own log too; the games
            // with a board are A's and B's (groups play the sticker extension and the tour).
            if device == "A" || device == "B" {
                #expect(ownCatalog.games.filter { $0.status == "finished" }.count > played / 5)
                #expect(ownCatalog.games.allSatisfy { $0.missingRecordings == [device == "A" ? "Bob" : "Alice"] })
            } else {
                #expect(ownCatalog.games.isEmpty)
            }
        }
        #expect(comparedSteps > played * 40)
        #expect(comparedFinals > played * 5 / 3)
        // Battleship results whose guesser's taps live only in the other log.
        #expect(notCheckable > 0)
        let findings = try Auditor(games: .standard).audit(full)
        #expect(findings.filter { $0.severity != .warning && $0.severity != .design }.isEmpty)
        // Battleship's placement carries every ship to the guesser's phone: a design finding, never an error.
        #expect(findings.contains { $0.severity == .design && $0.rule == "messages-carry-only-the-view" })
    }

    /// The demo's Battleship game seen as Bob: before Alice's placement reaches him,
    /// nothing of her taps, ships or screens shows, at any step.
    @Test func bobSeesNothingOfAlicesPlacementBeforeItArrives() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("demo.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: 2026), games: .standard, seed: 2026)
        let report = try simulator.play("battleship") { game in
            [("A", .act(.openConversation(game))), ("A", .act(.openExtension)), ("A", .act(.touch(.button("Start game")))),
             ("A", .act(.touch(.cell(2)))), ("A", .act(.touch(.cell(6)))), ("A", .act(.touch(.button("Finished")))),
             ("A", .act(.tapSend)), ("B", .act(.openConversation(game))), ("B", .deliver), ("B", .tapLatestMessage),
             ("B", .act(.touch(.cell(2)))), ("B", .act(.touch(.cell(4))))]
        }
        let catalog = try GameCatalog(store: store, games: .standard)
        let replayer = try Replayer(store: store, conversation: report.conversation,
                                    streams: catalog.streams[report.conversation] ?? [], games: .standard)
        let arrival = try #require(replayer.events.firstIndex { $0.device == "B" && $0.event.type == "transcript.arrived" }) + 1
        var checked = 0
        for step in 0..<arrival {
            let bob = try replayer.state(at: step, as: .device("B"))
            #expect(bob.games.isEmpty)
            #expect(bob.devices.keys.allSatisfy { $0 == "B" })
            #expect(bob.devices["B"]?.screen.cells.contains("ship") != true)
            checked += 1
        }
        #expect(checked > 10)
        // After it arrives Bob sees the game, and only the ship he hit.
        let after = try replayer.state(at: replayer.stepCount, as: .device("B"))
        let bobsGame = try #require(after.orderedGames.first)
        let picture = try #require(after.plugin?.picture(of: bobsGame.board))
        #expect(picture.cells.filter { $0 == "ship" }.isEmpty)
        #expect(picture.cells[2] == "hit" && picture.cells[4] == "miss")
        let alice = try replayer.state(at: replayer.stepCount, as: .device("A"))
        let alicesGame = try #require(alice.orderedGames.first)
        let hers = try #require(alice.plugin?.picture(of: alicesGame.board))
        #expect(hers.cells[6] == "ship") // she placed it; Bob's hit has not reached her
        #expect(hers.cells[2] == "ship")
    }

    @Test func aPerspectiveNamesOnlyTheConversationsDevices() throws {
        #expect(throws: PerspectiveError.unknownDevice("Z", devices: ["A", "B"])) { try Perspective("Z", devices: ["A", "B"]) }
        #expect(try Perspective("b", devices: ["A", "B"]) == .device("B"))
        #expect(try Perspective("Auditor", devices: ["A", "B"]) == .auditor)
        #expect(PerspectiveError.unknownDevice("Z", devices: ["A", "B"]).description.contains("A, B, or auditor"))
    }
}

/// One game per session: a placement deleted before it was sent is its own game.
@Suite struct GameIdentityTests {
    @Test func aDeletedPlacementIsAnAbandonedGameOfItsOwn() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("abandon.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: 9), games: .standard, seed: 9)
        let place: [(DeviceID, PlayerStep)] = [("A", .act(.touch(.button("Start game")))), ("A", .act(.touch(.cell(0)))),
                                               ("A", .act(.touch(.cell(4)))), ("A", .act(.touch(.button("Finished"))))]
        _ = try simulator.play("battleship") { game in
            [("A", .act(.openConversation(game))), ("A", .act(.openExtension))] + place
                + [("A", .act(.openExtension)), ("A", .act(.deleteStaged)), ("A", .act(.dismissExtension)), ("A", .act(.openExtension))]
                + place + [("A", .act(.tapSend))]
        }
        let games = try GameCatalog(store: store, games: .standard).games
        #expect(games.map(\.status) == ["abandoned", "inProgress"])
        #expect(games[0].id != games[1].id)
        #expect(games[0].lastPosition < games[1].firstPosition)
        #expect(games[0].result.contains("abandoned"))
        // The host told the extension, which was showing, that its message was cancelled.
        #expect(try store.events(EventQuery(types: ["callback.didCancelSending"])).count == 1)
    }
}

/// Phones' clocks differ: in a merged log a message may arrive before it is sent.
@Suite struct ClockSkewTests {
    @Test func aDevicesSlowClockRaisesNoFalseAlarm() throws {
        let folder = try TemporaryFolder()
        let source = try EventStore(path: folder.path("source.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: source, clock: FixedClock(), seed: 515), games: .standard, seed: 515, noise: 0.2)
        for n in 0..<50 { try simulator.play(simulator.mixedKind(n)) }
        var text = ""
        _ = try Interchange.export(from: source) { text += $0 + "\n" }
        var bStreams = Set<UUID>()
        for stored in try source.events(EventQuery(types: ["recording.started"])) {
            if String(decoding: stored.payload, as: UTF8.self).contains(#""device":"B""#) { bStreams.insert(stored.stream) }
        }
        // B's clock runs 20 s behind: its events sort before A's sends they answer.
        let skewed = try Interchange.read(text, file: "all.jsonl").map { event -> ExportedEvent in
            var e = event
            if bStreams.contains(e.stream) { e.recordedAt -= 20_000_000 }
            e.streamHash = nil // the times changed: these lines carry no proof
            return e
        }
        let merged = try EventStore(path: folder.path("skewed.sqlite"))
        try Interchange.import(skewed, into: merged)
        // Arrivals now come first in time for many messages: the replay puts them after their sends...
        let replayed = try GameCatalog(store: merged, games: .standard)
        #expect(replayed.games.count >= 30)
        var reordered = 0
        for (_, streams) in replayed.streams {
            let causal = try Replayer.load(from: merged, streams: streams)
            let byTime = causal.sorted { ($0.recordedAt, $0.position) < ($1.recordedAt, $1.position) }
            if causal.map(\.position) != byTime.map(\.position) { reordered += 1 }
        }
        #expect(reordered > 10)
        // ...and the rules judge each message once, on the sender's own copy.
        var auditor = Auditor(games: .standard)
        auditor.rerunsExtensions = false
        let errors = try auditor.audit(merged).filter { $0.severity == .error && $0.check == .legality }
        #expect(errors.isEmpty, "\(errors.prefix(3))")
    }
}
